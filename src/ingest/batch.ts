// A /1/batch request body → its events as columns, or the reason the whole request is refused.
// Runs on an ingest thread (batch-threads.ts), or on the JavaScript thread when there are none:
// decompress (with the cap that defuses bombs), parse (JSON or msgpack), then normalise each
// item into the next row of the columns.
import { ColumnsBuilder, TooManyValues, type EventColumns } from '../stores/events/columns.js';
import { DecodeError, decompress, isMsgpack, parseDecompressed } from './decode.js';
import { readBatchNative } from './native-columns.js';
import { DEFAULT_LIMITS, EventRejected, normaliseBatchItemInto } from './normalise.js';

export interface BatchRequest {
  /** The body as sent (non-empty). */
  body: Uint8Array;
  contentEncoding?: string;
  contentType?: string;
  maxDecompressed: number;
  /** The dataset's expand_json_depth. */
  expandDepth: number;
  /** When the request arrived: the time of events that give none. */
  receivedUs: number;
  /** Read JSON bodies with the native reader when it is built (native-json.ts). */
  nativeJson: boolean;
  /** Decoded on an ingest thread: the native reader gives its columns in the posted form (tasks.ts). */
  posted?: boolean;
}

export type DecodedBatch =
  | {
      ok: true;
      /** Number of items in the body. */
      items: number;
      /** Items refused, by position, with the reason; every other item is a row of `columns`, in order. */
      refused: [number, string][];
      columns: EventColumns;
    }
  | { ok: false; kind: DecodeError['kind']; message: string };

export async function decodeBatch(req: BatchRequest): Promise<DecodedBatch> {
  let items: unknown;
  try {
    // (A Buffer arrives on another thread as a plain Uint8Array.)
    const body = Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength);
    const raw = await decompress(body, req.contentEncoding, req.maxDecompressed);
    if (req.nativeJson && !isMsgpack(req.contentType)) {
      const columns = readBatchNative(raw, req.receivedUs, req.expandDepth, DEFAULT_LIMITS, req.posted === true);
      if (columns) return { ok: true, items: columns.count, refused: [], columns };
    }
    items = parseDecompressed(raw, req.contentType);
  } catch (err) {
    if (err instanceof DecodeError) return { ok: false, kind: err.kind, message: err.message };
    throw err;
  }
  if (!Array.isArray(items)) return { ok: false, kind: 'malformed', message: 'the body must be an array of events' };
  if (items.length === 0) return { ok: false, kind: 'empty', message: 'the batch has no events' };
  const out = new ColumnsBuilder(items.length);
  const refused: [number, string][] = [];
  for (let i = 0; i < items.length; i++) {
    try {
      normaliseBatchItemInto(out, items[i], req.receivedUs, req.expandDepth, DEFAULT_LIMITS);
    } catch (err) {
      if (err instanceof TooManyValues) return { ok: false, kind: 'too-large', message: err.message };
      if (!(err instanceof EventRejected)) throw err;
      refused.push([i, err.message]);
    }
    items[i] = undefined; // garbage once it is a row
  }
  return { ok: true, items: items.length, refused, columns: out.finish() };
}
