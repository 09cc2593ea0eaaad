// The embedded event store's append path (duckdb-store.ts): events come column by column
// (columns.ts) and are written into DuckDB data chunks (2,048 rows each), handed to an appender
// whole. Each column's values go into a buffer laid out as DuckDB's vector memory and are copied
// into the vector with one native call per column per chunk (duckdb-vectors.ts); a string longer
// than DuckDB keeps inline points at its bytes where they already are (the request's text, a
// bucket's texts), which the appender copies when it takes the chunk. A column whose rows all
// have the same string in a chunk (ColumnsBuilder marks such columns `constant`) becomes one
// constant vector: one call for the chunk. (One Appender call per value cost two to three times
// as much of the JavaScript thread, the thread that also serves every request.) Fields kept as
// attributes (placement.ts) go into their bucket's VARCHAR vector, one text of entries per row
// (duckdb-bucket-texts.ts).
import { endianness } from 'node:os';
import { DuckDBDataChunk, type DuckDBAppender } from '@duckdb/node-api';
import type Bindings from '@duckdb/node-bindings';
import type { ColumnType } from '../config/types.js';
import { firstSlotFrom, textAt, Value, type EventColumns, type FieldColumn } from './columns.js';
import { escapesIn, TextBucketBuilder, type AttributeRun } from './duckdb-bucket-texts.js';
import { addressOf, bindings, ColumnBuffer, Kind, NO_VALUES, setInt64, STRING_INLINE, VECTOR_SIZE } from './duckdb-vectors.js';
import { MAX_ATTRIBUTE_BUCKETS, parsePlacement } from './placement.js';
import type { AppendBatch } from './types.js';

/**
 * A table's columns after the fixed ones, in table order: field columns by type, attribute
 * buckets by number.
 */
export type Layout = ({ physical: string; type: ColumnType } | { bucket: number })[];

const LITTLE_ENDIAN = endianness() === 'LE';

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
  /** Where each placement (by physical name) goes in this layout, as batches find them. */
  targets: Map<string, Target>;
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
      targets: new Map(),
    };
    shapes.set(layout, shape);
  }
  return shape;
}


function invalid(message: string): Error {
  return new Error(`event store append: ${message}`);
}

/** Where a field's values go in the table: a field column (its position), or an attribute of a bucket. */
type Target = { column: number } | { bucket: number; key: number };

/**
 * Buffers kept between batches, by kind (making them anew for every batch was a tenth of the
 * JavaScript thread's time in garbage collection on wide batches): appendChunks runs to its end
 * on the one JavaScript thread, so one batch at a time holds them. At most MAX_SPARE of a kind
 * are kept (a string column's is 32 KB), and bucket texts' buffers past 1 MB are let go.
 */
const spare: ColumnBuffer[][] = [[], [], [], []];
const MAX_SPARE = 256;
const takeBuffer = (kind: Kind): ColumnBuffer => spare[kind].pop() ?? new ColumnBuffer(kind);
const bucketBuilders: TextBucketBuilder[] = [];

/** Where a placement's values go in the shape's table (cached in the shape); undefined: nowhere. */
function physicalTarget(shape: Shape, physical: string | undefined): Target | undefined {
  if (physical === undefined) return undefined;
  let t = shape.targets.get(physical);
  if (t === undefined) {
    const p = parsePlacement(physical);
    const column = p.column === undefined ? undefined : shape.position.get(p.column);
    if (column !== undefined) t = { column };
    else if (p.attribute && !p.column && shape.bucketPosition[p.attribute.bucket] >= 0) t = p.attribute;
    if (t !== undefined) shape.targets.set(physical, t);
  }
  return t;
}

/** Appends one batch's events to `appender` in data chunks of the table's shape. */
export function appendChunks(appender: DuckDBAppender, shape: Shape, batch: AppendBatch, ingestedUs: number): void {
  if (!LITTLE_ENDIAN) throw invalid('the chunk writer assumes a little-endian machine');
  const { parts, columns, resolved } = batch;
  // Each part's fields' targets. A field moving to a column of its own (placement.ts) is
  // written to the column. (Without the registry's placements, parts name table columns.)
  const targets = parts.map((part, pi) =>
    part.fields.map((f, fi) => {
      const t = columns ? physicalTarget(shape, (resolved?.[pi]?.[fi] ?? columns.get(f.name))?.physical) : shape.position.has(f.name) ? { column: shape.position.get(f.name)! } : undefined;
      if (t === undefined) throw invalid(`no column for ${JSON.stringify(f.name)} in the table`);
      return t;
    }),
  );
  let total = 0;
  for (const part of parts) total += part.count;
  // Each part's text's address (long strings point into it), when the addon tells addresses.
  const address = addressOf;
  const bases = address ? parts.map((p) => (p.text.length > STRING_INLINE ? address(p.text) : 0)) : undefined;
  const time = takeBuffer(Kind.Integer);
  const samplerate = takeBuffer(Kind.Integer);
  const ingested = takeBuffer(Kind.Integer);
  // Field columns' buffers, taken when a column first gets a value.
  const buffers: (ColumnBuffer | undefined)[] = new Array(shape.kinds.length);
  try {
    for (let row = 0; row < Math.min(VECTOR_SIZE, total); row++) setInt64(ingested, row, ingestedUs);
    fillChunks(appender, shape, parts, total, targets, bases, { time, samplerate, ingested }, buffers);
  } finally {
    for (const builder of bucketBuilders) builder?.trim();
    for (const b of [time, samplerate, ingested, ...buffers]) {
      if (b === undefined) continue;
      b.release();
      if (spare[b.kind].length < MAX_SPARE) spare[b.kind].push(b);
    }
  }
}

/** appendChunks's chunks, written and appended one by one. */
function fillChunks(
  appender: DuckDBAppender,
  shape: Shape,
  parts: readonly EventColumns[],
  total: number,
  targets: Target[][],
  bases: number[] | undefined,
  fixed: { time: ColumnBuffer; samplerate: ColumnBuffer; ingested: ColumnBuffer },
  buffers: (ColumnBuffer | undefined)[],
): void {
  const { kinds } = shape;
  const width = kinds.length;
  const { time, samplerate, ingested } = fixed;
  // Each bucket's attribute runs in the chunk being filled, and whether each part's text has bytes to escape.
  const runs: AttributeRun[][] = Array.from({ length: MAX_ATTRIBUTE_BUCKETS }, () => []);
  const marked: boolean[] = [];
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
      const base = bases?.[pi];
      const partTargets = targets[pi];
      for (let fi = 0; fi < part.fields.length; fi++) {
        const f = part.fields[fi];
        const target = partTargets[fi];
        if (!('column' in target)) {
          runs[target.bucket].push({ part, field: f, key: target.key, from, row, take, marked: (marked[pi] ??= escapesIn(part)) });
          continue;
        }
        const c = target.column;
        let b = buffers[c];
        if (b === undefined) b = buffers[c] = takeBuffer(kinds[c]);
        if (b.chunk !== n) {
          // First value of this column in this chunk: every other row is NULL.
          b.chunk = n;
          b.clear();
          b.vector = bindings.data_chunk_get_vector(raw, c + 3);
        }
        if (f.constant && b.kind === Kind.String && b.extendConstant(textAt(part, f.spans![2 * from], f.spans![2 * from + 1]), row, take)) continue;
        b.unconstant();
        writeRun(b, part, f, from, row, take, base);
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
      // (A builder per bucket: each bucket's long texts point into its builder's bytes until the append.)
      if (runs[bucket].length === 0) NO_VALUES.copyValidityTo(vector, rows);
      else (bucketBuilders[bucket] ??= new TextBucketBuilder()).write(vector, runs[bucket], rows);
      runs[bucket].length = 0;
    }
    bindings.data_chunk_set_size(raw, rows);
    appender.appendDataChunk(chunk);
  }
}


/** Writes `take` rows of a part's column, from its row `from`, into the buffer from row `row`; `base`: the part's text's address. */
function writeRun(b: ColumnBuffer, part: EventColumns, f: FieldColumn, from: number, row: number, take: number, base: number | undefined): void {
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
        if (k === Value.String) b.setBytes(r, text, spans![2 * s], spans![2 * s + 1], base);
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
