// The optional native readers (native/columns, built by node-gyp when `npm install` can compile
// it): a /1/batch JSON body, or an OTLP trace request in protobuf, straight from its bytes into
// EventColumns, with no JavaScript value per event. Each reads only what it can read exactly as
// the JavaScript path would (JSON.parse and normalise.ts; decode-proto.ts and traces.ts), and
// answers undefined for anything else: the JavaScript path then decides, with its own refusals
// and errors. Without a compiler, Waggle reads everything in JavaScript. The addon is loaded by
// src/native-addon.ts.
import type { EventColumns } from '../stores/events/columns.js';
import { nativeAddon as addon, type NativeTraceGroup } from '../native-addon.js';
import type { IngestLimits } from './normalise.js';

/**
 * A JSON batch body's events as columns, or undefined: parse it in JavaScript. `posted`: the
 * columns in the form an ingest thread posts them in (src/ingest/tasks.ts; typed as EventColumns
 * all the same, as forPost's are), made so by the reader itself.
 */
export function readBatchNative(body: Uint8Array, receivedUs: number, expandDepth: number, limits: IngestLimits, posted = false): EventColumns | undefined {
  return addon?.readBatch(body, receivedUs, expandDepth, limits.maxFieldsPerEvent, limits.maxEventBytes, limits.maxStringBytes, posted);
}

/**
 * An OTLP trace request's (protobuf) events per dataset, or undefined: decode it in JavaScript.
 * `dataset`: every span's dataset (a classic key's); undefined: each resource's service name.
 * `posted`: as readBatchNative's.
 */
export function readTracesNative(body: Uint8Array, dataset: string | undefined, limits: IngestLimits, posted = false): { items: number; groups: NativeTraceGroup[] } | undefined {
  return addon?.readTraces(body, dataset, limits.maxFieldsPerEvent, limits.maxEventBytes, limits.maxStringBytes, posted);
}
