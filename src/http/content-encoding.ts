// Content-Encoding of configuration (/1/ and /2/) bodies. Like Honeycomb's API, which answers
// "invalid gzip data" to a body that says gzip and is not, a body is decoded as it says it is
// encoded: none (or identity), gzip or zstd, never more than the route's body limit once
// decoded (so a decompression bomb is a 413). A body that is not what its encoding says is a
// 400, an encoding we cannot decode a 415. Ingest routes decode their own bodies (ingest/decode.ts).
import { ApiError, payloadTooLarge } from '../errors.js';
import { unparseable } from '../validation.js';
import { DecodeError, decompress } from '../ingest/decode.js';

/** `body` with its Content-Encoding undone, at most `limit` bytes; throws the route's ApiError. */
export async function decodeContentEncoding(body: Buffer, encoding: string | undefined, limit: number): Promise<Buffer> {
  try {
    return await decompress(body, encoding, limit);
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    if (err.kind === 'too-large') throw payloadTooLarge(limit);
    if (err.kind === 'unsupported-encoding') {
      throw new ApiError(415, `unsupported Content-Encoding ${JSON.stringify(encoding)}; send the body as it is, or gzip or zstd`);
    }
    throw unparseable(err.message);
  }
}
