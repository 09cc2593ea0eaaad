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

/** One field's values across a request's events. */
export interface FieldColumn {
  name: string;
  /** Each row's kind of value (`Value.Absent`: that event has no such field). */
  kinds: Uint8Array;
  /**
   * `1 << kind` of every kind a row was given (a value overwritten within its event, or in an
   * event refused later, still counts: the mask may be wider than the values, never narrower).
   */
  mask: number;
  /** Rows with a value (at least one: columns without are left out). */
  present: number;
  /** Each row's number (booleans as 0 and 1). */
  nums: Float64Array;
  /** Each row's string as [start, end) in `EventColumns.text` (textAt); only when the mask has strings. */
  spans?: Uint32Array;
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

/** A row's value in a column (undefined when absent). */
export function valueAt(cols: EventColumns, f: FieldColumn, row: number): Scalar | undefined {
  switch (f.kinds[row]) {
    case Value.String:
      return textAt(cols, f.spans![2 * row], f.spans![2 * row + 1]);
    case Value.Integer:
    case Value.Float:
      return f.nums[row];
    case Value.Boolean:
      return f.nums[row] !== 0;
    default:
      return undefined;
  }
}

/**
 * Most values one request's columns may hold: every column has a slot for every event, so a
 * body of many events each naming new fields would otherwise take columns × events of memory
 * (6,000 events of one new field each: 36 M slots, over 300 MB). Past it the request is refused
 * as too large. Real batches are far below (1,000 events of 2,000 fields: 2 M).
 */
export const MAX_VALUES_PER_REQUEST = 1 << 25;

export class TooManyValues extends Error {
  constructor() {
    super(`the request's events × distinct fields is over ${MAX_VALUES_PER_REQUEST}; send fewer events per request`);
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
      if ((this.drafts.size + 1) * this.capacity > MAX_VALUES_PER_REQUEST) throw new TooManyValues();
      d = { column: { name, kinds: new Uint8Array(this.capacity), mask: 0, present: 0, nums: new Float64Array(this.capacity) }, last: undefined, lastStart: 0, lastEnd: 0, spansMade: 0 };
      this.drafts.set(name, d);
    }
    const c = d.column;
    const row = this.row;
    if (c.kinds[row] === Value.Absent) {
      this.touched.push(c);
      c.present++;
    }
    const kind = kindOf(value);
    c.kinds[row] = kind;
    c.mask |= 1 << kind;
    if (kind === Value.String) {
      const spans = (c.spans ??= new Uint32Array(2 * this.capacity));
      if (value !== d.last) {
        d.last = value as string;
        d.lastStart = this.used;
        this.append(value as string);
        d.lastEnd = this.used;
        d.spansMade++;
      }
      spans[2 * row] = d.lastStart;
      spans[2 * row + 1] = d.lastEnd;
    } else c.nums[row] = kind === Value.Boolean ? (value ? 1 : 0) : (value as number);
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
    for (const d of this.touched) {
      d.kinds[this.row] = Value.Absent;
      d.present--;
    }
    this.touched.length = 0;
  }

  /** The events so far; the builder is spent. */
  finish(): EventColumns {
    const fields: FieldColumn[] = [];
    for (const d of this.drafts.values()) {
      const c = d.column;
      if (c.present === 0) continue;
      // (The mask and the count of spans include rows abandoned or overwritten: false, never wrongly true.)
      c.constant = c.present === this.row && c.mask === bit(Value.String) && d.spansMade === 1;
      fields.push(c);
    }
    return { count: this.row, timeUs: this.timeUs, samplerate: this.samplerate, fields, text: new Uint8Array(this.bytes.buffer, this.bytes.byteOffset, this.used) };
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
  for (let r = 0; r < cols.count; r++) {
    const fields = new Map<string, Scalar>();
    for (const f of cols.fields) {
      const v = valueAt(cols, f, r);
      if (v !== undefined) fields.set(f.name, v);
    }
    rows.push({ timeUs: cols.timeUs[r], samplerate: cols.samplerate[r], fields });
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
  }
  out.add(cols.text.buffer as ArrayBuffer);
  return [...out];
}
