// An OTLP request body → its events as columns, per dataset, or the reason the whole request is
// refused. Runs on an ingest thread (batch-threads.ts), or on the JavaScript thread when there
// are none: decompress (with the cap that defuses bombs), decode (protobuf or JSON), translate.
import { TooManyValues } from '../../stores/events/columns.js';
import { DecodeError, decompress } from '../decode.js';
import { readTracesNative } from '../native-columns.js';
import { DEFAULT_LIMITS, type IngestLimits } from '../normalise.js';
import { decodeLogsJson, decodeMetricsJson, decodeTracesJson } from './decode-json.js';
import { decodeLogsProto, decodeMetricsProto, decodeTracesProto } from './decode-proto.js';
import { translateLogs } from './logs.js';
import { translateMetrics } from './metrics.js';
import type { Signal } from './model.js';
import type { Translated } from './rows.js';
import { tracesDataset } from './datasets.js';
import { translateTraces, type DatasetChoice } from './traces.js';
import { WireError } from './wire.js';

export interface OtlpDecodeRequest {
  signal: Signal;
  /** The body as sent. */
  body: Uint8Array;
  /** OTLP/JSON; otherwise protobuf. */
  json: boolean;
  contentEncoding?: string;
  maxDecompressed: number;
  /** The key is a Honeycomb Classic key (datasets.ts). */
  classicKey: boolean;
  /** `x-honeycomb-dataset`, as sent. */
  datasetHeader?: string;
  /** When the request arrived: the time of log records that give none. */
  receivedUs: number;
  /** Read trace protobuf with the native reader when it is built (native-columns.ts). */
  native: boolean;
  /** Decoded on an ingest thread: the native reader gives its columns in the posted form (tasks.ts). */
  posted?: boolean;
}

export type DecodedOtlp = ({ ok: true } & Translated) | { ok: false; kind: 'too-large' | 'malformed'; message: string };

const isBlank = (b: Buffer) => b.every((c) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09);

export async function decodeOtlp(req: OtlpDecodeRequest): Promise<DecodedOtlp> {
  try {
    // (A Buffer arrives on another thread as a plain Uint8Array.)
    const sent = Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength);
    const raw = await decompress(sent, req.contentEncoding, req.maxDecompressed);
    // An empty body is an empty request (nothing to store), in either encoding.
    if (raw.length === 0 || (req.json && isBlank(raw))) return { ok: true, groups: [], items: 0, refused: [] };
    const limits = DEFAULT_LIMITS;
    const choice = { classicKey: req.classicKey, datasetHeader: req.datasetHeader };
    if (req.native && req.signal === 'traces' && !req.json) {
      const read = tracesNative(raw, choice, limits, req.posted === true);
      if (read) return read;
    }
    const value: unknown = req.json ? JSON.parse(raw.toString('utf8')) : raw;
    const body = value as Buffer;
    switch (req.signal) {
      case 'traces':
        return { ok: true, ...translateTraces(req.json ? decodeTracesJson(value) : decodeTracesProto(body), choice, limits) };
      case 'logs':
        return { ok: true, ...translateLogs(req.json ? decodeLogsJson(value) : decodeLogsProto(body), req.datasetHeader, limits, req.receivedUs) };
      case 'metrics':
        return { ok: true, ...translateMetrics(req.json ? decodeMetricsJson(value) : decodeMetricsProto(body), req.datasetHeader, limits) };
    }
  } catch (err) {
    if (err instanceof DecodeError) return { ok: false, kind: err.kind === 'too-large' ? 'too-large' : 'malformed', message: err.message };
    if (err instanceof TooManyValues) return { ok: false, kind: 'too-large', message: err.message };
    if (err instanceof WireError) return { ok: false, kind: 'malformed', message: err.message };
    if (err instanceof SyntaxError) return { ok: false, kind: 'malformed', message: `the body is not valid JSON: ${err.message}` };
    throw err;
  }
}

/** A trace request read by the native reader, or undefined: decode it in JavaScript. */
function tracesNative(raw: Buffer, choice: DatasetChoice, limits: IngestLimits, posted: boolean): DecodedOtlp | undefined {
  const read = readTracesNative(raw, choice.classicKey ? tracesDataset(true, choice.datasetHeader, undefined) : undefined, limits, posted);
  if (!read) return undefined;
  // It takes no request with a refusal: every row weighs 1.
  const groups = read.groups.map((g) => ({ ...g, rowWeight: new Uint32Array(g.rowItem.length).fill(1) }));
  return { ok: true, groups, items: read.items, refused: [] };
}

