// The several-nodes scenario that test/several-nodes-serve.test.ts (one DuckDB file per node) and
// test/several-nodes-clickhouse.test.ts (one ClickHouse cluster) run: three `waggle serve`
// processes on one PostgreSQL configuration store, as a team runs them behind a load balancer.
// Ingest goes through all of them while a trigger and an SLO burn alert evaluate on the leader;
// the leader is killed with SIGKILL mid-run; another node takes over within two evaluation
// intervals; a real webhook receiver counts every notification exactly once; no acknowledged
// event is lost.
//
// With one shared event store (`eventStore`) each batch goes to one node, round robin, and every
// node answers the same; with one DuckDB file per node every batch goes to every node (as a
// fan-out would) and each answers from its own copy, which still proves the shared configuration
// store, the leader and exactly-once evaluation and delivery. About 100 s: a trigger's shortest
// frequency is 60 s.
import { expect } from 'vitest';
import { call, serve, teamHeaders, tempDir, waggleOk, type Served } from './cli-helpers.js';
import type { HttpReceiver } from './receivers.js';

export const TICK_MS = 2000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LEADER_LINE = /this node is now the leader/;

export interface Scenario {
  postgresUrl: string;
  /** The PostgreSQL schema the nodes share (created by the caller). */
  schemaName: string;
  receiver: HttpReceiver;
  /** WAGGLE_EVENT_STORE shared by the nodes; undefined: each node its own DuckDB file. */
  eventStore?: string;
}

export async function severalNodesScenario({ postgresUrl, schemaName, receiver, eventStore }: Scenario): Promise<void> {
  const u = new URL(postgresUrl);
  u.searchParams.set('options', `-c search_path=${schemaName}`);
  const env = (i: number) => ({
    ...(eventStore ? { WAGGLE_EVENT_STORE: eventStore } : {}),
    WAGGLE_CONFIG_STORE: u.toString(),
    WAGGLE_NODE_ID: `node-${i}`,
    WAGGLE_EVALUATION_TICK_MS: String(TICK_MS),
    WAGGLE_BURN_ALERT_INTERVAL_SECONDS: '4',
    WAGGLE_NOTIFY_TIMEOUT_MS: '2000',
    WAGGLE_INGEST_THREADS: '0',
  });
  const dirs = [tempDir(), tempDir(), tempDir()];
  // `waggle init` on the shared store (it reads WAGGLE_CONFIG_STORE, like serve).
  const init = JSON.parse(await waggleOk(['init', '--data-dir', dirs[0], '--json'], { env: env(0) }));
  const config = teamHeaders(init.keys.configuration);
  const ingestKey = teamHeaders(init.keys.ingest);
  const json = { 'content-type': 'application/json' };

  const nodes: Served[] = [];
  for (let i = 0; i < 3; i++) nodes.push(await serve(['--data-dir', dirs[i]], { env: env(i), timeout: 60_000 }));
  const leaderOf = () => nodes.findIndex((n) => n.proc.exitCode === null && n.proc.signalCode === null && LEADER_LINE.test(n.stdout()));
  for (const n of nodes) expect((await call(n.url, '/1/auth', { headers: config })).status).toBe(200);

  // Ingest: on ClickHouse each batch through one node, round robin; else every batch through every
  // node (each has its own event file). Acknowledged events counted per node, and the events of
  // requests whose answer never came (the node was killed mid-request): those may or may not be
  // stored, since a kill -9 can land between the write and the answer.
  const acked = [0, 0, 0];
  const unanswered = [0, 0, 0];
  const aliveNow = () => [0, 1, 2].filter((i) => nodes[i].proc.exitCode === null && nodes[i].proc.signalCode === null);
  let seq = 0;
  let ingesting = true;
  const sendBatch = async () => {
    const now = Date.now();
    // 10 events, all failing the SLI (good: false, status 500): the SLO's budget burns at once.
    const batch = Array.from({ length: 10 }, (_, k) => ({ time: new Date(now - 1000 + k).toISOString(), data: { status: 500, good: false, seq: seq * 10 + k, service: k % 2 ? 'api' : 'web' } }));
    seq++;
    const alive = aliveNow();
    const targets = eventStore ? [alive[seq % alive.length]] : alive;
    await Promise.all(
      targets.map(async (i) => {
        const n = nodes[i];
        try {
          const r = await call(n.url, '/1/batch/checkout', { method: 'POST', headers: { ...ingestKey, ...json }, body: batch });
          if (r.status === 200) acked[i] += r.body.filter((x: { status: number }) => x.status === 202).length;
        } catch {
          // (the node was killed mid-request: nothing acknowledged, the batch perhaps stored)
          unanswered[i] += batch.length;
        }
      }),
    );
  };
  await sendBatch();
  const ingestLoop = (async () => {
    while (ingesting) {
      await sendBatch();
      await sleep(300);
    }
  })();

  // A webhook, a trigger (on_true: one notification per 60 s slot while it breaches) and an SLO burn alert, each through another node.
  const hook = await call(nodes[0].url, '/1/recipients', { method: 'POST', headers: { ...config, ...json }, body: { type: 'webhook', details: { webhook_name: 'count', webhook_url: `${receiver.url}/hook` } } });
  expect(hook.status, hook.text).toBe(201);
  const trig = await call(nodes[1].url, '/1/triggers/checkout', {
    method: 'POST',
    headers: { ...config, ...json },
    body: { name: 'errors', query: { calculations: [{ op: 'COUNT' }], time_range: 60 }, frequency: 60, threshold: { op: '>', value: 0 }, alert_type: 'on_true', recipients: [{ id: hook.body.id }] },
  });
  expect(trig.status, trig.text).toBe(201);
  expect((await call(nodes[2].url, '/1/derived_columns/checkout', { method: 'POST', headers: { ...config, ...json }, body: { alias: 'ok', expression: '$good' } })).status).toBe(201);
  const slo = await call(nodes[2].url, '/1/slos/checkout', { method: 'POST', headers: { ...config, ...json }, body: { name: 'Checkout', sli: { alias: 'ok' }, time_period_days: 1, target_per_million: 990000 } });
  expect(slo.status, slo.text).toBe(201);
  const burn = await call(nodes[0].url, '/1/burn_alerts/checkout', { method: 'POST', headers: { ...config, ...json }, body: { slo: { id: slo.body.id }, exhaustion_minutes: 240, recipients: [{ id: hook.body.id }] } });
  expect(burn.status, burn.text).toBe(201);
  const burnId: string = burn.body.id;
  const created = Date.now();

  // Both fire on the leader: the trigger's first slot (at creation) and the burn alert.
  const hooks = () => receiver.at('/hook').map((r) => JSON.parse(r.body));
  const byType = (type: string) => hooks().filter((p) => p.type === type);
  await until('the first trigger and burn alert notifications', () => byType('trigger').length >= 1 && byType('burn_alert').length >= 1, 30_000).catch((err) => {
    const problems = nodes.flatMap((n, i) => n.stdout().split('\n').filter((l) => /"level":(40|50|60)/.test(l)).map((l) => `node-${i}: ${l.slice(0, 600)}`));
    throw new Error(`${(err as Error).message}; received ${JSON.stringify(hooks().map((p) => p.type))}; warnings and errors:\n${problems.slice(0, 20).join('\n')}`);
  });
  const first = leaderOf();
  expect(first).toBeGreaterThanOrEqual(0);
  // Exactly one node ever said it leads.
  expect(nodes.filter((n) => LEADER_LINE.test(n.stdout()))).toHaveLength(1);

  // kill -9 the leader mid-run (ingest goes on through the others).
  await sleep(3000);
  const killedAt = Date.now();
  nodes[first].proc.kill('SIGKILL');
  await nodes[first].exited();
  const next = await until('a new leader', () => {
    const i = leaderOf();
    return i >= 0 && i !== first ? i : undefined;
  }, 20_000);
  const failoverMs = Date.now() - killedAt;
  console.log(`failover: node-${next} leads ${failoverMs} ms after the kill -9 of node-${first} (evaluation interval ${TICK_MS} ms)`);
  expect(failoverMs).toBeLessThan(2 * TICK_MS);

  // The trigger's next slot (60 s after creation) is evaluated by the new leader, once.
  await until('the second trigger slot', () => byType('trigger').length >= 2, Math.max(5000, created + 75_000 - Date.now()));
  await sleep(2 * TICK_MS); // (time for any duplicate to show up)
  ingesting = false;
  await ingestLoop;

  // Exactly once: one trigger notification per slot, one burn alert, no request twice.
  const all = hooks();
  expect(new Set(all.map((p) => p.notification_id)).size).toBe(all.length);
  const triggerSlots = byType('trigger').map((p) => p.timestamp);
  expect(new Set(triggerSlots).size).toBe(triggerSlots.length);
  expect(triggerSlots).toHaveLength(2);
  // (the notification's time is its evaluation's: the slot, 60 s on, at the first tick at or after it)
  expect(Math.abs(Date.parse(triggerSlots[1]) - Date.parse(triggerSlots[0]) - 60_000)).toBeLessThan(2 * TICK_MS);
  expect(byType('burn_alert')).toHaveLength(1);
  expect(byType('burn_alert')[0]).toMatchObject({ status: 'TRIGGERED', id: burnId });
  // (The new leader went on evaluating it: still triggered, no second notification.)
  const burnNow = await call(nodes[next].url, `/1/burn_alerts/checkout/${burnId}`, { headers: config });
  expect(burnNow.status, burnNow.text).toBe(200);
  expect(burnNow.body.triggered).toBe(true);
  // The delivery log (in PostgreSQL) agrees, read through a surviving node.
  const log = await call(nodes[next].url, `/1/deliveries?limit=100`, { headers: config });
  expect(log.status, log.text).toBe(200);
  const entries = log.body as { state: string }[];
  expect(entries.length).toBe(all.length);
  expect(entries.every((e) => e.state === 'delivered')).toBe(true);

  // Equal answers through each surviving node, and no acknowledged event lost.
  const alive = aliveNow();
  const q = await call(nodes[alive[0]].url, '/1/queries/checkout', { method: 'POST', headers: { ...config, ...json }, body: { calculations: [{ op: 'COUNT' }, { op: 'SUM', column: 'seq' }, { op: 'COUNT_DISTINCT', column: 'seq' }], breakdowns: ['service'], time_range: 3600 } });
  expect(q.status, q.text).toBe(200);
  const answer = async (n: Served) => {
    const r = await call(n.url, '/1/query_results/checkout', { method: 'POST', headers: { ...config, ...json }, body: { query_id: q.body.id } });
    expect(r.status, r.text).toBe(201);
    return until('a complete result', async () => {
      const g = await call(n.url, `/1/query_results/checkout/${r.body.id}`, { headers: config });
      return g.body?.complete ? (g.body.data.results as { data: Record<string, number> }[]) : undefined;
    }, 20_000);
  };
  const counted = (results: { data: Record<string, number> }[]) => results.reduce((s, r) => s + r.data.COUNT, 0);
  const answers: { data: Record<string, number> }[][] = [];
  for (const i of alive) answers.push(await answer(nodes[i]));
  // No event stored twice (each has its own seq).
  for (const a of answers) for (const r of a) expect(r.data['COUNT_DISTINCT(seq)']).toBe(r.data.COUNT);
  const total = acked.reduce((a, b) => a + b, 0);
  console.log(`events acknowledged per node ${JSON.stringify(acked)}, unanswered ${JSON.stringify(unanswered)}; counted ${answers.map(counted).join(', ')}`);
  if (eventStore) {
    // One event store: every node answers the same, and it holds every event any node acknowledged
    // (the killed node's too: a 202 meant durable in ClickHouse).
    expect(answers[1]).toEqual(answers[0]);
    expect(counted(answers[0])).toBeGreaterThanOrEqual(total);
    expect(counted(answers[0]) - total, 'events stored beyond those acknowledged').toBeLessThanOrEqual(unanswered.reduce((a, b) => a + b, 0));
    for (const i of [0, 1, 2]) expect(acked[i], `node-${i} ingested`).toBeGreaterThan(0);
  } else {
    // Each node holds exactly the events it acknowledged.
    alive.forEach((i, k) => expect(counted(answers[k]), `node-${i}`).toBe(acked[i]));
    if (acked[alive[0]] === acked[alive[1]]) expect(answers[0]).toEqual(answers[1]);
  }
  // The killed node, restarted on its data directory, answers too: with every event it acknowledged
  // before the kill -9 (and perhaps the batch it was answering when killed).
  const again = await serve(['--data-dir', dirs[first]], { env: env(first), timeout: 60_000 });
  nodes[first] = again;
  const held = counted(await answer(again));
  if (eventStore) expect(held).toBe(counted(answers[0]));
  else {
    expect(held).toBeGreaterThanOrEqual(acked[first]);
    expect(held - acked[first], 'events stored beyond those acknowledged').toBeLessThanOrEqual(unanswered[first]);
  }
  expect(acked[first]).toBeGreaterThan(0);
}

async function until<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
