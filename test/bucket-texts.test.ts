// An attribute bucket's texts (src/stores/events/duckdb-bucket-texts.ts) written by the native
// addon (native/columns/src/bucket_texts.cc) are the texts the JavaScript writer makes, byte for
// byte: shown on decoded requests of every kind of value (runs of one part split across chunks,
// several parts in one chunk, bytes to escape, a part whose arrays are not shared buffers, which
// the JavaScript writer takes, and parts in the object form), and on numbers, whose text must be JavaScript's String(x).
// Both write into real DuckDB vectors, read back through DuckDB.
import { DuckDBDataChunk, VARCHAR } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { readBatchNative } from '../src/ingest/native-columns.js';
import { DEFAULT_LIMITS } from '../src/ingest/normalise.js';
import { nativeAddon } from '../src/native-addon.js';
import { Value, type EventColumns, type FieldColumn } from '../src/stores/events/columns.js';
import { escapesIn, TextBucketBuilder, type AttributeRun } from '../src/stores/events/duckdb-bucket-texts.js';
import { bindings, VECTOR_SIZE } from '../src/stores/events/duckdb-vectors.js';
import { fromPosting, type PostedColumns } from '../src/stores/events/posted-columns.js';

/** The texts a builder writes for the runs, read back from a DuckDB vector. */
function written(builder: TextBucketBuilder, runs: AttributeRun[], rows: number): (string | null)[] {
  const chunk = DuckDBDataChunk.create([VARCHAR]);
  builder.write(bindings.data_chunk_get_vector(chunk.chunk, 0), runs, rows);
  chunk.rowCount = rows;
  return chunk.getColumnValues(0) as (string | null)[];
}

/** A request's columns as an ingest thread posts them and the JavaScript thread receives them. */
const decode = (events: unknown[]): EventColumns =>
  fromPosting(readBatchNative(Buffer.from(JSON.stringify(events)), 0, 2, DEFAULT_LIMITS, true) as unknown as PostedColumns);

let seed = 11;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

/** Runs of each field of `part`'s rows from … from + take - 1, at chunk rows from `row`. */
const runsOf = (part: EventColumns, from: number, take: number, row: number, key: (f: FieldColumn) => number): AttributeRun[] =>
  part.fields.map((field) => ({ part, field, key: key(field), from, row, take, marked: escapesIn(part) }));

describe('attribute bucket texts', () => {
  it('the native writer is built on this machine (npm install compiles it)', () => {
    expect(nativeAddon?.bucketTexts).toBeTypeOf('function');
  });

  it('are the same bytes from the native writer as from the JavaScript one', () => {
    const values = ['', 'a', 'twelve bytes', 'thirteen byte', 'ünïcödé 🐝', 'x'.repeat(300), 'one\u0001two', 'esc\u0002ape', '\u0001', '=', 'k=v\u00012=3'];
    const events = (n: number, marks: boolean) =>
      Array.from({ length: n }, (_, i) => {
        const data: Record<string, unknown> = { dense: i % 5 === 0 ? i / 3 : `d${i % 7}`, always: i };
        for (let k = 0; k < 30; k++) {
          const u = random();
          if (u < 0.3) continue;
          const v = random();
          const text = values[Math.floor(v * values.length)];
          data[`f${Math.floor(random() * 120)}`] = u < 0.5 ? (marks ? text : text.replace(/[\u0001\u0002]/g, '_')) : u < 0.7 ? Math.floor((v - 0.5) * 2 ** (1 + Math.floor(random() * 60))) : u < 0.9 ? (v - 0.5) * 10 ** Math.floor(random() * 40 - 20) : v < 0.5;
        }
        return { data };
      });
    const a = decode(events(1500, false));
    const b = decode(events(700, true));
    const c = decode(events(40, true));
    // The object form (readers on the JavaScript thread): plain field objects, views of shared buffers.
    const d = readBatchNative(Buffer.from(JSON.stringify(events(300, true))), 0, 2, DEFAULT_LIMITS, false)!;
    // A part whose fields' arrays are each their own (as a small request's are): the JavaScript writer takes such chunks.
    const own: EventColumns = { ...c, fields: c.fields.map((f) => ({ ...f, kinds: f.kinds.slice(), nums: f.nums.slice(), spans: f.spans?.slice(), rows: f.rows?.slice() })) };
    const key = (f: FieldColumn) => (f.name.length * 7919 + f.name.charCodeAt(f.name.length - 1)) % 100_000;
    const chunks: [AttributeRun[], number][] = [
      [[...runsOf(a, 0, 1500, 0, key), ...runsOf(b, 0, 548, 1500, key)], VECTOR_SIZE],
      [[...runsOf(b, 548, 152, 0, key), ...runsOf(a, 333, 17, 152, key)], 169],
      [[...runsOf(own, 0, 40, 0, key), ...runsOf(b, 0, 100, 40, key)], 140],
      [[...runsOf(d, 0, 300, 0, key), ...runsOf(a, 0, 10, 300, key)], 310],
    ];
    const native = new TextBucketBuilder();
    const js = new TextBucketBuilder(null);
    for (const [runs, rows] of chunks) {
      const got = written(native, runs, rows);
      expect(got).toEqual(written(js, runs, rows));
      expect(got.filter((t) => t !== null).length).toBeGreaterThan(rows / 2);
    }
    expect(written(native, chunks[0][0], VECTOR_SIZE).some((t) => t?.includes('\u0002a'))).toBe(true); // escaped ENTRY bytes
  });

  it("write a number's text as JavaScript's String does", () => {
    const bits = new DataView(new ArrayBuffer(8));
    const special = [0, -0, 1, -1, 0.1, 0.5, 1 / 3, 2 ** 53 - 1, 2 ** 53, -(2 ** 53) - 2, 2 ** 63, 1e21, 1e21 - 65536, 123456789012345680000, 1e-6, 1e-7, 1.5e-7, 0.000001234567890123456, -0.000001234567890123456, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e300, 4.35, 0.1 + 0.2, 100, 1e16, 1.2e16 + 2];
    const numbers: number[] = [...special];
    while (numbers.length < 40 * VECTOR_SIZE) {
      const u = random();
      if (u < 0.5) {
        // Any double: random bits (NaN and the infinities, which JSON cannot hold, left out).
        bits.setUint32(0, Math.floor(random() * 2 ** 32));
        bits.setUint32(4, Math.floor(random() * 2 ** 32));
        const x = bits.getFloat64(0);
        if (Number.isFinite(x)) numbers.push(x);
      } else if (u < 0.8) numbers.push(Math.round((random() - 0.5) * 10 ** Math.floor(random() * 8)) / 10 ** Math.floor(random() * 6));
      else numbers.push(Math.floor((random() - 0.5) * 2 ** Math.floor(random() * 70)));
    }
    const native = new TextBucketBuilder();
    for (let start = 0; start < numbers.length; start += VECTOR_SIZE) {
      const xs = numbers.slice(start, start + VECTOR_SIZE);
      const rows = xs.length;
      // Kinds as the readers give them: integral values below 2^63 are integers; every fifth a boolean.
      const kinds = new Uint8Array(xs.map((x, i) => (i % 5 === 4 ? Value.Boolean : Number.isInteger(x) && Math.abs(x) < 2 ** 63 ? Value.Integer : Value.Float)));
      const nums = new Float64Array(xs.map((x, i) => (i % 5 === 4 ? Number(x > 0) : x)));
      const field: FieldColumn = { name: 'n', kinds, nums, mask: 0, present: rows };
      const part: EventColumns = { count: rows, timeUs: new Float64Array(rows), samplerate: new Float64Array(rows), fields: [field], text: new Uint8Array(0) };
      const expected = xs.map((x, i) => `\u000142=${i % 5 === 4 ? String(x > 0) : String(x)}`);
      expect(written(native, runsOf(part, 0, rows, 0, () => 42), rows)).toEqual(expected);
    }
  });
});
