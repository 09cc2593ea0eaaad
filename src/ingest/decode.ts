// Turning an ingest request body into JS values: Content-Encoding (gzip, zstd) with a hard cap
// on the decompressed size, so a decompression bomb is refused after at most `maxBytes` of
// output instead of being unpacked; then JSON or msgpack by Content-Type.
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import { Decompress as ZstdStream } from 'fzstd';
import { Unpackr } from 'msgpackr';

const gunzipAsync = promisify(gunzip);
const unpackr = new Unpackr({ mapsAsObjects: true, useRecords: false, int64AsType: 'number' });

export class DecodeError extends Error {
  constructor(
    message: string,
    /** `too-large` answers "Request body is too large."; `malformed` the malformed-body text. */
    readonly kind: 'too-large' | 'malformed' | 'unsupported-encoding',
  ) {
    super(message);
  }
}

/** Undoes `Content-Encoding`; never produces more than `maxBytes`. */
export async function decompress(body: Buffer, encoding: string | undefined, maxBytes: number): Promise<Buffer> {
  const enc = (encoding ?? '').trim().toLowerCase();
  if (enc === '' || enc === 'identity' || enc === 'plaintext') {
    if (body.length > maxBytes) throw new DecodeError('body larger than the decompressed cap', 'too-large');
    return body;
  }
  if (enc === 'gzip' || enc === 'x-gzip') {
    try {
      return await gunzipAsync(body, { maxOutputLength: maxBytes });
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'ERR_BUFFER_TOO_LARGE') throw new DecodeError('gzip body decompresses past the cap', 'too-large');
      throw new DecodeError(`invalid gzip data: ${(err as Error).message}`, 'malformed');
    }
  }
  if (enc === 'zstd') return unzstd(body, maxBytes);
  throw new DecodeError(`unsupported Content-Encoding ${JSON.stringify(encoding)}; use gzip or zstd`, 'unsupported-encoding');
}

/** Streaming zstd so that output is counted chunk by chunk and a bomb stops at the cap. */
function unzstd(body: Buffer, maxBytes: number): Buffer {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let done = false;
  const stream = new ZstdStream((chunk, final) => {
    total += chunk.length;
    if (total > maxBytes) throw new DecodeError('zstd body decompresses past the cap', 'too-large');
    chunks.push(chunk);
    if (final) done = true;
  });
  try {
    const step = 64 * 1024;
    for (let i = 0; i < body.length; i += step) {
      stream.push(body.subarray(i, Math.min(body.length, i + step)), i + step >= body.length);
    }
  } catch (err) {
    if (err instanceof DecodeError) throw err;
    throw new DecodeError(`invalid zstd data: ${(err as Error).message}`, 'malformed');
  }
  if (!done && body.length > 0) throw new DecodeError('invalid zstd data: truncated frame', 'malformed');
  return Buffer.concat(chunks, total);
}

export function isMsgpack(contentType: string | undefined): boolean {
  return /^application\/(x-)?msgpack\b/i.test(contentType ?? '');
}

/** Parses a decompressed body as msgpack (libhoney's format) or JSON. */
export function parseBody(raw: Buffer, contentType: string | undefined): unknown {
  try {
    return isMsgpack(contentType) ? unpackr.unpack(raw) : JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new DecodeError(`body is not valid ${isMsgpack(contentType) ? 'msgpack' : 'JSON'}: ${(err as Error).message}`, 'malformed');
  }
}
