// An attribute bucket's texts for one data chunk (duckdb-attributes.ts has the format), built
// from the chunk's attribute runs by the embedded store's chunk writer (duckdb-chunks.ts).
import type Bindings from '@duckdb/node-bindings';
import { firstSlotFrom, Value, type EventColumns, type FieldColumn } from './columns.js';
import { ENTRY, ESCAPE, ESCAPED_ENTRY, ESCAPED_ESCAPE, NUMBER_TEXT_BYTES, entryHead, putNumberText } from './duckdb-attributes.js';
import { addressOf, ColumnBuffer, Kind, STRING_INLINE, VECTOR_SIZE } from './duckdb-vectors.js';
import { nativeAddon } from '../../native-addon.js';
import { PostedField, type SharedArrays } from './posted-columns.js';

/** A run of one attribute field's rows within a chunk: part rows `from`… go to chunk rows `row`…. */
export interface AttributeRun {
  part: EventColumns;
  field: FieldColumn;
  key: number;
  from: number;
  row: number;
  take: number;
  /** Whether the part's text holds a byte to escape (escapesIn). */
  marked: boolean;
}

/** Whether a request's text holds a byte an attribute's value escapes (ENTRY or ESCAPE): rare, so checked once per request. */
export const escapesIn = (part: EventColumns): boolean => part.text.indexOf(ENTRY) >= 0 || part.text.indexOf(ESCAPE) >= 0;

/** Numbers per run for the native writer (bucket_texts.cc kRunInts): part, key, from, row, take, marked, kinds at, nums at, spans at, rows at, slots. */
const RUN_INTS = 11;

/** The native writer of a bucket's texts (native/columns), when the addon is there. */
export type NativeBucketTexts = NonNullable<typeof nativeAddon>['bucketTexts'];

/** A field's kinds' and numbers' whole buffers, as a part's shared arrays (its words found later); undefined: not typed so. */
function wholeArrays(f: FieldColumn): SharedArrays | undefined {
  if (f.nums.buffer.byteLength % 8 !== 0) return undefined;
  return { kinds: new Uint8Array(f.kinds.buffer), nums: new Float64Array(f.nums.buffer) };
}

/** The slot after a run's last row (dense: the row; sparse: the first slot past the run). */
const slotsEnd = (r: AttributeRun): number => (r.field.rows ? firstSlotFrom(r.field, r.from + r.take) : r.from + r.take);

/**
 * Fills a bucket's VARCHAR vector for one chunk from its attribute runs (duckdb-attributes.ts):
 * first each row's room is bounded (a value's bytes, twice that where its request's text holds
 * a byte to escape, a number's longest text), then each entry `\x01<key>=<value>` is written at
 * its row's place in one byte buffer, and each row's text goes to the vector (short ones inline
 * in their entry, longer ones pointed at in the buffer). A row without entries is NULL. Each
 * bucket has a builder of its own: its texts stay in its buffer until the chunk is appended.
 *
 * With the native addon, runs whose arrays are views of their request's shared buffers (as the
 * native readers and ColumnsBuilder's packing make them) are written by the addon in one call
 * (bucket_texts.cc: the same bytes; in JavaScript they were about a seventh of the JavaScript
 * thread's time on wide batches); others here.
 */
export class TextBucketBuilder {
  /** Each row's first byte in the buffer, and the next byte it writes. */
  private readonly start = new Uint32Array(VECTOR_SIZE);
  private readonly at = new Uint32Array(VECTOR_SIZE);
  private buf = new Uint8Array(1 << 16);
  private readonly texts = new ColumnBuffer(Kind.String);
  /** Entry heads (`\x01<key>=`) by key. */
  private readonly heads = new Map<number, Uint8Array>();
  /** The runs as the native writer takes them. */
  private described = new Int32Array(RUN_INTS * 1024);

  /** `native`: the addon's writer (null: always in JavaScript). */
  constructor(private readonly native: NativeBucketTexts | null = nativeAddon?.bucketTexts ?? null) {}

  write(vector: Bindings.Vector, runs: readonly AttributeRun[], rows: number): void {
    if (!(this.native && this.writeNatively(runs, rows))) this.writeHere(runs, rows);
    this.texts.copyTo(vector, rows);
  }

  /** The texts written by the addon; false (nothing written) when a run's arrays are not views of its part's shared buffers. */
  private writeNatively(runs: readonly AttributeRun[], rows: number): boolean {
    if (this.described.length < runs.length * RUN_INTS) this.described = new Int32Array(runs.length * RUN_INTS * 2);
    const d = this.described;
    const parts: EventColumns[] = [];
    // Each part's shared buffers, whole.
    const arrays: (SharedArrays | undefined)[] = [];
    let p = -1;
    for (let i = 0; i < runs.length; i++) {
      const r = runs[i];
      const f = r.field;
      if (p < 0 || parts[p] !== r.part) {
        p = parts.indexOf(r.part);
        if (p < 0) p = parts.push(r.part) - 1;
      }
      const at = i * RUN_INTS;
      if (f instanceof PostedField) {
        // (Its place in the buffers is known: no views made.)
        if ((arrays[p] ??= f.shared) !== f.shared) return false;
        d[at + 6] = f.kindsAt;
        d[at + 7] = f.numsAt;
        d[at + 8] = f.spansAt;
        d[at + 9] = f.rowsAt;
        d[at + 10] = f.slots;
      } else {
        const a = (arrays[p] ??= wholeArrays(f));
        if (a === undefined || f.kinds.buffer !== a.kinds.buffer || f.nums.buffer !== a.nums.buffer) return false;
        const w = f.spans?.buffer ?? f.rows?.buffer;
        if (w !== undefined && a.words === undefined) {
          if (w.byteLength % 4 !== 0) return false;
          a.words = new Uint32Array(w);
        }
        if ((f.spans && f.spans.buffer !== a.words!.buffer) || (f.rows && f.rows.buffer !== a.words!.buffer)) return false;
        d[at + 6] = f.kinds.byteOffset;
        d[at + 7] = f.nums.byteOffset / 8;
        d[at + 8] = f.spans ? f.spans.byteOffset / 4 : -1;
        d[at + 9] = f.rows ? f.rows.byteOffset / 4 : -1;
        d[at + 10] = f.rows ? f.present : f.kinds.length;
      }
      d[at] = p;
      d[at + 1] = r.key;
      d[at + 2] = r.from;
      d[at + 3] = r.row;
      d[at + 4] = r.take;
      d[at + 5] = r.marked ? 1 : 0;
    }
    const whole = arrays as SharedArrays[];
    const args = [d, runs.length, parts.map((x) => x.text), whole.map((a) => a.kinds), whole.map((a) => a.nums), whole.map((a) => a.words), rows] as const;
    const texts = this.texts;
    texts.clear(0);
    let used = this.native!(...args, this.buf, texts.u8, texts.validity);
    if (used < 0) used = this.native!(...args, this.room(-used), texts.u8, texts.validity);
    return used >= 0;
  }

  private writeHere(runs: readonly AttributeRun[], rows: number): void {
    const { start, at } = this;
    at.fill(0, 0, rows);
    for (const r of runs) {
      const head = this.headOf(r.key).length;
      const wide = r.marked ? 2 : 1;
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
    const base = addressOf && total > STRING_INLINE ? addressOf(buf) : undefined;
    for (const r of runs) {
      const head = this.headOf(r.key);
      const marked = r.marked;
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
      texts.setBytes(row, buf, start[row], at[row], base);
      texts.validity[row >> 3] |= 1 << (row & 7);
    }
  }

  private headOf(key: number): Uint8Array {
    let head = this.heads.get(key);
    if (head === undefined) this.heads.set(key, (head = entryHead(key)));
    return head;
  }

  /** Lets go of a buffer grown past 1 MB (a batch of long texts), so that builders kept between batches hold little. */
  trim(): void {
    if (this.buf.length > 1 << 20) this.buf = new Uint8Array(1 << 16);
  }

  /** The buffer, with room for at least `bytes` (what it held is not kept). */
  private room(bytes: number): Uint8Array {
    if (bytes > this.buf.length) this.buf = new Uint8Array(Math.max(bytes, 2 * this.buf.length));
    return this.buf;
  }
}
