// The embedded store's chunk writer (src/stores/events/duckdb-chunks.ts) writes a string longer
// than DuckDB keeps inline as an entry pointing at its bytes (the request's text, a bucket's
// texts), and an attribute's integer as digits of its own. Every value reads back exactly, in
// table columns and in attributes, from requests that share a chunk and from chunks past the
// first; and so on a server where the native addon cannot load (then DuckDB copies each string).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initJson, removeTempDirs, serve, tempDir } from './cli-helpers.js';
import { makeApp, type TestApp } from './helpers.js';
import { columnsOf } from './ingest-helpers.js';
import { ingest, runQuery } from './query-helpers.js';
import { isColumn } from '../src/stores/events/placement.js';

const T0 = Math.floor(Date.now() / 60_000) * 60_000;
const INTEGERS = [0, 7, -7, 9, 10, -10, 99, 100, 12345, -99999, 1e15, 1e15 - 1, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 31, -(2 ** 32)];
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A string of `n` characters for event i: ASCII, or with non-ASCII letters in it every third. */
function text(i: number, n: number): string {
  let s = '';
  for (let k = 0; k < n; k++) s += i % 3 === 0 && k % 5 === 1 ? 'é☃'[k % 2] : ALPHABET[(i * 7 + k) % ALPHABET.length];
  return s;
}

/**
 * Event i of a request: strings of 0 to 40 characters (12 is the longest inline), an integer, a
 * field every event has alike, and in the third request's events a string with the bytes that
 * mark and escape an attribute's entry (so one request of a chunk has them, the others not).
 */
function event(i: number) {
  return {
    time: new Date(T0 - 60_000 - (i % 600) * 1000).toISOString(),
    data: {
      s: text(i, i % 41),
      n: INTEGERS[i % INTEGERS.length],
      same: 'one long value every event has',
      [`f${i % 5}`]: text(i + 1, 13 + (i % 9)),
      ...(Math.floor(i / 900) === 2 ? { marks: `a\u0001${i % 7}=b\u0002c` } : {}),
    },
  };
}

const FIELDS = ['s', 'n', 'same', 'f0', 'f3', 'marks'];
const querySpec = (field: string) => ({
  calculations: [{ op: 'COUNT' }],
  breakdowns: [field],
  filters: [{ column: field, op: 'exists' }],
  start_time: T0 / 1000 - 3600,
  end_time: T0 / 1000,
});
/** A result's rows as value → COUNT. */
const counts = (body: { data: { results: { data: Record<string, unknown> }[] } }, field: string) =>
  new Map<unknown, number>(body.data.results.map((r) => [r.data[field], r.data.COUNT as number]));

/** Six requests of 900 events, 5,400 events in all (three chunks and more). */
const requests = Array.from({ length: 6 }, (_, r) => Array.from({ length: 900 }, (_, i) => event(r * 900 + i)));
const all = requests.flat();

/** What a breakdown by `field` should count: value → events. */
function expected(events: ReturnType<typeof event>[], field: string): Map<unknown, number> {
  const out = new Map<unknown, number>();
  for (const e of events) {
    const v = (e.data as Record<string, unknown>)[field];
    if (v !== undefined) out.set(v, (out.get(v) ?? 0) + 1);
  }
  return out;
}

describe('strings and integers written into DuckDB chunks read back exactly', { timeout: 120_000 }, () => {
  let columns: TestApp;
  let attributes: TestApp;

  beforeAll(async () => {
    [columns, attributes] = await Promise.all([makeApp({ settings: { queryResultRateLimit: null } }), makeApp({ settings: { queryResultRateLimit: null, hotColumns: 0 } })]);
    for (const t of [columns, attributes]) {
      t.clock.ms = T0;
      // (Sent at once, so that requests share chunks.)
      await Promise.all(requests.map((events) => ingest(t, 'chunks', events)));
    }
    expect([...(await columnsOf(columns, 'chunks')).values()].every((c) => isColumn(c.physical))).toBe(true);
    expect([...(await columnsOf(attributes, 'chunks')).values()].some((c) => isColumn(c.physical))).toBe(false);
  });

  afterAll(async () => {
    await Promise.all([columns?.close(), attributes?.close()]);
  });

  for (const field of FIELDS) {
    it(`${field}: every value, counted by breakdown, on columns and on attributes`, async () => {
      for (const t of [columns, attributes]) {
        const body = await runQuery(t, 'chunks', querySpec(field), { disable_series: true, limit: 10_000 });
        expect(counts(body, field)).toEqual(expected(all, field));
      }
    });
  }
});

describe('without the native addon (a server where it cannot load)', { timeout: 120_000 }, () => {
  afterAll(removeTempDirs);

  it('every value reads back the same, in columns and in attributes', async () => {
    const dir = tempDir();
    // Loaded before the server: makes the addon's package fail to load, as where it was never built.
    const hook = join(dir, 'no-addon.cjs');
    writeFileSync(
      hook,
      `const Module = require('node:module');
       const load = Module._load;
       Module._load = function (request, ...rest) {
         if (request === '@waggle/native-columns') throw new Error('no native addon here');
         return load.call(this, request, ...rest);
       };`,
    );
    // The hook works: a server that requires the addon refuses to start.
    const refused = await serve(['--data-dir', join(dir, 'refused')], { nodeFlags: ['--require', hook], env: { WAGGLE_INGEST_NATIVE: 'on' } }).catch((err: Error) => err);
    expect(refused).toBeInstanceOf(Error);
    expect(String((refused as Error).message)).toMatch(/WAGGLE_INGEST_NATIVE/);

    for (const hot of ['20', '0']) {
      const data = join(dir, `hot-${hot}`);
      const { keys } = await initJson(data);
      const server = await serve(['--data-dir', data], { nodeFlags: ['--require', hook], env: { WAGGLE_HOT_COLUMNS: hot } });
      try {
        const call = async (key: string, method: string, path: string, body?: unknown) => {
          const res = await fetch(server.url + path, { method, headers: { 'x-honeycomb-team': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
          const text = await res.text();
          expect(res.status, text.slice(0, 300)).toBeLessThan(300);
          return JSON.parse(text);
        };
        const acks = await Promise.all(requests.map((events) => call(keys.ingest, 'POST', '/1/batch/chunks', events)));
        expect(acks.flat().every((a: { status: number }) => a.status === 202)).toBe(true);
        for (const field of FIELDS) {
          const { id } = await call(keys.configuration, 'POST', '/1/queries/chunks', querySpec(field));
          const created = await call(keys.configuration, 'POST', '/1/query_results/chunks', { query_id: id, disable_series: true, limit: 10_000 });
          let body = created;
          for (let i = 0; i < 2000 && !body.complete; i++) {
            await new Promise((r) => setTimeout(r, 10));
            body = await call(keys.configuration, 'GET', `/1/query_results/chunks/${created.id}`);
          }
          expect(counts(body, field), `${field}, WAGGLE_HOT_COLUMNS=${hot}`).toEqual(expected(all, field));
        }
      } finally {
        await server.stop();
      }
    }
  });
});
