// DuckDB vectors written from JavaScript, for the embedded store's chunk writer
// (duckdb-chunks.ts): a column's values for one data chunk kept in typed arrays laid out as
// DuckDB's vector memory (int64, double, boolean, 16-byte string entries, a validity mask), then
// copied into the vector with one native call. A string of up to 12 bytes is kept inline in its
// entry; a longer one is an entry pointing at its bytes where they already are (addressOf), or,
// without the native addon, copied by DuckDB to the vector's heap with one native call each.
import { createRequire } from 'node:module';
import type Bindings from '@duckdb/node-bindings';
import { nativeAddon } from '../../native-addon.js';

// The raw C API bindings, for writing data chunks straight into DuckDB's vector memory. Loaded
// from where @duckdb/node-api finds them, so that both use the same native module (its handles
// are only valid there).
export const bindings: typeof Bindings = createRequire(createRequire(import.meta.url).resolve('@duckdb/node-api'))('@duckdb/node-bindings');

export const VECTOR_SIZE = bindings.vector_size();
/** DuckDB's string_t: 16 bytes, holding strings of up to 12 bytes inline. */
const STRING_T = 16;
export const STRING_INLINE = 12;
/** The address of an array's first byte (native/columns), when the addon is there. */
export const addressOf = nativeAddon?.addressOf;
const TWO_32 = 2 ** 32;

/** How a column's values are written (the column's stored type). */
export const Kind = { String: 0, Integer: 1, Float: 2, Boolean: 3 } as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

/**
 * One column's values for the chunk being filled, in JavaScript memory (copied into the vector
 * once the chunk is full: the bindings give no view of a vector's own memory to write through).
 */
export class ColumnBuffer {
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

  /** `rows`: how many it holds (a chunk's). */
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

  /** Readies the buffer for another batch, holding on to none of this one's values. */
  release(): void {
    this.chunk = -1;
    this.vector = undefined;
    this.longValues?.fill('', 0, this.longCount);
    this.longCount = 0;
    this.constantText = undefined;
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

  /**
   * A string value given as UTF-8 bytes (EventColumns.text): inline when it fits; else, with
   * `base` the address of `bytes` (addressOf), an entry pointing at them (length, first four
   * bytes, pointer: DuckDB's string_t), which must stay as they are until the chunk is appended.
   */
  setBytes(row: number, bytes: Uint8Array, start: number, end: number, base: number | undefined): void {
    const n = end - start;
    const at = row * STRING_T;
    if (n <= STRING_INLINE) {
      for (let i = 0; i < n; i++) this.u8[at + 4 + i] = bytes[start + i];
      this.u32[at >> 2] = n;
      return;
    }
    if (base === undefined) return this.addLong(row, bytes.subarray(start, end));
    const u8 = this.u8;
    const u32 = this.u32;
    u32[at >> 2] = n;
    u8[at + 4] = bytes[start];
    u8[at + 5] = bytes[start + 1];
    u8[at + 6] = bytes[start + 2];
    u8[at + 7] = bytes[start + 3];
    const pointer = base + start;
    const hi = Math.floor(pointer / TWO_32);
    u32[(at >> 2) + 2] = pointer - hi * TWO_32;
    u32[(at >> 2) + 3] = hi;
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
export const NO_VALUES = new ColumnBuffer(Kind.Boolean);

/**
 * Writes an integral number (exact in a double; |v| < 2^63) as a little-endian int64 without
 * making a BigInt: both halves come out exact, since dividing by 2^32 is exact and the low part
 * is an integer below 2^32.
 */
export function setInt64(b: ColumnBuffer, row: number, v: number): void {
  const hi = Math.floor(v / TWO_32);
  b.u32[2 * row] = v - hi * TWO_32;
  b.i32[2 * row + 1] = hi;
}
