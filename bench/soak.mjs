// `npm run soak`: a long steady load on one `waggle serve` process, to show that its memory
// levels off (docs/operations.md, "Bounded memory"). Mixed ingest (500-event batches over
// /1/batch and 500-span OTLP/JSON exports over /v1/traces) at a fixed rate, a query result every
// few seconds, a trigger evaluated every minute that notifies a local webhook receiver each time.
// Every minute it prints the server's RSS (the mean of samples every 5 s, their peak, and the
// level: the mean of the last five minutes' means) and
// what it is made of (anonymous and file-backed pages; V8's heap committed, its young and old
// generations, external memory; the event store's own memory; glibc's malloc arenas; the rest),
// open file descriptors, threads, event-store size, ingest queue and body bytes in flight,
// events stored, errors and p99 latencies; at the end, whether the RSS level after minute 10 (or
// two thirds into a shorter run) stayed within ±10 % of its value then (and how far the
// per-minute means strayed), and whether any count (fds, threads, arenas, heap) kept growing.
//
// Settings (environment): SOAK_MINUTES (default 60), SOAK_RATE events/s (default 8000),
// SOAK_BATCH (500), SOAK_QUERY_SECONDS (7), SOAK_OTLP_SHARE (fraction of batches sent as OTLP,
// 0.25), SOAK_NODE_FLAGS (the server's Node flags instead of `waggle`'s own, e.g.
// `--max-semi-space-size=32`); WAGGLE_* settings pass through to the server (e.g.
// WAGGLE_EVENT_STORE_MEMORY), and so does the rest of the environment (MALLOC_ARENA_MAX=8
// instead of the 2 that `waggle` sets …).
//
// SOAK_WIDE=1: wide events instead (bench/wide.mjs's OpenTelemetry-like spans, ~84 fields each),
// all through /1/batch (SOAK_OTLP_SHARE defaults to 0), at SOAK_RATE 1,000 events/s by default
// (84,000 field values/s: about 40 % of what the 2-core machine ingests of them, where the
// narrow default is under 10 %; at 2,000 the server fell behind and batches were skipped). The
// tail of keys each event draws from grows from 15 % of its pool to all of it over
// SOAK_WIDE_GROW_MINUTES (default: the first third of the run), so the dataset's columns keep
// growing toward ~3,450 (about 3,400 of them attributes), and the memory must level off after
// that: the verdict measures from five minutes after the growth ends (or its usual minute, if
// later). The queries alternate between table columns (AVG(duration_ms) by http.route) and
// attributes present in about 1 % of events; each minute also prints the dataset's column count
// and each kind's query p99.
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeEvents } from './events.mjs';
import { serverNodeEnv, serverNodeFlags } from './server-node.mjs';
import { HOT, RARE, makeWideEvents } from './wide.mjs';

const WIDE = process.env.SOAK_WIDE === '1';
const MINUTES = Number(process.env.SOAK_MINUTES ?? 60);
const RATE = Number(process.env.SOAK_RATE ?? (WIDE ? 1000 : 8000));
const BATCH = Number(process.env.SOAK_BATCH ?? 500);
const QUERY_SECONDS = Number(process.env.SOAK_QUERY_SECONDS ?? 7);
const OTLP_SHARE = Number(process.env.SOAK_OTLP_SHARE ?? (WIDE ? 0 : 0.25));
const GROW_MINUTES = Number(process.env.SOAK_WIDE_GROW_MINUTES ?? MINUTES / 3);
const DATASET = WIDE ? 'soak-wide' : 'soak';
const MAX_IN_FLIGHT = 16;
const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

const dataDir = mkdtempSync(join(tmpdir(), 'waggle-soak-'));
const env = { ...serverNodeEnv(), ...process.env, WAGGLE_OTLP_GRPC_PORT: '0', WAGGLE_EVALUATION_TICK_MS: '5000', WAGGLE_QUERY_RESULT_RATE_LIMIT: 'off', WAGGLE_INGEST_RATE_LIMIT: 'off' };
const keys = JSON.parse(execFileSync(process.execPath, [MAIN, 'init', '--data-dir', dataDir, '--json'], { env }).toString()).keys;

// --- the server
const nodeFlags = process.env.SOAK_NODE_FLAGS !== undefined ? process.env.SOAK_NODE_FLAGS.split(' ').filter(Boolean) : serverNodeFlags();
const server = spawn(process.execPath, [...nodeFlags, MAIN, 'serve', '--data-dir', dataDir, '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
let window = { ingest: [], query: [], hot: [], rare: [], errors: 0, events: 0 };
let totals = { events: 0, errors: 0, queries: 0, skipped: 0 };
let inFlight = 0;
let seed = 0;
const soakStarted = performance.now();
/** Wide: the share of the tail's keys events draw from, 15 % at the start to all of it after GROW_MINUTES. */
const poolShare = () => Math.min(1, 0.15 + (0.85 * (performance.now() - soakStarted)) / 60_000 / Math.max(GROW_MINUTES, 1e-9));
/** A batch of the soak's events: narrow (bench/events.mjs) or wide (bench/wide.mjs). */
const makeBatch = (n, s) => (WIDE ? makeWideEvents(n, s, Date.now(), 60_000, poolShare()) : makeEvents(n, s));

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
  const events = makeBatch(BATCH, seed++);
  const otlp = Math.random() < OTLP_SHARE;
  const started = performance.now();
  try {
    if (otlp) await api('/v1/traces', { method: 'POST', key: keys.ingest, body: otlpBody(events) });
    else {
      const results = await api(`/1/batch/${DATASET}`, { method: 'POST', key: keys.ingest, body: events });
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

// The queries: narrow, one; wide, table columns and attributes in turn.
const QUERIES = WIDE
  ? [
      { kind: 'hot', spec: { calculations: [{ op: 'COUNT' }, { op: 'AVG', column: HOT.value }], breakdowns: [HOT.group], time_range: 600 } },
      { kind: 'rare', spec: { calculations: [{ op: 'COUNT' }, { op: 'AVG', column: RARE.value }], breakdowns: [RARE.group], time_range: 600 } },
    ]
  : [{ kind: 'query', spec: { calculations: [{ op: 'COUNT' }, { op: 'P99', column: 'duration_ms' }], breakdowns: ['http.route'], time_range: 600 } }];
let queryTurn = 0;
let queriesInFlight = 0;
async function runQuery() {
  const started = performance.now();
  const q = QUERIES[queryTurn++ % QUERIES.length];
  queriesInFlight++;
  try {
    q.id ??= (await api(`/1/queries/${DATASET}`, { method: 'POST', body: q.spec })).id;
    const created = await fetch(`${base}/1/query_results/${DATASET}`, {
      method: 'POST',
      headers: { 'x-honeycomb-team': keys.configuration, 'content-type': 'application/json' },
      body: JSON.stringify({ query_id: q.id }),
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
    if (WIDE) window[q.kind].push(performance.now() - started);
    totals.queries++;
  } catch (err) {
    window.errors++;
    totals.errors++;
    console.error(`query error: ${err.message}${err.cause ? ` (${err.cause.code ?? err.cause.message})` : ''}`);
  } finally {
    queriesInFlight--;
  }
}

// A trigger on the /1/batch dataset that notifies the receiver at every evaluation (every minute).
await api(`/1/batch/${DATASET}`, { method: 'POST', key: keys.ingest, body: makeBatch(10, 1e6) });
const hook = await api('/1/recipients', { method: 'POST', body: { type: 'webhook', details: { webhook_name: 'soak', webhook_url: `http://127.0.0.1:${receiver.address().port}/hook` } } });
await api(`/1/triggers/${DATASET}`, {
  method: 'POST',
  body: { name: 'soak traffic', alert_type: 'on_true', query: { calculations: [{ op: 'COUNT' }], time_range: 120 }, frequency: 60, threshold: { op: '>', value: 0 }, recipients: [{ id: hook.id }] },
});

const batchesPerSecond = RATE / BATCH;
const ingestTimer = setInterval(() => void sendBatch(), 1000 / batchesPerSecond);
const queryTimer = setInterval(() => void runQuery(), QUERY_SECONDS * 1000);

// --- the readings
const ARENA = 64 * 1024 * 1024;
/**
 * The server's memory as the kernel sees it: RSS, anonymous and file-backed; its threads; and
 * glibc's malloc arenas (each thread that mallocs may get one: a 64 MB-aligned 64 MB anonymous
 * reservation, a read-write part followed by an inaccessible rest), their count and resident
 * bytes, and the main arena's (the program break).
 */
function procMemory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) * 1024;
  const maps = [];
  let current;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m) maps.push((current = { start: parseInt(m[1], 16), end: parseInt(m[2], 16), perms: m[3], path: m[4], rss: 0 }));
    else if (current && line.startsWith('Rss:')) current.rss = Number(/(\d+)/.exec(line)[1]) * 1024;
  }
  let arenas = 0;
  let arenaRss = 0;
  for (let i = 0; i < maps.length; i++) {
    const first = maps[i];
    if (first.path !== '' || first.start % ARENA !== 0) continue;
    let j = i;
    let rss = first.rss;
    while (maps[j].end < first.start + ARENA && maps[j + 1]?.start === maps[j].end && maps[j + 1].path === '') rss += maps[++j].rss;
    if (maps[j].end === first.start + ARENA && maps[j].perms.startsWith('---')) {
      arenas++;
      arenaRss += rss;
      i = j;
    }
  }
  // The main arena grows the program break: the `[heap]` mapping.
  const brk = maps.filter((m) => m.path === '[heap]').reduce((sum, m) => sum + m.rss, 0);
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), threads: Number(/Threads:\s+(\d+)/.exec(status)[1]), arenas, arenaRss, brk };
}
const openFds = (pid) => readdirSync(`/proc/${pid}/fd`).length;
async function scrape() {
  const text = await (await fetch(`${base}/metrics`)).text();
  const get = (name) => Number(new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    heap: get('nodejs_heap_size_used_bytes'),
    heapCommitted: get('nodejs_heap_size_total_bytes'),
    newSpace: get('nodejs_heap_space_size_total_bytes{space="new"}'),
    oldSpace: get('nodejs_heap_space_size_used_bytes{space="old"}'),
    external: get('nodejs_external_memory_bytes'),
    threadsHeap: get('waggle_ingest_threads_heap_bytes'),
    queue: get('waggle_ingest_queue_events'),
    inFlightBytes: get('waggle_ingest_in_flight_bytes'),
    storeBytes: get('waggle_event_store_size_bytes'),
    duckdb: get('waggle_event_store_memory_bytes'),
    duckdbTags: [...text.matchAll(/^waggle_event_store_memory_tag_bytes\{tag="([^"]+)"\} (\S+)$/gm)].map(([, tag, v]) => [tag, Number(v)]),
  };
}
const p99 = (xs) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]);
const mb = (b) => (b / 1024 / 1024).toFixed(0);

// RSS is sampled every 5 s: each minute reports the mean of its samples (and the peak), since
// one reading lands anywhere in the garbage collector's and the store's checkpoint cycles.
let rssSamples = [];
const sampler = setInterval(() => rssSamples.push(procMemory(server.pid).rss), 5000);
const readings = [];
/** Minutes in the level (the verdict's measure, below). */
const LEVEL_MINUTES = 5;
console.log(`soak: ${WIDE ? `WIDE events (bench/wide.mjs; their keys' pool grows over ${+GROW_MINUTES.toFixed(1)} min), ` : ''}${MINUTES} min, ${RATE} events/s in ${BATCH}-event batches (${Math.round(OTLP_SHARE * 100)} % OTLP), a query every ${QUERY_SECONDS} s, a trigger every minute; server ${base} (node ${nodeFlags.join(' ')}${env.MALLOC_ARENA_MAX ? `, MALLOC_ARENA_MAX=${env.MALLOC_ARENA_MAX}` : ''}), data ${dataDir}`);
console.log("MB: rss = anon + file; anon holds V8 (heap committed: new + old …; thrheap: the ingest threads' heaps), external, duckdb; brk and arenas: glibc malloc's main arena and the threads' arenas (count/MB); duckdb_by_tag: DuckDB's memory by its tags; other (anon - heap - thrheap - external - duckdb)");
const COLUMNS = [
  ['min', 3, (r) => r.minute], ['rss', 5, (r) => mb(r.rss)], ['level', 5, (r) => mb(r.level)], ['rss_max', 7, (r) => mb(r.rssMax)], ['anon', 5, (r) => mb(r.anon)], ['file', 4, (r) => mb(r.file)],
  ['heap', 4, (r) => mb(r.heapCommitted)], ['new', 4, (r) => mb(r.newSpace)], ['old', 4, (r) => mb(r.oldSpace)], ['ext', 4, (r) => mb(r.external)], ['thrheap', 7, (r) => mb(r.threadsHeap)], ['duckdb', 6, (r) => mb(r.duckdb)],
  ['brk', 4, (r) => mb(r.brk)], ['arenas', 7, (r) => `${r.arenas}/${mb(r.arenaRss)}`], ['other', 5, (r) => mb(r.anon - r.heapCommitted - r.threadsHeap - r.external - r.duckdb)],
  ['fds', 3, (r) => r.fds], ['thr', 3, (r) => r.threads], ['store', 5, (r) => mb(r.storeBytes)], ['queue', 5, (r) => r.queue], ['infl', 4, (r) => mb(r.inFlightBytes)],
  ['ev/s', 5, (r) => r.eventsPerSecond.toFixed(0)], ['err', 3, (r) => r.errors], ['ing_p99', 7, (r) => r.ingestP99.toFixed(0)], ['qry_p99', 7, (r) => r.queryP99.toFixed(0)], ['hooks', 5, (r) => r.deliveries],
  // Wide: the dataset's columns (GET /1/columns), and the p99 of the queries on table columns and on attributes.
  ...(WIDE ? [['cols', 5, (r) => r.columns], ['hot_p99', 7, (r) => r.hotP99.toFixed(0)], ['rare_p99', 8, (r) => r.rareP99.toFixed(0)]] : []),
  ['duckdb_by_tag', 0, (r) => r.duckdbTags.filter(([, v]) => v >= 1024 ** 2).map(([t, v]) => `${t}:${mb(v)}`).join(',')],
];
console.log(COLUMNS.map(([name, width]) => name.padStart(width)).join(' '));
for (let minute = 1; minute <= MINUTES; minute++) {
  await new Promise((r) => setTimeout(r, 60_000));
  const m = await scrape();
  const p = procMemory(server.pid);
  const r = {
    minute,
    rss: rssSamples.reduce((a, b) => a + b, 0) / Math.max(1, rssSamples.length),
    rssMax: Math.max(...rssSamples),
    ...m,
    anon: p.anon,
    file: p.file,
    threads: p.threads,
    arenas: p.arenas,
    arenaRss: p.arenaRss,
    brk: p.brk,
    fds: openFds(server.pid),
    eventsPerSecond: window.events / 60,
    errors: window.errors + serverErrors,
    ingestP99: p99(window.ingest),
    queryP99: p99(window.query),
    hotP99: p99(window.hot),
    rareP99: p99(window.rare),
    columns: WIDE ? (await api(`/1/columns/${DATASET}`)).length : undefined,
    deliveries,
  };
  serverErrors = 0;
  rssSamples = [];
  window = { ingest: [], query: [], hot: [], rare: [], errors: 0, events: 0 };
  readings.push(r);
  const recent = readings.slice(-LEVEL_MINUTES);
  r.level = recent.reduce((sum, x) => sum + x.rss, 0) / recent.length;
  console.log(COLUMNS.map(([, width, f]) => String(f(r)).padStart(width)).join(' '));
}

clearInterval(ingestTimer);
clearInterval(queryTimer);
clearInterval(sampler);
while (inFlight > 0 || queriesInFlight > 0) await new Promise((r) => setTimeout(r, 50));

// --- the verdict: the level after minute 10 (or two thirds into a shorter run) holds to the end.
// Two measures of it: the per-minute means, and the level, the mean of the last LEVEL_MINUTES
// minutes' means. The event store holds the events of its write-ahead log in memory until a
// checkpoint writes them to its file (DuckDB's IN_MEMORY_TABLE, up to about 100 MB with its
// 64 MB threshold) and V8 grows and shrinks its young generation, so RSS is a sawtooth of 2–3
// minutes at a few thousand events/s: a one-minute mean lands anywhere on it, the level does not.
// Wide: not before the keys' pool has stopped growing and a whole level has passed since (the
// columns, and what the store keeps per column, grow until then).
const from = Math.min(MINUTES, Math.max(Math.min(10, Math.max(1, Math.ceil((MINUTES * 2) / 3))), WIDE ? Math.ceil(GROW_MINUTES) + LEVEL_MINUTES : 0));
const after = readings.filter((r) => r.minute >= from);
const driftOf = (key) => {
  const base = after[0]?.[key] ?? NaN;
  return Math.round(Math.max(...after.map((r) => Math.abs(r[key] - base) / base)) * 1000) / 10;
};
const grows = (key) => after.length >= 3 && after.every((r, i) => i === 0 || r[key] > after[i - 1][key]);
const summary = {
  minutes: MINUTES,
  eventsStored: totals.events,
  eventsPerSecond: Math.round(totals.events / (MINUTES * 60)),
  queries: totals.queries,
  deliveries,
  errors: totals.errors,
  batchesSkipped: totals.skipped,
  ...(WIDE ? { columns: readings.at(-1).columns } : {}),
  rssFromMinute: from,
  rssAtMinuteMB: Number(mb(after[0]?.rss)),
  rssEndMB: Number(mb(readings.at(-1).rss)),
  rssPeakMB: Number(mb(Math.max(...readings.map((r) => r.rssMax)))),
  rssMaxDriftPct: driftOf('rss'),
  rssLevelAtMinuteMB: Number(mb(after[0]?.level)),
  rssLevelEndMB: Number(mb(readings.at(-1).level)),
  rssLevelMaxDriftPct: driftOf('level'),
  rssLevelWithin10Pct: driftOf('level') <= 10,
  fdsGrowing: grows('fds'),
  threadsGrowing: grows('threads'),
  arenasGrowing: grows('arenas'),
  heapGrowing: grows('heap'),
};
const growing = ['fds', 'threads', 'arenas', 'heap'].filter((k) => summary[`${k}Growing`]);
console.log(
  `verdict: RSS level (mean of ${LEVEL_MINUTES} minutes) after minute ${from} ${summary.rssLevelWithin10Pct ? 'stayed' : 'did NOT stay'} within ±10 % (max drift ${summary.rssLevelMaxDriftPct} %; per-minute means: ${summary.rssMaxDriftPct} %); ` +
    `${growing.length > 0 ? `GREW every minute: ${growing.join(', ')}` : 'fds, threads, arenas and heap level'}; errors ${totals.errors}`,
);
console.log(`SOAK ${JSON.stringify(summary)}`);

server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
receiver.close();
rmSync(dataDir, { recursive: true, force: true });
process.exit(summary.rssLevelWithin10Pct && growing.length === 0 && totals.errors === 0 ? 0 : 1);
