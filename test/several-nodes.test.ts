// Several Waggle nodes on one PostgreSQL store, in one process: three apps, each with its own
// store connection pool, lease-based leadership (short leases) and ingest writer, sharing one
// event store (standing in for a shared ClickHouse) and one app clock. What a request leaves
// behind is readable through any node; background work runs on the leader only, exactly once,
// and moves to another node when the leader stops renewing its lease (a dead node). The
// multi-process version (real `waggle serve` processes, kill -9) is test/several-nodes-serve.test.ts.
// Skipped, with a notice, when WAGGLE_TEST_POSTGRES names no server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { initialise, type InitResult } from '../src/domain/tenancy.js';
import { LeaseLeadership } from '../src/cluster/leadership.js';
import { openPostgresStore } from '../src/stores/config/store.js';
import type { ConfigStore } from '../src/stores/config/types.js';
import { DuckDbEventStore } from '../src/stores/events/duckdb-store.js';
import { json, keyHeaders, TestClock } from './helpers.js';
import { HttpReceiver } from './receivers.js';
import { createTestSchema, postgresUrl, warnPostgresSkipped, type TestSchema } from './postgres.js';

if (!postgresUrl) warnPostgresSkipped('several nodes on one PostgreSQL store (test/several-nodes.test.ts)');

const LEASE_MS = 1000;
const quiet = { info() {}, warn() {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

interface Node {
  app: App;
  store: ConfigStore;
  leadership: LeaseLeadership;
}

describe.skipIf(!postgresUrl)('several nodes on one PostgreSQL store', { timeout: 60_000 }, () => {
  let schema: TestSchema;
  let dir: string;
  let events: DuckDbEventStore;
  let init: InitResult;
  let headers: ReturnType<typeof keyHeaders>;
  const clock = new TestClock();
  const nodes: Node[] = [];
  const receiver = new HttpReceiver();

  const startNode = async (i: number, settings: Record<string, unknown> = {}): Promise<Node> => {
    const store = openPostgresStore(schema.url, schema.name);
    const leadership = new LeaseLeadership(store, { nodeId: `node-${i}-${Date.now()}`, ttlMs: LEASE_MS, log: quiet });
    const app = await createApp({
      configStore: store,
      eventStore: events,
      settings: { dataDir: dir, evaluationTickMs: 0, publicUrl: 'http://waggle.test', notifyTimeoutMs: 1000, notifyRetryBaseMs: 50, ...settings },
      now: clock.now,
      logger: false,
      leadership,
    });
    await app.ready();
    return { app, store, leadership };
  };
  const leaders = () => nodes.filter((n) => n.leadership.isLeader());
  /** A dead node: it stops renewing its lease (without giving it up) and loses the database (a crash or a partition). */
  const kill = async (n: Node) => {
    await n.leadership.stop(false);
    await n.store.close();
  };

  beforeAll(async () => {
    schema = await createTestSchema(postgresUrl!, 'nodes');
    dir = mkdtempSync(join(tmpdir(), 'waggle-nodes-'));
    events = new DuckDbEventStore(join(dir, 'events.duckdb'));
    await events.open();
    const first = openPostgresStore(schema.url, schema.name);
    await first.migrate();
    init = await initialise(first);
    await first.close();
    headers = keyHeaders(init);
    await receiver.start();
    for (let i = 0; i < 3; i++) nodes.push(await startNode(i));
    // Every node has beaten its heart at least once, and sees the others.
    await until('three live nodes', () => nodes.every((n) => n.leadership.liveNodes() === 3));
  });
  afterAll(async () => {
    for (const n of nodes) await n.app.close().catch(() => undefined);
    for (const n of nodes) await n.store.close().catch(() => undefined);
    await events?.close();
    await receiver.stop();
    await schema?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('exactly one node leads', async () => {
    await until('one leader', () => leaders().length === 1);
    // and it stays so over several renewals
    for (let i = 0; i < 5; i++) {
      await sleep(LEASE_MS / 2);
      expect(leaders()).toHaveLength(1);
    }
    // Each node's metrics say whether it leads, and how many nodes are alive.
    const gauges = await Promise.all(
      nodes.map(async (n) => {
        const text = (await n.app.inject({ method: 'GET', url: '/metrics' })).body;
        return [Number(/^waggle_leader (\d)/m.exec(text)?.[1]), Number(/^waggle_live_nodes (\d+)/m.exec(text)?.[1])];
      }),
    );
    expect(gauges.map((g) => g[0]).sort()).toEqual([0, 0, 1]);
    expect(gauges.map((g) => g[1])).toEqual([3, 3, 3]);
    expect(gauges[nodes.indexOf(leaders()[0])][0]).toBe(1);
  });

  it('a query result created on one node is read through another', async () => {
    const [a, b, c] = nodes.map((n) => n.app);
    const batch = Array.from({ length: 30 }, (_, i) => ({ time: clock.now().toISOString(), data: { service: i % 3 ? 'api' : 'db', ms: i } }));
    const ingested = await a.inject({ method: 'POST', url: '/1/batch/results', headers: headers.ingest, payload: batch });
    expect(ingested.statusCode).toBe(200);
    const q = await b.inject({ method: 'POST', url: '/1/queries/results', headers: headers.config, payload: { calculations: [{ op: 'COUNT' }, { op: 'SUM', column: 'ms' }], breakdowns: ['service'], time_range: 3600 } });
    expect(q.statusCode, q.body).toBe(200);
    const created = await b.inject({ method: 'POST', url: '/1/query_results/results', headers: headers.config, payload: { query_id: json(q).id } });
    expect(created.statusCode, created.body).toBe(201);
    const id = json(created).id;
    const answers = await Promise.all(
      [c, a, b].map((app) =>
        until('a complete result', async () => {
          const r = await app.inject({ method: 'GET', url: `/1/query_results/results/${id}`, headers: headers.config });
          expect(r.statusCode).toBe(200);
          return json(r).complete ? json(r).data.results : undefined;
        }),
      ),
    );
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]).toEqual(answers[2]);
    const byService = Object.fromEntries(answers[0].map((r: { data: Record<string, number> }) => [r.data.service, r.data.COUNT]));
    expect(byService).toEqual({ api: 20, db: 10 });
  });

  it('a key disabled through one node is refused by the others at once', async () => {
    const [a, b, c] = nodes.map((n) => n.app);
    const team = (await nodes[0].store.getTeamBySlug(init.team.slug))!;
    const env = (await nodes[0].store.getEnvironmentBySlug(team.id, init.environment.slug))!;
    const res = await a.inject({
      method: 'POST',
      url: `/2/teams/${init.team.slug}/api-keys`,
      headers: headers.mgmt,
      payload: { data: { type: 'api-keys', attributes: { key_type: 'configuration', name: 'shared', permissions: { send_events: true } }, relationships: { environment: { data: { id: env.id, type: 'environments' } } } } },
    });
    expect(res.statusCode, res.body).toBe(201);
    const key = json(res).data;
    const h = { 'x-honeycomb-team': key.attributes.secret };
    for (const app of [b, c]) expect((await app.inject({ method: 'GET', url: '/1/auth', headers: h })).statusCode).toBe(200);
    const patched = await b.inject({
      method: 'PATCH',
      url: `/2/teams/${init.team.slug}/api-keys/${key.id}`,
      headers: headers.mgmt,
      payload: { data: { id: key.id, type: 'api-keys', attributes: { disabled: true } } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    for (const app of [a, c]) {
      const r = await app.inject({ method: 'GET', url: '/1/auth', headers: h });
      expect(r.statusCode).toBe(401);
      expect(json(r).error).toBe('API key is disabled');
    }
  });

  it('ingest through every node at once: new fields from each land in one column registry, no value lost', async () => {
    const sends = nodes.flatMap((n, i) =>
      Array.from({ length: 4 }, (_, j) =>
        n.app.inject({
          method: 'POST',
          url: '/1/batch/fields',
          headers: headers.ingest,
          payload: Array.from({ length: 5 }, (_, k) => ({ time: clock.now().toISOString(), data: { [`from_${i}_${j}`]: k, shared: i * 100 + j * 10 + k, [`mixed_${j}`]: i === 1 ? 'text' : k } })),
        }),
      ),
    );
    const answers = await Promise.all(sends);
    for (const r of answers) {
      expect(r.statusCode, r.body).toBe(200);
      expect(json(r).every((s: { status: number }) => s.status === 202), r.body).toBe(true);
    }
    const cols = json(await nodes[2].app.inject({ method: 'GET', url: '/1/columns/fields', headers: headers.config }));
    const names = cols.map((c: { key_name: string }) => c.key_name).sort();
    expect(new Set(names).size).toBe(names.length);
    for (let i = 0; i < 3; i++) for (let j = 0; j < 4; j++) expect(names).toContain(`from_${i}_${j}`);
    // mixed_j got both numbers and text: widened to string, whichever node saw what first.
    for (let j = 0; j < 4; j++) expect(cols.find((c: { key_name: string }) => c.key_name === `mixed_${j}`).type).toBe('string');
    // Every acknowledged event is there, with its values, whichever node is asked.
    const q = json(await nodes[0].app.inject({ method: 'POST', url: '/1/queries/fields', headers: headers.config, payload: { calculations: [{ op: 'COUNT' }, { op: 'SUM', column: 'shared' }, { op: 'COUNT_DISTINCT', column: 'mixed_0' }], time_range: 3600 } }));
    for (const n of nodes) {
      const created = json(await n.app.inject({ method: 'POST', url: '/1/query_results/fields', headers: headers.config, payload: { query_id: q.id } }));
      const data = await until('a result', async () => {
        const r = json(await n.app.inject({ method: 'GET', url: `/1/query_results/fields/${created.id}`, headers: headers.config }));
        return r.complete ? r.data.results[0].data : undefined;
      });
      let sum = 0;
      for (let i = 0; i < 3; i++) for (let j = 0; j < 4; j++) for (let k = 0; k < 5; k++) sum += i * 100 + j * 10 + k;
      expect(data).toMatchObject({ COUNT: 60, 'SUM(shared)': sum, 'COUNT_DISTINCT(mixed_0)': 6 });
    }
  });

  it('each node allows its share of a rate limit: the nodes together allow about the limit', async () => {
    const limited: Node[] = [];
    try {
      // Three more nodes with a limit of 9 requests a minute per key: 6 live nodes, 2 each (9/6 rounded up).
      for (let i = 0; i < 3; i++) limited.push(await startNode(10 + i, { apiRateLimit: { limit: 9, windowSeconds: 60 } }));
      await until('six live nodes', () => limited.every((n) => n.leadership.liveNodes() === 6));
      const statuses: number[] = [];
      for (let round = 0; round < 4; round++) {
        for (const n of limited) statuses.push((await n.app.inject({ method: 'GET', url: '/1/auth', headers: headers.config })).statusCode);
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(6);
      expect(statuses.filter((s) => s === 429)).toHaveLength(6);
      const r = await limited[0].app.inject({ method: 'GET', url: '/1/auth', headers: headers.config });
      expect(r.headers.ratelimitpolicy).toBe('2;w=60');
    } finally {
      for (const n of limited) {
        await n.app.close();
        await n.store.close();
      }
    }
    // A clean stop gives the heartbeat up at once.
    await until('three live nodes again', () => nodes.every((n) => n.leadership.liveNodes() === 3));
  });

  it('triggers run once per slot while every node ticks, and move to another node when the leader dies; every notification is delivered once', async () => {
    const hook = json(
      await nodes[0].app.inject({ method: 'POST', url: '/1/recipients', headers: headers.config, payload: { type: 'webhook', details: { webhook_name: 'count', webhook_url: `${receiver.url}/hook` } } }),
    );
    const t0 = Math.floor(clock.ms / 60_000) * 60_000 + 60_000;
    clock.ms = t0 - 30_000;
    const batch = Array.from({ length: 12 }, (_, i) => ({ time: new Date(t0 - 30_000 + i * 1000).toISOString(), data: { n: i } }));
    for (const n of nodes) expect((await n.app.inject({ method: 'POST', url: '/1/batch/alerts', headers: headers.ingest, payload: batch.slice(0, 4) })).statusCode).toBe(200);
    batch.splice(0, 4);
    clock.ms = t0;
    const trig = await nodes[1].app.inject({
      method: 'POST',
      url: '/1/triggers/alerts',
      headers: headers.config,
      payload: { name: 'any', query: { calculations: [{ op: 'COUNT' }], time_range: 240 }, frequency: 60, threshold: { op: '>', value: 0 }, alert_type: 'on_true', recipients: [{ id: hook.id }] },
    });
    expect(trig.statusCode, trig.body).toBe(201);
    const tickAll = (alive: Node[]) => Promise.all(alive.map((n) => n.app.jobs.scheduler.tick()));
    const delivered = () => receiver.at('/hook');

    // Slots 0 and 1 on the first leader; every node ticks, only the leader evaluates.
    let alive = [...nodes];
    for (const slot of [0, 1]) {
      clock.ms = t0 + slot * 60_000;
      await tickAll(alive);
      await until(`delivery of slot ${slot}`, () => delivered().length === slot + 1);
    }
    // The leader dies. The next notification to it hangs, so that it dies mid-delivery.
    receiver.script.set('/hook', [{ hang: true }]);
    clock.ms = t0 + 2 * 60_000;
    await tickAll(alive);
    await until('the hanging delivery', () => delivered().length === 3);
    const dead = await until('the leader', () => leaders()[0]);
    alive = nodes.filter((n) => n !== dead);
    const diedAt = Date.now();
    await kill(dead);
    // Another node leads within two lease periods (the lease lapses, the next renewal takes it).
    const next = await until('a new leader', () => leaders()[0], 5000);
    expect(alive.includes(next)).toBe(true);
    expect(Date.now() - diedAt).toBeLessThan(2 * LEASE_MS + 200);
    // It takes the unfinished delivery over once its claim lapses (notifyTimeoutMs + 5 s), sending it again with the same delivery id.
    await until(
      'the delivery taken over',
      async () => {
        await tickAll(alive);
        return delivered().length === 4;
      },
      15_000,
    );
    const [cut, again] = delivered().slice(2);
    expect(again.headers['x-honeycomb-webhook-delivery-id']).toBe(cut.headers['x-honeycomb-webhook-delivery-id']);
    expect(JSON.parse(again.body).notification_id).toBe(JSON.parse(cut.body).notification_id);
    // Slots 3 and 4 on the new leader.
    for (const slot of [3, 4]) {
      clock.ms = t0 + slot * 60_000;
      await tickAll(alive);
      await until(`delivery of slot ${slot}`, () => delivered().length === slot + 2);
    }
    await sleep(300);
    await tickAll(alive);
    // One notification per slot, each once (the slot-2 one was cut short by the death and sent again).
    const ids = delivered().map((r) => JSON.parse(r.body).notification_id);
    expect(delivered()).toHaveLength(6);
    expect(new Set(ids).size).toBe(5);
    // Each slot was evaluated by one node only: the notifications enqueued, over all nodes, are one per slot.
    const enqueued = nodes.flatMap((n) => (n.app.jobs.notifier.sent ?? []).filter((x) => x.alert.id === json(trig).id).map((x) => x.id));
    expect(enqueued).toHaveLength(5);
    expect(new Set(enqueued).size).toBe(5);
    expect((dead.app.jobs.notifier.sent ?? []).filter((x) => x.alert.id === json(trig).id)).toHaveLength(3);
    const state = json(await alive[0].app.inject({ method: 'GET', url: `/1/triggers/alerts/${json(trig).id}`, headers: headers.config }));
    expect(state.last_evaluation.at).toBe(new Date(t0 + 4 * 60_000).toISOString());
  });
});
