// Bounded memory: ingest's buffers are bounded (events waiting for their commit, requests in
// progress and the bytes of their bodies: past any, 503 with Retry-After); the event store takes WAGGLE_EVENT_STORE_MEMORY, and a query that needs more
// than a low limit spills or fails with an error saying so, never taking the process down.
// `waggle serve` ingests 150,000 events with distinct 70-character ids (and ten "hot" ids of
// known counts) with the default memory, then restarts with 16 MB and breaks them down by id.
import { totalmem } from 'node:os';
import { Readable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { call, initJson, killAll, removeTempDirs, serve, tempDir } from './cli-helpers.js';
import { json, makeApp, type TestApp } from './helpers.js';
import { postBatch, serverCount, serverQuery } from './ops-helpers.js';

afterEach(killAll);
afterAll(removeTempDirs);

const DISTINCT = 150_000;
const HOT = 10; // hot-k appears k + 2 times

function metric(text: string, name: string): number {
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

describe('a low event-store memory limit', { timeout: 300_000 }, () => {
  it('a query past it spills or fails with a clear error; the server keeps answering', async () => {
    const d = tempDir();
    const init = await initJson(d);
    const s = await serve(['--data-dir', d]);
    // The default: 256 MB, or a quarter of the machine's RAM if that is less.
    const defaults = await (await fetch(`${s.url}/metrics`)).text();
    expect(metric(defaults, 'waggle_event_store_memory_limit_bytes')).toBe(Math.min(Math.floor(totalmem() / 4), 256 * 1024 * 1024));
    const events: { data: Record<string, unknown> }[] = [];
    for (let i = 0; i < DISTINCT; i++) events.push({ data: { id: `user-${i}-`.padEnd(70, 'x'), n: i } });
    for (let k = 0; k < HOT; k++) for (let j = 0; j < k + 2; j++) events.push({ data: { id: `hot-${k}`, n: -1 } });
    for (let i = 0; i < events.length; i += 10_000) {
      const r = await postBatch(s.url, init.keys.ingest, 'wide', events.slice(i, i + 10_000));
      expect(r.status, r.text).toBe(200);
    }
    const total = events.length;
    expect(await s.stop()).toEqual({ code: 0, signal: null });

    const low = await serve(['--data-dir', d], { env: { WAGGLE_EVENT_STORE_MEMORY: '16MB' } });
    const metrics = await (await fetch(`${low.url}/metrics`)).text();
    expect(metric(metrics, 'waggle_event_store_memory_limit_bytes')).toBe(16 * 1024 * 1024);

    const result = await serverQuery(low.url, init.keys.configuration, 'wide', {
      calculations: [{ op: 'COUNT' }],
      breakdowns: ['id'],
      orders: [{ op: 'COUNT', order: 'descending' }],
      time_range: 3600,
      limit: 5,
    });
    console.info(`16 MB event store, breakdown of ${total} events by id: ${result.error === undefined ? 'spilled, answered' : 'refused with a clear error'}`);
    if (result.error === undefined) {
      // Spilled: the answer is right.
      expect(result.data.results.map((r: { data: { id: string; COUNT: number } }) => [r.data.id, r.data.COUNT])).toEqual(
        [9, 8, 7, 6, 5].map((k) => [`hot-${k}`, k + 2]),
      );
    } else {
      expect(result.error).toBe('the query needs more memory than the event store may use (WAGGLE_EVENT_STORE_MEMORY) and could not spill to disk');
    }
    // Still serving: health, a query within the limit, ingest.
    expect((await call(low.url, '/healthz')).status).toBe(200);
    expect(await serverCount(low.url, init.keys.configuration, 'wide', 3600)).toBe(total);
    expect((await postBatch(low.url, init.keys.ingest, 'wide', [{ data: { id: 'after', n: 0 } }])).status).toBe(200);
    expect(low.proc.exitCode).toBeNull();
    expect(await low.stop()).toEqual({ code: 0, signal: null });

    // COUNT_DISTINCT of the ids with its series at 48 MB, past the set's raw size (10 MB of ids):
    // counted by a GROUP BY of (bucket, id), answered exactly. (Where count(DISTINCT …) and the
    // GROUP BY part ways is larger: 7 days of 100M events at 256 MB, docs/benchmarks.md.)
    const mid = await serve(['--data-dir', d], { env: { WAGGLE_EVENT_STORE_MEMORY: '48MB' } });
    const distinct = await serverQuery(mid.url, init.keys.configuration, 'wide', { calculations: [{ op: 'COUNT_DISTINCT', column: 'id' }], time_range: 3600, granularity: 60 }, true);
    expect(distinct.error).toBeUndefined();
    expect(distinct.data.results[0].data['COUNT_DISTINCT(id)']).toBe(DISTINCT + HOT + 1);
    expect(Math.max(...distinct.data.series.map((p: { data: Record<string, number> }) => p.data['COUNT_DISTINCT(id)']))).toBeGreaterThan(0);
    expect(await mid.stop()).toEqual({ code: 0, signal: null });
  });
});

describe('bounded ingest buffers', () => {
  const batch = (t: TestApp, n: number) =>
    t.app.inject({ method: 'POST', url: '/1/batch/bounded', headers: { ...t.ingest, 'content-type': 'application/json' }, payload: JSON.stringify(Array.from({ length: n }, (_, i) => ({ data: { i } }))) });

  /** A /1/batch body of `bytes` bytes (one event with a padding field). */
  const bodyOf = (bytes: number) => {
    const body = JSON.stringify([{ data: { pad: '' } }]);
    return JSON.stringify([{ data: { pad: 'x'.repeat(bytes - body.length) } }]);
  };
  const post = (t: TestApp, payload: string | Readable) =>
    t.app.inject({ method: 'POST', url: '/1/batch/bounded', headers: { ...t.ingest, 'content-type': 'application/json' }, payload });
  const inFlightBytes = async (t: TestApp) => metric((await t.app.inject({ method: 'GET', url: '/metrics' })).body, 'waggle_ingest_in_flight_bytes');

  /** Holds every commit (the writer's lock) until `release()`. */
  function hold(t: TestApp) {
    let release!: () => void;
    const held = t.app.writer.editColumn('none', () => new Promise<void>((r) => (release = r)));
    return { release: () => release(), held };
  }

  it('/1/batch gets 503 with Retry-After while the events waiting for their commit reach WAGGLE_INGEST_QUEUE_LIMIT', async () => {
    const t = await makeApp({ settings: { ingestQueueLimit: 10 } });
    try {
      expect((await batch(t, 1)).statusCode).toBe(200); // the dataset exists
      const h = hold(t);
      const first = batch(t, 10);
      while (t.app.writer.backlog === 0) await new Promise((r) => setTimeout(r, 5));
      const full = await batch(t, 1);
      expect(full.statusCode).toBe(503);
      expect(json(full)).toEqual({ error: 'the ingest queue is full; retry later' });
      expect(full.headers['retry-after']).toBeTruthy();
      h.release();
      await h.held;
      expect((await first).statusCode).toBe(200);
      expect((await batch(t, 1)).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('ingest requests in progress are bounded by WAGGLE_INGEST_MAX_IN_FLIGHT, and each frees its place when answered', async () => {
    const t = await makeApp({ settings: { ingestMaxInFlight: 2 } });
    try {
      expect((await batch(t, 1)).statusCode).toBe(200);
      const h = hold(t);
      const waiting = [batch(t, 1), batch(t, 1)];
      while (t.app.writer.backlog < 2) await new Promise((r) => setTimeout(r, 5));
      const third = await batch(t, 1);
      expect(third.statusCode).toBe(503);
      expect(json(third).error).toBe('2 ingest requests are in progress (WAGGLE_INGEST_MAX_IN_FLIGHT); retry later');
      expect(third.headers['retry-after']).toBeTruthy();
      h.release();
      await h.held;
      for (const w of await Promise.all(waiting)) expect(w.statusCode).toBe(200);
      // Places are given back: many more, one after another, all pass.
      for (let i = 0; i < 10; i++) expect((await batch(t, 1)).statusCode).toBe(200);
      // A refused request gives its place back too.
      expect((await t.app.inject({ method: 'POST', url: '/1/batch/bounded', headers: { 'x-honeycomb-team': 'nope' }, payload: [] })).statusCode).toBe(401);
      expect((await batch(t, 1)).statusCode).toBe(200);
      expect((await batch(t, 1)).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('the bytes of ingest bodies in progress are bounded by WAGGLE_INGEST_MAX_IN_FLIGHT_BYTES, chunked bodies included; one alone always passes', async () => {
    const t = await makeApp({ settings: { ingestMaxInFlightBytes: 2000 } });
    let h: ReturnType<typeof hold> | undefined;
    try {
      expect((await batch(t, 1)).statusCode).toBe(200);
      // Alone, a body larger than the budget passes (its body limit still applies).
      expect((await post(t, bodyOf(3000))).statusCode).toBe(200);
      h = hold(t);
      const waiting = [post(t, bodyOf(1500))];
      while (t.app.writer.backlog < 1) await new Promise((r) => setTimeout(r, 5));
      expect(await inFlightBytes(t)).toBe(1500);
      const over = await post(t, bodyOf(600));
      expect(over.statusCode).toBe(503);
      expect(json(over)).toEqual({ error: 'the ingest request bodies in progress would pass 2000 bytes (WAGGLE_INGEST_MAX_IN_FLIGHT_BYTES); retry later' });
      expect(Date.parse(String(over.headers['retry-after']))).toBeGreaterThan(Date.now() - 5000); // the ingest dialect's HTTP date
      // A chunked body (no Content-Length) is counted as it arrives and refused once past the budget.
      const chunked = await post(t, Readable.from([Buffer.from(bodyOf(1000).slice(0, 400)), Buffer.from(bodyOf(1000).slice(400))]));
      expect(chunked.statusCode).toBe(503);
      expect(json(chunked).error).toMatch(/WAGGLE_INGEST_MAX_IN_FLIGHT_BYTES/);
      // What still fits is admitted.
      waiting.push(post(t, bodyOf(400)));
      while (t.app.writer.backlog < 2) await new Promise((r) => setTimeout(r, 5));
      expect(await inFlightBytes(t)).toBe(1900);
      h.release();
      await h.held;
      for (const w of await Promise.all(waiting)) expect(w.statusCode).toBe(200);
      // Every byte is given back, refused requests' too: a body of nearly the whole budget passes beside a chunked one.
      expect(await inFlightBytes(t)).toBe(0);
      const [big, small] = await Promise.all([post(t, bodyOf(1900)), post(t, Readable.from([Buffer.from(bodyOf(100))]))]);
      expect([big.statusCode, small.statusCode]).toEqual([200, 200]);
      expect(await inFlightBytes(t)).toBe(0);
    } finally {
      h?.release();
      await t.close();
    }
  });
});
