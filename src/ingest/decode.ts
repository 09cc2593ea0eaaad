// Turning an ingest request body into JS values: Content-Encoding (gzip, zstd) with a hard cap
// on the decompressed size, so a decompression bomb is refused after at most `maxBytes` of
// output instead of being unpacked; then JSON or msgpack by Content-Type.
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import { isMainThread } from 'node:worker_threads';
import { Decompress as ZstdStream } from 'fzstd';
import { Unpackr, addExtension } from 'msgpackr';

const gunzipAsync = promisify(gunzip);
const unpackr = new Unpackr({ mapsAsObjects: true, useRecords: false, int64AsType: 'number' });

/** A msgpack timestamp: a Date that also keeps the microseconds a Date cannot hold. */
export class MsgpackTime extends Date {
  constructor(readonly epochUs: number) {
    super(Math.floor(epochUs / 1000));
  }
}

// msgpack timestamps (ext -1, how libhoney-go sends `time`) carry nanoseconds; msgpackr's own
// decoder makes a millisecond Date of them. Formats: 32-bit seconds; 30-bit ns + 34-bit seconds;
// 32-bit ns + signed 64-bit seconds.
addExtension({
  type: 0xff,
  unpack(d: Uint8Array): Date {
    const v = new DataView(d.buffer, d.byteOffset, d.byteLength);
    if (d.length === 4) return new MsgpackTime(v.getUint32(0) * 1e6);
    if (d.length === 8) {
      const hi = v.getUint32(0);
      return new MsgpackTime(((hi & 3) * 2 ** 32 + v.getUint32(4)) * 1e6 + Math.floor((hi >>> 2) / 1000));
    }
    if (d.length === 12) return new MsgpackTime(Number(v.getBigInt64(4)) * 1e6 + Math.floor(v.getUint32(0) / 1000));
    return new Date(NaN);
  },
});

export class DecodeError extends Error {
  constructor(
    message: string,
    /**
     * `too-large` answers "Request body is too large."; `malformed` the malformed-body text;
     * `empty` "Request body should not be empty.".
     */
    readonly kind: 'too-large' | 'malformed' | 'unsupported-encoding' | 'empty',
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
      return await gunzipAsync(body, { maxOutputLength: maxBytes, chunkSize: gunzipChunkSize(body.length, maxBytes) });
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'ERR_BUFFER_TOO_LARGE') throw new DecodeError('gzip body decompresses past the cap', 'too-large');
      throw new DecodeError(`invalid gzip data: ${(err as Error).message}`, 'malformed');
    }
  }
  if (enc === 'zstd') return unzstd(body, maxBytes);
  throw new DecodeError(`unsupported Content-Encoding ${JSON.stringify(encoding)}; use gzip or zstd`, 'unsupported-encoding');
}

/**
 * zlib inflates on a pool thread, but hands each chunk of output (16 KB by default) back to the
 * JavaScript thread, which copies them together at the end: a 1,000-event batch came back in
 * about 40 pieces, and that glue cost more of the JavaScript thread than the inflating saved.
 * Output chunks sized for the body (gzip'd JSON is typically 5-10x smaller) take a few pieces.
 */
function gunzipChunkSize(compressed: number, maxBytes: number): number {
  return Math.max(64 * 1024, Math.min(4 << 20, compressed * 8, maxBytes + 1));
}

/**
 * fzstd allocates each frame's window up front and shifts the whole window after every block,
 * so a header declaring a huge window costs memory and time before any output is counted.
 * Decoders need to support windows of only 8 MiB (RFC 8878 3.1.1.1.2); larger ones, and frames
 * declaring more content than the cap, are refused by reading the frame and block headers.
 */
export const ZSTD_MAX_WINDOW = 8 << 20;

function checkZstdFrames(body: Buffer, maxBytes: number): void {
  let p = 0;
  while (p + 8 <= body.length) {
    const magic = body.readUInt32LE(p);
    if (magic >>> 4 === 0x184d2a5) {
      p += 8 + body.readUInt32LE(p + 4); // skippable frame
      continue;
    }
    if (magic !== 0xfd2fb528) return; // not a frame: fzstd reports it
    const fhd = body[p + 4];
    const single = (fhd >> 5) & 1;
    let q = p + 5;
    let window = 0;
    if (!single) {
      const exp = 10 + (body[q] >> 3);
      window = 2 ** exp + 2 ** (exp - 3) * (body[q] & 7);
      q++;
    }
    q += [0, 1, 2, 4][fhd & 3]; // dictionary id
    const fcsBytes = fhd >> 6 ? 1 << (fhd >> 6) : single;
    if (q + fcsBytes > body.length) return;
    const fcs = fcsBytes === 0 ? 0 : fcsBytes === 8 ? Number(body.readBigUInt64LE(q)) : body.readUIntLE(q, fcsBytes) + (fcsBytes === 2 ? 256 : 0);
    q += fcsBytes;
    if (single) window = fcs;
    if (fcs > maxBytes) throw new DecodeError('zstd frame declares more content than the cap', 'too-large');
    if (window > ZSTD_MAX_WINDOW) throw new DecodeError(`zstd window of ${window} bytes is over ${ZSTD_MAX_WINDOW}`, 'too-large');
    for (let last = 0; !last; ) {
      if (q + 3 > body.length) return;
      const h = body.readUIntLE(q, 3);
      last = h & 1;
      q += 3 + (((h >> 1) & 3) === 1 ? 1 : h >>> 3); // an RLE block holds one byte
    }
    p = q + ((fhd >> 2) & 1) * 4; // content checksum
  }
}

/** Streaming zstd so that output is counted chunk by chunk and a bomb stops at the cap. */
function unzstd(body: Buffer, maxBytes: number): Buffer {
  checkZstdFrames(body, maxBytes);
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

/**
 * Bodies at least this long are parsed element by element (parseArrayInPieces): V8 keeps a
 * string of more than 128 KB as a "large object" in memory mapped for it alone.
 */
const PIECES_FROM_BYTES = 128 * 1024;

const isJsonSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * A body that is a JSON array of objects (or arrays), parsed one element at a time. Made into
 * one string, a large body is written into freshly mapped memory on every request, and on
 * this machine (a VM) the page faults cost more than the parse: 2.9 ms for a 586 KB batch of
 * 1,000 events against 1.1 ms for JSON.parse of it; in pieces, finding the elements and
 * parsing them takes 3.0 ms in all against 4.0 ms (in the ingest benchmark's server, 0.4–0.6 µs
 * less per event on the JavaScript thread in three of four paired runs). Elements are found by
 * their bytes (strings and escapes followed, brackets counted); pieces end at ASCII brackets,
 * so no UTF-8 sequence is cut. Anything else (another top-level value, a scalar element, a
 * missing or extra comma, an element JSON.parse refuses) returns undefined: the caller parses
 * the whole body as usual, which gives the same value or the same error.
 */
export function parseArrayInPieces(raw: Buffer): unknown[] | undefined {
  const n = raw.length;
  let i = 0;
  while (i < n && isJsonSpace(raw[i])) i++;
  if (raw[i] !== 0x5b) return undefined; // [
  i++;
  const items: unknown[] = [];
  for (;;) {
    while (i < n && isJsonSpace(raw[i])) i++;
    if (items.length === 0 && raw[i] === 0x5d) break; // []
    const start = i;
    const open = raw[i];
    if (open !== 0x7b && open !== 0x5b) return undefined; // { or [
    let depth = 0;
    for (; i < n; i++) {
      const c = raw[i];
      if (c === 0x22) {
        // A string: to its closing quote, stepping over escaped characters.
        for (i++; i < n && raw[i] !== 0x22; i++) if (raw[i] === 0x5c) i++;
      } else if (c === 0x7b || c === 0x5b) depth++;
      else if ((c === 0x7d || c === 0x5d) && --depth === 0) break;
    }
    if (i >= n) return undefined;
    i++;
    try {
      items.push(JSON.parse(raw.toString('utf8', start, i)));
    } catch {
      return undefined;
    }
    while (i < n && isJsonSpace(raw[i])) i++;
    if (raw[i] === 0x2c) {
      i++; // , then the next element
      continue;
    }
    if (raw[i] !== 0x5d) return undefined; // ]
    break;
  }
  for (i++; i < n; i++) if (!isJsonSpace(raw[i])) return undefined;
  return items;
}

/**
 * Parses a decompressed body as msgpack (libhoney's format) or JSON. Large JSON bodies are
 * parsed in pieces on the main thread only: on an ingest thread (batch-threads.ts) one string
 * of the body parsed faster (about 2.3 against 2.9 ms per 1,000-event body; in paired ingest
 * benchmark runs, events/s the same or up to a fifth higher).
 */
export function parseBody(raw: Buffer, contentType: string | undefined): unknown {
  try {
    if (isMsgpack(contentType)) return unpackr.unpack(raw);
    return (isMainThread && raw.length >= PIECES_FROM_BYTES && parseArrayInPieces(raw)) || JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new DecodeError(`body is not valid ${isMsgpack(contentType) ? 'msgpack' : 'JSON'}: ${(err as Error).message}`, 'malformed');
  }
}

/** A decompressed body → its value; throws DecodeError. */
export function parseDecompressed(raw: Buffer, contentType: string | undefined): unknown {
  // "The body is empty, or blank": whitespace alone is no JSON document either.
  if (raw.every(isJsonSpace)) throw new DecodeError('the body is blank', 'empty');
  return parseBody(raw, contentType);
}

/** An ingest body as sent → its value: undoes Content-Encoding, then parses; throws DecodeError. */
export async function decodeBody(body: Buffer, contentEncoding: string | undefined, contentType: string | undefined, maxBytes: number): Promise<unknown> {
  return parseDecompressed(await decompress(body, contentEncoding, maxBytes), contentType);
}
