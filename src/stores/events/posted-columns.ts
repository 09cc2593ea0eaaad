// The column form (columns.ts) as an ingest thread posts it to the JavaScript thread
// (src/ingest/tasks.ts): the fields' names in one array and their numbers in one Int32Array,
// beside the three buffers every field's arrays are views of (columns.ts pack, and the native
// readers, make them so). A wide request names thousands of fields, and posting a field object
// with a view per array cost V8's serializer about 6 µs a field (10-30 ms a 1,000-event wide body,
// as much as decoding it); this form costs it a few buffers, and about 2 ms in all.
import { PACK_AFTER, transferables, type EventColumns, type FieldColumn } from './columns.js';

/** Columns as posted (FIELD_INTS numbers a field in `meta`). */
export interface PostedColumns {
  posted: true;
  count: number;
  timeUs: Float64Array;
  samplerate: Float64Array;
  text: Uint8Array;
  names: string[];
  meta: Int32Array;
  kinds: Uint8Array;
  nums: Float64Array;
  words?: Uint32Array;
}

/** Per field in PostedColumns.meta: mask, present, slots, kinds at, nums at, spans at, rows at (-1: none), constant. */
const FIELD_INTS = 8;

/**
 * Columns in the posted form, or as they are when their arrays are not views of shared buffers
 * (small requests), or when they are in that form already (the native readers make it).
 */
export function forPosting(cols: EventColumns | PostedColumns): EventColumns | PostedColumns {
  if ('posted' in cols) return cols;
  const { fields } = cols;
  if (fields.length <= PACK_AFTER) return cols;
  const kinds = fields[0].kinds;
  const nums = fields[0].nums;
  const words = fields.find((f) => f.spans ?? f.rows);
  const wordBuffer = words ? (words.spans ?? words.rows)!.buffer : undefined;
  const meta = new Int32Array(fields.length * FIELD_INTS);
  const names = new Array<string>(fields.length);
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    const slots = f.kinds.length;
    const shared =
      f.kinds.buffer === kinds.buffer &&
      f.nums.buffer === nums.buffer &&
      f.nums.length === slots &&
      (!f.spans || (f.spans.buffer === wordBuffer && f.spans.length === 2 * slots)) &&
      (!f.rows || (f.rows.buffer === wordBuffer && f.rows.length === slots));
    if (!shared) return cols;
    names[i] = f.name;
    const m = i * FIELD_INTS;
    meta[m] = f.mask;
    meta[m + 1] = f.present;
    meta[m + 2] = slots;
    meta[m + 3] = f.kinds.byteOffset;
    meta[m + 4] = f.nums.byteOffset / 8;
    meta[m + 5] = f.spans ? f.spans.byteOffset / 4 : -1;
    meta[m + 6] = f.rows ? f.rows.byteOffset / 4 : -1;
    meta[m + 7] = f.constant ? 1 : 0;
  }
  return {
    posted: true,
    count: cols.count,
    timeUs: cols.timeUs,
    samplerate: cols.samplerate,
    text: cols.text,
    names,
    meta,
    kinds: new Uint8Array(kinds.buffer),
    nums: new Float64Array(nums.buffer),
    words: wordBuffer ? new Uint32Array(wordBuffer) : undefined,
  };
}

/** The buffers a posted request's fields' arrays are views of. */
export interface SharedArrays {
  kinds: Uint8Array;
  nums: Float64Array;
  words?: Uint32Array;
}

/**
 * A field of posted columns, its arrays made (as views of the request's shared buffers) when
 * first read: most of a wide request's fields are attributes whose arrays only the native
 * bucket writer reads, by offset (duckdb-bucket-texts.ts), and four views a field for thousands
 * of fields a request were most of what the JavaScript thread allocated on wide batches.
 */
export class PostedField implements FieldColumn {
  private kindsView?: Uint8Array;
  private numsView?: Float64Array;
  private spansView?: Uint32Array;
  private rowsView?: Uint32Array;

  constructor(
    readonly name: string,
    readonly mask: number,
    readonly present: number,
    readonly constant: boolean,
    /** The request's shared buffers, and this field's place in them (elements; -1: none). */
    readonly shared: SharedArrays,
    readonly slots: number,
    readonly kindsAt: number,
    readonly numsAt: number,
    readonly spansAt: number,
    readonly rowsAt: number,
  ) {}

  get kinds(): Uint8Array {
    return (this.kindsView ??= this.shared.kinds.subarray(this.kindsAt, this.kindsAt + this.slots));
  }

  get nums(): Float64Array {
    return (this.numsView ??= this.shared.nums.subarray(this.numsAt, this.numsAt + this.slots));
  }

  get spans(): Uint32Array | undefined {
    return this.spansAt < 0 ? undefined : (this.spansView ??= this.shared.words!.subarray(this.spansAt, this.spansAt + 2 * this.slots));
  }

  get rows(): Uint32Array | undefined {
    return this.rowsAt < 0 ? undefined : (this.rowsView ??= this.shared.words!.subarray(this.rowsAt, this.rowsAt + this.slots));
  }
}

/** Columns posted by forPosting, as EventColumns again. */
export function fromPosting(x: EventColumns | PostedColumns): EventColumns {
  if (!('posted' in x)) return x;
  const { meta, kinds, nums, words } = x;
  const shared: SharedArrays = { kinds, nums, words };
  const fields = new Array<FieldColumn>(x.names.length);
  for (let i = 0; i < fields.length; i++) {
    const m = i * FIELD_INTS;
    fields[i] = new PostedField(x.names[i], meta[m], meta[m + 1], meta[m + 7] === 1, shared, meta[m + 2], meta[m + 3], meta[m + 4], meta[m + 5], meta[m + 6]);
  }
  return { count: x.count, timeUs: x.timeUs, samplerate: x.samplerate, fields, text: x.text };
}

/** The buffers to transfer with posted columns. */
export function postedTransferables(x: EventColumns | PostedColumns): ArrayBuffer[] {
  if (!('posted' in x)) return transferables(x);
  const out = new Set<ArrayBuffer>([x.timeUs.buffer, x.samplerate.buffer, x.text.buffer, x.meta.buffer, x.kinds.buffer, x.nums.buffer] as ArrayBuffer[]);
  if (x.words) out.add(x.words.buffer as ArrayBuffer);
  return [...out];
}
