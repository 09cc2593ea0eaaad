// One request's events, column by column: the form events take from decoding to the event
// store. A batch is decoded and normalised on an ingest thread (src/ingest/batch-threads.ts),
// which hands its events back in this form: typed arrays move between threads without being
// copied, all string values among them as one buffer of UTF-8 bytes, so the JavaScript thread
// that stages them into DuckDB neither parses nor builds an object (or a string) per event.
// The writer checks each column once per request, not each value, and the event store copies
// columns into DuckDB's vectors.
import type { Scalar } from './types.js';

/** One event with its fields in a Map (what normalising one event gives). */
export interface RowEvent {
  timeUs: number;
  samplerate: number;
  fields: Map<string, Scalar>;
}

/** What a row holds in a column. */
export const Value = { Absent: 0, String: 1, Integer: 2, Float: 3, Boolean: 4 } as const;
export type Value = (typeof Value)[keyof typeof Value];

/**
 * One field's values across a request's events: dense (a slot per event, what a field most
 * events have is) or sparse (`rows`: a slot per event that has the field, for the long tail of a
 * wide dataset, where a request of 1,000 events may name 3,000 fields each in a few of them:
 * dense, that was 40 slots per value). Read a row's slot with `slotOf` or walk `slotsIn`.
 */
export interface FieldColumn {
  name: string;
  /** Each slot's kind of value (`Value.Absent`: that event has no such field). */
  kinds: Uint8Array;
  /**
   * `1 << kind` of every kind a row was given (a value overwritten within its event, or in an
   * event refused later, still counts: the mask may be wider than the values, never narrower).
   */
  mask: number;
  /** Rows with a value (at least one: columns without are left out). */
  present: number;
  /** Each slot's number (booleans as 0 and 1). */
  nums: Float64Array;
  /** Each slot's string as [start, end) in `EventColumns.text` (textAt); only when the mask has strings. */
  spans?: Uint32Array;
  /** Sparse: the row of each slot (`present` of them, ascending); absent: slot i is row i. */
  rows?: Uint32Array;
  /**
   * Every row has a string, the same one (one span of the text): a resource's attributes on each
   * of its spans, a client's fields on each of its events. The event store writes it once per
   * chunk. Never true wrongly; may be false for a column that is in fact constant.
   */
  constant?: boolean;
}

export interface EventColumns {
  /** Number of events (rows). */
  count: number;
  timeUs: Float64Array;
  samplerate: Float64Array;
  fields: FieldColumn[];
  /**
   * Every string value, one after another, as UTF-8 bytes (the spans count bytes): moved between
   * threads without a copy, and written into DuckDB's vectors without becoming a JavaScript
   * string again. (As one string, it was copied on posting and made into a new string on the
   * JavaScript thread: 1.2 CPU s more per million OTLP spans there, in four paired runs.)
   */
  text: Uint8Array;
}

const utf8 = new TextDecoder();

/** The string at [start, end) of the columns' text. */
export function textAt(cols: EventColumns, start: number, end: number): string {
  return utf8.decode(cols.text.subarray(start, end));
}

export const bit = (kind: Value): number => 1 << kind;

/** The kind of a value: what the ingest writer infers a column's type from. */
export function kindOf(v: Scalar): Value {
  if (typeof v === 'string') return Value.String;
  if (typeof v === 'boolean') return Value.Boolean;
  // BIGINT holds integers below 2^63; larger ones (1e20 is an integer to JS) are stored as floats.
  return Number.isInteger(v) && Math.abs(v) < 2 ** 63 ? Value.Integer : Value.Float;
}

/** The slot of a row in a column (-1 when the row has none). */
export function slotOf(f: FieldColumn, row: number): number {
  if (!f.rows) return row;
  const s = firstSlotFrom(f, row);
  return s < f.present && f.rows[s] === row ? s : -1;
}

/** The first slot of a row at or after `row` (a sparse column's `present` when none). */
export function firstSlotFrom(f: FieldColumn, row: number): number {
  if (!f.rows) return row;
  let lo = 0;
  let hi = f.present;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (f.rows[mid] < row) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A slot's value (undefined when absent). */
export function valueOfSlot(cols: EventColumns, f: FieldColumn, slot: number): Scalar | undefined {
  switch (f.kinds[slot]) {
    case Value.String:
      return textAt(cols, f.spans![2 * slot], f.spans![2 * slot + 1]);
    case Value.Integer:
    case Value.Float:
      return f.nums[slot];
    case Value.Boolean:
      return f.nums[slot] !== 0;
    default:
      return undefined;
  }
}

/** A row's value in a column (undefined when absent). */
export function valueAt(cols: EventColumns, f: FieldColumn, row: number): Scalar | undefined {
  const slot = slotOf(f, row);
  return slot < 0 ? undefined : valueOfSlot(cols, f, slot);
}

/**
 * Most slots one request's columns may hold (a dense column has one per event, a sparse one per
 * value, and a column turns dense only once a quarter of the events have it, so this bounds a
 * request's values about fourfold). Past it the request is refused as too large. Real batches
 * are far below (1,000 events of 2,000 fields: 2 M).
 */
export const MAX_VALUES_PER_REQUEST = 1 << 25;

/** A column is sparse until it has this many values and a quarter of the rows so far have it (then dense). */
export const DENSE_AFTER = 16;
const SPARSE_START = 4;

export class TooManyValues extends Error {
  constructor() {
    super(`the request's columns would hold over ${MAX_VALUES_PER_REQUEST} values; send fewer events per request`);
  }
}

/** A column being built, and the last string it was given (to share its text when the next row repeats it). */
interface Draft {
  column: FieldColumn;
  last: string | undefined;
  lastStart: number;
  lastEnd: number;
  /** Spans of the text this column's rows were given (1: every string row has the same one). */
  spansMade: number;
}

/**
 * Builds EventColumns one event at a time: `set()` each field of the row, then `endRow()`, or
 * `abandonRow()` to drop the row (an event refused halfway through normalising it). Setting a
 * field twice within a row keeps the later value, as a Map would.
 */
export class ColumnsBuilder {
  private readonly drafts = new Map<string, Draft>();
  /**
   * Every string value so far, as UTF-8, in `used` bytes of a buffer that doubles when full. A
   * value the row before gave the same column (a service name, a method, the resource's
   * attributes on every span) points at the same bytes instead of adding to them.
   */
  private bytes: Buffer;
  private used = 0;
  private readonly timeUs: Float64Array;
  private readonly samplerate: Float64Array;
  private row = 0;
  /** Columns given a value in the current row. */
  private readonly touched: FieldColumn[] = [];
  /** Slots allocated across the columns (MAX_VALUES_PER_REQUEST). */
  private slots = 0;

  constructor(private readonly capacity: number) {
    // (Never from Buffer's shared pool: the buffer is moved to another thread.)
    this.bytes = Buffer.allocUnsafeSlow(Math.min(1 << 20, Math.max(256, capacity * 128)));
    this.timeUs = new Float64Array(capacity);
    this.samplerate = new Float64Array(capacity);
  }

  /** Fields set in the current row (the normaliser's count against the per-event cap). */
  get size(): number {
    return this.touched.length;
  }

  set(name: string, value: Scalar): void {
    let d = this.drafts.get(name);
    if (d === undefined) {
      this.allocate(SPARSE_START);
      d = {
        column: { name, kinds: new Uint8Array(SPARSE_START), mask: 0, present: 0, nums: new Float64Array(SPARSE_START), rows: new Uint32Array(SPARSE_START) },
        last: undefined,
        lastStart: 0,
        lastEnd: 0,
        spansMade: 0,
      };
      this.drafts.set(name, d);
    }
    const c = d.column;
    const row = this.row;
    const slot = this.slot(c);
    const kind = kindOf(value);
    c.kinds[slot] = kind;
    c.mask |= 1 << kind;
    if (kind === Value.String) {
      const spans = (c.spans ??= new Uint32Array(2 * c.kinds.length));
      if (value !== d.last) {
        d.last = value as string;
        d.lastStart = this.used;
        this.append(value as string);
        d.lastEnd = this.used;
        d.spansMade++;
      }
      spans[2 * slot] = d.lastStart;
      spans[2 * slot + 1] = d.lastEnd;
    } else c.nums[slot] = kind === Value.Boolean ? (value ? 1 : 0) : (value as number);
    // A sparse column that a quarter of the rows so far have turns dense.
    if (c.rows && c.present >= DENSE_AFTER && 4 * c.present >= row + 1) this.densify(c);
  }

  /** The current row's slot in a column, made (and counted present) when the row has none yet. */
  private slot(c: FieldColumn): number {
    const row = this.row;
    if (!c.rows) {
      if (c.kinds[row] === Value.Absent) {
        this.touched.push(c);
        c.present++;
      }
      return row;
    }
    const n = c.present;
    if (n > 0 && c.rows[n - 1] === row) return n - 1;
    if (n === c.kinds.length) this.resize(c, 2 * n);
    c.rows[n] = row;
    c.present = n + 1;
    this.touched.push(c);
    return n;
  }

  /** Gives a sparse column `size` slots. */
  private resize(c: FieldColumn, size: number): void {
    this.allocate(size - c.kinds.length);
    const grow = <T extends Uint8Array | Uint32Array | Float64Array>(a: T, n: number): T => {
      const b = new (a.constructor as new (n: number) => T)(n);
      b.set(a);
      return b;
    };
    c.kinds = grow(c.kinds, size);
    c.nums = grow(c.nums, size);
    c.rows = grow(c.rows!, size);
    if (c.spans) c.spans = grow(c.spans, 2 * size);
  }

  /** Makes a sparse column dense: a slot per row of the request. */
  private densify(c: FieldColumn): void {
    const rows = c.rows!;
    this.allocate(this.capacity - c.kinds.length);
    const kinds = new Uint8Array(this.capacity);
    const nums = new Float64Array(this.capacity);
    const spans = c.spans ? new Uint32Array(2 * this.capacity) : undefined;
    for (let i = 0; i < c.present; i++) {
      const r = rows[i];
      kinds[r] = c.kinds[i];
      nums[r] = c.nums[i];
      if (spans) {
        spans[2 * r] = c.spans![2 * i];
        spans[2 * r + 1] = c.spans![2 * i + 1];
      }
    }
    c.kinds = kinds;
    c.nums = nums;
    c.spans = spans;
    c.rows = undefined;
  }

  private allocate(slots: number): void {
    this.slots += slots;
    if (this.slots > MAX_VALUES_PER_REQUEST) throw new TooManyValues();
  }

  /** Appends a string's UTF-8 to the text (well-formed: normalise.ts made it so). */
  private append(s: string): void {
    const n = s.length;
    if (this.used + 3 * n > this.bytes.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(2 * this.bytes.length, this.used + 3 * n));
      this.bytes.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    const b = this.bytes;
    const at = this.used;
    // Short ASCII strings (most of them) are copied here: cheaper than a call into the encoder.
    if (n <= 32) {
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        b[at + i] = c;
      }
      if (i === n) {
        this.used = at + n;
        return;
      }
    }
    this.used = at + b.write(s, at);
  }

  endRow(timeUs: number, samplerate: number): void {
    this.timeUs[this.row] = timeUs;
    this.samplerate[this.row] = samplerate;
    this.touched.length = 0;
    this.row++;
  }

  /** Forgets the current row's values (their strings stay in the text, unreferenced). */
  abandonRow(): void {
    for (const c of this.touched) {
      c.present--;
      // (A sparse column's slot for this row is its last.)
      c.kinds[c.rows ? c.present : this.row] = Value.Absent;
    }
    this.touched.length = 0;
  }

  /** The events so far; the builder is spent. */
  finish(): EventColumns {
    const fields: FieldColumn[] = [];
    for (const d of this.drafts.values()) {
      const c = d.column;
      if (c.present === 0) continue;
      // Sparse only where it saves: a column a quarter of the rows have ends dense (small requests too).
      if (c.rows && 4 * c.present >= this.row) this.densify(c);
      // (The mask and the count of spans include rows abandoned or overwritten: false, never wrongly true.)
      c.constant = c.present === this.row && !c.rows && c.mask === bit(Value.String) && d.spansMade === 1;
      fields.push(c);
    }
    if (fields.length > PACK_AFTER) pack(fields, this.row);
    return { count: this.row, timeUs: this.timeUs, samplerate: this.samplerate, fields, text: new Uint8Array(this.bytes.buffer, this.bytes.byteOffset, this.used) };
  }
}

/** Columns past which a request's arrays are packed into three buffers (pack). */
export const PACK_AFTER = 32;

/**
 * Makes every column's arrays views into three buffers (kinds; nums; spans and rows): moving the
 * columns to another thread then moves three buffers, not four per column (a wide request names
 * thousands of fields, and moving each buffer has a cost). The native readers do the same.
 */
function pack(fields: FieldColumn[], count: number): void {
  let kindCount = 0;
  let wordCount = 0;
  for (const f of fields) {
    const slots = f.rows ? f.present : count;
    kindCount += slots;
    if (f.spans) wordCount += 2 * slots;
    if (f.rows) wordCount += slots;
  }
  const kinds = new Uint8Array(kindCount);
  const nums = new Float64Array(kindCount);
  const words = new Uint32Array(wordCount);
  let at = 0;
  let wordAt = 0;
  const move = (from: Uint32Array, n: number): Uint32Array => {
    words.set(from.subarray(0, n), wordAt);
    wordAt += n;
    return words.subarray(wordAt - n, wordAt);
  };
  for (const f of fields) {
    const slots = f.rows ? f.present : count;
    kinds.set(f.kinds.subarray(0, slots), at);
    nums.set(f.nums.subarray(0, slots), at);
    f.kinds = kinds.subarray(at, at + slots);
    f.nums = nums.subarray(at, at + slots);
    at += slots;
    if (f.spans) f.spans = move(f.spans, 2 * slots);
    if (f.rows) f.rows = move(f.rows, slots);
  }
}

/** Normalised events (each a Map of fields) as columns. */
export function columnsOf(events: readonly RowEvent[]): EventColumns {
  const b = new ColumnsBuilder(events.length);
  for (const e of events) {
    for (const [name, value] of e.fields) b.set(name, value);
    b.endRow(e.timeUs, e.samplerate);
  }
  return b.finish();
}

/** Columns as normalised events, fields in column order (the writer's path for new columns). */
export function rowsOf(cols: EventColumns): RowEvent[] {
  const rows: RowEvent[] = [];
  for (let r = 0; r < cols.count; r++) rows.push({ timeUs: cols.timeUs[r], samplerate: cols.samplerate[r], fields: new Map() });
  // Column by column: a sparse column's values go straight to their rows.
  for (const f of cols.fields) {
    const slots = f.rows ? f.present : cols.count;
    for (let s = 0; s < slots; s++) {
      const v = valueOfSlot(cols, f, s);
      if (v !== undefined) rows[f.rows ? f.rows[s] : s].fields.set(f.name, v);
    }
  }
  return rows;
}

/** The buffers to transfer (not copy) when posting columns to another thread. */
export function transferables(cols: EventColumns): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>([cols.timeUs.buffer as ArrayBuffer, cols.samplerate.buffer as ArrayBuffer]);
  for (const f of cols.fields) {
    out.add(f.kinds.buffer as ArrayBuffer);
    out.add(f.nums.buffer as ArrayBuffer);
    if (f.spans) out.add(f.spans.buffer as ArrayBuffer);
    if (f.rows) out.add(f.rows.buffer as ArrayBuffer);
  }
  out.add(cols.text.buffer as ArrayBuffer);
  return [...out];
}
