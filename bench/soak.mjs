// `npm run soak`: a long steady load on one `waggle serve` process, to show that its memory
// levels off (docs/operations.md, "Bounded memory"). Mixed ingest (500-event batches over
// /1/batch and 500-span OTLP/JSON exports over /v1/traces) at a fixed rate, a query result every
// few seconds, a trigger evaluated every minute that notifies a local webhook receiver each time.
// Every minute it prints the server's RSS (the mean of samples every 5 s, and their peak), the
// event store's memory, V8 heap, open file descriptors, event-store size,
// ingest queue, events stored, errors and p99 latencies; at the end, whether RSS after minute
// 10 (or two thirds into a shorter run) stayed within ±10 % of its level then, and whether
// any count (fds, heap) kept growing.
//
// Settings (environment): SOAK_MINUTES (default 60), SOAK_RATE events/s (default 8000),
// SOAK_BATCH (500), SOAK_QUERY_SECONDS (7), SOAK_OTLP_SHARE (fraction of batches sent as OTLP,
// 0.25); WAGGLE_* settings pass through to the server (e.g. WAGGLE_EVENT_STORE_MEMORY).
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeEvents } from './events.mjs';
import { serverNodeFlags } from './server-node.mjs';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 60);
const RATE = Number(process.env.SOAK_RATE ?? 8000);
const BATCH = Number(process.env.SOAK_BATCH ?? 500);
const QUERY_SECONDS = Number(process.env.SOAK_QUERY_SECONDS ?? 7);
const OTLP_SHARE = Number(process.env.SOAK_OTLP_SHARE ?? 0.25);
const MAX_IN_FLIGHT = 16;
const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

const dataDir = mkdtempSync(join(tmpdir(), 'waggle-soak-'));
const env = { ...process.env, WAGGLE_OTLP_GRPC_PORT: '0', WAGGLE_EVALUATION_TICK_MS: '5000', WAGGLE_QUERY_RESULT_RATE_LIMIT: 'off', WAGGLE_INGEST_RATE_LIMIT: 'off' };
const keys = JSON.parse(execFileSync(process.execPath, [MAIN, 'init', '--data-dir', dataDir, '--json'], { env }).toString()).keys;

// --- the server
const server = spawn(process.execPath, [...serverNodeFlags(), MAIN, 'serve', '--data-dir', dataDir, '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
let serverErrors = 0;
const base = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    const text = String(d);
    if (!out.includes('Server listening')) {
      out += text;
      const m = /Server listening at (http:\/\/[^"\s]+)/.exec(out);
      if (m) resolve(m[1]);
    }
    for (const line of text.split('\n')) if (/"level":(50|60)/.test(line)) serverErrors++;
  });
  server.stderr.on('data', (d) => process.stderr.write(d));
  server.on('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
});

// --- the webhook receiver
let deliveries = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    deliveries++;
    res.end('ok');
  });
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));

async function api(path, { method = 'GET', key = keys.configuration, body } = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { 'x-honeycomb-team': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : undefined;
}

// --- the load
/** Per minute: latencies (ms) and errors. */
let window = { ingest: [], query: [], errors: 0, events: 0 };
let totals = { events: 0, errors: 0, queries: 0, skipped: 0 };
let inFlight = 0;
let seed = 0;

function otlpBody(events) {
  const spans = events.map(({ time, data }) => {
    const start = BigInt(Date.parse(time)) * 1_000_000n;
    const { 'service.name': _s, name, duration_ms, ...rest } = data;
    return {
      traceId: data['trace.trace_id'],
      spanId: data['trace.span_id'],
      name,
      kind: 2,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(start + BigInt(Math.round(duration_ms * 1e6))),
      attributes: Object.entries(rest)
        .filter(([k]) => !k.startsWith('trace.'))
        .map(([key, v]) => ({ key, value: typeof v === 'number' ? (Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v }) : typeof v === 'boolean' ? { boolValue: v } : { stringValue: String(v) } })),
    };
  });
  return { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'soak-otlp' } }] }, scopeSpans: [{ spans }] }] };
}

async function sendBatch() {
  if (inFlight >= MAX_IN_FLIGHT) {
    totals.skipped++;
    return;
  }
  inFlight++;
  const events = makeEvents(BATCH, seed++);
  const otlp = Math.random() < OTLP_SHARE;
  const started = performance.now();
  try {
    if (otlp) await api('/v1/traces', { method: 'POST', key: keys.ingest, body: otlpBody(events) });
    else {
      const results = await api('/1/batch/soak', { method: 'POST', key: keys.ingest, body: events });
      const refused = results.filter((r) => r.status !== 202).length;
      if (refused > 0) throw new Error(`${refused} events refused`);
    }
    window.ingest.push(performance.now() - started);
    window.events += BATCH;
    totals.events += BATCH;
  } catch (err) {
    window.errors++;
    totals.errors++;
    if (totals.errors <= 5) console.error(`ingest error: ${err.message}${err.cause ? ` (${err.cause.code ?? err.cause.message})` : ''}`);
  } finally {
    inFlight--;
  }
}

let queryId;
async function runQuery() {
  const started = performance.now();
  try {
    queryId ??= (await api('/1/queries/soak', { method: 'POST', body: { calculations: [{ op: 'COUNT' }, { op: 'P99', column: 'duration_ms' }], breakdowns: ['http.route'], time_range: 600 } })).id;
    const created = await fetch(`${base}/1/query_results/soak`, {
      method: 'POST',
      headers: { 'x-honeycomb-team': keys.configuration, 'content-type': 'application/json' },
      body: JSON.stringify({ query_id: queryId }),
    });
    if (created.status !== 201) throw new Error(`query result: ${created.status} ${await created.text()}`);
    const path = new URL(created.headers.get('location')).pathname;
    for (;;) {
      const r = await api(path);
      if (r.complete) {
        if (r.error) throw new Error(`query: ${r.error}`);
        break;
      }
      await new Promise((res) => setTimeout(res, 50));
    }
    window.query.push(performance.now() - started);
    totals.queries++;
  } catch (err) {
    window.errors++;
    totals.errors++;
    console.error(`query error: ${err.message}`);
  }
}

// A trigger on the /1/batch dataset that notifies the receiver at every evaluation (every minute).
await api('/1/batch/soak', { method: 'POST', key: keys.ingest, body: makeEvents(10, 1e6) });
const hook = await api('/1/recipients', { method: 'POST', body: { type: 'webhook', details: { webhook_name: 'soak', webhook_url: `http://127.0.0.1:${receiver.address().port}/hook` } } });
await api('/1/triggers/soak', {
  method: 'POST',
  body: { name: 'soak traffic', alert_type: 'on_true', query: { calculations: [{ op: 'COUNT' }], time_range: 120 }, frequency: 60, threshold: { op: '>', value: 0 }, recipients: [{ id: hook.id }] },
});

const batchesPerSecond = RATE / BATCH;
const ingestTimer = setInterval(() => void sendBatch(), 1000 / batchesPerSecond);
const queryTimer = setInterval(() => void runQuery(), QUERY_SECONDS * 1000);

// --- the readings
function rssBytes(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) * 1024;
}
const openFds = (pid) => readdirSync(`/proc/${pid}/fd`).length;
async function scrape() {
  const text = await (await fetch(`${base}/metrics`)).text();
  const get = (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    heap: get('nodejs_heap_size_used_bytes'),
    queue: get('waggle_ingest_queue_events'),
    storeBytes: get('waggle_event_store_size_bytes'),
    duckdb: get('waggle_event_store_memory_bytes'),
  };
}
const p99 = (xs) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]);
const mb = (b) => (b / 1024 / 1024).toFixed(0);

// RSS is sampled every 5 s: each minute reports the mean of its samples (and the peak), since
// one reading lands anywhere in the garbage collector's and the store's checkpoint cycles.
let rssSamples = [];
const sampler = setInterval(() => rssSamples.push(rssBytes(server.pid)), 5000);
const readings = [];
console.log(`soak: ${MINUTES} min, ${RATE} events/s in ${BATCH}-event batches (${Math.round(OTLP_SHARE * 100)} % OTLP), a query every ${QUERY_SECONDS} s, a trigger every minute; server ${base}, data ${dataDir}`);
console.log('min  rss_MB rss_max_MB duckdb_MB heap_MB fds store_MB queue events/s errors ingest_p99_ms query_p99_ms deliveries');
for (let minute = 1; minute <= MINUTES; minute++) {
  await new Promise((r) => setTimeout(r, 60_000));
  const m = await scrape();
  const r = {
    minute,
    rss: rssSamples.reduce((a, b) => a + b, 0) / Math.max(1, rssSamples.length),
    rssMax: Math.max(...rssSamples),
    heap: m.heap,
    duckdb: m.duckdb,
    fds: openFds(server.pid),
    storeBytes: m.storeBytes,
    queue: m.queue,
    eventsPerSecond: window.events / 60,
    errors: window.errors + serverErrors,
    ingestP99: p99(window.ingest),
    queryP99: p99(window.query),
    deliveries,
  };
  serverErrors = 0;
  rssSamples = [];
  window = { ingest: [], query: [], errors: 0, events: 0 };
  readings.push(r);
  console.log(
    [String(minute).padStart(3), mb(r.rss).padStart(7), mb(r.rssMax).padStart(10), mb(r.duckdb).padStart(9), mb(r.heap).padStart(7), String(r.fds).padStart(4), mb(r.storeBytes).padStart(8), String(r.queue).padStart(5),
      r.eventsPerSecond.toFixed(0).padStart(8), String(r.errors).padStart(6), r.ingestP99.toFixed(0).padStart(13), r.queryP99.toFixed(0).padStart(12), String(r.deliveries).padStart(10)].join(' '),
  );
}

clearInterval(ingestTimer);
clearInterval(queryTimer);
clearInterval(sampler);
while (inFlight > 0) await new Promise((r) => setTimeout(r, 50));

// --- the verdict: the level after minute 10 (or two thirds into a shorter run) holds to the end
const from = Math.min(10, Math.max(1, Math.ceil((MINUTES * 2) / 3)));
const after = readings.filter((r) => r.minute >= from);
const level = after[0]?.rss ?? NaN;
const drift = Math.max(...after.map((r) => Math.abs(r.rss - level) / level));
const grows = (key) => after.length >= 3 && after.every((r, i) => i === 0 || r[key] > after[i - 1][key]);
const summary = {
  minutes: MINUTES,
  eventsStored: totals.events,
  eventsPerSecond: Math.round(totals.events / (MINUTES * 60)),
  queries: totals.queries,
  deliveries,
  errors: totals.errors,
  batchesSkipped: totals.skipped,
  rssFromMinute: from,
  rssAtMinuteMB: Number(mb(level)),
  rssEndMB: Number(mb(readings.at(-1).rss)),
  rssPeakMB: Number(mb(Math.max(...readings.map((r) => r.rssMax)))),
  rssMaxDriftPct: Math.round(drift * 1000) / 10,
  rssWithin10Pct: drift <= 0.1,
  fdsGrowing: grows('fds'),
  heapGrowing: grows('heap'),
};
console.log(`verdict: RSS (per-minute mean) after minute ${from} ${summary.rssWithin10Pct ? 'stayed' : 'did NOT stay'} within ±10 % (max drift ${summary.rssMaxDriftPct} %); fds ${summary.fdsGrowing ? 'GREW every minute' : 'level'}; heap ${summary.heapGrowing ? 'GREW every minute' : 'level'}`);
console.log(`SOAK ${JSON.stringify(summary)}`);

server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
receiver.close();
rmSync(dataDir, { recursive: true, force: true });
process.exit(summary.rssWithin10Pct && !summary.fdsGrowing && !summary.heapGrowing && totals.errors === 0 ? 0 : 1);
