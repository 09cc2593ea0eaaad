// The board benchmark (part of `npm run bench`, alone with `BENCH_ONLY=board npm run bench`, or
// `node bench/board.mjs` after `npm run build`): a board of six query panels over 7 days of
// events, loaded and refreshed as the web UI loads it while events arrive, and a trigger's
// evaluation on the same dataset.
//
// 1. Data, as the query bench makes it (bench/query.mjs, bench/query-data.mjs): `waggle serve`
//    creates the dataset and its typed columns from a seed batch through POST /1/batch, stops,
//    and this process writes EVENTS events (100M) spread evenly over the 7 days ending now straight
//    into the dataset's DuckDB table with one INSERT … SELECT, then checkpoints.
//    BENCH_BOARD_DATA=<dir> keeps the data there and reuses it (its 7 days then end at the first
//    run's time, so the board's 7 days hold fewer of them, and the events the sender sent in earlier
//    runs stay).
// 2. Twice, each on a fresh `waggle serve`: first with `WAGGLE_QUERY_CACHE=off` (the baseline:
//    every query reads its whole window), then with the server's default. Each makes the board
//    through the API as a user would (saved queries, their annotations, POST /1/boards), loads it
//    once (first load), then starts the sender, a process of its own posting INGEST_RATE events/s
//    with current timestamps to POST /1/batch of the same dataset (a batch every 100 ms), and
//    refreshes the board REFRESHES times, one every INTERVAL seconds. A load is what the web UI's
//    board page asks for (web/src/pages/board.tsx): the board and its views, the markers, and for
//    each panel at once its query and annotation, the query saved again and a query result of it
//    (POST /1/query_results, then GET until complete; the server long-polls each GET). Its time is
//    the wall time until all six panels are complete. Server CPU per refresh: the server's CPU over
//    the refresh, less the ingest's CPU rate (measured over 15 s of ingest alone before the first
//    refresh and between refreshes) over the refresh's length.
// 3. Trigger evaluation (on the second server, the sender stopped): a trigger counting errors over
//    the last 15 minutes (frequency 300 s: the API takes a time range of at most 4 × the
//    frequency) is created, and evaluated by the server's scheduler at its first tick (its first
//    slot is its creation: WAGGLE_EVALUATION_TICK_MS is 200 here); its threshold (COUNT >= 0)
//    fires at every evaluation, so the trigger's history shows when it has run. Server CPU from
//    the POST to the history showing it (the POST and the polls included), then it is deleted;
//    TRIGGER_RUNS times, interleaved with the reference: the same query over its 15 minutes as a
//    query result through the API. Compare this figure at 10M and 100M events: the window's
//    events (mostly the sender's) are the same, the history ten times as large.
//
// BENCH_BOARD_EVENTS (default 100,000,000), BENCH_BOARD_REFRESHES (10 per phase),
// BENCH_BOARD_INTERVAL (60 s between refresh starts), BENCH_BOARD_INGEST_RATE (5,000 events/s),
// BENCH_BOARD_TRIGGER_RUNS (10), BENCH_BOARD_DATA (a temp dir).
import { fork, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { DuckDBInstance } from '@duckdb/node-api';
import { makeEvents } from './events.mjs';
import { FIELD_TYPES, generateSql, seedEvents } from './query-data.mjs';
import { api, serveWaggle } from './waggle-process.mjs';
import { cpuSeconds, mean, p50, percentile, sleep } from './stats.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVENTS = Number(process.env.BENCH_BOARD_EVENTS ?? 100_000_000);
const REFRESHES = Number(process.env.BENCH_BOARD_REFRESHES ?? 10);
const INTERVAL_S = Number(process.env.BENCH_BOARD_INTERVAL ?? 60);
const INGEST_RATE = Number(process.env.BENCH_BOARD_INGEST_RATE ?? 5000);
const TRIGGER_RUNS = Number(process.env.BENCH_BOARD_TRIGGER_RUNS ?? 10);
const KEEP_DIR = process.env.BENCH_BOARD_DATA;
/** `trigger`: only the trigger evaluations, on a fresh server with the cache (the board runs left out). */
const PARTS = process.env.BENCH_BOARD_PARTS ?? 'all';
const DATASET = 'board-bench';
const DAY = 86400;
const WEEK = 7 * DAY;
/** The sender's batches: one every TICK_MS (what is due since its start). */
const TICK_MS = 100;
/** How long the ingest runs alone before the first refresh (its CPU rate). */
const INGEST_ALONE_MS = 15_000;
// An hour for 10M events (generation, the phases at 60 s intervals), longer in proportion for more.
const WATCHDOG_S = 3600 * Math.max(1, EVENTS / 10_000_000) + 2 * REFRESHES * INTERVAL_S;

const ms = (x) => (x === undefined ? '–' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
const secs = (t0) => ((performance.now() - t0) / 1000).toFixed(1);

function run(args) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}: ${out}`))));
  });
}

/** The six panels: name and query (every one over the last 7 days); BENCH_BOARD_PANELS=1,2,6 keeps those (1-based). */
const ALL_PANELS = [
  ['Requests by service', { calculations: [{ op: 'COUNT' }], breakdowns: ['service.name'] }],
  ['Latency by route', { calculations: [{ op: 'AVG', column: 'duration_ms' }], breakdowns: ['http.route'] }],
  ['P99 latency', { calculations: [{ op: 'P99', column: 'duration_ms' }] }],
  ['Active users', { calculations: [{ op: 'COUNT_DISTINCT', column: 'user.id' }] }],
  ['Latency distribution', { calculations: [{ op: 'HEATMAP', column: 'duration_ms' }] }],
  ['Errors by status code', { calculations: [{ op: 'COUNT' }], filters: [{ column: 'error', op: '=', value: true }], breakdowns: ['http.status_code'] }],
];
const PANELS = process.env.BENCH_BOARD_PANELS ? process.env.BENCH_BOARD_PANELS.split(',').map((k) => ALL_PANELS[Number(k) - 1]) : ALL_PANELS;
const TRIGGER_QUERY = { calculations: [{ op: 'COUNT' }], filters: [{ column: 'error', op: '=', value: true }], time_range: 900 };

/** The dataset's id, table and field → physical column, from the config store. */
function readDataset(dataDir) {
  const db = new Database(join(dataDir, 'config.sqlite'), { readonly: true });
  try {
    const ds = db.prepare('SELECT id FROM datasets WHERE name = ?').get(DATASET);
    const physical = Object.fromEntries(db.prepare('SELECT key_name, physical FROM columns WHERE dataset_id = ?').all(ds.id).map((c) => [c.key_name, c.physical]));
    for (const f of Object.keys(FIELD_TYPES)) if (!physical[f]) throw new Error(`${DATASET} has no column ${f}`);
    return { table: `ds_${ds.id.slice(6)}`, physical };
  } finally {
    db.close();
  }
}

/** Makes the data dir: keys, the dataset, EVENTS events over the 7 days ending `end` (Unix s). */
async function generate(dataDir) {
  const init = JSON.parse(await run(['dist/main.js', 'init', '--data-dir', dataDir, '--json']));
  const end = Math.floor(Date.now() / 60_000) * 60;
  const server = await serveWaggle(dataDir, { waitMs: 30_000 });
  try {
    const r = await api(server.port, init.keys.ingest, 'POST', `/1/batch/${DATASET}`, seedEvents((end - WEEK) * 1000));
    if (!r.every((x) => x.status === 202)) throw new Error(`seed batch refused: ${JSON.stringify(r).slice(0, 300)}`);
  } finally {
    await server.stop();
  }
  const ds = readDataset(dataDir);
  const t0 = performance.now();
  const inst = await DuckDBInstance.create(join(dataDir, 'events.duckdb'));
  const c = await inst.connect();
  try {
    await c.run(`DELETE FROM "${ds.table}"`); // the seed events
    // A table scan feeds the INSERT from both threads (range() alone runs on one) and keeps order.
    await c.run(`CREATE TEMP TABLE ids AS SELECT range AS i FROM range(${EVENTS})`);
    await c.run(generateSql({ table: ds.table, physical: ds.physical, n: EVENTS, rows: 'temp.ids', startUs: (end - WEEK) * 1e6, spanUs: WEEK * 1e6, ingestedUs: Date.now() * 1000 }));
    await c.run('CHECKPOINT');
    const n = Number((await c.runAndReadAll(`SELECT count(*) FROM "${ds.table}"`)).getRows()[0][0]);
    if (n !== EVENTS) throw new Error(`generated ${n} events, expected ${EVENTS}`);
  } finally {
    c.closeSync();
    inst.closeSync();
  }
  return { key: init.keys.configuration, ingestKey: init.keys.ingest, end, seconds: secs(t0), bytes: statSync(join(dataDir, 'events.duckdb')).size };
}

/** A query result as the web UI runs one (createResult, then pollResult): the completed answer. */
async function runResult(port, key, queryId) {
  const created = await api(port, key, 'POST', `/1/query_results/${DATASET}`, { query_id: queryId, disable_other_by_aggregate: false, disable_total_by_aggregate: false });
  let r = created;
  while (!r.complete) r = await api(port, key, 'GET', `/1/query_results/${DATASET}/${created.id}`);
  if (r.error) throw new Error(`query result ${created.id} failed: ${r.error}`);
  return r;
}

/** The board made as a user makes one: each query saved, an annotation naming it, then the board. */
async function makeBoard(port, key) {
  const panels = [];
  for (const [name, spec] of PANELS) {
    const q = await api(port, key, 'POST', `/1/queries/${DATASET}`, { ...spec, time_range: WEEK });
    const a = await api(port, key, 'POST', `/1/query_annotations/${DATASET}`, { name, query_id: q.id });
    panels.push({ type: 'query', query_panel: { query_id: q.id, query_annotation_id: a.id, query_style: 'graph' } });
  }
  return (await api(port, key, 'POST', '/1/boards', { name: 'Service health, 7 days', type: 'flexible', layout_generation: 'auto', panels })).id;
}

/**
 * One load of the board page (web/src/pages/board.tsx, QueryPanel): ms until every panel is
 * complete; `panels[i]` gets the ms until panel i was.
 */
async function loadBoard(port, key, boardId, panels = []) {
  const t0 = performance.now();
  const [board] = await Promise.all([api(port, key, 'GET', `/1/boards/${boardId}`), api(port, key, 'GET', `/1/boards/${boardId}/views`)]);
  await Promise.all([
    api(port, key, 'GET', `/1/markers/${DATASET}`),
    api(port, key, 'GET', '/1/markers/__all__'),
    ...board.panels.map(async ({ query_panel: p }, i) => {
      const [q] = await Promise.all([api(port, key, 'GET', `/1/queries/${DATASET}/${p.query_id}`), api(port, key, 'GET', `/1/query_annotations/${DATASET}/${p.query_annotation_id}`)]);
      const { id: _id, ...spec } = q;
      const saved = await api(port, key, 'POST', `/1/queries/${DATASET}`, spec);
      await runResult(port, key, saved.id);
      (panels[i] ??= []).push(performance.now() - t0);
    }),
  ]);
  return performance.now() - t0;
}

/** The sender process: INGEST_RATE events/s to POST /1/batch, answering its batches' latencies when asked. */
function startSender(port, ingestKey) {
  const child = fork(fileURLToPath(import.meta.url), ['--sender'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  child.send({ port, key: ingestKey, rate: INGEST_RATE });
  return {
    /** Stops sending; resolves with every batch as [start (epoch ms), latency ms, events] and the refused ones (descriptions). */
    stop: () =>
      new Promise((resolve) => {
        child.once('message', (m) => {
          if (child.connected) child.disconnect();
          resolve(m);
        });
        child.send({ stop: true });
      }),
  };
}

async function sender() {
  const { port, key, rate } = await new Promise((r) => process.once('message', r));
  // A pool of events (bench/events.mjs, without http.target: the generated data has the other 19 fields), times set at sending.
  const pool = makeEvents(20_000, 7).map((e) => {
    delete e.data['http.target'];
    return e.data;
  });
  const batches = [];
  const refused = [];
  let sent = 0;
  let inFlight = 0;
  const t0 = Date.now();
  // Each tick sends what is due since the start (so a late tick catches up), at most 16 batches in
  // flight and 2,000 events (about 1 MB) a batch.
  const send = async () => {
    const started = Date.now();
    const n = Math.min(2000, Math.floor((rate * (started - t0)) / 1000) - sent);
    if (n <= 0 || inFlight >= 16) return;
    const body = JSON.stringify(Array.from({ length: n }, (_, i) => ({ time: new Date(started - (i % 1000)).toISOString(), data: pool[(sent + i) % pool.length] })));
    sent += n;
    inFlight++;
    try {
      const r = await fetch(`http://127.0.0.1:${port}/1/batch/${DATASET}`, { method: 'POST', headers: { 'x-honeycomb-team': key, 'content-type': 'application/json' }, body });
      const answer = await r.json();
      const bad = r.status === 200 ? answer.filter((x) => x.status !== 202) : [];
      if (r.status !== 200 || bad.length) refused.push(`${r.status}: ${JSON.stringify(r.status === 200 ? bad[0] : answer).slice(0, 200)} (${r.status === 200 ? bad.length : n} events)`);
    } catch (err) {
      refused.push(`${err.message} (${n} events)`);
    }
    inFlight--;
    batches.push([started, Date.now() - started, n]);
  };
  const timer = setInterval(() => void send(), TICK_MS);
  await new Promise((r) => process.once('message', r));
  clearInterval(timer);
  while (inFlight > 0) await sleep(10);
  process.send({ batches, refused }, () => process.exit(0));
}

/**
 * One phase on a fresh server: the board made and loaded once, then REFRESHES refreshes while the
 * sender sends. `trigger`: then the trigger evaluations, the sender stopped.
 */
async function phase(dataDir, meta, env, { trigger = false } = {}) {
  const server = await serveWaggle(dataDir, { waitMs: 60_000, env: { WAGGLE_EVALUATION_TICK_MS: '200', WAGGLE_LOG_LEVEL: 'error', ...env } });
  const cpu = () => cpuSeconds(server.child.pid);
  const { port } = server;
  try {
    const boardId = await makeBoard(port, meta.key);
    let c0 = cpu();
    const firstLoad = await loadBoard(port, meta.key, boardId);
    const firstLoadCpu = (cpu() - c0) * 1000;
    const send = startSender(port, meta.ingestKey);
    await sleep(5000); // the sender's first batches
    // The ingest alone for INGEST_ALONE_MS, then between refreshes: its CPU rate.
    const refreshes = [];
    const panels = [];
    let gapCpu = 0;
    let gapMs = 0;
    let gapStart = performance.now();
    let gapCpu0 = cpu();
    await sleep(INGEST_ALONE_MS);
    for (let i = 0; i < REFRESHES; i++) {
      const startedAt = performance.now();
      c0 = cpu();
      gapCpu += (c0 - gapCpu0) * 1000;
      gapMs += startedAt - gapStart;
      const wall = await loadBoard(port, meta.key, boardId, panels);
      const c1 = cpu();
      refreshes.push({ from: Date.now() - wall, to: Date.now(), ms: wall, cpu: (c1 - c0) * 1000 });
      process.stderr.write(`board bench: refresh ${i + 1}/${REFRESHES}: ${ms(wall)} ms\n`);
      gapStart = performance.now();
      gapCpu0 = c1;
      if (i < REFRESHES - 1) await sleep(Math.max(0, startedAt + INTERVAL_S * 1000 - performance.now()));
    }
    const sent = await send.stop();
    for (const r of sent.refused.slice(0, 5)) process.stderr.write(`board bench: batch refused: ${r}\n`);
    // The ingest's CPU rate (ms per ms) alone and between refreshes.
    const ingestRate = gapCpu / gapMs;
    for (const r of refreshes) r.netCpu = r.cpu - ingestRate * r.ms;
    const during = sent.batches.filter(([t]) => refreshes.some((r) => t >= r.from && t <= r.to)).map(([, l]) => l);
    const starts = sent.batches.map(([t]) => t);
    const ingest = {
      // (the last batch's events were due by its start)
      eventsPerSec: sent.batches.reduce((n, [, , k]) => n + k, 0) / Math.max(1, (Math.max(...starts) - Math.min(...starts)) / 1000),
      refused: sent.refused.length,
      p99During: during.length ? percentile(during, 99) : undefined,
      p99: percentile(sent.batches.map(([, l]) => l), 99),
      cpuRate: ingestRate,
    };
    let triggers;
    if (trigger) triggers = await triggerRuns(server, meta.key);
    return { firstLoad, firstLoadCpu, refreshes, panels, ingest, triggers };
  } finally {
    await server.stop();
  }
}

/** TRIGGER_RUNS evaluations of a new trigger, interleaved with the same query as a query result. */
async function triggerRuns(server, key) {
  const cpu = () => cpuSeconds(server.child.pid);
  const { port } = server;
  const ref = await api(port, key, 'POST', `/1/queries/${DATASET}`, TRIGGER_QUERY);
  const out = { evalCpu: [], evalMs: [], refCpu: [], refMs: [], errors: undefined };
  for (let i = 0; i < TRIGGER_RUNS + 1; i++) {
    let c0 = cpu();
    let t0 = performance.now();
    const t = await api(port, key, 'POST', `/1/triggers/${DATASET}`, {
      name: 'Errors in the last 15 minutes',
      query: TRIGGER_QUERY,
      frequency: 300,
      threshold: { op: '>=', value: 0 },
    });
    while (!(await api(port, key, 'GET', `/1/triggers/${DATASET}/${t.id}/history`)).triggered) await sleep(50);
    const evalCpu = (cpu() - c0) * 1000;
    const evalMs = performance.now() - t0;
    await api(port, key, 'DELETE', `/1/triggers/${DATASET}/${t.id}`);
    c0 = cpu();
    t0 = performance.now();
    const r = await runResult(port, key, ref.id);
    const refCpu = (cpu() - c0) * 1000;
    const refMs = performance.now() - t0;
    out.errors = r.data.results[0]?.data.COUNT;
    if (i === 0) continue; // warm-up
    out.evalCpu.push(evalCpu);
    out.evalMs.push(evalMs);
    out.refCpu.push(refCpu);
    out.refMs.push(refMs);
  }
  return out;
}

export async function boardBench() {
  const tmp = KEEP_DIR ?? mkdtempSync(join(tmpdir(), 'waggle-bench-board-'));
  const dataDir = join(tmp, 'data');
  const metaFile = join(tmp, 'meta.json');
  const progress = (what) => process.stderr.write(`board bench: ${what}\n`);
  const watchdog = setTimeout(() => {
    process.stderr.write(`board bench: no result after ${WATCHDOG_S} s\n`);
    process.exit(1);
  }, WATCHDOG_S * 1000);
  watchdog.unref();
  try {
    let meta;
    try {
      meta = KEEP_DIR ? JSON.parse(readFileSync(metaFile, 'utf8')) : undefined;
      if (meta && meta.events !== EVENTS) meta = undefined;
    } catch {
      meta = undefined;
    }
    if (!meta) {
      rmSync(tmp, { recursive: true, force: true });
      mkdirSync(tmp, { recursive: true });
      progress(`generating ${EVENTS.toLocaleString('en')} events over 7 days`);
      meta = { ...(await generate(dataDir)), events: EVENTS };
      if (KEEP_DIR) writeFileSync(metaFile, JSON.stringify(meta));
    }
    const load0 = loadavg()[0];
    if (PARTS === 'trigger') {
      const server = await serveWaggle(dataDir, { waitMs: 60_000, env: { WAGGLE_EVALUATION_TICK_MS: '200', WAGGLE_LOG_LEVEL: 'error' } });
      try {
        // A minute of the sender first, so the trigger's window holds events as in the full run.
        const send = startSender(server.port, meta.ingestKey);
        await sleep(60_000);
        await send.stop();
        printTriggers(await triggerRuns(server, meta.key), EVENTS);
      } finally {
        await server.stop();
      }
      clearTimeout(watchdog);
      return {};
    }
    progress('baseline: WAGGLE_QUERY_CACHE=off');
    const off = await phase(dataDir, meta, { WAGGLE_QUERY_CACHE: 'off' });
    progress('the default');
    const on = await phase(dataDir, meta, {}, { trigger: true });
    const load1 = loadavg()[0];

    const age = ((Date.now() / 1000 - meta.end) / 3600).toFixed(1);
    console.log(
      `\nBoard: ${PANELS.length} query panels over 7 days, ${EVENTS.toLocaleString('en')} events generated over the 7 days ending ${age} h before the end of this run ` +
        `(DuckDB file ${(meta.bytes / 1e9).toFixed(2)} GB${meta.seconds ? `, generated in ${meta.seconds} s` : ''}); ${REFRESHES} refreshes per run, one every ${INTERVAL_S} s, ` +
        `while a sender posts ${INGEST_RATE.toLocaleString('en')} events/s to /1/batch of the same dataset. Wall time until all its panels are complete (ms); ` +
        `server CPU per refresh less the ingest's (its CPU rate alone, before and between refreshes). Load average (1 min) ${load0.toFixed(1)} at the start, ${load1.toFixed(1)} at the end, on ${availableParallelism()} cores.\n`,
    );
    console.log('| run | first load ms (CPU ms) | refresh p50 / p95 ms | target p50 < 1 s | server CPU ms per refresh (with the ingest\'s) | ingest: events/s, batches refused, batch p99 during refreshes / overall ms, server CPU % |');
    console.log('|---|---|---|---|---|---|');
    const row = (name, r) => {
      const wall = r.refreshes.map((x) => x.ms);
      const net = ms(mean(r.refreshes.map((x) => x.netCpu)));
      const i = r.ingest;
      console.log(
        `| ${name} | ${ms(r.firstLoad)} (${ms(r.firstLoadCpu)}) | ${ms(p50(wall))} / ${ms(percentile(wall, 95))} | ${p50(wall) < 1000 ? 'met' : 'NOT met'} | ` +
          `${net} (${ms(mean(r.refreshes.map((x) => x.cpu)))}) | ${i.eventsPerSec.toFixed(0)}, ${i.refused}, ${ms(i.p99During)} / ${ms(i.p99)}, ${(i.cpuRate * 100).toFixed(0)} |`,
      );
    };
    row('baseline: `WAGGLE_QUERY_CACHE=off`', off);
    row('default', on);
    console.log(`\nEach panel's refresh p50 (ms until it was complete; the ${PANELS.length} run at once), baseline / default: ${PANELS.map(([name], k) => `${name} ${ms(p50(off.panels[k]))} / ${ms(p50(on.panels[k]))}`).join(', ')}.`);
    const ratio = (f) => (f(on) / f(off)).toFixed(2);
    const wallP50 = (r) => p50(r.refreshes.map((x) => x.ms));
    const cpuMean = (r) => mean(r.refreshes.map((x) => x.netCpu));
    console.log(`\nDefault against the baseline: refresh p50 ${ratio(wallP50)}x, server CPU per refresh (less the ingest's) ${ratio(cpuMean)}x, first load ${ratio((r) => r.firstLoad)}x.`);
    printTriggers(on.triggers, EVENTS);
    clearTimeout(watchdog);
    return { off, on };
  } finally {
    if (!KEEP_DIR) rmSync(tmp, { recursive: true, force: true });
  }
}

/** The trigger evaluations' table. */
function printTriggers(t, events) {
  console.log(
    `\nTrigger evaluation (${events.toLocaleString('en')} events in the dataset): COUNT where error = true over the last 15 min (${t.errors?.toLocaleString('en')} such events in the window at the end), ` +
      `${TRIGGER_RUNS} evaluation(s) after a warm-up, the server otherwise idle; the reference is the same query as a query result through the API.\n`,
  );
  console.log('| what | server CPU ms (mean) | wall ms p50 | CPU ratio |');
  console.log('|---|---|---|---|');
  console.log(`| evaluation (POST of the trigger to its history showing it ran) | ${ms(mean(t.evalCpu))} | ${ms(p50(t.evalMs))} | ${(mean(t.evalCpu) / mean(t.refCpu)).toFixed(2)}x |`);
  console.log(`| reference: query result of the same window | ${ms(mean(t.refCpu))} | ${ms(p50(t.refMs))} | 1.00x |`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await (process.argv.includes('--sender') ? sender() : boardBench());
