// Loads the optional native readers (native/columns, built by node-gyp when `npm install` can
// compile it), and says whether they are there: src/ingest/native-columns.ts reads with them,
// settings.ts takes their presence as WAGGLE_INGEST_NATIVE's default; the event store's chunk
// writer takes addresses from it.
import { createRequire } from 'node:module';
import type { EventColumns } from './stores/events/columns.js';

/** One dataset's rows of a trace request, and each row's span (its index in the request). */
export interface NativeTraceGroup {
  dataset: string;
  columns: EventColumns;
  rowItem: Uint32Array;
}

export interface NativeAddon {
  /** `posted`: the columns in the form an ingest thread posts them in (posted-columns.ts), typed as EventColumns (as tasks.ts forPost's). */
  readBatch(body: Uint8Array, receivedUs: number, expandDepth: number, maxFields: number, maxEventBytes: number, maxStringBytes: number, posted: boolean): EventColumns | undefined;
  readTraces(body: Uint8Array, dataset: string | undefined, maxFields: number, maxEventBytes: number, maxStringBytes: number, posted: boolean): { items: number; groups: NativeTraceGroup[] } | undefined;
  /** The address of the array's first byte (for DuckDB string entries that point at it: src/stores/events/duckdb-chunks.ts). */
  addressOf(bytes: Uint8Array): number;
  /**
   * An attribute bucket's texts for one data chunk (src/stores/events/duckdb-bucket-texts.ts):
   * `runs` RUN_INTS numbers a run, each part's arrays its whole shared buffers; answers the bytes
   * of `buf` the texts take, or minus that when `buf` is too small (nothing written then).
   */
  bucketTexts(
    runs: Int32Array,
    runCount: number,
    texts: Uint8Array[],
    kinds: Uint8Array[],
    nums: Float64Array[],
    words: (Uint32Array | undefined)[],
    rows: number,
    buf: Uint8Array,
    entries: Uint8Array,
    validity: Uint8Array,
  ): number;
}

function load(): NativeAddon | undefined {
  try {
    return createRequire(import.meta.url)('@waggle/native-columns') as NativeAddon;
  } catch {
    return undefined;
  }
}

/** The addon, when it was built and loads. */
export const nativeAddon = load();

/** Whether the native readers were built and load (WAGGLE_INGEST_NATIVE's default). */
export const nativeColumnsAvailable = nativeAddon !== undefined;
