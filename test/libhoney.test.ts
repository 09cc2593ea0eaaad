// The real libhoney-js client (npm `libhoney`) against a real listening server: what it sends,
// that every response it reports is a 202, and that exactly the events sent are stored.
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from './helpers.js';
import { initialTenancy } from './tenancy-fixtures.js';
import { datasetSlug } from '../src/domain/datasets.js';
import { tableName } from '../src/stores/events/types.js';
import { quoteIdent } from '../src/stores/events/duckdb-store.js';

// libhoney ships no type declarations: the part of its documented API used here.
interface HoneyEvent {
  timestamp: Date | null;
  sampleRate: number;
  metadata: unknown;
  add(data: Record<string, unknown>): HoneyEvent;
  send(): void;
  sendPresampled(): void;
}
interface HoneyResponse {
  status_code?: number;
  duration?: number;
  metadata: unknown;
  error?: unknown;
}
interface Honey {
  newEvent(): HoneyEvent;
  flush(): Promise<void>;
  on(event: 'response', listener: (queue: HoneyResponse[]) => void): void;
}
interface HoneyClass {
  new (opts: Record<string, unknown>): Honey;
  isClassic(key: string): boolean;
}
const Libhoney = createRequire(import.meta.url)('libhoney') as HoneyClass;

/** A client whose responses are collected as the documented 'response' event drains its queue. */
function client(opts: Record<string, unknown>) {
  const honey = new Libhoney(opts);
  const responses: HoneyResponse[] = [];
  honey.on('response', (queue) => responses.push(...queue.splice(0, queue.length)));
  return { honey, responses };
}

describe('libhoney-js against a listening server', () => {
  let t: TestApp;
  let url: string;
  let envId: string;
  const seen: { method?: string; url?: string; headers: IncomingMessage['headers'] }[] = [];

  beforeAll(async () => {
    t = await makeApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    envId = (await initialTenancy(t)).environment.id;
    // A second listener on the Node server sees every request as it arrives.
    t.app.server.on('request', (req: IncomingMessage) => seen.push({ method: req.method, url: req.url, headers: req.headers }));
  });
  afterAll(() => t.close());

  /** Stored rows of a dataset: fields by column name (nulls left out), time in ms, samplerate. */
  async function rows(dataset: string) {
    const ds = await t.store.getDataset(envId, datasetSlug(dataset));
    if (!ds) throw new Error(`no dataset ${dataset}`);
    const names = new Map((await t.store.listColumns(ds.id)).map((c) => [c.physical, c.keyName]));
    const raw = await t.events.query(`SELECT *, epoch_ms(__time) AS __time_ms FROM ${quoteIdent(tableName(ds.id))}`);
    return raw.map((r) => {
      const fields: Record<string, unknown> = {};
      for (const [physical, v] of Object.entries(r)) {
        const name = names.get(physical);
        if (name !== undefined && v !== null) fields[name] = typeof v === 'bigint' ? Number(v) : v;
      }
      return { timeMs: Number(r.__time_ms), samplerate: Number(r.__samplerate), fields };
    });
  }

  it('does not take our keys for classic ones', () => {
    expect(t.init.keys.ingest).toMatch(/^hcxik_[a-zA-Z0-9]{58}$/);
    expect(Libhoney.isClassic(t.init.keys.ingest)).toBe(false);
    expect(Libhoney.isClassic(t.init.keys.configuration)).toBe(false);
  });

  it('sends 500 events; every response is a 202 and exactly those events are stored', async () => {
    const dataset = 'libhoney-js';
    const { honey, responses } = client({ apiHost: url, writeKey: t.init.keys.ingest, dataset });
    const base = Date.UTC(2026, 10, 20, 8, 0, 0);
    const sampled = new Set<number>();
    for (let i = 0; i < 500; i++) {
      const ev = honey.newEvent();
      ev.add({
        seq: i,
        name: `event-${i}`,
        duration_ms: i + 0.25,
        ok: i % 3 !== 0,
        kind: i % 2 === 0 ? 'even' : 'odd',
        big: 2 ** 40 + i,
        nested: { depth: i % 4 },
        list: [i, 'x'],
        ...(i % 10 === 0 ? { sometimes: 'present' } : {}),
      });
      ev.timestamp = new Date(base + i * 1000);
      ev.metadata = { seq: i };
      if (i % 50 === 7) {
        // Already sampled by the caller: sent as is, with its sample rate (send() would drop
        // 9 in 10 at random, client-side).
        ev.sampleRate = 10;
        sampled.add(i);
        ev.sendPresampled();
      } else {
        ev.send();
      }
    }
    await honey.flush();

    expect(responses).toHaveLength(500);
    for (const r of responses) {
      expect(r.error, JSON.stringify(r)).toBeUndefined();
      expect(r.status_code, JSON.stringify(r)).toBe(202);
    }
    expect(new Set(responses.map((r) => (r.metadata as { seq: number }).seq)).size).toBe(500);

    // What libhoney-js puts on the wire: JSON batches (not msgpack) to /1/batch/{dataset}.
    const batches = seen.filter((s) => s.url === `/1/batch/${dataset}`);
    expect(batches.length).toBeGreaterThanOrEqual(10); // batchSizeTrigger 50
    for (const b of batches) {
      expect(b.method).toBe('POST');
      expect(b.headers['content-type']).toMatch(/^application\/json/);
      expect(b.headers['x-honeycomb-team']).toBe(t.init.keys.ingest);
      expect(b.headers['user-agent']).toMatch(/^libhoney-js\//);
      expect(b.headers['content-encoding']).toBeUndefined();
    }

    const stored = await rows(dataset);
    expect(stored).toHaveLength(500);
    const bySeq = new Map(stored.map((r) => [r.fields.seq as number, r]));
    expect([...bySeq.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 500 }, (_, i) => i));
    for (const [seq, r] of bySeq) {
      expect(r.timeMs).toBe(base + seq * 1000);
      expect(r.samplerate).toBe(sampled.has(seq) ? 10 : 1);
    }
    expect(bySeq.get(123)!.fields).toEqual({
      seq: 123, name: 'event-123', duration_ms: 123.25, ok: false, kind: 'odd', big: 2 ** 40 + 123, nested: '{"depth":3}', list: '[123,"x"]',
    });
    expect(bySeq.get(110)!.fields).toMatchObject({ sometimes: 'present', ok: true, kind: 'even' });
    expect(stored.filter((r) => r.samplerate === 10)).toHaveLength(10);

    const columns = new Map((await t.store.listColumns((await t.store.getDataset(envId, dataset))!.id)).map((c) => [c.keyName, c.type]));
    expect(Object.fromEntries(columns)).toEqual({
      seq: 'integer', name: 'string', duration_ms: 'float', ok: 'boolean', kind: 'string', big: 'integer', nested: 'string',
      list: 'string', sometimes: 'string',
    });
  });

  it('reports per-event results by position: a refused event is a 400 among 202s', async () => {
    const { honey, responses } = client({ apiHost: url, writeKey: t.init.keys.ingest, dataset: 'libhoney-mixed' });
    for (let i = 0; i < 5; i++) {
      const ev = honey.newEvent();
      ev.add(i === 2 ? Object.fromEntries(Array.from({ length: 2001 }, (_, k) => [`f${k}`, k])) : { i });
      ev.metadata = { i };
      ev.send();
    }
    await honey.flush();
    const byI = new Map(responses.map((r) => [(r.metadata as { i: number }).i, r.status_code]));
    expect(Object.fromEntries(byI)).toEqual({ 0: 202, 1: 202, 2: 400, 3: 202, 4: 202 });
    // libhoney-js reads a per-event `err` field; Honeycomb (and we) send `error`, so libhoney
    // reports no error text for the refused event, only its status.
    expect(responses.find((r) => r.status_code === 400)!.error).toBeUndefined();
    expect((await rows('libhoney-mixed')).map((r) => r.fields.i).sort()).toEqual([0, 1, 3, 4]);
  });

  it('sees a wrong key as a 401 for every event, and stores nothing', async () => {
    const { honey, responses } = client({ apiHost: url, writeKey: 'not-a-key', dataset: 'libhoney-denied' });
    for (let i = 0; i < 3; i++) honey.newEvent().add({ i }).send();
    await honey.flush();
    expect(responses).toHaveLength(3);
    for (const r of responses) {
      expect(r.status_code).toBe(401);
      expect(r.error).toBeInstanceOf(Error);
    }
    expect(await t.store.getDataset(envId, 'libhoney-denied')).toBeUndefined();
  });

  it('sends an empty dataset name to unknown_dataset (non-classic keys), and a spaced name URL-encoded', async () => {
    const empty = client({ apiHost: url, writeKey: t.init.keys.ingest, dataset: '' });
    empty.honey.newEvent().add({ where: 'unknown' }).send();
    const spaced = client({ apiHost: url, writeKey: t.init.keys.ingest, dataset: 'Libhoney Spaced Name' });
    spaced.honey.newEvent().add({ where: 'spaced' }).send();
    await Promise.all([empty.honey.flush(), spaced.honey.flush()]);
    expect([...empty.responses, ...spaced.responses].map((r) => r.status_code)).toEqual([202, 202]);
    expect((await rows('unknown_dataset')).map((r) => r.fields.where)).toEqual(['unknown']);
    expect((await rows('Libhoney Spaced Name')).map((r) => r.fields.where)).toEqual(['spaced']);
    expect((await t.store.getDataset(envId, 'libhoney-spaced-name'))?.name).toBe('Libhoney Spaced Name');
    expect(seen.some((s) => s.url === '/1/batch/Libhoney%20Spaced%20Name')).toBe(true);
  });
});
