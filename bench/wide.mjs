// The wide-events benchmark (part of `npm run bench`, alone with `BENCH_ONLY=wide npm run bench`,
// or `node bench/wide.mjs` after `npm run build`).
//
// Wide events (src/stores/events/placement.ts): a dataset's first fields, up to the event store's
// hot-column budget, get a typed table column each; every later one is an attribute in one of 16
// key/value buckets. This measures what that layout costs against the narrow path, in one run:
//
// 1. Ingest, narrow: `waggle serve` takes ingest bench's events (bench/events.mjs, 20 fields)
//    through POST /1/batch, BATCH (1,000) per gzipped body, from CONNECTIONS keep-alive clients.
// 2. Ingest, wide: a fresh `waggle serve` takes OpenTelemetry-like spans (makeWideEvents below:
//    20 services, ~30 resource attributes, 20–80 span attributes of which a few common and a
//    long zipf tail of shared and service-specific keys; 3,000+ distinct fields in all) the same
//    way. Both send a fixed number of events; the first 16,000 are the warm-up (where the wide
//    dataset's columns are made), the measured window is the rest.
//    The figure that makes them comparable is server CPU per million FIELD VALUES (a wide event
//    has four times the fields of a narrow one). Also: events/s, batch p99, peak resident memory,
//    bytes on disk per event (the events file after the server's checkpoint at shutdown), and how
//    many of the wide dataset's fields became table columns and how many attributes (the config
//    store's registry). And, since a checkpoint holds every append while it runs (what the batch
//    p99 rides on), the WAL written per event and each checkpoint's stall, from the WAL's size.
// 3. Queries on the wide dataset: the server restarts on its data dir and answers COUNT,
//    AVG(x) by y with x, y table columns (hot: duration_ms by http.route) and with x, y
//    attributes present in about 1 % of events (rare), through the API (POST /1/query_results,
//    poll until complete), interleaved with the same question hand-written in DuckDB SQL on a
//    copy of the events file in this process (`c<n>` for a column, the text after `\x01<key>=` in `"__a<b>"` for an
//    attribute). Answers are checked against each other.
//
// Settings: BENCH_WIDE_EVENTS (default 300,000), BENCH_WIDE_NARROW_EVENTS (default 3,000,000),
// BENCH_WIDE_BATCH (events per body, 1,000), BENCH_WIDE_CONNECTIONS (16),
// BENCH_WIDE_ITERATIONS (11, after 2 warm-ups), BENCH_PROFILE=<dir>
// (the ingest servers run with --cpu-prof and write their profiles there), BENCH_WIDE_SERVER_ENV
// ('NAME=value …', more environment for the servers, e.g. WAGGLE_HOT_COLUMNS=200).
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { DuckDBInstance } from '@duckdb/node-api';
import { makeEvents, rng } from './events.mjs';
import { batchSender } from './ingest.mjs';
import { api, serveWaggle } from './waggle-process.mjs';
import { cpuMs, cpuSeconds, mean, p50, peakRssMb, percentile, sleep } from './stats.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WIDE_EVENTS = Number(process.env.BENCH_WIDE_EVENTS ?? 300_000);
// Both windows must hold several checkpoints (a checkpoint is a fifth of a narrow server's CPU,
// and the WAL starts empty): 400,000 narrow events held one where 1.6 were due, and narrow's CPU
// per value swung between 0.33 and 0.50 with how many fell in; 3,000,000 hold about 11 (wide's
// 300,000 hold about 5).
const NARROW_EVENTS = Number(process.env.BENCH_WIDE_NARROW_EVENTS ?? 3_000_000);
const CONNECTIONS = Number(process.env.BENCH_WIDE_CONNECTIONS ?? 16);
const ITERATIONS = Number(process.env.BENCH_WIDE_ITERATIONS ?? 11);
const WARMUP = 2;
const BATCH = Number(process.env.BENCH_WIDE_BATCH ?? 1000);
// Distinct bodies, sent round-robin. 64,000 wide events are enough for every
// key of the pool to appear (the rarest in about 1 event in 500).
const WIDE_BODIES = Math.ceil(64_000 / BATCH);
const NARROW_BODIES = Math.ceil(48_000 / BATCH);
// Bodies answered before the measured window opens: a wide body has about 3,400 of the 3,453
// keys, so the dataset's columns are made in the first few.
const WARMUP_BATCHES = Math.ceil(16_000 / BATCH);
const POLL_MS = 5;
const WATCHDOG_S = 900 + (WIDE_EVENTS + NARROW_EVENTS) / 1000;
const WIDE = 'wide-bench';
const NARROW = 'narrow-bench';

// --- the wide events


const SERVICES = [
  'frontend', 'api-gateway', 'checkout', 'cart', 'catalog', 'payments', 'users', 'search', 'recommendations', 'shipping',
  'notifications', 'inventory', 'pricing', 'reviews', 'auth', 'ads', 'email', 'currency', 'fraud', 'ledger',
];
const LANGS = ['go', 'java', 'nodejs', 'python', 'dotnet'];
const SDK_VERSION = { go: '1.28.0', java: '1.38.0', nodejs: '1.25.1', python: '1.24.0', dotnet: '1.9.0' };
const RUNTIME = { go: ['go', 'go1.22.5'], java: ['OpenJDK Runtime Environment', '21.0.3+9-LTS'], nodejs: ['nodejs', '20.15.0'], python: ['cpython', '3.12.4'], dotnet: ['.NET', '8.0.6'] };
/** Resource attributes only some SDKs send: the services' key sets differ a little. */
const LANG_EXTRAS = {
  go: [['process.executable.path', '/app/server'], ['process.runtime.description', 'go version go1.22.5 linux/amd64']],
  java: [['process.runtime.description', 'Eclipse Adoptium OpenJDK 64-Bit Server VM 21.0.3+9-LTS'], ['telemetry.distro.name', 'opentelemetry-java-instrumentation'], ['telemetry.distro.version', '2.5.0']],
  nodejs: [['process.command', '/app/dist/index.js'], ['process.command_args', '["node","--enable-source-maps","/app/dist/index.js"]']],
  python: [['process.command', '/usr/local/bin/gunicorn'], ['process.command_args', '["gunicorn","app:app","-w","4"]']],
  dotnet: [['telemetry.distro.name', 'opentelemetry-dotnet-instrumentation']],
};
const REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-southeast-2'];
const INSTANCES = 4;
const ROUTES_PER_SERVICE = 6;
const WORDS = [
  'account', 'batch', 'bucket', 'cache', 'cursor', 'device', 'event', 'export', 'filter', 'group', 'import', 'index', 'job',
  'lease', 'limit', 'merge', 'order', 'page', 'plan', 'queue', 'quota', 'region', 'retry', 'session', 'shard',
];

const hexOf = (r, n) => {
  let s = '';
  while (s.length < n) s += Math.floor(r() * 0x100000000).toString(16).padStart(8, '0');
  return s.slice(0, n);
};

/** The resource attributes of each service's INSTANCES instances: [key, value] pairs. */
const RESOURCES = SERVICES.map((service, s) => {
  const lang = LANGS[s % LANGS.length];
  const r = rng(1000 + s);
  const region = REGIONS[s % REGIONS.length];
  return Array.from({ length: INSTANCES }, (_, i) => {
    const pod = `${service}-${hexOf(r, 10)}-${hexOf(r, 5)}`;
    return [
      ['service.name', service], ['service.version', `${1 + (s % 3)}.${s * 7 % 30}.${i % 3}`], ['service.namespace', 'shop'],
      ['service.instance.id', hexOf(r, 32)], ['deployment.environment', 'production'], ['host.name', pod], ['host.arch', 'amd64'],
      ['host.id', hexOf(r, 32)], ['os.type', 'linux'], ['os.description', 'Debian GNU/Linux 12 (bookworm)'], ['k8s.pod.name', pod],
      ['k8s.pod.uid', hexOf(r, 32)], ['k8s.namespace.name', s < 10 ? 'shop-core' : 'shop-edge'], ['k8s.deployment.name', service],
      ['k8s.replicaset.name', pod.slice(0, pod.lastIndexOf('-'))], ['k8s.node.name', `ip-10-0-${s}-${i * 17}.ec2.internal`],
      ['k8s.cluster.name', `prod-${region}`], ['k8s.container.name', service], ['container.id', hexOf(r, 64)],
      ['container.image.name', `registry.example.com/shop/${service}`], ['container.image.tag', `v${1 + (s % 3)}.${s * 7 % 30}`],
      ['cloud.provider', 'aws'], ['cloud.platform', 'aws_eks'], ['cloud.region', region], ['cloud.availability_zone', `${region}${'abc'[i % 3]}`],
      ['cloud.account.id', '123456789012'], ['telemetry.sdk.name', 'opentelemetry'], ['telemetry.sdk.language', lang],
      ['telemetry.sdk.version', SDK_VERSION[lang]], ['process.pid', 1 + Math.floor(r() * 30000)], ['process.runtime.name', RUNTIME[lang][0]],
      ['process.runtime.version', RUNTIME[lang][1]], ...LANG_EXTRAS[lang],
    ];
  });
});

/** Value kinds of the tail keys: what JSON type they carry and how many distinct values. */
const Kind = { Word: 0, Id: 1, Int: 2, Float: 3, Bool: 4 };
/** A tail key's value. Floats always have a fraction (so the field is typed float from its first value). */
function tailValue(r, kind, k) {
  switch (kind) {
    case Kind.Word:
      return `${WORDS[k % WORDS.length]}-${Math.floor(r() * r() * (5 + (k % 7) * 12))}`;
    case Kind.Id:
      return hexOf(r, 16);
    case Kind.Int:
      return Math.floor(r() * r() * 10 ** (1 + (k % 5)));
    case Kind.Float:
      return (Math.floor(r() * r() * 1e6) + 0.5) / 1000;
    default:
      return r() < 0.3;
  }
}

// The tail: keys every service may send (db.*, rpc.*, messaging.* …: SHARED, 400 of them) and
// each service's own (75 features of 2 keys each: a name and a number, sent together), each
// drawn with zipf-like frequency (rank k weight 1/k), so a few are in most events and most in
// few. Kinds: half words or ids, the rest integers, floats and booleans.
const SHARED_PREFIXES = ['db', 'rpc', 'messaging', 'net', 'feature_flag', 'cache', 'enduser', 'exception', 'thread', 'code', 'faas', 'graphql', 'aws', 'peer', 'session', 'app'];
const SHARED = SHARED_PREFIXES.flatMap((p, i) => WORDS.map((w, j) => {
  const k = i * WORDS.length + j;
  return { key: `${p}.${w}`, kind: [Kind.Word, Kind.Word, Kind.Word, Kind.Id, Kind.Word, Kind.Int, Kind.Int, Kind.Float, Kind.Float, Kind.Bool][(k * 7) % 10] };
}));
// Shuffled once (seeded), so the frequent ranks are not all of one prefix.
{
  const r = rng(77);
  for (let i = SHARED.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [SHARED[i], SHARED[j]] = [SHARED[j], SHARED[i]];
  }
}
const FEATURES = 75;
const NUMBER_SUFFIX = [['count', Kind.Int], ['ms', Kind.Float], ['ok', Kind.Bool]];
/** A service's feature f: its two keys. */
export function featureKeys(service, f) {
  const base = `${SERVICES[service]}.${WORDS[f % WORDS.length]}${Math.floor(f / WORDS.length) || ''}`;
  const [suffix, kind] = NUMBER_SUFFIX[f % 3];
  return [{ key: `${base}.name`, kind: Kind.Word }, { key: `${base}.${suffix}`, kind }];
}
const FEATURE_KEYS = SERVICES.map((_, s) => Array.from({ length: FEATURES }, (_, f) => featureKeys(s, f)));

/** Cumulative zipf weights (rank k: 1/k) over n ranks, normalised. */
function zipf(n) {
  const cum = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) cum[k] = sum += 1 / (k + 1);
  for (let k = 0; k < n; k++) cum[k] /= sum;
  return cum;
}
const SHARED_CUM = zipf(SHARED.length);
const FEATURE_CUM = zipf(FEATURES);
/** A rank drawn from cumulative weights, among the first `limit`. */
function draw(r, cum, limit) {
  const x = r() * cum[limit - 1];
  let lo = 0;
  let hi = limit - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cum[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How many distinct fields makeWideEvents can produce (with poolShare 1). */
export const WIDE_FIELD_POOL = new Set([
  ...RESOURCES.flatMap((x) => x[0].map(([k]) => k)),
  'name', 'span.kind', 'duration_ms', 'trace.trace_id', 'trace.span_id', 'trace.parent_id', 'error', 'library.name',
  'http.method', 'http.route', 'http.status_code', 'http.target', 'http.response_content_length', 'net.host.name', 'status.code',
  ...SHARED.map((x) => x.key),
  ...FEATURE_KEYS.flat(2).map((x) => x.key),
]).size;

const METHODS = ['GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'DELETE'];
const STATUS = [200, 200, 200, 200, 200, 200, 200, 200, 201, 204, 400, 404, 429, 500, 503];

/**
 * `count` OpenTelemetry-like spans as batch items `{time, data}` (deterministic for a seed), with
 * times over the `spreadMs` before `baseMs`. `poolShare` (0–1] limits the tail to that share of
 * its ranks (the soak grows it, so new fields keep arriving). Each event: one instance's resource
 * attributes (~30), about 15 common span fields, and 20–80 span attributes in all.
 */
export function makeWideEvents(count, seed, baseMs = Date.now(), spreadMs = 60_000, poolShare = 1) {
  const r = rng(seed * 7919 + 13);
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const sharedLimit = Math.max(1, Math.ceil(SHARED.length * poolShare));
  const featureLimit = Math.max(1, Math.ceil(FEATURES * poolShare));
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    const s = Math.floor(r() * SERVICES.length);
    const data = {};
    for (const [k, v] of RESOURCES[s][Math.floor(r() * INSTANCES)]) data[k] = v;
    const http = r() < 0.75;
    const route = `/api/v${1 + (s % 2)}/${SERVICES[s]}/${WORDS[(s * 3 + Math.floor(r() * ROUTES_PER_SERVICE)) % WORDS.length]}`;
    const method = pick(METHODS);
    const status = pick(STATUS);
    data.name = http ? `${method} ${route}` : `${WORDS[(s + Math.floor(r() * 4)) % WORDS.length]}.process`;
    data['span.kind'] = http ? 'server' : pick(['internal', 'client', 'producer', 'consumer']);
    data.duration_ms = (Math.floor(r() * r() * 2_000_000) + 0.5) / 1000;
    data['trace.trace_id'] = hexOf(r, 32);
    data['trace.span_id'] = hexOf(r, 16);
    if (r() < 0.875) data['trace.parent_id'] = hexOf(r, 16);
    data.error = status >= 500;
    data['library.name'] = `io.opentelemetry.${http ? 'http' : 'runtime'}`;
    data['status.code'] = status >= 500 ? 2 : 0;
    let fields = 9;
    if (http) {
      data['http.method'] = method;
      data['http.route'] = route;
      data['http.status_code'] = status;
      data['http.target'] = `${route}/${Math.floor(r() * 100_000)}`;
      data['http.response_content_length'] = Math.floor(r() * r() * 200_000);
      data['net.host.name'] = `${SERVICES[s]}.shop.svc.cluster.local`;
      fields += 6;
    }
    // The tail: half shared keys, half the service's features (two keys each).
    const want = Math.max(4, 20 + Math.floor(r() * 61) - fields);
    for (let n = 0, tries = 0; n < want && tries < 4 * want; tries++) {
      let key;
      let kind;
      let k;
      if (tries % 2 === 0) {
        k = draw(r, SHARED_CUM, sharedLimit);
        ({ key, kind } = SHARED[k]);
        if (key in data) continue;
        data[key] = tailValue(r, kind, k);
        n++;
      } else {
        k = draw(r, FEATURE_CUM, featureLimit);
        const [a, b] = FEATURE_KEYS[s][k];
        if (a.key in data) continue;
        data[a.key] = tailValue(r, a.kind, k);
        data[b.key] = tailValue(r, b.kind, k);
        n += 2;
      }
    }
    out[i] = { time: new Date(baseMs - 1 - Math.floor(r() * spreadMs)).toISOString(), data };
  }
  return out;
}

// The fields of the two queries. Hot: table columns in every event or most. Rare: one of the
// payments service's features (rank 11 of 75: about 1 % of all events), its name and its number.
export const HOT = { group: 'http.route', value: 'duration_ms' };
export const RARE = (() => {
  const [name, value] = featureKeys(SERVICES.indexOf('payments'), 10);
  return { group: name.key, value: value.key };
})();

// --- measuring

const ms = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const int = (x) => Math.round(x).toLocaleString('en');

function run(args) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}: ${out}`))));
  });
}

const extraEnv = () => Object.fromEntries((process.env.BENCH_WIDE_SERVER_ENV ?? '').split(' ').filter(Boolean).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]));

/** `waggle serve` on dataDir (waggle-process.mjs); `profile`: with --cpu-prof when BENCH_PROFILE is set. */
const serve = (dataDir, profile = false) =>
  serveWaggle(dataDir, { nodeArgs: profile && process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [], env: extraEnv() });

/** Gzipped bodies of BATCH events each, and the field values in each. */
function bodiesOf(n, make) {
  const bodies = [];
  const fields = [];
  let raw = 0;
  for (let i = 0; i < n; i++) {
    const events = make(i);
    const json = JSON.stringify(events);
    raw += json.length;
    bodies.push(gzipSync(json));
    fields.push(events.reduce((sum, e) => sum + Object.keys(e.data).length, 0));
  }
  return { bodies, fields, rawBytes: raw, gzBytes: bodies.reduce((s, b) => s + b.length, 0) };
}

/**
 * A fresh `waggle serve` takes `total` events: the bodies round-robin from CONNECTIONS clients.
 * The measured window opens when the first WARMUP_BATCHES bodies have been answered and closes
 * when the last body is sent, so the requests in flight at either end balance.
 * Then SIGTERM: the server checkpoints and closes; the events file's size is read after.
 */
async function ingestRun(tmp, name, set, total) {
  const dataDir = join(tmp, name);
  const init = JSON.parse(await run(['dist/main.js', 'init', '--data-dir', dataDir, '--json']));
  const server = await serve(dataDir, true);
  const send = batchSender(name);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const batches = Math.ceil(total / BATCH);
  const warm = Math.min(WARMUP_BATCHES, Math.floor(batches / 4));
  let next = 0;
  let answered = 0;
  let w = null;
  let closed = null;
  const snapshot = () => ({ t: performance.now(), cpu: cpuSeconds(server.child.pid), main: cpuSeconds(server.child.pid, server.child.pid), client: process.cpuUsage() });
  // Checkpoints, seen from outside: the WAL stops growing while one runs (it holds every append)
  // and shrinks when it ends. Each one's stall is the time from the WAL's last growth to its drop.
  const walFile = join(dataDir, 'events.duckdb.wal');
  const wal = { last: 0, grewAt: performance.now(), bytes: 0, stalls: [] };
  const walTimer = setInterval(() => {
    const size = statSync(walFile, { throwIfNoEntry: false })?.size ?? 0;
    const t = performance.now();
    if (size > wal.last) {
      wal.bytes += size - wal.last;
      wal.grewAt = t;
    } else if (size < wal.last) {
      wal.stalls.push(t - wal.grewAt);
      wal.grewAt = t;
    }
    wal.last = size;
  }, 50);
  try {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next < batches) {
          const i = next++;
          if (i === batches - 1 && w) closed = snapshot();
          const t0 = performance.now();
          const ok = await send(agent, server.port, init.keys.ingest, set.bodies[i % set.bodies.length]);
          if (ok !== BATCH) throw new Error(`${name}: only ${ok} of ${BATCH} events were acknowledged`);
          if (w && !closed) {
            w.events += ok;
            w.fields += set.fields[i % set.bodies.length];
            w.latencies.push(performance.now() - t0);
          }
          if (++answered === warm) w = { ...snapshot(), events: 0, fields: 0, latencies: [] };
        }
      }),
    );
    closed ??= snapshot();
    clearInterval(walTimer);
    const rssMb = peakRssMb(server.child.pid);
    const columns = (await api(server.port, init.keys.configuration, 'GET', `/1/columns/${name}`)).length;
    const stop = await server.stop();
    if (stop.code !== 0 && stop.signal !== 'SIGTERM') throw new Error(`${name}: waggle serve exited ${JSON.stringify(stop)} at shutdown`);
    const file = join(dataDir, 'events.duckdb');
    const walLeft = existsSync(`${file}.wal`) ? statSync(`${file}.wal`).size : 0;
    const client = process.cpuUsage(w.client);
    return {
      name,
      dataDir,
      keys: init.keys,
      envSlug: init.environment.slug,
      events: w.events,
      fields: w.fields,
      seconds: (closed.t - w.t) / 1000,
      cpuSeconds: closed.cpu - w.cpu,
      mainCpuSeconds: closed.main - w.main,
      clientCpuSeconds: (client.user + client.system) / 1e6,
      latencies: w.latencies,
      rssMb,
      columns,
      stored: batches * BATCH,
      fileBytes: statSync(file).size + walLeft,
      walBytes: wal.bytes,
      checkpointStalls: wal.stalls,
    };
  } finally {
    clearInterval(walTimer);
    agent.destroy();
    await server.stop();
  }
}

/** The wide dataset's registry (config store): table id, field → physical placement, and how many are columns / attributes / moving. */
function readRegistry(dataDir) {
  const db = new Database(join(dataDir, 'config.sqlite'), { readonly: true });
  try {
    const ds = db.prepare('SELECT id, slug FROM datasets WHERE name = ?').get(WIDE);
    const physical = {};
    const count = { column: 0, attribute: 0, moving: 0 };
    for (const c of db.prepare('SELECT key_name, physical FROM columns WHERE dataset_id = ?').all(ds.id)) {
      physical[c.key_name] = c.physical;
      if (c.physical.includes('+')) count.moving++;
      else if (c.physical.startsWith('c')) count.column++;
      else count.attribute++;
    }
    return { id: ds.id, slug: ds.slug, table: `ds_${ds.id.slice(6)}`, physical, count };
  } finally {
    db.close();
  }
}

/**
 * A field as hand-written SQL reads it: its column, or its attribute (the text after `\x01<key>=`
 * in bucket `"__a<b>"`, up to the next \x01; the bench's values need no unescaping), cast to `type` if given.
 */
function handField(physical, type) {
  const m = /^(?:c(\d+))?(?:\+?a(\d+)\.(\d+))?$/.exec(physical);
  if (!m) throw new Error(`unexpected placement ${physical}`);
  const column = m[1] !== undefined ? `"c${m[1]}"` : undefined;
  let attribute;
  if (m[2] !== undefined) {
    const [b, head] = [`"__a${m[3]}"`, `chr(1) || '${m[2]}='`];
    attribute = `(CASE WHEN contains(${b}, ${head}) THEN split_part(split_part(${b}, ${head}, 2), chr(1), 1) END)${type ? `::${type}` : ''}`;
  }
  return column && attribute ? `coalesce(${column}, ${attribute})` : (column ?? attribute);
}

/** Compares Waggle's answer (results by group) with the hand-written SQL's rows {g, n, a}; throws on a mismatch. */
function check(data, rows, fields, what) {
  const got = new Map(data.results.map((x) => [x.data[fields.group] ?? null, x.data]));
  if (got.size !== rows.length) throw new Error(`${what}: Waggle has ${got.size} groups, the hand-written SQL ${rows.length}`);
  for (const r of rows) {
    const g = got.get(r.g ?? null);
    if (!g) throw new Error(`${what}: group ${r.g} missing from Waggle's answer`);
    const a = g[`AVG(${fields.value})`];
    const close = (x, y) => (x === null || x === undefined ? y === null : Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(y)));
    if (g.COUNT !== Number(r.n) || !close(a, r.a)) throw new Error(`${what}: group ${r.g}: Waggle ${g.COUNT} / ${a}, hand SQL ${r.n} / ${r.a}`);
  }
}

export async function wideBench() {
  const tmp = mkdtempSync(join(tmpdir(), 'waggle-bench-wide-'));
  let phase = 'setup';
  const progress = (what) => process.stderr.write(`wide bench: ${(phase = what)}\n`);
  const watchdog = setTimeout(() => {
    process.stderr.write(`wide bench: no result after ${WATCHDOG_S} s, stuck in: ${phase}\n`);
    process.exit(1);
  }, WATCHDOG_S * 1000);
  watchdog.unref();
  let server;
  let inst;
  let conn;
  try {
    // Event times over the hour before a minute some minutes ago (query results go by whole minutes).
    const endS = Math.floor(Date.now() / 60_000) * 60 - 120;
    const window = { start: endS - 3600, end: endS };
    progress('generating bodies');
    const narrowSet = bodiesOf(NARROW_BODIES, (i) => makeEvents(BATCH, i + 1));
    const wideSet = bodiesOf(WIDE_BODIES, (i) => makeWideEvents(BATCH, i + 1, endS * 1000, 3_600_000));

    progress(`narrow ingest: ${NARROW_EVENTS.toLocaleString('en')} events`);
    const narrow = await ingestRun(tmp, NARROW, narrowSet, NARROW_EVENTS);
    progress(`wide ingest: ${WIDE_EVENTS.toLocaleString('en')} events`);
    const wide = await ingestRun(tmp, WIDE, wideSet, WIDE_EVENTS);
    const reg = readRegistry(wide.dataDir);

    // The copy for the hand-written SQL (DuckDB lets one process open a file), then the server again.
    progress('queries');
    const copy = join(tmp, 'copy.duckdb');
    copyFileSync(join(wide.dataDir, 'events.duckdb'), copy);
    server = await serve(wide.dataDir);
    inst = await DuckDBInstance.create(copy, { access_mode: 'READ_ONLY' });
    conn = await inst.connect();
    const threads = (await conn.runAndReadAll(`SELECT current_setting('threads') AS t`)).getRowObjectsJS()[0].t;
    const stored = Number((await conn.runAndReadAll(`SELECT count(*) AS n FROM "${reg.table}"`)).getRowObjectsJS()[0].n);
    if (stored !== wide.stored) throw new Error(`the wide table has ${stored} events, ${wide.stored} were acknowledged`);
    const where = `__time >= make_timestamp(${window.start * 1e6}::BIGINT) AND __time < make_timestamp(${window.end * 1e6}::BIGINT)`;
    const queries = [];
    for (const [label, fields] of [['hot', HOT], ['rare', RARE]]) {
      const place = { group: reg.physical[fields.group], value: reg.physical[fields.value] };
      if (!place.group || !place.value) throw new Error(`the wide dataset has no field ${fields.group} or ${fields.value}`);
      const share = Number(
        (await conn.runAndReadAll(`SELECT count(${handField(place.value, 'DOUBLE')}) / count(*) AS s FROM "${reg.table}"`)).getRowObjectsJS()[0].s,
      );
      const spec = { calculations: [{ op: 'COUNT' }, { op: 'AVG', column: fields.value }], breakdowns: [fields.group], start_time: window.start, end_time: window.end };
      const { id } = await api(server.port, wide.keys.configuration, 'POST', `/1/queries/${reg.slug}`, spec);
      const sql = `SELECT ${handField(place.group)} AS g, count(*) AS n, avg(${handField(place.value, 'DOUBLE')}) AS a FROM "${reg.table}" WHERE ${where} GROUP BY g`;
      queries.push({ label, fields, place, share, id, sql, http: [], hand: [], httpCpu: [], handCpu: [] });
    }
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      // Interleaved: hot and rare, each through the API then by hand, every iteration.
      for (const q of queries) {
        const c0 = cpuSeconds(server.child.pid);
        const t0 = performance.now();
        const created = await api(server.port, wide.keys.configuration, 'POST', `/1/query_results/${reg.slug}`, { query_id: q.id, disable_series: true });
        let r = created;
        while (!r.complete) {
          await sleep(POLL_MS);
          r = await api(server.port, wide.keys.configuration, 'GET', `/1/query_results/${reg.slug}/${created.id}`);
        }
        const httpMs = performance.now() - t0;
        const httpCpu = (cpuSeconds(server.child.pid) - c0) * 1000;
        if (r.error) throw new Error(`query result failed: ${r.error}`);
        const u0 = process.cpuUsage();
        const t1 = performance.now();
        const rows = (await conn.runAndReadAll(q.sql)).getRowObjectsJS();
        const handMs = performance.now() - t1;
        const handCpu = cpuMs(u0);
        if (i === 0) {
          check(r.data, rows, q.fields, q.label);
          q.groups = rows.length;
        }
        if (i < WARMUP) continue;
        q.http.push(httpMs);
        q.hand.push(handMs);
        q.httpCpu.push(httpCpu);
        q.handCpu.push(handCpu);
      }
    }

    // --- the figures
    const perMFields = (r) => (r.cpuSeconds / r.fields) * 1e6;
    const perMEvents = (r) => (r.cpuSeconds / r.events) * 1e6;
    const cpuRatio = perMFields(wide) / perMFields(narrow);
    console.log(
      `\nWide events: ${WIDE_EVENTS.toLocaleString('en')} OpenTelemetry-like spans (20 services; ${(wideSet.fields.reduce((a, b) => a + b, 0) / WIDE_BODIES / BATCH).toFixed(1)} fields ` +
        `and ${(wideSet.rawBytes / WIDE_BODIES / BATCH).toFixed(0)} bytes per event as JSON; a pool of ${WIDE_FIELD_POOL.toLocaleString('en')} keys) against ` +
        `${NARROW_EVENTS.toLocaleString('en')} narrow events (bench/events.mjs, ${(narrowSet.fields.reduce((a, b) => a + b, 0) / NARROW_BODIES / BATCH).toFixed(1)} fields, ` +
        `${(narrowSet.rawBytes / NARROW_BODIES / BATCH).toFixed(0)} bytes), each through a fresh \`waggle serve\`: POST /1/batch, ${BATCH} events per gzipped body, ` +
        `${CONNECTIONS} connections; ${WIDE_BODIES} wide and ${NARROW_BODIES} narrow distinct bodies round-robin, measured after the first ${WARMUP_BATCHES}. ` +
        `Load average (1 min) ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores.\n`,
    );
    console.log('| run | events/s | field values/s | CPU s per M field values | of which the JS thread | CPU s per M events | CPU ratio per field value vs narrow | batch p50 / p99 ms | peak RSS MB | bytes on disk per event | columns |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const r of [narrow, wide]) {
      const cols = r === wide ? `${r.columns.toLocaleString('en')}: ${reg.count.column} table columns, ${reg.count.attribute.toLocaleString('en')} attributes${reg.count.moving ? `, ${reg.count.moving} moving` : ''}` : String(r.columns);
      const target = r === wide ? ` (target ≤ 1.5x: ${cpuRatio <= 1.5 ? 'met' : 'NOT met'})` : '';
      console.log(
        `| ${r === wide ? 'wide' : 'narrow'} | ${int(r.events / r.seconds)} | ${int(r.fields / r.seconds)} | ${perMFields(r).toFixed(3)} | ${((r.mainCpuSeconds / r.fields) * 1e6).toFixed(3)} | ` +
          `${perMEvents(r).toFixed(2)} | ${(perMFields(r) / perMFields(narrow)).toFixed(2)}x${target} | ${percentile(r.latencies, 50).toFixed(0)} / ${percentile(r.latencies, 99).toFixed(0)} | ` +
          `${r.rssMb.toFixed(0)} | ${(r.fileBytes / r.stored).toFixed(1)} | ${cols} |`,
      );
    }
    console.log(
      `\nLoad generator CPU ${narrow.clientCpuSeconds.toFixed(1)} s (narrow) and ${wide.clientCpuSeconds.toFixed(1)} s (wide) in the windows; the events file after the ` +
        `server's checkpoint at shutdown, over every event stored (warm-up included): ${(narrow.fileBytes / 1e6).toFixed(0)} MB and ${(wide.fileBytes / 1e6).toFixed(0)} MB.`,
    );
    // What the batch p99 rides on: the store's checkpoints hold every append while they run.
    const stalls = (r) =>
      r.checkpointStalls.length === 0 ? 'none' : `${r.checkpointStalls.length}, appends held p50 ${(p50(r.checkpointStalls) / 1000).toFixed(1)} s, max ${(Math.max(...r.checkpointStalls) / 1000).toFixed(1)} s`;
    console.log(
      `WAL written per 1,000 events (from its size every 50 ms): narrow ${(narrow.walBytes / narrow.stored / 1e3).toFixed(2)} MB, wide ${(wide.walBytes / wide.stored / 1e3).toFixed(2)} MB; ` +
        `checkpoints during the load: narrow ${stalls(narrow)}; wide ${stalls(wide)}.`,
    );
    const [hot, rare] = queries;
    console.log(
      `\nQueries on the wide dataset (${stored.toLocaleString('en')} events over 1 h): COUNT, AVG(value) by group, results only. ${ITERATIONS} iterations after ${WARMUP} warm-ups, ` +
        `interleaved; Waggle over HTTP (POST /1/query_results, then GET every ${POLL_MS} ms until complete) and the same question hand-written in DuckDB SQL on a copy of the file ` +
        `in the bench process (${threads} DuckDB threads; the server has DuckDB's default, one per core). Answers checked equal.\n`,
    );
    console.log('| query | fields (placement) | share of events with the value | groups | Waggle HTTP p50 ms | hand SQL p50 ms | HTTP / hand | CPU ms/query server / hand | CPU server / hand |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const q of queries) {
      console.log(
        `| ${q.label}: AVG(${q.fields.value}) by ${q.fields.group} | ${q.place.value}, ${q.place.group} | ${(q.share * 100).toFixed(2)} % | ${q.groups} | ` +
          `${ms(p50(q.http))} | ${ms(p50(q.hand))} | ${(p50(q.http) / p50(q.hand)).toFixed(2)}x | ${ms(mean(q.httpCpu))} / ${ms(mean(q.handCpu))} | ${(mean(q.httpCpu) / mean(q.handCpu)).toFixed(2)}x |`,
      );
    }
    const rareHot = p50(rare.http) / p50(hot.http);
    console.log(
      `\nRare / hot, Waggle HTTP p50: **${rareHot.toFixed(2)}x** (target ≤ 3x: ${rareHot <= 3 ? 'met' : 'NOT met'}); server CPU ${(mean(rare.httpCpu) / mean(hot.httpCpu)).toFixed(2)}x; ` +
        `hand SQL p50 ${(p50(rare.hand) / p50(hot.hand)).toFixed(2)}x (what the layout itself costs).`,
    );
    clearTimeout(watchdog);
    return { narrow, wide, registry: reg.count, queries, cpuRatio, rareHot };
  } finally {
    await server?.stop();
    conn?.closeSync();
    inst?.closeSync();
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await wideBench();
