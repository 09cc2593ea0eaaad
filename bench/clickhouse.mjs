// The ClickHouse benchmark (`BENCH_ONLY=clickhouse npm run bench`): the same ingest and the same
// queries on the three event engines behind the seam, in one run: DuckDB (embedded, the default),
// ClickHouse single node, and ClickHouse as 2 shards (two servers on this machine, a Distributed
// table over local MergeTree tables, synchronous inserts). The servers are Debian's
// clickhouse-server 18.16, started by scripts/clickhouse-servers.mjs.
//
// 1. Ingest: `waggle serve` under the ingest bench's load (bench/ingest.mjs serverRun: gzipped
//    batches of 1,000 events to /1/batch, 16 connections, BENCH_SECONDS measured); events/s, and
//    CPU per event of Waggle and of the ClickHouse servers (from /proc, the same window).
// 2. Queries: a fresh store takes BENCH_CLICKHOUSE_EVENTS events (default 1,000,000: 10M takes
//    too long on the shared 2-core machine this was written on) through /1/batch, the same bodies
//    in the same order on every engine; then five queries, BENCH_CLICKHOUSE_ITERATIONS times
//    each (default 7), over HTTP (POST /1/query_results, polled), p50 wall time. The answers of
//    the three engines are compared (equal, floats within a relative 1e-9).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { clickhouseBinary, startClickHouse } from '../scripts/clickhouse-servers.mjs';
import { makeEvents } from './events.mjs';
import { batchSender, freePort, serverRun } from './ingest.mjs';
import { serverNodeFlags } from './server-node.mjs';
import { p50, sleep } from './stats.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVENTS = Number(process.env.BENCH_CLICKHOUSE_EVENTS ?? 1_000_000);
const ITERATIONS = Number(process.env.BENCH_CLICKHOUSE_ITERATIONS ?? 7);
const BATCH = 1000;
const BODIES = 48;
const DATASET = 'bench';

const QUERIES = [
  { key: 'count-by-minute', title: 'COUNT by minute over 2 h', series: true, spec: { calculations: [{ op: 'COUNT' }], granularity: 60 } },
  { key: 'p99-by-service', title: 'P99(duration_ms) by service.name', spec: { calculations: [{ op: 'P99', column: 'duration_ms' }], breakdowns: ['service.name'] } },
  { key: 'count-distinct', title: 'COUNT_DISTINCT(user.id)', spec: { calculations: [{ op: 'COUNT_DISTINCT', column: 'user.id' }] } },
  {
    key: 'filtered-avg',
    title: 'AVG(duration_ms), MAX(db.duration_ms) by http.route where http.status_code >= 500',
    spec: {
      calculations: [{ op: 'AVG', column: 'duration_ms' }, { op: 'MAX', column: 'db.duration_ms' }],
      breakdowns: ['http.route'],
      filters: [{ column: 'http.status_code', op: '>=', value: 500 }],
    },
  },
  {
    key: 'breakdown-havings',
    title: 'COUNT, SUM(http.response_size) by service.name, http.method, COUNT > 1000, top 10',
    spec: {
      calculations: [{ op: 'COUNT' }, { op: 'SUM', column: 'http.response_size' }],
      breakdowns: ['service.name', 'http.method'],
      havings: [{ calculate_op: 'COUNT', op: '>', value: 1000 }],
      orders: [{ op: 'SUM', column: 'http.response_size', order: 'descending' }],
      limit: 10,
    },
  },
];


function runNode(args) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}`))));
  });
}

/** `waggle serve` on a fresh data dir with the event store `env` names; resolves once it answers. */
async function serve(dataDir, env) {
  const init = JSON.parse(await runNode(['dist/main.js', 'init', '--data-dir', dataDir, '--json']));
  const port = await freePort();
  const child = spawn(process.execPath, [...serverNodeFlags(), 'dist/main.js', 'serve', '--port', String(port), '--data-dir', dataDir], {
    cwd: ROOT,
    env: {
      ...process.env,
      WAGGLE_LOG_LEVEL: 'warn',
      WAGGLE_RATE_LIMIT: 'off',
      WAGGLE_INGEST_RATE_LIMIT: 'off',
      WAGGLE_QUERY_RESULT_RATE_LIMIT: 'off',
      WAGGLE_QUERY_TIMEOUT_MS: '120000',
      WAGGLE_OTLP_GRPC_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error('waggle serve exited before it answered');
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
    } catch {
      if (i > 400) throw new Error('waggle serve did not come up');
      await sleep(50);
    }
  }
  return {
    port,
    keys: init.keys,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function api(port, key, method, path, body, gz) {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { 'x-honeycomb-team': key, 'content-type': 'application/json', ...(gz ? { 'content-encoding': 'gzip' } : {}) },
    body: gz ?? (body ? JSON.stringify(body) : undefined),
  });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

/** Sends EVENTS events (the bodies round-robin, in order), 8 requests at a time. */
async function load(server, bodies) {
  let next = 0;
  const total = Math.ceil(EVENTS / BATCH);
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < total) {
        const body = bodies[next++ % bodies.length];
        await api(server.port, server.keys.ingest, 'POST', `/1/batch/${DATASET}`, undefined, body);
      }
    }),
  );
}

async function queryTimes(server) {
  const key = server.keys.configuration;
  const out = [];
  for (const q of QUERIES) {
    const { id } = await api(server.port, key, 'POST', `/1/queries/${DATASET}`, { ...q.spec, time_range: 7200 });
    const times = [];
    let data;
    for (let i = 0; i < ITERATIONS + 1; i++) {
      const t0 = performance.now();
      const created = await api(server.port, key, 'POST', `/1/query_results/${DATASET}`, { query_id: id, disable_series: !q.series });
      let r = created;
      while (!r.complete) {
        await sleep(5);
        r = await api(server.port, key, 'GET', `/1/query_results/${DATASET}/${created.id}`);
      }
      if (r.error) throw new Error(`${q.key}: ${r.error}`);
      if (i > 0) times.push(performance.now() - t0); // the first is a warm-up
      data = r.data;
    }
    out.push({ key: q.key, p50: p50(times), data });
  }
  return out;
}

/** Whether two answers are equal, floats within a relative 1e-9 (summation order differs). */
function same(a, b) {
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) <= Math.max(1e-9, Math.abs(b) * 1e-9);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).sort();
    return same(ka, Object.keys(b).sort()) && ka.every((k) => same(a[k], b[k]));
  }
  return a === b;
}

export async function clickhouseBench() {
  if (!clickhouseBinary) {
    console.log('\nClickHouse bench: clickhouse-server is not installed (apt-get install clickhouse-server): skipped.');
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), 'waggle-bench-clickhouse-'));
  const single = await startClickHouse(1);
  const pair = await startClickHouse(2);
  try {
    // Events stamped now: they fall in the queries' 2-hour window.
    const bodies = Array.from({ length: BODIES }, (_, i) => gzipSync(JSON.stringify(makeEvents(BATCH, i + 1))));
    const engines = [
      { name: 'DuckDB (embedded)', env: {}, pids: [] },
      { name: 'ClickHouse single node', env: { WAGGLE_EVENT_STORE: single.setting('bench_ingest') }, pids: single.pids, query: () => single.setting('bench_query') },
      { name: 'ClickHouse 2 shards', env: { WAGGLE_EVENT_STORE: pair.setting('bench_ingest') }, pids: pair.pids, query: () => pair.setting('bench_query') },
    ];
    const rows = [];
    for (const [i, e] of engines.entries()) {
      process.stderr.write(`clickhouse bench: ingest, ${e.name}\n`);
      const r = await serverRun(tmp, bodies, batchSender(DATASET), `ingest-${i}`, { env: e.env, pids: e.pids });
      process.stderr.write(`clickhouse bench: ${EVENTS} events and queries, ${e.name}\n`);
      const server = await serve(join(tmp, `query-${i}`), e.query ? { WAGGLE_EVENT_STORE: e.query() } : {});
      try {
        const t0 = performance.now();
        await load(server, bodies);
        const loadSeconds = (performance.now() - t0) / 1000;
        rows.push({ name: e.name, ingest: r, loadSeconds, queries: await queryTimes(server) });
      } finally {
        await server.stop();
      }
    }
    const base = rows[0];
    console.log(
      `\nEvent engines: ingest (/1/batch, 1,000 events per batch, ${process.env.BENCH_SECONDS ?? 10}s under load), then ` +
        `${EVENTS.toLocaleString('en')} events and five queries (p50 of ${ITERATIONS}, over HTTP); ClickHouse 18.16 on this machine ` +
        `(2 shards = two servers on the same 2 cores)\n`,
    );
    console.log('| engine | events/s | Waggle CPU µs/event | ClickHouse CPU µs/event | total CPU vs DuckDB | load of the query data, s |');
    console.log('|---|---|---|---|---|---|');
    const total = (r) => (r.ingest.cpuSeconds + r.ingest.otherCpuSeconds) / r.ingest.events;
    for (const r of rows) {
      const w = r.ingest;
      console.log(
        `| ${r.name} | ${(w.events / w.seconds).toFixed(0)} | ${((w.cpuSeconds / w.events) * 1e6).toFixed(1)} | ${((w.otherCpuSeconds / w.events) * 1e6).toFixed(1)} | ` +
          `${(total(r) / total(base)).toFixed(2)}x | ${r.loadSeconds.toFixed(1)} |`,
      );
    }
    console.log(`\n| query | ${rows.map((r) => `${r.name} p50 ms`).join(' | ')} | answers equal |`);
    console.log(`|---|${rows.map(() => '---|').join('')}---|`);
    for (const [qi, q] of QUERIES.entries()) {
      const equal = rows.every((r) => same(r.queries[qi].data, base.queries[qi].data));
      console.log(`| ${q.title} | ${rows.map((r) => `${r.queries[qi].p50.toFixed(0)} (${(r.queries[qi].p50 / base.queries[qi].p50).toFixed(2)}x)`).join(' | ')} | ${equal ? 'yes' : 'NO'} |`);
    }
  } finally {
    await single.stop();
    await pair.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await clickhouseBench();
