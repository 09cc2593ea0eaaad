// Columns whose every row has the same string (ColumnsBuilder marks them `constant`) are written
// into DuckDB as one constant vector per chunk. Every row must still read back as written: across
// parts and chunk boundaries (2,048 rows), when the next part differs or lacks the column, for
// long and short, non-ASCII and NUL-holding strings; and the mark is never set wrongly.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ColumnsBuilder, columnsOf } from '../src/stores/events/columns.js';
import { DuckDbEventStore, quoteIdent } from '../src/stores/events/duckdb-store.js';
import { tableName } from '../src/stores/events/types.js';

const DS = 'hcxds_constant1';
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

type Fields = Record<string, string | number | boolean | undefined>;

/** One part of `n` events numbered from `from` (their time orders them), fields from `fill`. */
const part = (from: number, n: number, fill: (i: number) => Fields) =>
  columnsOf(
    Array.from({ length: n }, (_, i) => ({
      timeUs: 1_700_000_000_000_000 + from + i,
      samplerate: 1,
      fields: new Map(Object.entries({ seq: from + i, ...fill(from + i) } as Fields).filter((e): e is [string, string | number | boolean] => e[1] !== undefined)),
    })),
  );

const LONG = '@opentelemetry/instrumentation-http é 漢 🐝';
const WITH_NUL = 'before\u0000after, long enough not to be inlined';

describe('event store: constant columns', () => {
  it('reads back every row as written, across parts and chunks, whether the next part repeats, changes or lacks the value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'waggle-constant-'));
    dirs.push(dir);
    const store = new DuckDbEventStore(join(dir, 'events.duckdb'));
    await store.open();
    await store.ensureTable(DS);
    const columns = ['seq', 'lib', 'svc', 'mix', 'nul', 'late', 'num'];
    await store.changeColumns(DS, { add: columns.map((c) => ({ physical: c, type: c === 'seq' || c === 'num' ? 'integer' : 'string' })), widen: [] });

    // Rows 0–1499 (part A), 1500–2499 (B), 2500–5499 (C), 5500–5599 (D): chunk 0 is rows 0–2047,
    // chunk 1 rows 2048–4095 (B's last 452 rows and C's first 1,596), chunk 2 the rest.
    const expected = (i: number): Fields => ({
      lib: LONG, // the same in every row: constant vectors throughout
      svc: i < 1500 ? 'bench' : i < 2500 ? 'other' : 'bench', // changes where B starts (mid chunk 0)
      mix: i < 1500 ? 'same' : i < 2500 ? undefined : 'same', // B lacks it: NULLs in chunks 0 and 1
      nul: WITH_NUL,
      late: i < 2048 ? undefined : i < 5500 ? 'from chunk 1 on, long text' : `varies ${i}`, // D not constant
      num: 7,
    });
    const parts = [part(0, 1500, expected), part(1500, 1000, expected), part(2500, 3000, expected), part(5500, 100, expected)];
    expect(parts.map((p) => p.fields.filter((f) => f.constant).map((f) => f.name))).toEqual([
      ['lib', 'svc', 'mix', 'nul'],
      ['lib', 'svc', 'nul'],
      ['lib', 'svc', 'mix', 'nul', 'late'],
      ['lib', 'svc', 'mix', 'nul'],
    ]);
    const { committed } = await store.stage([{ datasetId: DS, parts }], Date.now() * 1000);
    await committed;

    const rows = await store.query(`SELECT ${columns.map(quoteIdent).join(', ')} FROM ${quoteIdent(tableName(DS))} ORDER BY seq`);
    expect(rows).toHaveLength(5600);
    const got = rows.map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== null).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));
    const want = Array.from({ length: 5600 }, (_, i) => Object.fromEntries(Object.entries({ seq: i, ...expected(i) }).filter(([, v]) => v !== undefined)));
    expect(got).toEqual(want);
    await store.close();
  });

  it('marks a column constant only when every row has the one same string', () => {
    const build = (rows: Fields[], abandon: number[] = []) => {
      const b = new ColumnsBuilder(rows.length);
      rows.forEach((r, i) => {
        for (const [k, v] of Object.entries(r)) if (v !== undefined) b.set(k, v);
        if (abandon.includes(i)) b.abandonRow();
        else b.endRow(i, 1);
      });
      return Object.fromEntries(b.finish().fields.map((f) => [f.name, f.constant]));
    };
    expect(build([{ a: 'x', b: 'x', c: 1, d: 'x' }, { a: 'x', b: 'y', c: 1 }, { a: 'x', b: 'x', c: 1, d: 'x' }])).toEqual({ a: true, b: false, c: false, d: false });
    // A string and a number of the same text are different values.
    expect(build([{ a: '1' }, { a: 1 }])).toEqual({ a: false });
    // An abandoned row's other value leaves the mark off (conservative), its missing one too.
    expect(build([{ a: 'x' }, { a: 'y' }, { a: 'x' }], [1])).toEqual({ a: false });
    expect(build([{ a: 'x' }, { b: 'z' }, { a: 'x' }], [1])).toEqual({ a: true });
    // A value set twice in one row: the later one counts.
    const b = new ColumnsBuilder(2);
    b.set('a', 'x');
    b.endRow(0, 1);
    b.set('a', 'y');
    b.set('a', 'x');
    b.endRow(1, 1);
    expect(b.finish().fields[0].constant).toBe(false);
  });
});
