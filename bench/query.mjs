// The query benchmark (part of `npm run bench`, alone with `BENCH_ONLY=query npm run bench`, or
// `node bench/query.mjs` after `npm run build`).
//
// 1. Data: `waggle serve` on a temporary data dir takes a small batch per dataset through
//    POST /1/batch, so Waggle creates the datasets and typed columns itself; the server stops,
//    and this process writes the events straight into the datasets' DuckDB tables with one
//    INSERT … SELECT over the row numbers each (bench/query-data.mjs), mapping field names to
//    physical columns through the config store, then CHECKPOINTs and closes. Two datasets:
//    `query-bench`: EVENTS (10M) events evenly over a 2 h window ending a few minutes ago;
//    `query-bench-7d`: 2 × EVENTS over the 7 days before that window (copies of the window's
//    events with their times stretched), then the same EVENTS events in the window (all in time
//    order), generated only when a pruning row is measured; `query-bench-sampled`: the window's
//    events with sample rates 10 (9 %) and 100 (1 %), only for the sampled P99 query. The
//    DuckDB file's size over the events in it is printed as bytes on disk per event.
// 2. The events file is copied (the server holds the original; DuckDB allows one process per
//    file), the server starts again on the data dir, and each query is measured ITERATIONS times,
//    interleaved with two references in this process on the copy (same DuckDB thread count):
//    - Waggle over HTTP: POST /1/query_results, then GET every POLL_MS until complete;
//    - Waggle's runQuery in this process (the planner's SQL without HTTP, the result store and
//      polling: a diagnostic of where the time goes);
//    - the baseline: the same question written by hand in DuckDB SQL, as an analyst who knows
//      the table (and that every sample rate is 1) would write it, rows read the same way.
// 3. Time pruning: two of the queries on the window inside 7 days of data against the window
//    alone.
//
// Besides latency, CPU time per query (the server's from /proc, this process's for the references):
// on a shared machine it is steadier than wall time.
//
// BENCH_QUERY_EVENTS or BENCH_EVENTS (default 10,000,000), BENCH_QUERY_ITERATIONS (15), BENCH_QUERY_POLL_MS (5),
// BENCH_QUERY_EXPLAIN=<dir>: writes each query's SQL (Waggle's statements and the hand-written
// one) with EXPLAIN ANALYZE output there. BENCH_QUERY_DATA=<dir>: keeps the generated data there
// and reuses it on the next run (the window is then the one of the first run; for development).
// BENCH_QUERY_ONLY=<key,…>: only those queries (keys in QUERIES; `bubbleup` for BubbleUp), no pruning table unless named.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { DuckDBInstance } from '@duckdb/node-api';
import { FIELD_TYPES, bytesByColumn, copySql, generateSql, seedEvents } from './query-data.mjs';
import { api, serveWaggle } from './waggle-process.mjs';
import { cpuMs, cpuSeconds, mean, p50, p95, percentile, sleep } from './stats.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVENTS = Number(process.env.BENCH_QUERY_EVENTS ?? process.env.BENCH_EVENTS ?? 10_000_000);
const ITERATIONS = Number(process.env.BENCH_QUERY_ITERATIONS ?? 15);
const POLL_MS = Number(process.env.BENCH_QUERY_POLL_MS ?? 5);
const EXPLAIN_DIR = process.env.BENCH_QUERY_EXPLAIN;
const KEEP_DIR = process.env.BENCH_QUERY_DATA;
const ONLY = process.env.BENCH_QUERY_ONLY?.split(',');
const WARMUP = 2;
// Half an hour for 10M events, longer in proportion for more (100M: five hours).
const WATCHDOG_S = 1800 * Math.max(1, EVENTS / 10_000_000);
const HOUR = 3600;
const DAY = 86400;
const DATASET = 'query-bench';
const DATASET_7D = 'query-bench-7d';
const DATASET_SAMPLED = 'query-bench-sampled';
/** Sample rates of the sampled dataset's events: 1 % kept 1 in 100, 9 % 1 in 10, the rest all. */
const SAMPLERATE = `CASE WHEN hash(epoch_us(__time), 1) % 100 = 0 THEN 100 WHEN hash(epoch_us(__time), 2) % 10 = 0 THEN 10 ELSE 1 END`;
/** The datasets a run needs: the 7-day one only for the pruning rows, the sampled one only for its query. */
const NEEDED = [DATASET, ...(!ONLY || ONLY.some((k) => k.startsWith('pruning-')) ? [DATASET_7D] : []), ...(!ONLY || ONLY.includes('p99-by-service-sampled') ? [DATASET_SAMPLED] : [])];

const ms = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const secs = (t0) => ((performance.now() - t0) / 1000).toFixed(1);


function run(args) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}: ${out}`))));
  });
}

/** `waggle serve` on dataDir, answering (waggle-process.mjs). */
const serve = (dataDir) => serveWaggle(dataDir, { waitMs: 30_000 });

/** One query result over HTTP: create, then poll until complete. Resolves with ms and the data. */
async function httpResult(port, key, slug, queryId, disableSeries) {
  const t0 = performance.now();
  const created = await api(port, key, 'POST', `/1/query_results/${slug}`, { query_id: queryId, disable_series: disableSeries });
  let r = created;
  let polls = 0;
  while (!r.complete) {
    await sleep(POLL_MS);
    r = await api(port, key, 'GET', `/1/query_results/${slug}/${created.id}`);
    polls++;
  }
  const t = performance.now() - t0;
  if (r.error) throw new Error(`query result ${created.id} failed: ${r.error}`);
  return { ms: t, data: r.data, polls };
}

/** Dataset ids, slugs and field → physical column of each, from the config store. */
function readConfig(dataDir) {
  const db = new Database(join(dataDir, 'config.sqlite'), { readonly: true });
  try {
    const out = {};
    for (const name of NEEDED) {
      const ds = db.prepare('SELECT id, slug FROM datasets WHERE name = ?').get(name);
      if (!ds) throw new Error(`dataset ${name} was not created`);
      const physical = {};
      for (const c of db.prepare('SELECT key_name, physical, stored_type, type FROM columns WHERE dataset_id = ?').all(ds.id)) {
        if (FIELD_TYPES[c.key_name] && (c.stored_type !== FIELD_TYPES[c.key_name] || c.type !== FIELD_TYPES[c.key_name])) {
          throw new Error(`${name}.${c.key_name} is stored as ${c.stored_type}/${c.type}, expected ${FIELD_TYPES[c.key_name]}`);
        }
        physical[c.key_name] = c.physical;
      }
      for (const f of Object.keys(FIELD_TYPES)) if (!physical[f]) throw new Error(`${name} has no column ${f}`);
      out[name] = { id: ds.id, slug: ds.slug, table: `ds_${ds.id.slice(6)}`, physical };
    }
    return out;
  } finally {
    db.close();
  }
}

/** Writes the events of both datasets straight into the DuckDB file (the server is stopped). */
async function generate(file, datasets, window) {
  const inst = await DuckDBInstance.create(file);
  const c = await inst.connect();
  const timings = {};
  try {
    const ingestedUs = Date.now() * 1000;
    // A table scan feeds the INSERT from both threads (range() alone runs on one) and keeps order.
    await c.run(`CREATE TEMP TABLE ids AS SELECT range AS i FROM range(${EVENTS})`);
    const a = datasets[DATASET];
    const b = datasets[DATASET_7D];
    const sampled = datasets[DATASET_SAMPLED];
    for (const ds of [a, b, sampled]) if (ds) await c.run(`DELETE FROM "${ds.table}"`); // the seed events
    let t0 = performance.now();
    await c.run(
      generateSql({ table: a.table, physical: a.physical, n: EVENTS, rows: 'temp.ids', startUs: window.start * 1e6, spanUs: (window.end - window.start) * 1e6, ingestedUs }),
    );
    timings.window = secs(t0);
    if (b) {
      // The 7 days before the window: the window's events twice, each copy's times stretched over
      // 3.5 days (copying costs about half of generating), then the window's events as they are.
      t0 = performance.now();
      const stretch = ((7 * DAY) / 2) / (window.end - window.start);
      const copy = (time) => copySql({ from: a.table, to: b.table, physicalFrom: a.physical, physicalTo: b.physical, time });
      for (let k = 0; k < 2; k++) {
        const baseUs = (window.start - 7 * DAY + k * 3.5 * DAY) * 1e6;
        await c.run(copy((t) => `make_timestamp(${baseUs}::BIGINT + (epoch_us(${t}) - ${window.start * 1e6}::BIGINT) * ${stretch})`));
      }
      await c.run(copy());
      timings.week = secs(t0);
    }
    if (sampled) {
      t0 = performance.now();
      await c.run(copySql({ from: a.table, to: sampled.table, physicalFrom: a.physical, physicalTo: sampled.physical, samplerate: SAMPLERATE }));
      timings.sampled = secs(t0);
    }
    t0 = performance.now();
    await c.run('CHECKPOINT');
    timings.checkpoint = secs(t0);
    // Sanity: the counts (the pruning table shows whether row groups are in time order).
    const count = async (sql) => Number((await c.runAndReadAll(sql)).getRows()[0][0]);
    const got = { a: await count(`SELECT count(*) FROM "${a.table}"`) };
    const want = { a: EVENTS };
    if (b) {
      got.b = await count(`SELECT count(*) FROM "${b.table}"`);
      got.bw = await count(`SELECT count(*) FROM "${b.table}" WHERE __time >= make_timestamp(${window.start * 1e6}::BIGINT)`);
      Object.assign(want, { b: 3 * EVENTS, bw: EVENTS });
    }
    if (sampled) {
      got.sampled = await count(`SELECT count(*) FROM "${sampled.table}"`);
      want.sampled = EVENTS;
    }
    if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`generated counts are off: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
    // Bytes on disk per event: the file after the checkpoint (every dataset's table and the
    // free blocks), over every event in it.
    timings.events = Object.values(got).reduce((n, x) => n + x, 0) - (got.bw ?? 0);
    // Where the window dataset's bytes go, column by column (bench/query-storage.mjs compares layouts).
    const names = Object.fromEntries(Object.entries(a.physical).map(([f, p]) => [p, f]));
    timings.byColumn = await bytesByColumn(c, a.table, names, EVENTS);
  } finally {
    c.closeSync();
    inst.closeSync();
  }
  return timings;
}

/**
 * The queries. `spec` is sent to POST /1/queries (plus the window); `hand(t, col, where)` is the
 * hand-written SQL over table `t`, `col(field)` the quoted physical column; `check` compares the
 * two answers (throws on a mismatch: a benchmark of wrong answers is worthless).
 */
const BUCKET_US = 60_000_000;
const QUERIES = [
  {
    key: 'count-by-minute',
    title: 'COUNT by minute over 2 h',
    series: true,
    targetMs: 300,
    spec: { calculations: [{ op: 'COUNT' }], granularity: 60 },
    // Per minute, and the window's total from those.
    hand: (t, col, where) =>
      `WITH m AS (SELECT epoch_us(__time) // ${BUCKET_US} AS b, count(*) AS n FROM ${t} WHERE ${where} GROUP BY b) ` +
      `SELECT NULL AS b, sum(n) AS n FROM m UNION ALL SELECT b, n FROM m ORDER BY b NULLS FIRST`,
    check(data, rows) {
      eq(data.results[0].data.COUNT, Number(rows[0].n), 'total count');
      eq(data.series.length, rows.length - 1, 'buckets');
      eq(data.series.reduce((n, s) => n + s.data.COUNT, 0), Number(rows[0].n), 'sum of the series');
    },
  },
  {
    key: 'p99-by-service',
    title: 'P99(duration_ms) by service.name',
    series: false,
    targetMs: 300,
    spec: { calculations: [{ op: 'P99', column: 'duration_ms' }], breakdowns: ['service.name'] },
    hand: (t, col, where) =>
      `SELECT ${col('service.name')} AS s, quantile_disc(${col('duration_ms')}, 0.99) AS p FROM ${t} WHERE ${where} ` +
      `GROUP BY s ORDER BY p DESC NULLS LAST, s LIMIT 1000`,
    check(data, rows) {
      eq(data.results.length, rows.length, 'groups');
      for (const [i, r] of rows.entries()) {
        eq(data.results[i].data['service.name'], r.s, 'service');
        eq(data.results[i].data['P99(duration_ms)'], r.p, 'P99');
      }
    },
  },
  {
    // The same question on a copy of the window's events of which 10 % are sampled (sample rates
    // 10 and 100): Waggle's answer is the sample-weighted P99, checked against the weighted
    // nearest rank written out with window functions; the cost reference is DuckDB's own
    // quantile_disc over the same rows (the unweighted answer: what the query would cost if
    // nothing in the window were sampled).
    key: 'p99-by-service-sampled',
    title: 'P99(duration_ms) by service.name, 10 % of events sampled',
    dataset: DATASET_SAMPLED,
    series: false,
    targetMs: 300,
    targetRatio: 1.2,
    spec: { calculations: [{ op: 'P99', column: 'duration_ms' }], breakdowns: ['service.name'] },
    hand: (t, col, where) =>
      `SELECT ${col('service.name')} AS s, quantile_disc(${col('duration_ms')}, 0.99) AS p FROM ${t} WHERE ${where} ` +
      `GROUP BY s ORDER BY p DESC NULLS LAST, s LIMIT 1000`,
    exact: (t, col, where) =>
      `SELECT s, min(v) FILTER (WHERE cum >= 0.99 * tot) AS p FROM (SELECT ${col('service.name')} AS s, ${col('duration_ms')} AS v, ` +
      `sum(__samplerate) OVER (PARTITION BY s ORDER BY v ROWS UNBOUNDED PRECEDING) AS cum, sum(__samplerate) OVER (PARTITION BY s) AS tot ` +
      `FROM ${t} WHERE ${where} AND ${col('duration_ms')} IS NOT NULL) GROUP BY s ORDER BY p DESC NULLS LAST, s LIMIT 1000`,
    check(data, rows) {
      eq(data.results.length, rows.length, 'groups');
      for (const [i, r] of rows.entries()) {
        eq(data.results[i].data['service.name'], r.s, 'service');
        eq(data.results[i].data['P99(duration_ms)'], r.p, 'weighted P99');
      }
    },
  },
  {
    key: 'count-distinct',
    title: 'COUNT_DISTINCT(user.id)',
    series: false,
    targetMs: 300,
    spec: { calculations: [{ op: 'COUNT_DISTINCT', column: 'user.id' }] },
    hand: (t, col, where) => `SELECT count(DISTINCT ${col('user.id')}) AS n FROM ${t} WHERE ${where}`,
    check(data, rows) {
      eq(data.results[0].data['COUNT_DISTINCT(user.id)'], Number(rows[0].n), 'distinct users');
    },
  },
  {
    key: 'heatmap',
    title: 'HEATMAP(duration_ms)',
    series: true,
    targetMs: 400,
    spec: { calculations: [{ op: 'HEATMAP', column: 'duration_ms' }] },
    // The histogram cells of each minute, and of the window from those (Waggle returns each
    // histogram as one JSON text).
    hand: (t, col, where) =>
      `WITH bounds AS (SELECT min(${col('duration_ms')}) AS lo, greatest((max(${col('duration_ms')}) - min(${col('duration_ms')})) / 50, 1e-9) AS width FROM ${t} WHERE ${where}), ` +
      `m AS (SELECT epoch_us(__time) // ${BUCKET_US} AS b, least(floor((${col('duration_ms')} - lo) / width), 49) AS hb, count(*) AS n ` +
      `FROM ${t}, bounds WHERE ${where} AND ${col('duration_ms')} IS NOT NULL GROUP BY b, hb) ` +
      `SELECT * FROM m UNION ALL SELECT NULL, hb, sum(n) FROM m GROUP BY hb ORDER BY b NULLS FIRST, hb`,
    check(data, rows) {
      const cells = (json) => JSON.parse(json).reduce((n, c) => n + c.count, 0);
      const total = rows.filter((r) => r.b === null).reduce((n, r) => n + Number(r.n), 0);
      eq(cells(data.results[0].data['HEATMAP(duration_ms)']), total, 'events in the histogram');
      eq(data.series.length, new Set(rows.filter((r) => r.b !== null).map((r) => r.b)).size, 'buckets');
    },
  },
  {
    key: 'breakdown-havings',
    title: 'COUNT, AVG(duration_ms) by service.name, http.status_code; 2 havings',
    series: true,
    spec: {
      calculations: [{ op: 'COUNT' }, { op: 'AVG', column: 'duration_ms' }],
      breakdowns: ['service.name', 'http.status_code'],
      havings: [
        { calculate_op: 'COUNT', op: '>', value: 50000 },
        { calculate_op: 'AVG', column: 'duration_ms', op: '>', value: 20 },
      ],
      orders: [{ op: 'COUNT', order: 'descending' }],
    },
    // Per group and minute; the groups (passing the havings) from those, then their series.
    hand: (t, col, where) =>
      `WITH m AS (SELECT ${col('service.name')} AS s, ${col('http.status_code')} AS st, epoch_us(__time) // ${BUCKET_US} AS b, ` +
      `count(*) AS n, sum(${col('duration_ms')}) AS sd, count(${col('duration_ms')}) AS nd FROM ${t} WHERE ${where} GROUP BY s, st, b), ` +
      `g AS (SELECT s, st, sum(n) AS n, sum(sd) / sum(nd) AS a FROM m GROUP BY s, st HAVING sum(n) > 50000 AND sum(sd) / sum(nd) > 20 ORDER BY n DESC, s, st LIMIT 1000) ` +
      `SELECT s, st, NULL::BIGINT AS b, n, a FROM g UNION ALL SELECT s, st, b, n, sd / nd FROM m SEMI JOIN g USING (s, st) ORDER BY b NULLS FIRST, n DESC, s, st`,
    check(data, rows) {
      const groups = rows.filter((r) => r.b === null);
      eq(data.results.length, groups.length, 'groups');
      for (const [i, r] of groups.entries()) eq(data.results[i].data.COUNT, Number(r.n), 'group count');
      eq(data.series.length, rows.length - groups.length, 'series rows');
    },
  },
];
const PRUNING = ['count-by-minute', 'p99-by-service'];

function eq(a, b, what) {
  const same = typeof a === 'number' && typeof b === 'number' ? Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)) : a === b;
  if (!same) throw new Error(`Waggle and the hand-written SQL disagree on ${what}: ${a} vs ${b}`);
}

/** The stores of the copy, read the way the server reads them (for runQuery in this process). */
async function inProcess(dataDir, eventsFile, envSlug) {
  const { openSqliteStore } = await import(join(ROOT, 'dist/stores/config/store.js'));
  const { querySources } = await import(join(ROOT, 'dist/query/sources.js'));
  const { runQuery } = await import(join(ROOT, 'dist/query/run.js'));
  const { duckdbDialect } = await import(join(ROOT, 'dist/stores/events/duckdb-dialect.js'));
  const store = openSqliteStore(join(dataDir, 'config.sqlite'));
  const inst = await DuckDBInstance.create(eventsFile);
  const conn = await inst.connect();
  const threads = (await conn.runAndReadAll(`SELECT current_setting('threads') AS t`)).getRowObjectsJS()[0].t;
  let record = null;
  // The EventStore methods runQuery uses; `analyse` opens a connection per statement as the server's does.
  const events = {
    dialect: duckdbDialect,
    async shape(datasetId) {
      const r = await conn.runAndReadAll(`SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ?`, [`ds_${datasetId.slice(6)}`]);
      const names = r.getRowObjectsJS().map((x) => String(x.column_name));
      if (names.length === 0) return undefined;
      return { columns: names.filter((n) => !n.startsWith('__')).map((n) => ({ physical: n, type: 'string' })), buckets: names.filter((n) => /^__a\d+$/.test(n)).length };
    },
    async analyse(sql, params) {
      record?.push({ sql, params });
      const c = await inst.connect();
      try {
        return (await c.runAndReadAll(sql, params)).getRowObjectsJS();
      } finally {
        c.closeSync();
      }
    },
  };
  const team = (await store.listTeams())[0];
  const env = await store.getEnvironmentBySlug(team.id, envSlug);
  const sources = {};
  for (const name of NEEDED) {
    const ds = (await store.listDatasets(env.id)).find((d) => d.name === name);
    sources[name] = await querySources(store, env, ds);
  }
  return {
    threads: Number(threads),
    /** Waggle's runQuery on the copy: ms, data, and the statements it ran. */
    async waggle(name, spec, window, disableSeries) {
      record = [];
      const t0 = performance.now();
      const data = await runQuery(events, sources[name], spec, {
        start: window.start,
        end: window.end,
        limit: spec.limit ?? 1000,
        disableSeries,
        disableTotalByAggregate: true,
        disableOtherByAggregate: true,
        timeoutMs: 120_000,
      });
      const t = performance.now() - t0;
      const statements = record;
      record = null;
      return { ms: t, data, statements };
    },
    async hand(sql) {
      const t0 = performance.now();
      const rows = (await conn.runAndReadAll(sql)).getRowObjectsJS();
      return { ms: performance.now() - t0, rows };
    },
    async explain(sql, params = []) {
      const r = await conn.runAndReadAll(`EXPLAIN ANALYZE ${sql}`, params);
      return r.getRows().map((x) => x[1]).join('\n');
    },
    async close() {
      conn.closeSync();
      inst.closeSync();
      await store.close();
    },
  };
}

export async function queryBench() {
  const tmp = KEEP_DIR ?? mkdtempSync(join(tmpdir(), 'waggle-bench-query-'));
  const metaFile = join(tmp, 'meta.json');
  let server;
  let local;
  let phase = 'setup';
  const progress = (what) => process.stderr.write(`query bench: ${(phase = what)}\n`);
  const watchdog = setTimeout(() => {
    process.stderr.write(`query bench: no result after ${WATCHDOG_S} s, stuck in: ${phase}\n`);
    process.exit(1);
  }, WATCHDOG_S * 1000);
  watchdog.unref();
  try {
    const dataDir = join(tmp, 'data');
    const copyDir = join(tmp, 'copy');
    const eventsFile = join(dataDir, 'events.duckdb');
    let meta;
    try {
      meta = KEEP_DIR ? JSON.parse(readFileSync(metaFile, 'utf8')) : undefined;
    } catch {
      meta = undefined;
    }
    if (!meta) {
      if (KEEP_DIR) rmSync(tmp, { recursive: true, force: true });
      mkdirSync(tmp, { recursive: true });
      const init = JSON.parse(await run(['dist/main.js', 'init', '--data-dir', dataDir, '--json']));
      // The 2 h window ends a few minutes ago, on a minute (query results truncate to the minute).
      const end = Math.floor(Date.now() / 60_000) * 60 - 5 * 60;
      const window = { start: end - 2 * HOUR, end };

      progress('creating the datasets through POST /1/batch');
      server = await serve(dataDir);
      for (const name of NEEDED) {
        const r = await api(server.port, init.keys.ingest, 'POST', `/1/batch/${name}`, seedEvents(window.start * 1000));
        if (!r.every((x) => x.status === 202)) throw new Error(`seed batch refused: ${JSON.stringify(r).slice(0, 300)}`);
      }
      await server.stop();
      server = undefined;
      const datasets = readConfig(dataDir);

      progress(`generating ${datasets[DATASET_7D] ? `${EVENTS.toLocaleString('en')} + ${(3 * EVENTS).toLocaleString('en')}` : EVENTS.toLocaleString('en')} events${datasets[DATASET_SAMPLED] ? ' and a sampled copy' : ''}`);
      const tGen = performance.now();
      const gen = await generate(eventsFile, datasets, window);
      gen.total = secs(tGen);
      const tCopy = performance.now();
      mkdirSync(copyDir);
      copyFileSync(eventsFile, join(copyDir, 'events.duckdb'));
      copyFileSync(join(dataDir, 'config.sqlite'), join(copyDir, 'config.sqlite'));
      gen.copy = secs(tCopy);
      gen.bytes = statSync(eventsFile).size;
      meta = { key: init.keys.configuration, envSlug: init.environment.slug, window, datasets, gen };
      if (KEEP_DIR) writeFileSync(metaFile, JSON.stringify(meta));
    }
    const { key, window, datasets, gen } = meta;

    progress('measuring');
    server = await serve(dataDir);
    local = await inProcess(copyDir, join(copyDir, 'events.duckdb'), meta.envSlug);
    const where = `__time >= make_timestamp(${window.start * 1e6}::BIGINT) AND __time < make_timestamp(${window.end * 1e6}::BIGINT)`;
    if (EXPLAIN_DIR) mkdirSync(EXPLAIN_DIR, { recursive: true });

    const measure = async (q, name) => {
      const ds = datasets[name];
      const spec = { ...q.spec, start_time: window.start, end_time: window.end };
      const { id } = await api(server.port, key, 'POST', `/1/queries/${ds.slug}`, spec);
      const hand = q.hand(`"${ds.table}"`, (f) => `"${ds.physical[f]}"`, where);
      const r = { http: [], local: [], hand: [], polls: [], httpCpu: [], localCpu: [], handCpu: [] };
      for (let i = 0; i < WARMUP + ITERATIONS; i++) {
        const c0 = cpuSeconds(server.child.pid);
        const h = await httpResult(server.port, key, ds.slug, id, !q.series);
        const httpCpu = (cpuSeconds(server.child.pid) - c0) * 1000;
        let u0 = process.cpuUsage();
        const l = await local.waggle(name, spec, window, !q.series);
        const localCpu = cpuMs(u0);
        u0 = process.cpuUsage();
        const b = await local.hand(hand);
        const handCpu = cpuMs(u0);
        if (i === 0) {
          const answer = q.exact ? (await local.hand(q.exact(`"${ds.table}"`, (f) => `"${ds.physical[f]}"`, where))).rows : b.rows;
          q.check(h.data, answer);
          q.check(l.data, answer);
          r.statements = l.statements.length;
          if (EXPLAIN_DIR) {
            let text = '';
            for (const s of l.statements) text += `-- Waggle statement\n${s.sql}\n-- params ${JSON.stringify(s.params)}\n${await local.explain(s.sql, s.params)}\n\n`;
            text += `-- hand-written\n${hand}\n${await local.explain(hand)}\n`;
            writeFileSync(join(EXPLAIN_DIR, `${q.key}${name === DATASET_7D ? '-7d' : ''}.txt`), text);
          }
        }
        if (i < WARMUP) continue;
        r.http.push(h.ms);
        r.polls.push(h.polls);
        r.local.push(l.ms);
        r.hand.push(b.ms);
        r.httpCpu.push(httpCpu);
        r.localCpu.push(localCpu);
        r.handCpu.push(handCpu);
      }
      return r;
    };

    const load0 = loadavg()[0];
    const results = [];
    for (const q of QUERIES) {
      if (ONLY && !ONLY.includes(q.key)) continue;
      progress(`query: ${q.title}`);
      results.push({ q, r: await measure(q, q.dataset ?? DATASET) });
    }
    const pruning = [];
    for (const key of PRUNING) {
      if (ONLY && !ONLY.includes(`pruning-${key}`)) continue;
      const q = QUERIES.find((x) => x.key === key);
      progress(`pruning: ${q.title} on the window inside 7 days`);
      pruning.push({ q, alone: results.find((x) => x.q === q)?.r ?? (await measure(q, DATASET)), week: await measure(q, DATASET_7D) });
    }

    // BubbleUp (docs/web-ui.md) on the window's events: a heatmap region (the last 20 minutes ×
    // durations from 300 ms up) against the rest, and a time range alone; against the HEATMAP
    // query the region is drawn on (its HTTP p50 above) and the query timeout it must answer within.
    const bubble = [];
    if (!ONLY || ONLY.includes('bubbleup')) {
      const ds = datasets[DATASET];
      const query = { calculations: [{ op: 'HEATMAP', column: 'duration_ms' }], start_time: window.start, end_time: window.end };
      for (const [title, selection] of [
        ['region: last 20 min × duration_ms ≥ 300', { start_time: window.end - 1200, end_time: window.end, column: 'duration_ms', lower: 300, upper: 1e9 }],
        ['time range: last 20 min', { start_time: window.end - 1200, end_time: window.end }],
      ]) {
        progress(`BubbleUp: ${title}`);
        const r = { http: [], cpu: [] };
        for (let i = 0; i < WARMUP + ITERATIONS; i++) {
          const c0 = cpuSeconds(server.child.pid);
          const t0 = performance.now();
          const a = await api(server.port, key, 'POST', `/1/bubbleup/${ds.slug}`, { query, selection });
          const t = performance.now() - t0;
          if (i === 0 && (a.columns.length === 0 || a.selection.rows + a.baseline.rows !== EVENTS)) throw new Error(`BubbleUp answered ${JSON.stringify(a).slice(0, 300)}`);
          if (i >= WARMUP) {
            r.http.push(t);
            r.cpu.push((cpuSeconds(server.child.pid) - c0) * 1000);
          }
          if (i === 0) r.sides = `${a.selection.rows.toLocaleString('en')} selected / ${a.baseline.rows.toLocaleString('en')} others, ${a.columns.length} columns`;
        }
        bubble.push({ title, r });
      }
    }

    const load1 = loadavg()[0];
    console.log(
      `\nQuery results: ${EVENTS.toLocaleString('en')} events in a 2 h window (19 fields). DuckDB file ${(gen.bytes / 1e9).toFixed(2)} GB for ` +
        `${gen.events.toLocaleString('en')} events in all: **${(gen.bytes / gen.events).toFixed(1)} bytes per event** (target ≤ 40). ` +
        `Generation: ${gen.window} s for the window` +
        (gen.week ? `, ${gen.week} s for the 7-day dataset (${(3 * EVENTS).toLocaleString('en')} events)` : '') +
        (gen.sampled ? `, ${gen.sampled} s for the sampled copy` : '') +
        `, checkpoint ${gen.checkpoint} s, ${gen.total} s in all; copying the file ${gen.copy} s.` +
        (gen.byColumn ? ` Bytes per event of ${DATASET} by column: ${gen.byColumn.map((x) => `${x.column} ${x.perEvent.toFixed(2)}`).join(', ')}.` : ''),
    );
    console.log(
      `${ITERATIONS} iterations each after ${WARMUP} warm-up, interleaved; ms. Waggle HTTP: POST /1/query_results, then GET every ${POLL_MS} ms until complete ` +
        `(up to one poll interval and the HTTP round trips included; ${mean(results.flatMap((x) => x.r.polls)).toFixed(0)} polls per result on average). In-process: Waggle's runQuery on a copy in the bench process, ` +
        `no HTTP (diagnostic). Hand SQL: same copy, same process. DuckDB threads: ${local.threads} in this process, DuckDB's default (one per core) in the server. ` +
        `Load average (1 min) ${load0.toFixed(1)} when measuring began, ${load1.toFixed(1)} at the end, on ${availableParallelism()} cores.\n`,
    );
    console.log('| query | answer | Waggle HTTP p50 / p95 | in-process p50 / p95 (statements) | hand SQL p50 / p95 | ratio p50 (HTTP / hand) | target | CPU ms/query: server / in-process / hand | CPU ratio server / hand |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const { q, r } of results) {
      const ratio = p50(r.http) / p50(r.hand);
      // Issue 20: server CPU at most 1.1x the hand SQL's (1.2x of DuckDB's quantile_disc for the
      // sampled P99); p50 under the query's budget at 10M events, under 1.5 s at 100M.
      const cpuRatio = mean(r.httpCpu) / mean(r.handCpu);
      const budget = EVENTS >= 100_000_000 ? 1500 : EVENTS <= 10_000_000 ? q.targetMs : undefined;
      const ok = cpuRatio <= (q.targetRatio ?? 1.1) && (budget === undefined || p50(r.http) < budget);
      const target = `CPU ≤ ${q.targetRatio ?? 1.1}x${budget ? `, p50 < ${budget} ms` : ''}: ${ok ? 'met' : 'NOT met'}`;
      console.log(
        `| ${q.title} | ${q.series ? 'results + series' : 'results only'} | ${ms(p50(r.http))} / ${ms(p95(r.http))} | ` +
          `${ms(p50(r.local))} / ${ms(p95(r.local))} (${r.statements}) | ${ms(p50(r.hand))} / ${ms(p95(r.hand))} | ${ratio.toFixed(2)}x | ${target} | ` +
          `${ms(mean(r.httpCpu))} / ${ms(mean(r.localCpu))} / ${ms(mean(r.handCpu))} | ${(mean(r.httpCpu) / mean(r.handCpu)).toFixed(2)}x |`,
      );
    }
    console.log(`\nTime pruning: the same 2 h window alone (${EVENTS.toLocaleString('en')} events) and inside 7 days (${(3 * EVENTS).toLocaleString('en')} events); p50 ms\n`);
    console.log('| query | Waggle HTTP: window alone | inside 7 days | ratio | server CPU ms: alone / 7 days | hand SQL: window alone | inside 7 days | ratio |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const { q, alone, week } of pruning) {
      console.log(
        `| ${q.title} | ${ms(p50(alone.http))} | ${ms(p50(week.http))} | ${(p50(week.http) / p50(alone.http)).toFixed(2)}x | ` +
          `${ms(mean(alone.httpCpu))} / ${ms(mean(week.httpCpu))} | ` +
          `${ms(p50(alone.hand))} | ${ms(p50(week.hand))} | ${(p50(week.hand) / p50(alone.hand)).toFixed(2)}x |`,
      );
    }
    if (bubble.length) {
      const heat = results.find((x) => x.q.key === 'heatmap')?.r;
      console.log(`\nBubbleUp (POST /1/bubbleup) on the window's ${EVENTS.toLocaleString('en')} events; ms. Target: well within the ${10_000} ms query timeout.\n`);
      console.log('| selection | sides | p50 / p95 | vs. the HEATMAP query (p50) | server CPU ms |');
      console.log('|---|---|---|---|---|');
      for (const { title, r } of bubble) {
        console.log(
          `| ${title} | ${r.sides} | ${ms(p50(r.http))} / ${ms(p95(r.http))} | ${heat ? `${(p50(r.http) / p50(heat.http)).toFixed(2)}x (${ms(p50(heat.http))})` : 'not measured'} | ${ms(mean(r.cpu))} |`,
        );
      }
    }
    clearTimeout(watchdog);
    return { gen, results, pruning, bubble };
  } finally {
    await local?.close().catch(() => undefined);
    await server?.stop();
    if (!KEEP_DIR) rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await queryBench();
