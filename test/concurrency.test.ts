// Concurrent ingest through one app (group commit): many writers to one dataset and to many
// datasets at once, some adding columns and widening types while the others write. Every event
// must be stored exactly once, every column must end with the widest type its values needed,
// and no request may hang (a loose bound, not a performance figure). Deleting a dataset while
// other datasets are being written must not disturb those writes.
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createOrGetDataset } from '../src/domain/datasets.js';
import type { NormalisedEvent } from '../src/ingest/normalise.js';
import { IngestWriter } from '../src/ingest/writer.js';
import type { ColumnType } from '../src/stores/config/types.js';
import { columnsOf } from '../src/stores/events/columns.js';
import { tableName } from '../src/stores/events/types.js';
import { quoteIdent } from '../src/stores/events/duckdb-store.js';
import { makeApp, unprotectDataset, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Far beyond anything legitimate on this machine: only "blocked (almost) forever" trips it. */
const HANG_MS = 10_000;

type Kind = ColumnType;
const kindOf = (v: string | number | boolean): Kind =>
  typeof v === 'string' ? 'string' : typeof v === 'boolean' ? 'boolean' : Number.isInteger(v) ? 'integer' : 'float';
/** The type a column must end with, given every kind of value sent to it. */
function widest(kinds: Set<Kind>): Kind {
  if (kinds.size === 1) return [...kinds][0];
  if (kinds.size === 2 && kinds.has('integer') && kinds.has('float')) return 'float';
  return 'string';
}

interface Sent {
  /** Per dataset: seq → writer. */
  seqs: Map<string, Map<number, number>>;
  /** Per dataset: field → the kinds of value sent, and how many events carried it. */
  fields: Map<string, Map<string, { kinds: Set<Kind>; count: number; floatSum: number }>>;
  latencies: number[];
}

function newSent(): Sent {
  return { seqs: new Map(), fields: new Map(), latencies: [] };
}

let seqCounter = 1;

async function environment(t: TestApp) {
  const team = (await t.store.getTeamBySlug(t.init.team.slug))!;
  return (await t.store.getEnvironmentBySlug(team.id, t.init.environment.slug))!;
}

/** POSTs one batch; checks that every event was acknowledged and records what was sent. */
async function postBatch(t: TestApp, sent: Sent, dataset: string, writer: number, events: Record<string, string | number | boolean>[], gzip: boolean) {
  const json = JSON.stringify(events.map((data) => ({ data })));
  const started = performance.now();
  const res = await t.app.inject({
    method: 'POST',
    url: `/1/batch/${dataset}`,
    headers: { ...t.ingest, 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
    payload: gzip ? gzipSync(json) : json,
  });
  sent.latencies.push(performance.now() - started);
  expect(res.statusCode, res.body).toBe(200);
  const results = JSON.parse(res.body) as { status: number; error?: string }[];
  expect(results).toHaveLength(events.length);
  for (const r of results) expect(r).toEqual({ status: 202 });

  const seqs = sent.seqs.get(dataset) ?? new Map<number, number>();
  sent.seqs.set(dataset, seqs);
  const fields = sent.fields.get(dataset) ?? new Map();
  sent.fields.set(dataset, fields);
  for (const e of events) {
    seqs.set(e.seq as number, writer);
    for (const [k, v] of Object.entries(e)) {
      const f = fields.get(k) ?? { kinds: new Set<Kind>(), count: 0, floatSum: 0 };
      fields.set(k, f);
      f.kinds.add(kindOf(v));
      f.count++;
      if (typeof v === 'number') f.floatSum += v;
    }
  }
}

/**
 * One writer: `rounds` batches of `size` events. Fields: fixed ones every event has, `num`
 * switching between integer and float from batch to batch (widens to float), `mixed` going
 * integer → float → (for some writers) string, a field of its own that appears in round 2 and
 * turns boolean later for odd writers (widens to string), and `late`, new to every writer in
 * round 4 at about the same time.
 */
async function writer(t: TestApp, sent: Sent, dataset: string, w: number, rounds: number, size: number) {
  for (let round = 0; round < rounds; round++) {
    const events: Record<string, string | number | boolean>[] = [];
    for (let i = 0; i < size; i++) {
      const seq = seqCounter++;
      const e: Record<string, string | number | boolean> = { seq, writer: w, round, service: `svc-${w % 3}` };
      e.num = (w + round) % 2 === 0 ? seq : seq + 0.5;
      e.mixed = round < 2 ? seq : round < 4 || w % 3 !== 0 ? seq + 0.25 : `m${seq}`;
      if (round >= 2) e[`own_${w}`] = round >= 5 && w % 2 === 1 ? i % 2 === 0 : seq;
      if (round >= 4) e.late = i % 3 === 0;
      events.push(e);
    }
    await postBatch(t, sent, dataset, w, events, (w + round) % 3 === 0);
  }
}

/** Checks the stored events and columns of each dataset against what was sent. */
async function verify(t: TestApp, sent: Sent) {
  const env = await environment(t);
  for (const [slug, seqs] of sent.seqs) {
    const ds = (await t.store.getDataset(env.id, slug))!;
    expect(ds, slug).toBeDefined();
    const columns = await t.store.listColumns(ds.id);
    const byName = new Map(columns.map((c) => [c.keyName, c]));
    const physical = new Map((await t.events.shape(ds.id))!.columns.map((c) => [c.physical, c.type]));
    const fields = sent.fields.get(slug)!;

    // Every field is a column of the widest type its values needed, in both stores.
    expect(new Set(byName.keys())).toEqual(new Set(fields.keys()));
    for (const [name, f] of fields) {
      const col = byName.get(name)!;
      expect(col.storedType, `${slug}.${name}`).toBe(widest(f.kinds));
      expect(physical.get(col.physical), `${slug}.${name} in the event store`).toBe(widest(f.kinds));
    }

    // Every event exactly once, attributed to the writer that sent it.
    const q = (name: string) => quoteIdent(byName.get(name)!.physical);
    const table = quoteIdent(tableName(ds.id));
    const rows = await t.events.query(`SELECT ${q('seq')} AS seq, ${q('writer')} AS writer FROM ${table}`);
    expect(rows).toHaveLength(seqs.size);
    const stored = new Map(rows.map((r) => [Number(r.seq), Number(r.writer)]));
    expect(stored.size, `${slug}: duplicated events`).toBe(rows.length);
    expect(stored, slug).toEqual(seqs);

    // No value was lost on the way through widenings: non-null counts per column, and the
    // numeric values of the widened-to-float column add up.
    const counts = (await t.events.query(`SELECT ${[...fields.keys()].map((k) => `count(${q(k)}) AS ${quoteIdent(k)}`).join(', ')} FROM ${table}`))[0];
    for (const [name, f] of fields) expect(Number(counts[name]), `${slug}.${name} non-null values`).toBe(f.count);
    const [{ s }] = await t.events.query(`SELECT sum(${q('num')}) AS s FROM ${table}`);
    expect(Number(s)).toBe(fields.get('num')!.floatSum);
  }
}

describe('concurrent ingest', { timeout: 120_000 }, () => {
  it('20 writers to one dataset and 20 over 10 datasets, adding and widening columns at once: every event once, widest types, no hang', async () => {
    t = await makeApp({ settings: { ingestRateLimit: null } });
    const sent = newSent();
    const writers: Promise<void>[] = [];
    for (let w = 0; w < 20; w++) writers.push(writer(t, sent, 'shared', w, 8, 50));
    for (let w = 20; w < 40; w++) writers.push(writer(t, sent, `spread-${w % 10}`, w, 8, 50));
    await Promise.all(writers);

    expect(sent.latencies).toHaveLength(40 * 8);
    expect(Math.max(...sent.latencies)).toBeLessThan(HANG_MS);
    expect(sent.seqs.size).toBe(11);
    expect(sent.seqs.get('shared')!.size).toBe(20 * 8 * 50);
    // The scenario did widen: `num` to float, `mixed` to string, some own_* to string.
    expect(widest(sent.fields.get('shared')!.get('num')!.kinds)).toBe('float');
    expect(widest(sent.fields.get('shared')!.get('mixed')!.kinds)).toBe('string');
    expect(widest(sent.fields.get('shared')!.get('own_1')!.kinds)).toBe('string');
    await verify(t, sent);
  });

  it('single-event writes and batches to one dataset share commits without loss', async () => {
    t = await makeApp({ settings: { ingestRateLimit: null } });
    const seqs = new Set<number>();
    const latencies: number[] = [];
    const single = async (seq: number) => {
      const started = performance.now();
      const res = await t!.app.inject({
        method: 'POST',
        url: '/1/events/singles',
        headers: { ...t!.ingest, 'content-type': 'application/json' },
        payload: { seq, n: seq % 2 === 0 ? seq : seq / 2 },
      });
      latencies.push(performance.now() - started);
      expect(res.statusCode, res.body).toBe(200);
      seqs.add(seq);
    };
    const sent = newSent();
    const jobs: Promise<void>[] = [];
    for (let i = 0; i < 300; i++) jobs.push(single(100_000 + i));
    for (let w = 0; w < 5; w++) jobs.push(writer(t, sent, 'singles', w, 4, 100));
    await Promise.all(jobs);
    expect(Math.max(...latencies, ...sent.latencies)).toBeLessThan(HANG_MS);

    const env = await environment(t);
    const ds = (await t.store.getDataset(env.id, 'singles'))!;
    const seqCol = (await t.store.listColumns(ds.id)).find((c) => c.keyName === 'seq')!;
    const rows = await t.events.query(`SELECT ${quoteIdent(seqCol.physical)} AS seq FROM ${quoteIdent(tableName(ds.id))}`);
    const stored = rows.map((r) => Number(r.seq));
    expect(stored).toHaveLength(300 + 5 * 4 * 100);
    expect(new Set(stored)).toEqual(new Set([...seqs, ...sent.seqs.get('singles')!.keys()]));
  });

  it('a write made as soon as the previous one resolved is committed, not stranded in the queue', async () => {
    t = await makeApp();
    const { dataset } = await createOrGetDataset(t.store, await environment(t), { name: 'chained' });
    const writer = new IngestWriter(t.store, t.events, { maxColumnsPerDataset: 100, now: () => new Date() });
    const event = (seq: number): NormalisedEvent => ({ timeUs: Date.now() * 1000, samplerate: 1, fields: new Map([['seq', seq]]) });
    // Each write is made in the continuation of the previous one's resolution, when the
    // writer has just found its queue empty.
    const chain = (async () => {
      for (let seq = 0; seq < 20; seq++) expect(await writer.write(dataset, columnsOf([event(seq)]))).toEqual([null]);
    })();
    let timer: NodeJS.Timeout | undefined;
    const stranded = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('stranded'), HANG_MS)));
    expect(await Promise.race([chain.then(() => 'done'), stranded])).toBe('done');
    clearTimeout(timer);
    await writer.close();
    const seqCol = (await t.store.listColumns(dataset.id)).find((c) => c.keyName === 'seq')!;
    const rows = await t.events.query(`SELECT ${quoteIdent(seqCol.physical)} AS seq FROM ${quoteIdent(tableName(dataset.id))} ORDER BY 1`);
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('closing the event store waits for the operations in flight and refuses new ones', async () => {
    // A request whose client went away can still be running when the server shuts down; closing
    // DuckDB under its query used to deadlock the process (or crash it).
    t = await makeApp();
    const slow = t.events.query('SELECT count(*) AS n FROM range(200000000)');
    await new Promise((r) => setTimeout(r, 20));
    const closing = t.events.close();
    await expect(t.events.query('SELECT 1 AS one')).rejects.toThrow(/closed/);
    await expect(t.events.ensureTable('hcxds_late')).rejects.toThrow(/closed/);
    expect(Number((await slow)[0].n)).toBe(200_000_000);
    await closing;

    // The writer, once closed, refuses writes instead of reaching the store.
    const { dataset } = await createOrGetDataset(t.store, await environment(t), { name: 'late' });
    const writer = new IngestWriter(t.store, t.events, { maxColumnsPerDataset: 100, now: () => new Date() });
    await writer.close();
    await expect(writer.write(dataset, columnsOf([{ timeUs: 0, samplerate: 1, fields: new Map([['a', 1]]) }]))).rejects.toThrow(/closed/);
  });

  it('deleting a dataset while other datasets are being written does not disturb those writes', async () => {
    t = await makeApp({ settings: { ingestRateLimit: null } });
    const tt = t;
    const sent = newSent();
    // The doomed dataset exists and has events.
    await writer(tt, newSent(), 'doomed', 99, 2, 20);
    await unprotectDataset(tt, 'doomed');
    const env = await environment(tt);
    const doomed = (await tt.store.getDataset(env.id, 'doomed'))!;

    // Writers to the doomed dataset race the delete. Each lands before it (200, all 202) or
    // after it (404: the dataset is gone; or, as this ingest key may create datasets, 200 into
    // a new dataset of the same name). None may fail with a 5xx, nor revive the deleted one.
    let deleting = false;
    const doomedStatuses: number[] = [];
    let doomedInFlight = 0;
    const doomedWriter = async () => {
      for (let i = 0; i < 20 && !deleting; i++) {
        doomedInFlight++;
        const res = await tt.app.inject({
          method: 'POST',
          url: '/1/batch/doomed',
          headers: { ...tt.ingest, 'content-type': 'application/json' },
          payload: JSON.stringify(Array.from({ length: 20 }, (_, j) => ({ data: { seq: 1_000_000 + i * 100 + j, x: 'y' } }))),
        });
        doomedInFlight--;
        doomedStatuses.push(res.statusCode);
      }
    };

    let acked = 0;
    const keepers: Promise<void>[] = [];
    for (let w = 0; w < 12; w++) {
      keepers.push(
        (async () => {
          for (let round = 0; round < 10; round++) {
            await writer(tt, sent, `keeper-${w % 3}`, w, 1, 40).then(() => acked++);
          }
        })(),
      );
    }
    const racing = [doomedWriter(), doomedWriter(), doomedWriter()];
    // Delete once the keepers are well under way, with their requests in flight.
    while (acked < 20) await new Promise((r) => setTimeout(r, 5));
    deleting = true;
    const racingAtDelete = doomedInFlight;
    const del = await tt.app.inject({ method: 'DELETE', url: '/1/datasets/doomed', headers: tt.config });
    expect(del.statusCode, del.body).toBe(202);
    await Promise.all([...keepers, ...racing]);

    expect(sent.latencies).toHaveLength(12 * 10);
    expect(Math.max(...sent.latencies)).toBeLessThan(HANG_MS);
    expect(racingAtDelete).toBeGreaterThan(0);
    for (const s of doomedStatuses) expect([200, 404]).toContain(s);
    await verify(tt, sent);

    // The deleted dataset is gone, with its table and its columns.
    const after = await tt.store.getDataset(env.id, 'doomed');
    expect(after === undefined || after.id !== doomed.id).toBe(true);
    expect(await tt.store.listColumns(doomed.id)).toEqual([]);
    expect(await tt.events.shape(doomed.id)).toBeUndefined();
  });
});
