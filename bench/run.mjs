// `npm run bench`: figures as ratios against a baseline measured in the same run, with the
// absolute numbers beside them. Each server runs as its own process; autocannon drives it
// from this one. Server CPU is read from /proc (user + system time) around each run.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { serverNodeFlags } from './server-node.mjs';
import { cpuSeconds } from './stats.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 32;

function start(args, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, WAGGLE_OTLP_GRPC_PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /LISTENING (\d+)|Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1] ?? m[2]) });
    });
    child.on('exit', (code) => reject(new Error(`server exited early (${code}): ${out}`)));
  });
}

async function measure(name, server, headers) {
  await autocannon({ url: `http://127.0.0.1:${server.port}/1/auth`, headers, connections: CONNECTIONS, duration: 2 }); // warm-up
  const cpu0 = cpuSeconds(server.child.pid);
  const r = await autocannon({ url: `http://127.0.0.1:${server.port}/1/auth`, headers, connections: CONNECTIONS, duration: DURATION });
  const cpu = cpuSeconds(server.child.pid) - cpu0;
  const ok = r['2xx'];
  if (r.non2xx > 0) throw new Error(`${name}: ${r.non2xx} non-2xx responses`);
  return { name, reqPerSec: ok / DURATION, cpuMicrosPerReq: (cpu / ok) * 1e6, p99ms: r.latency.p99 };
}

// BENCH_ONLY=auth, BENCH_ONLY=ingest, BENCH_ONLY=slo, BENCH_ONLY=query, BENCH_ONLY=clickhouse,
// BENCH_ONLY=slo-engines, BENCH_ONLY=web, BENCH_ONLY=bigtrace, BENCH_ONLY=wide or BENCH_ONLY=board runs one part.
const ONLY = process.env.BENCH_ONLY ?? '';

async function authBench() {
  const dataDir = mkdtempSync(join(tmpdir(), 'waggle-bench-'));
  const init = JSON.parse(
    await new Promise((resolve, reject) => {
      const c = spawn(process.execPath, ['dist/main.js', 'init', '--data-dir', dataDir, '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      c.stdout.on('data', (d) => (out += d));
      c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error('init failed'))));
    }),
  );

  const baseline = await start(['bench/baseline-server.mjs']);
  const waggle = await start([...serverNodeFlags(), 'dist/main.js', 'serve', '--port', '0', '--data-dir', dataDir], {
    WAGGLE_LOG_LEVEL: 'info',
    WAGGLE_RATE_LIMIT: 'off',
  });
  try {
    const base = await measure('baseline: bare Fastify, fixed JSON', baseline, {});
    const cfg = await measure('waggle GET /1/auth, configuration key', waggle, { 'x-honeycomb-team': init.keys.configuration });
    const ing = await measure('waggle GET /1/auth, ingest key', waggle, { 'x-honeycomb-team': init.keys.ingest });
    console.log(`\nGET /1/auth, ${CONNECTIONS} connections, ${DURATION}s each (server and load generator share this machine)\n`);
    console.log('| run | req/s | server CPU µs/req | p99 ms | CPU ratio vs baseline |');
    console.log('|---|---|---|---|---|');
    for (const r of [base, cfg, ing]) {
      console.log(`| ${r.name} | ${r.reqPerSec.toFixed(0)} | ${r.cpuMicrosPerReq.toFixed(1)} | ${r.p99ms} | ${(r.cpuMicrosPerReq / base.cpuMicrosPerReq).toFixed(2)}x |`);
    }
  } finally {
    baseline.child.kill();
    waggle.child.kill();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (ONLY === '' || ONLY === 'auth') await authBench();
// Ingest throughput and CPU against a raw JSON.parse + DuckDB baseline, and ingest-to-queryable latency.
if (ONLY === '' || ONLY === 'ingest') await (await import('./ingest.mjs')).ingestBench();
// OTLP trace exports against /1/batch with the same events, and decoding alone (bench/otlp.mjs).
if (ONLY === '' || ONLY === 'otlp') await (await import('./otlp.mjs')).otlpBench();
// Wide events (3,000+ fields, most as attributes) against narrow ones: ingest CPU per field value, queries on columns and attributes (bench/wide.mjs).
if (ONLY === '' || ONLY === 'wide') await (await import('./wide.mjs')).wideBench();
// GET ?detailed=true of an SLO on 10M events against 1,000 and against a raw recompute (bench/slo.mjs).
if (ONLY === '' || ONLY === 'slo') await (await import('./slo.mjs')).sloBench();
// Query results on 10M events against the same queries hand-written in DuckDB SQL, and time pruning.
if (ONLY === '' || ONLY === 'query') await (await import('./query.mjs')).queryBench();
// A 6-panel board over 7 days of 100M events refreshed while events arrive, with the query cache off and on; a trigger's evaluation CPU (bench/board.mjs).
if (ONLY === '' || ONLY === 'board') await (await import('./board.mjs')).boardBench();
// ClickHouse behind the event-engine seam: ingest and queries on DuckDB, ClickHouse single node and 2 shards.
if (ONLY === '' || ONLY === 'clickhouse') await (await import('./clickhouse.mjs')).clickhouseBench();
// SLO detailed GETs on DuckDB (incremental rollups), ClickHouse and 2 shards (counted at every refresh).
if (ONLY === '' || ONLY === 'slo-engines') await (await import('./slo-engines.mjs')).sloEnginesBench();
// The web UI's budgets in Chromium: first-load JavaScript, drawing 50 groups × 120 points and 10,000 points against bare uPlot.
if (ONLY === '' || ONLY === 'web') await (await import('./web-ui.mjs')).webBench();
// A trace of 100,000 spans in Chromium: time to first paint of the waterfall, frame time while scrolling.
if (ONLY === '' || ONLY === 'bigtrace') await (await import('./big-trace.mjs')).bigTraceBench();
