// The embedded event store's append path (duckdb-store.ts): events come column by column
// (columns.ts) and are written into DuckDB data chunks (2,048 rows each), handed to an appender
// whole. Numbers, booleans, times and short ASCII strings are written into typed arrays in
// JavaScript and copied into each vector with one native call per column per chunk; only longer
// strings cross into the native module one call each. A column whose rows all have the same
// string in a chunk (ColumnsBuilder marks such columns `constant`) becomes one constant vector:
// one call for the chunk. (One Appender call per value cost two to three times as much of the
// JavaScript thread, the thread that also serves every request.) Fields kept as attributes
// (placement.ts) go into their bucket's VARCHAR vector, one text of entries per row
// (duckdb-attributes.ts).
import { createRequire } from 'node:module';
import { endianness } from 'node:os';
import { DuckDBDataChunk, type DuckDBAppender } from '@duckdb/node-api';
import type Bindings from '@duckdb/node-bindings';
import type { ColumnType } from '../config/types.js';
import { firstSlotFrom, textAt, Value, type EventColumns, type FieldColumn } from './columns.js';
import { ENTRY, ESCAPE, ESCAPED_ENTRY, ESCAPED_ESCAPE, NUMBER_TEXT_BYTES, entryHead, putNumberText } from './duckdb-attributes.js';
import { MAX_ATTRIBUTE_BUCKETS, parsePlacement } from './placement.js';
import type { AppendBatch } from './types.js';

// The raw C API bindings, for writing data chunks straight into DuckDB's vector memory. Loaded
// from where @duckdb/node-api finds them, so that both use the same native module (its handles
// are only valid there).
export const bindings: typeof Bindings = createRequire(createRequire(import.meta.url).resolve('@duckdb/node-api'))('@duckdb/node-bindings');

/**
 * A table's columns after the fixed ones, in table order: field columns by type, attribute
 * buckets by number.
 */
export type Layout = ({ physical: string; type: ColumnType } | { bucket: number })[];

const VECTOR_SIZE = bindings.vector_size();
/** DuckDB's string_t: 16 bytes, holding strings of up to 12 bytes inline. */
const STRING_T = 16;
const STRING_INLINE = 12;
const TWO_32 = 2 ** 32;
const LITTLE_ENDIAN = endianness() === 'LE';

/** How a column's values are written (the column's stored type). */
const Kind = { String: 0, Integer: 1, Float: 2, Boolean: 3 } as const;
type Kind = (typeof Kind)[keyof typeof Kind];
const KIND: Record<ColumnType, Kind> = { string: Kind.String, integer: Kind.Integer, float: Kind.Float, boolean: Kind.Boolean };
const LOGICAL: Record<ColumnType, Bindings.Type> = {
  string: bindings.Type.VARCHAR,
  integer: bindings.Type.BIGINT,
  float: bindings.Type.DOUBLE,
  boolean: bindings.Type.BOOLEAN,
};

/** A table layout as the chunk writer needs it: column kinds, positions and DuckDB types. */
export interface Shape {
  /** The kind of each column after the fixed ones (a bucket's is unused). */
  kinds: Kind[];
  /** Field column name → position (0 = the first column after the fixed ones). */
  position: Map<string, number>;
  /** Each attribute bucket's position (-1: the table has no such bucket). */
  bucketPosition: number[];
  /** Logical types of every table column, the three fixed ones first. */
  logical: Bindings.LogicalType[];
}

const shapes = new WeakMap<Layout, Shape>();

/** The shape of a layout; layouts are replaced (never changed) when a table changes, so this caches per layout. */
export function shapeOf(layout: Layout): Shape {
  let shape = shapes.get(layout);
  if (!shape) {
    const fixed = [bindings.Type.TIMESTAMP, bindings.Type.BIGINT, bindings.Type.TIMESTAMP].map((t) => bindings.create_logical_type(t));
    const bucketPosition = new Array<number>(MAX_ATTRIBUTE_BUCKETS).fill(-1);
    layout.forEach((c, i) => {
      if ('bucket' in c) bucketPosition[c.bucket] = i;
    });
    shape = {
      kinds: layout.map((c) => ('bucket' in c ? Kind.String : KIND[c.type])),
      position: new Map(layout.flatMap((c, i) => ('bucket' in c ? [] : [[c.physical, i] as const]))),
      bucketPosition,
      logical: [
        ...fixed,
        ...layout.map((c) =>
          bindings.create_logical_type('bucket' in c ? bindings.Type.VARCHAR : LOGICAL[c.type]),
        ),
      ],
    };
    shapes.set(layout, shape);
  }
  return shape;
}

/**
 * One column's values for the chunk being filled, in JavaScript memory (copied into the vector
 * once the chunk is full: the bindings give no view of a vector's own memory to write through).
 */
class ColumnBuffer {
  readonly validity: Uint8Array<ArrayBuffer>;
  readonly bytes: ArrayBuffer;
  readonly u32: Uint32Array;
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  readonly u8: Uint8Array;
  /** The chunk (by number) this buffer holds values of; -1: none yet. */
  chunk = -1;
  vector?: Bindings.Vector;

  /** Strings too long to inline (or not ASCII), by row: given to DuckDB one by one after the copy. */
  private longRows?: Uint32Array;
  private longValues?: (string | Uint8Array)[];
  private longCount = 0;
  /**
   * The one string of this chunk's rows 0 to constantRows - 1, while they all have it (columns
   * marked constant): written as a constant vector, one native call for the chunk, unless the
   * chunk's other rows differ (then it is written row by row after all).
   */
  constantText?: string;
  constantRows = 0;

  /** `rows`: how many it holds (a chunk's, or a map's entries for the values of a bucket). */
  constructor(
    readonly kind: Kind,
    private readonly rows = VECTOR_SIZE,
  ) {
    this.validity = new Uint8Array(Math.ceil(rows / 64) * 8);
    this.bytes = new ArrayBuffer(rows * (kind === Kind.String ? STRING_T : 8));
    this.u32 = new Uint32Array(this.bytes);
    this.i32 = new Int32Array(this.bytes);
    this.f64 = new Float64Array(this.bytes);
    this.u8 = new Uint8Array(this.bytes);
  }

  /** Readies the buffer for a new chunk: every row NULL (and every inline string empty); `rows`: of the first rows only. */
  clear(rows = this.rows): void {
    this.validity.fill(0, 0, Math.ceil(rows / 8));
    if (this.kind === Kind.String) {
      this.u8.fill(0, 0, rows * STRING_T);
      this.longCount = 0;
      this.constantText = undefined;
      this.constantRows = 0;
    }
  }

  /**
   * Takes rows `row` to `row + take - 1` as `text` if they start the chunk or continue its
   * constant rows with the same string; false otherwise (the caller writes them row by row).
   */
  extendConstant(text: string, row: number, take: number): boolean {
    if (row !== 0 && (this.constantText !== text || this.constantRows !== row)) return false;
    this.constantText = text;
    this.constantRows = row + take;
    return true;
  }

  /** Writes the constant rows as ordinary ones. */
  unconstant(): void {
    const text = this.constantText;
    if (text === undefined) return;
    this.constantText = undefined;
    for (let r = 0; r < this.constantRows; r++) {
      this.setString(r, text);
      this.validity[r >> 3] |= 1 << (r & 7);
    }
  }

  /**
   * A VARCHAR value. DuckDB keeps a string of up to 12 bytes inline in its 16-byte string_t
   * (length, then the bytes, zero-padded): short ASCII strings are written so here, with no
   * call into the native module. Longer ones need DuckDB to copy them to the vector's heap.
   */
  setString(row: number, text: string): void {
    const n = text.length;
    if (n <= STRING_INLINE) {
      const at = row * STRING_T + 4;
      let i = 0;
      for (; i < n; i++) {
        const ch = text.charCodeAt(i);
        if (ch >= 0x80) break;
        this.u8[at + i] = ch;
      }
      if (i === n) {
        this.u32[row * (STRING_T / 4)] = n;
        return;
      }
      this.u8.fill(0, at, at + STRING_INLINE);
    }
    this.addLong(row, text);
  }

  /** A string value given as UTF-8 bytes (EventColumns.text): inline when it fits. */
  setBytes(row: number, bytes: Uint8Array, start: number, end: number): void {
    const n = end - start;
    if (n <= STRING_INLINE) {
      const at = row * STRING_T + 4;
      for (let i = 0; i < n; i++) this.u8[at + i] = bytes[start + i];
      this.u32[row * (STRING_T / 4)] = n;
      return;
    }
    this.addLong(row, bytes.subarray(start, end));
  }

  /** A value for DuckDB to copy to the vector's heap, after the copy of the inline ones. */
  private addLong(row: number, value: string | Uint8Array): void {
    // (Sized for a whole chunk once: pushing onto arrays emptied per chunk regrew them every time.)
    const k = this.longCount++;
    (this.longRows ??= new Uint32Array(this.rows))[k] = row;
    (this.longValues ??= new Array<string>(this.rows).fill(''))[k] = value;
  }

  /** Copies `rows` values and their validity into the vector. */
  copyTo(vector: Bindings.Vector, rows: number, validity = true): void {
    if (this.constantText !== undefined) {
      if (this.constantRows === rows) return bindings.vector_reference_value(vector, bindings.create_varchar(this.constantText));
      this.unconstant();
    }
    const size = this.kind === Kind.Boolean ? rows : this.kind === Kind.String ? rows * STRING_T : rows * 8;
    bindings.copy_data_to_vector(vector, 0, this.bytes, 0, size);
    // After the copy: DuckDB writes these rows' string_t (pointing into the vector's heap) itself.
    for (let i = 0; i < this.longCount; i++) {
      const v = this.longValues![i];
      if (typeof v === 'string') bindings.vector_assign_string_element(vector, this.longRows![i], v);
      else bindings.vector_assign_string_element_len(vector, this.longRows![i], v);
    }
    if (validity) this.copyValidityTo(vector, rows);
  }

  copyValidityTo(vector: Bindings.Vector, rows: number): void {
    bindings.vector_ensure_validity_writable(vector);
    bindings.copy_data_to_vector_validity(vector, 0, this.validity.buffer, 0, Math.ceil(rows / 64) * 8);
  }
}

/** All NULL: the validity of a field column no event of a chunk has. */
const NO_VALUES = new ColumnBuffer(Kind.Boolean);

/**
 * Writes an integral number (exact in a double; |v| < 2^63) as a little-endian int64 without
 * making a BigInt: both halves come out exact, since dividing by 2^32 is exact and the low part
 * is an integer below 2^32.
 */
function setInt64(b: ColumnBuffer, row: number, v: number): void {
  const hi = Math.floor(v / TWO_32);
  b.u32[2 * row] = v - hi * TWO_32;
  b.i32[2 * row + 1] = hi;
}

function invalid(message: string): Error {
  return new Error(`event store append: ${message}`);
}

/** Where a field's values go in the table: a field column (its position), or an attribute of a bucket. */
type Target = { column: number } | { bucket: number; key: number };

/** A run of one attribute field's rows within a chunk: part rows `from`… go to chunk rows `row`…. */
interface AttributeRun {
  part: EventColumns;
  field: FieldColumn;
  key: number;
  from: number;
  row: number;
  take: number;
}

/** Appends one batch's events to `appender` in data chunks of the table's shape. */
export function appendChunks(appender: DuckDBAppender, shape: Shape, batch: AppendBatch, ingestedUs: number): void {
  if (!LITTLE_ENDIAN) throw invalid('the chunk writer assumes a little-endian machine');
  const { parts, columns } = batch;
  const { kinds } = shape;
  const width = kinds.length;
  // Field (or physical) name → where its values go, resolved once per name per batch. A field
  // moving to a column of its own (placement.ts) is written to the column.
  const targets = new Map<string, Target>();
  const targetOf = (name: string): Target => {
    let t = targets.get(name);
    if (t === undefined) {
      // (Without the registry's placements, parts name table columns.)
      const physical = columns ? columns.get(name)?.physical : undefined;
      const p = columns ? (physical === undefined ? undefined : parsePlacement(physical)) : { column: name };
      const column = p?.column === undefined ? undefined : shape.position.get(p.column);
      if (column !== undefined) t = { column };
      else if (p?.attribute && !p.column && shape.bucketPosition[p.attribute.bucket] >= 0) t = p.attribute;
      if (t === undefined) throw invalid(`no column for ${JSON.stringify(name)} in the table`);
      targets.set(name, t);
    }
    return t;
  };
  let total = 0;
  for (const part of parts) total += part.count;
  const time = new ColumnBuffer(Kind.Integer);
  const samplerate = new ColumnBuffer(Kind.Integer);
  const ingested = new ColumnBuffer(Kind.Integer);
  for (let row = 0; row < Math.min(VECTOR_SIZE, total); row++) setInt64(ingested, row, ingestedUs);
  // Field columns' buffers, made when a column first gets a value.
  const buffers: (ColumnBuffer | undefined)[] = new Array(width);
  // Each bucket's attribute runs in the chunk being filled, and the bucket texts' builder.
  const runs: AttributeRun[][] = Array.from({ length: MAX_ATTRIBUTE_BUCKETS }, () => []);
  let texts: TextBucketBuilder | undefined;
  const chunk = new DuckDBDataChunk(bindings.create_data_chunk(shape.logical));
  const raw = chunk.chunk;
  // The next row to write: which part, which of its rows.
  let pi = 0;
  let from = 0;
  for (let start = 0, n = 0; start < total; start += VECTOR_SIZE, n++) {
    const rows = Math.min(VECTOR_SIZE, total - start);
    if (n > 0) bindings.data_chunk_reset(raw);
    // The chunk's rows, a run of rows of one part at a time.
    for (let row = 0; row < rows; ) {
      const part = parts[pi];
      const take = Math.min(rows - row, part.count - from);
      for (let i = 0; i < take; i++) {
        setInt64(time, row + i, Math.trunc(part.timeUs[from + i]));
        setInt64(samplerate, row + i, part.samplerate[from + i]);
      }
      for (const f of part.fields) {
        const target = targetOf(f.name);
        if (!('column' in target)) {
          runs[target.bucket].push({ part, field: f, key: target.key, from, row, take });
          continue;
        }
        const c = target.column;
        let b = buffers[c];
        if (b === undefined) b = buffers[c] = new ColumnBuffer(kinds[c]);
        if (b.chunk !== n) {
          // First value of this column in this chunk: every other row is NULL.
          b.chunk = n;
          b.clear();
          b.vector = bindings.data_chunk_get_vector(raw, c + 3);
        }
        if (f.constant && b.kind === Kind.String && b.extendConstant(textAt(part, f.spans![2 * from], f.spans![2 * from + 1]), row, take)) continue;
        b.unconstant();
        writeRun(b, part, f, from, row, take);
      }
      row += take;
      from += take;
      if (from === part.count) {
        pi++;
        from = 0;
      }
    }
    time.copyTo(bindings.data_chunk_get_vector(raw, 0), rows, false);
    samplerate.copyTo(bindings.data_chunk_get_vector(raw, 1), rows, false);
    ingested.copyTo(bindings.data_chunk_get_vector(raw, 2), rows, false);
    for (let c = 0; c < width; c++) {
      if (shape.bucketPosition.includes(c)) continue;
      const b = buffers[c];
      if (b !== undefined && b.chunk === n) b.copyTo(b.vector!, rows);
      else NO_VALUES.copyValidityTo(bindings.data_chunk_get_vector(raw, c + 3), rows);
    }
    for (let bucket = 0; bucket < MAX_ATTRIBUTE_BUCKETS; bucket++) {
      const at = shape.bucketPosition[bucket];
      if (at < 0) continue;
      const vector = bindings.data_chunk_get_vector(raw, at + 3);
      if (runs[bucket].length === 0) NO_VALUES.copyValidityTo(vector, rows);
      else (texts ??= new TextBucketBuilder()).write(vector, runs[bucket], rows);
      runs[bucket].length = 0;
    }
    bindings.data_chunk_set_size(raw, rows);
    appender.appendDataChunk(chunk);
  }
}

/** The slot after a run's last row (dense: the row; sparse: the first slot past the run). */
const slotsEnd = (r: AttributeRun): number => (r.field.rows ? firstSlotFrom(r.field, r.from + r.take) : r.from + r.take);

/**
 * Fills a bucket's VARCHAR vector for one chunk from its attribute runs (duckdb-attributes.ts):
 * first each row's room is bounded (a value's bytes, twice that where its request's text holds
 * a byte to escape, a number's longest text), then each entry `\x01<key>=<value>` is written at
 * its row's place in one byte buffer, and each row's text goes to the vector (short ones inline
 * in their string_t, longer ones copied by DuckDB). A row without entries is NULL.
 */
class TextBucketBuilder {
  /** Each row's first byte in the buffer, and the next byte it writes. */
  private readonly start = new Uint32Array(VECTOR_SIZE);
  private readonly at = new Uint32Array(VECTOR_SIZE);
  private buf = new Uint8Array(1 << 16);
  private readonly texts = new ColumnBuffer(Kind.String);
  /** Entry heads (`\x01<key>=`) by key. */
  private readonly heads = new Map<number, Uint8Array>();
  /** Whether a request's text holds a byte to escape (ENTRY or ESCAPE): rare, so checked once. */
  private readonly marked = new Map<EventColumns, boolean>();

  write(vector: Bindings.Vector, runs: readonly AttributeRun[], rows: number): void {
    const { start, at } = this;
    at.fill(0, 0, rows);
    for (const r of runs) {
      const head = this.headOf(r.key).length;
      const wide = this.isMarked(r.part) ? 2 : 1;
      const { kinds, spans, rows: slotRows } = r.field;
      const end = slotsEnd(r);
      for (let s = firstSlotFrom(r.field, r.from); s < end; s++) {
        const kind = kinds[s];
        if (kind === Value.Absent) continue;
        const row = r.row + (slotRows ? slotRows[s] : s) - r.from;
        at[row] += head + (kind === Value.String ? wide * (spans![2 * s + 1] - spans![2 * s]) : NUMBER_TEXT_BYTES);
      }
    }
    let total = 0;
    for (let row = 0; row < rows; row++) {
      const room = at[row];
      start[row] = at[row] = total;
      total += room;
    }
    const buf = this.room(total);
    for (const r of runs) {
      const head = this.headOf(r.key);
      const marked = this.isMarked(r.part);
      const { kinds, nums, spans, rows: slotRows } = r.field;
      const text = r.part.text;
      const end = slotsEnd(r);
      for (let s = firstSlotFrom(r.field, r.from); s < end; s++) {
        const kind = kinds[s];
        if (kind === Value.Absent) continue;
        const row = r.row + (slotRows ? slotRows[s] : s) - r.from;
        let w = at[row];
        for (let i = 0; i < head.length; i++) buf[w++] = head[i];
        if (kind === Value.String) {
          const b = spans![2 * s + 1];
          if (!marked) for (let i = spans![2 * s]; i < b; i++) buf[w++] = text[i];
          else {
            for (let i = spans![2 * s]; i < b; i++) {
              const c = text[i];
              if (c !== ENTRY && c !== ESCAPE) buf[w++] = c;
              else {
                buf[w++] = ESCAPE;
                buf[w++] = c === ENTRY ? ESCAPED_ENTRY : ESCAPED_ESCAPE;
              }
            }
          }
        } else w = putNumberText(buf, w, kind === Value.Boolean ? 'boolean' : kind === Value.Integer ? 'integer' : 'float', nums[s]);
        at[row] = w;
      }
    }
    const texts = this.texts;
    texts.clear(rows);
    for (let row = 0; row < rows; row++) {
      if (at[row] === start[row]) continue;
      texts.setBytes(row, buf, start[row], at[row]);
      texts.validity[row >> 3] |= 1 << (row & 7);
    }
    texts.copyTo(vector, rows);
  }

  private headOf(key: number): Uint8Array {
    let head = this.heads.get(key);
    if (head === undefined) this.heads.set(key, (head = entryHead(key)));
    return head;
  }

  private isMarked(part: EventColumns): boolean {
    let marked = this.marked.get(part);
    if (marked === undefined) this.marked.set(part, (marked = part.text.indexOf(ENTRY) >= 0 || part.text.indexOf(ESCAPE) >= 0));
    return marked;
  }

  /** The buffer, with room for at least `bytes` (what it held is not kept). */
  private room(bytes: number): Uint8Array {
    if (bytes > this.buf.length) this.buf = new Uint8Array(Math.max(bytes, 2 * this.buf.length));
    return this.buf;
  }
}

/** Writes `take` rows of a part's column, from its row `from`, into the buffer from row `row`. */
function writeRun(b: ColumnBuffer, part: EventColumns, f: FieldColumn, from: number, row: number, take: number): void {
  const { kinds: values, nums, spans, rows } = f;
  const { text } = part;
  // Slots s of rows from … from + take - 1: dense, s is the row; sparse, the slots of those rows.
  const first = firstSlotFrom(f, from);
  const end = rows ? firstSlotFrom(f, from + take) : from + take;
  for (let s = first; s < end; s++) {
    const k = values[s];
    if (k === Value.Absent) continue;
    const r = row + (rows ? rows[s] : s) - from;
    const x = nums[s];
    switch (b.kind) {
      case Kind.String:
        if (k === Value.String) b.setBytes(r, text, spans![2 * s], spans![2 * s + 1]);
        else b.setString(r, k === Value.Boolean ? String(x !== 0) : String(x));
        break;
      case Kind.Integer:
        // The writer widens a column before a value it cannot hold reaches it.
        if (k !== Value.Integer) throw invalid(`a ${k === Value.String ? 'string' : 'non-integer'} value for an integer column`);
        setInt64(b, r, x);
        break;
      case Kind.Float:
        if (k !== Value.Integer && k !== Value.Float) throw invalid('a non-numeric value for a float column');
        b.f64[r] = x;
        break;
      case Kind.Boolean:
        if (k !== Value.Boolean) throw invalid('a non-boolean value for a boolean column');
        b.u8[r] = x;
        break;
    }
    b.validity[r >> 3] |= 1 << (r & 7);
  }
}
