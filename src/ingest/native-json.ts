// The optional native reader of /1/batch JSON bodies (native/json-columns, built by node-gyp
// when `npm install` can compile it): the body's bytes straight into EventColumns, with no
// JavaScript value per event. It reads only bodies it can read exactly as JSON.parse and
// normalise.ts would, and answers undefined for anything else (the JavaScript path then
// decides, with its own refusals and errors). Without a compiler, Waggle parses in JavaScript.
import { createRequire } from 'node:module';
import type { EventColumns } from '../stores/events/columns.js';
import type { IngestLimits } from './normalise.js';

type ReadBatch = (body: Uint8Array, receivedUs: number, expandDepth: number, maxFields: number, maxEventBytes: number, maxStringBytes: number) => EventColumns | undefined;

function load(): ReadBatch | undefined {
  try {
    return (createRequire(import.meta.url)('@waggle/json-columns') as { readBatch: ReadBatch }).readBatch;
  } catch {
    return undefined;
  }
}

const readBatch = load();

/** Whether the native reader was built and loads (WAGGLE_INGEST_NATIVE_JSON's default). */
export const nativeJsonAvailable = readBatch !== undefined;

/** A JSON batch body's events as columns, or undefined: parse it in JavaScript. */
export function readBatchNative(body: Uint8Array, receivedUs: number, expandDepth: number, limits: IngestLimits): EventColumns | undefined {
  return readBatch?.(body, receivedUs, expandDepth, limits.maxFieldsPerEvent, limits.maxEventBytes, limits.maxStringBytes);
}
