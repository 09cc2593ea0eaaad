// The ingest benchmark (part of `npm run bench`; also runs alone: `node bench/ingest.mjs`
// after `npm run build`).
//
// 1. Throughput and CPU: `waggle serve` as its own process (durability on: a 202 means the
//    events are committed), driven over HTTP by CONNECTIONS concurrent keep-alive clients in
//    this process, each POSTing gzipped batches of 1,000 realistic events (bench/events.mjs,
//    about 500 bytes and 20 fields each; 48 distinct bodies, round-robin) to /1/batch. Server
//    CPU is user + system time of all its threads, from /proc, around the measured window.
// 2. The baseline, in its own process and the same run: JSON.parse of the same (gunzipped)
//    bodies plus a raw DuckDB bulk insert (bench/ingest-baseline.mjs), twice: whole data chunks
//    and one Appender call per value. The ratio is against the cheaper of the two. It runs with
//    the server's Node flags, so that neither gets a V8 setting the other does not.
// 3. Ingest-to-queryable latency: an app built in this process (dist/) takes single-event
//    batches, idle and under load from another process; from each 202 until a query on the
//    event store sees the event.
//
// `node bench/ingest.mjs --server-only` runs step 1 alone and prints one JSON line.
// BENCH_SECONDS (default 10) sets the measured window; BENCH_INGEST_CONNECTIONS (default 16) the
// clients; BENCH_PROFILE=<dir> runs the server with --cpu-prof and writes its profile there.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { makeEvents } from './events.mjs';
import { serverNodeEnv, serverNodeFlags } from './server-node.mjs';
import { cpuSeconds, peakRssMb, percentile, sleep } from './stats.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_INGEST_CONNECTIONS ?? 16);
const BATCH = 1000;
const BODIES = 48; // distinct bodies, 48,000 distinct events, sent round-robin
const WARMUP = Math.min(3, DURATION / 3);
const LATENCY_SAMPLES = 200;
const WATCHDOG_S = 4 * DURATION + 180;

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function run(args, env = {}) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, args, { cwd: ROOT, env: { ...serverNodeEnv(), ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}: ${out}`))));
  });
}

/** POSTs one gzipped batch; resolves with the number of events answered 202. */
function post(agent, port, key, body, dataset = 'bench') {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: `/1/batch/${dataset}`,
        method: 'POST',
        agent,
        headers: {
          'x-honeycomb-team': key,
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'content-length': body.length,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}: ${text.slice(0, 300)}`));
          let ok = 0;
          for (const r of JSON.parse(text)) if (r.status === 202) ok++;
          resolve(ok);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends one body to /1/batch/{dataset}; resolves with the events acknowledged. */
export const batchSender = (dataset) => (agent, port, key, body) => post(agent, port, key, body, dataset);

/**
 * CONNECTIONS clients posting bodies round-robin until stopped. `window()` starts a measured
 * window and returns a function that ends it with events, seconds and request latencies.
 * `send(agent, port, key, body)` posts one body and resolves with the events it stored.
 */
function load(port, key, bodies, connections, send) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  let stop = false;
  let next = 0;
  let counting = null;
  const clients = Array.from({ length: connections }, async () => {
    while (!stop) {
      const body = bodies[next++ % bodies.length];
      const t0 = performance.now();
      const ok = await send(agent, port, key, body);
      if (ok !== BATCH) throw new Error(`only ${ok} of ${BATCH} events were acknowledged`);
      if (counting) {
        counting.events += ok;
        counting.latencies.push(performance.now() - t0);
      }
    }
  });
  const all = Promise.all(clients);
  all.catch(() => (stop = true));
  return {
    window() {
      const w = { events: 0, latencies: [], t0: performance.now() };
      counting = w;
      return () => {
        counting = null;
        return { events: w.events, seconds: (performance.now() - w.t0) / 1000, latencies: w.latencies };
      };
    },
    async stop() {
      stop = true;
      await all;
      agent.destroy();
    },
    failed: all,
  };
}

/**
 * Throughput and server CPU of `waggle serve` under CONNECTIONS clients, each sending bodies of
 * BATCH events with `send` (default: /1/batch/bench). `name` names the data directory. `opts.env`:
 * more environment for the server (WAGGLE_EVENT_STORE); `opts.pids`: other processes whose CPU
 * counts in the same window (an event store's servers: `otherCpuSeconds`).
 */
export async function serverRun(tmp, bodies, send = batchSender('bench'), name = 'server', opts = {}) {
  const dataDir = join(tmp, name);
  const init = JSON.parse(await run(['dist/main.js', 'init', '--data-dir', dataDir, '--json']));
  const key = init.keys.ingest;
  const port = await freePort();
  const profile = process.env.BENCH_PROFILE ? [`--cpu-prof`, `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  // The server runs with the Node flags of its shebang (what `waggle serve` and `npm start` run
  // with), then BENCH_SERVER_NODE_ARGS: extra flags for the server alone (e.g. to try V8 heap settings).
  const nodeArgs = [...serverNodeFlags(), ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  const child = spawn(process.execPath, [...nodeArgs, ...profile, 'dist/main.js', 'serve', '--port', String(port), '--data-dir', dataDir], {
    cwd: ROOT,
    env: { ...serverNodeEnv(), ...process.env, WAGGLE_LOG_LEVEL: 'warn', WAGGLE_INGEST_RATE_LIMIT: 'off', WAGGLE_OTLP_GRPC_PORT: '0', ...opts.env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const otherCpu = () => (opts.pids ?? []).reduce((n, pid) => n + cpuSeconds(pid), 0);
  try {
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`waggle serve exited (${child.exitCode}) before it answered`);
      try {
        const r = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) });
        if (r.ok) break;
      } catch {
        if (i > 1200) throw new Error('waggle serve did not come up'); // (a loaded machine starts slowly)
        await sleep(50);
      }
    }
    const l = load(port, key, bodies, CONNECTIONS, send);
    await Promise.race([sleep(WARMUP * 1000), l.failed]);
    const cpu0 = cpuSeconds(child.pid);
    const other0 = otherCpu();
    const main0 = cpuSeconds(child.pid, child.pid);
    const client0 = process.cpuUsage();
    const end = l.window();
    await Promise.race([sleep(DURATION * 1000), l.failed]);
    const cpu = cpuSeconds(child.pid) - cpu0;
    const otherCpuSeconds = otherCpu() - other0;
    const mainCpu = cpuSeconds(child.pid, child.pid) - main0;
    const w = end();
    const clientCpu = process.cpuUsage(client0);
    const rssMb = peakRssMb(child.pid);
    await l.stop();
    return { ...w, cpuSeconds: cpu, otherCpuSeconds, mainCpuSeconds: mainCpu, clientCpuSeconds: (clientCpu.user + clientCpu.system) / 1e6, rssMb, nodeArgs, dataDir, keys: init.keys };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/**
 * Ingest-to-queryable latency, in this process: an app over real stores, background load from
 * `connections` clients, and LATENCY_SAMPLES single-event batches, each polled for by query
 * right after its 202.
 */
export async function latencyRun(tmp, bodiesDir, connections) {
  const { createApp } = await import(join(ROOT, 'dist/app.js'));
  const { openSqliteStore } = await import(join(ROOT, 'dist/stores/config/store.js'));
  const { initialise } = await import(join(ROOT, 'dist/domain/tenancy.js'));
  const { DuckDbEventStore } = await import(join(ROOT, 'dist/stores/events/duckdb-store.js'));
  const { tableName } = await import(join(ROOT, 'dist/stores/events/types.js'));
  const { quoteIdent } = await import(join(ROOT, 'dist/stores/events/duckdb-store.js'));
  const dataDir = join(tmp, 'latency');
  mkdirSync(dataDir, { recursive: true });
  const store = openSqliteStore(join(dataDir, 'config.sqlite'));
  await store.migrate();
  const init = await initialise(store);
  const events = new DuckDbEventStore(join(dataDir, 'events.duckdb'));
  await events.open();
  const app = await createApp({ configStore: store, eventStore: events, settings: { dataDir, ingestRateLimit: null }, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = app.server.address().port;
  const key = init.keys.ingest;
  const agent = new http.Agent({ keepAlive: true });
  let background;
  const one = (seq) => gzipSync(JSON.stringify([{ data: { seq, 'service.name': 'probe', duration_ms: seq / 7 } }]));
  try {
    // Create the probe dataset and find where `seq` is stored.
    await post(agent, port, key, one(0), 'probe');
    const team = (await store.listTeams())[0];
    const env = await store.getEnvironmentBySlug(team.id, init.environment.slug);
    const ds = await store.getDataset(env.id, 'probe');
    const seqCol = (await store.listColumns(ds.id)).find((c) => c.keyName === 'seq').physical;
    const sql = `SELECT count(*) AS n FROM ${quoteIdent(tableName(ds.id))} WHERE ${quoteIdent(seqCol)} = ?`;

    // Background load from another process, so that this event loop runs only the server and the probe.
    if (connections > 0) {
      background = spawn(process.execPath, [fileURLToPath(import.meta.url), '--load', String(port), key, bodiesDir, String(connections)], {
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      await sleep(1500);
    }
    const visible = [];
    const acked = [];
    let firstPoll = 0;
    for (let seq = 1; seq <= LATENCY_SAMPLES; seq++) {
      const body = one(seq);
      const t0 = performance.now();
      const ok = await post(agent, port, key, body, 'probe');
      const tAck = performance.now();
      if (ok !== 1) throw new Error('probe event refused');
      for (let poll = 0; ; poll++) {
        const [{ n }] = await events.query(sql, [seq]);
        if (Number(n) === 1) {
          if (poll === 0) firstPoll++;
          break;
        }
        if (performance.now() - tAck > 10_000) throw new Error(`event ${seq} not visible after 10 s`);
        await sleep(1);
      }
      visible.push(performance.now() - tAck);
      acked.push(tAck - t0);
      await sleep(5);
    }
    if (background && background.exitCode !== null) throw new Error('the background load generator failed');
    return { visible, acked, firstPoll };
  } finally {
    background?.kill();
    agent.destroy();
    await app.close();
    await events.close();
    await store.close();
  }
}

export async function ingestBench() {
  const tmp = mkdtempSync(join(tmpdir(), 'waggle-bench-ingest-'));
  try {
    const bodiesDir = join(tmp, 'bodies');
    mkdirSync(bodiesDir);
    const bodies = [];
    let rawBytes = 0;
    for (let i = 0; i < BODIES; i++) {
      const json = JSON.stringify(makeEvents(BATCH, i + 1));
      rawBytes += json.length;
      const gz = gzipSync(json);
      bodies.push(gz);
      writeFileSync(join(bodiesDir, `${String(i).padStart(3, '0')}.json.gz`), gz);
    }
    const gzBytes = bodies.reduce((n, b) => n + b.length, 0);

    let phase = 'setup';
    const progress = (what) => process.stderr.write(`ingest bench: ${(phase = what)}\n`);
    // A stuck run says where it was stuck instead of hanging.
    const watchdog = setTimeout(() => {
      process.stderr.write(`ingest bench: no result after ${WATCHDOG_S} s, stuck in: ${phase}\n`);
      process.exit(1);
    }, WATCHDOG_S * 1000);
    watchdog.unref();
    const nodeFlags = serverNodeFlags();
    progress('baseline (JSON.parse + DuckDB data chunks)');
    const chunks = JSON.parse(await run([...nodeFlags, 'bench/ingest-baseline.mjs', bodiesDir, String(DURATION), join(tmp, 'baseline-chunks.duckdb'), 'chunks']));
    progress('baseline (JSON.parse + DuckDB appender, per value)');
    const appender = JSON.parse(await run([...nodeFlags, 'bench/ingest-baseline.mjs', bodiesDir, String(DURATION), join(tmp, 'baseline-appender.duckdb'), 'appender']));
    progress('waggle serve under load');
    const server = await serverRun(tmp, bodies);
    progress('ingest-to-queryable latency, idle');
    const idle = await latencyRun(join(tmp, 'idle'), bodiesDir, 0);
    progress('ingest-to-queryable latency, under load');
    const loaded = await latencyRun(join(tmp, 'loaded'), bodiesDir, 4);

    const cpuPerM = (r) => (r.cpuSeconds / r.events) * 1e6;
    const baseline = cpuPerM(chunks) <= cpuPerM(appender) ? chunks : appender;
    const mainPerM = (r) => (r.mainCpuSeconds / r.events) * 1e6;
    const eps = (r) => r.events / r.seconds;
    console.log(
      `\nIngest: POST /1/batch, ${BATCH} events per batch (${(rawBytes / BODIES / BATCH).toFixed(0)} bytes/event as JSON, ` +
        `gzip ${(rawBytes / gzBytes).toFixed(1)}x), ${CONNECTIONS} connections, ${DURATION}s ` +
        `(server and load generator share this machine; load generator CPU ${server.clientCpuSeconds.toFixed(1)} s)\n`,
    );
    console.log('| run | events/s | CPU s per M events | of which the JS thread | CPU ratio vs baseline | batch p50 / p99 ms |');
    console.log('|---|---|---|---|---|---|');
    for (const [name, r] of [['data chunks', chunks], ['appender, one call per value', appender]]) {
      console.log(
        `| baseline: JSON.parse + DuckDB ${name} (no HTTP, no gunzip), one process${r === baseline ? ' (the baseline)' : ''} | ${eps(r).toFixed(0)} | ` +
          `${cpuPerM(r).toFixed(2)} | ${mainPerM(r).toFixed(2)} | ${(cpuPerM(r) / cpuPerM(baseline)).toFixed(2)}x | |`,
      );
    }
    console.log(
      `| waggle serve, HTTP + gzip + durable group commit | ${eps(server).toFixed(0)} | ${cpuPerM(server).toFixed(2)} | ${mainPerM(server).toFixed(2)} | ` +
        `${(cpuPerM(server) / cpuPerM(baseline)).toFixed(2)}x | ${percentile(server.latencies, 50).toFixed(0)} / ${percentile(server.latencies, 99).toFixed(0)} |`,
    );
    console.log(`\nServer: \`node ${server.nodeArgs.join(' ')} dist/main.js serve\`, peak resident memory ${server.rssMb.toFixed(0)} MB.`);
    console.log(`\nIngest to queryable (${LATENCY_SAMPLES} single-event batches, in-process app; ms from the 202 until a query sees the event)\n`);
    console.log('| condition | 202 → visible p50 | p99 | max | visible at the first query | request → 202 p50 | p99 |');
    console.log('|---|---|---|---|---|---|---|');
    for (const [name, r] of [['idle', idle], ['under load (4 clients of 1,000-event batches, another process)', loaded]]) {
      console.log(
        `| ${name} | ${percentile(r.visible, 50).toFixed(2)} | ${percentile(r.visible, 99).toFixed(2)} | ${Math.max(...r.visible).toFixed(2)} | ${r.firstPoll}/${r.visible.length} | ` +
          `${percentile(r.acked, 50).toFixed(1)} | ${percentile(r.acked, 99).toFixed(1)} |`,
      );
    }
    clearTimeout(watchdog);
    return { baseline, chunks, appender, server, idle, loaded };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

// (Only when run itself: bench/otlp.mjs and bench/run.mjs import this file.)
const isMain = process.argv[1] === fileURLToPath(import.meta.url);
if (isMain && process.argv[2] === '--load') {
  // Load-generator mode (latency run): POST the bodies in a loop until killed.
  const [port, key, dir, connections] = process.argv.slice(3);
  const files = readdirSync(dir).filter((f) => f.endsWith('.json.gz')).sort();
  load(Number(port), key, files.map((f) => readFileSync(join(dir, f))), Number(connections), batchSender('bench')).failed.catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else if (isMain && process.argv[2] === '--server-only') {
  // The server run alone, one JSON line: for back-to-back pairs when trying a change (the
  // machine's speed drifts too much between separate full runs to compare them).
  const tmp = mkdtempSync(join(tmpdir(), 'waggle-bench-ingest-'));
  try {
    const bodies = Array.from({ length: BODIES }, (_, i) => gzipSync(JSON.stringify(makeEvents(BATCH, i + 1))));
    const s = await serverRun(tmp, bodies);
    const perM = (x) => ((x / s.events) * 1e6).toFixed(2);
    console.log(
      JSON.stringify({
        eventsPerSecond: Math.round(s.events / s.seconds),
        cpuSecondsPerM: perM(s.cpuSeconds),
        jsThreadPerM: perM(s.mainCpuSeconds),
        cores: (s.cpuSeconds / s.seconds).toFixed(2),
        batchP50: Math.round(percentile(s.latencies, 50)),
        batchP99: Math.round(percentile(s.latencies, 99)),
        peakRssMb: Math.round(s.rssMb),
        node: s.nodeArgs.join(' '),
      }),
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
} else if (isMain) {
  await ingestBench();
}
