// SLOs on each event engine (`BENCH_ONLY=slo-engines npm run bench`, or `node bench/slo-engines.mjs`
// after `npm run build`): GET /1/slos/{ds}/{id}?detailed=true on DuckDB (rollups refreshed
// incrementally), ClickHouse single node and ClickHouse 2 shards (the window counted per minute
// at every refresh, docs/clickhouse.md), with the same events in one run.
//
// Per engine an app in this process (dist/, a temporary data dir, an app clock on an hour
// boundary), one dataset of EVENTS events spread over 30 days (0.1 % failures; written straight
// into its table with one INSERT … SELECT), a calculated field `ok = $good` (a column read: it
// compiles on every engine) and a 30-day SLO. Then ITERATIONS rounds: the clock moves a minute,
// 200 new events of the last minute and 20 late ones anywhere in the window arrive, and one
// detailed GET is timed (median and p90, ms). The first GET (DuckDB: building the rollups) is
// reported apart. Every engine's last answer must equal DuckDB's.
// BENCH_SLO_ENGINES_EVENTS (default 2,000,000), BENCH_SLO_ENGINES_ITERATIONS (15).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clickhouseBinary, startClickHouse } from '../scripts/clickhouse-servers.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVENTS = Number(process.env.BENCH_SLO_ENGINES_EVENTS ?? 2_000_000);
const ITERATIONS = Number(process.env.BENCH_SLO_ENGINES_ITERATIONS ?? 15);
const DAYS = 30;
const MINUTE_US = 60_000_000;
const SPAN_US = DAYS * 86_400_000_000;

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

/** `count` events, the i-th at fromUs + i × stepUs; every 1000th fails. As SQL of the engine. */
const fillSql = {
  duckdb: (table, c, count, fromUs, stepUs, ingestedUs) =>
    `INSERT INTO "${table}" ("__time", "__samplerate", "__ingested", "${c.status}", "${c.good}") ` +
    `SELECT make_timestamp(${fromUs}::BIGINT + i * ${stepUs}::BIGINT), 1, make_timestamp(${ingestedUs}::BIGINT), ` +
    `CASE WHEN i % 1000 = 7 THEN 500 ELSE 200 END, i % 1000 <> 7 FROM range(${count}) t(i)`,
  clickhouse: (table, c, count, fromUs, stepUs, ingestedUs) =>
    `INSERT INTO ${table} (__time, __samplerate, __ingested, ${c.status}, ${c.good}) ` +
    `SELECT toInt64(${fromUs} + number * ${stepUs}), toInt64(1), toInt64(${ingestedUs}), ` +
    `toInt64(if(number % 1000 = 7, 500, 200)), toUInt8(number % 1000 != 7) FROM numbers(${count})`,
};

async function engineRun(name, setting) {
  const { createApp } = await import(join(ROOT, 'dist/app.js'));
  const { openSqliteStore } = await import(join(ROOT, 'dist/stores/config/store.js'));
  const { createEventStore } = await import(join(ROOT, 'dist/stores/events/open.js'));
  const { initialise } = await import(join(ROOT, 'dist/domain/tenancy.js'));
  const dataDir = mkdtempSync(join(tmpdir(), 'waggle-slo-engines-'));
  const store = openSqliteStore(join(dataDir, 'config.sqlite'));
  await store.migrate();
  const init = await initialise(store);
  const events = createEventStore(setting, dataDir);
  await events.open();
  let nowMs = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  const app = await createApp({ configStore: store, eventStore: events, settings: { dataDir, evaluationTickMs: 0, logLevel: 'warn' }, now: () => new Date(nowMs), logger: false });
  await app.ready();
  const headers = (key) => ({ 'x-honeycomb-team': key, 'content-type': 'application/json' });
  const inject = async (method, url, body, key = init.keys.configuration) => {
    const res = await app.inject({ method, url, headers: headers(key), payload: body === undefined ? undefined : JSON.stringify(body) });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return JSON.parse(res.body || 'null');
  };
  try {
    await inject('POST', '/1/batch/large', [{ data: { status: 200, good: true }, time: new Date(nowMs - 1000).toISOString() }], init.keys.ingest);
    const env = await store.getEnvironmentBySlug((await store.getTeamBySlug(init.team.slug)).id, init.environment.slug);
    const ds = await store.getDataset(env.id, 'large');
    const cols = Object.fromEntries((await store.listColumns(ds.id)).map((c) => [c.keyName, c.physical]));
    const table = `ds_${ds.id.slice(6)}`;
    const fill = (count, fromUs, stepUs, ingestedUs) => fillSql[events.dialect.name](table, cols, count, fromUs, stepUs, ingestedUs);
    const count = async () => Number((await events.query(`SELECT count(*) AS n FROM ${events.dialect.quoteIdent(table)}`))[0].n);
    // (A Distributed table without insert_distributed_sync sends to the shards in the background.)
    const settle = async (n) => {
      while ((await count()) < n) await new Promise((r) => setTimeout(r, 50));
    };
    let stored = 1 + EVENTS;
    let t0 = process.hrtime.bigint();
    await events.execute([{ sql: fill(EVENTS, nowMs * 1000 - SPAN_US, Math.floor(SPAN_US / EVENTS), nowMs * 1000 - 3_600_000_000) }]);
    await settle(stored);
    const written = ms(t0);
    await inject('POST', '/1/derived_columns/large', { alias: 'ok', expression: '$good' });
    const slo = await inject('POST', '/1/slos/large', { name: 'large', sli: { alias: 'ok' }, time_period_days: DAYS, target_per_million: 999000 });
    const get = () => inject('GET', `/1/slos/large/${slo.id}?detailed=true`);
    t0 = process.hrtime.bigint();
    await get();
    const first = ms(t0);
    const times = [];
    let last;
    for (let i = 0; i < ITERATIONS; i++) {
      nowMs += 60_000;
      const nowUs = nowMs * 1000;
      await events.execute([
        { sql: fill(200, nowUs - MINUTE_US, Math.floor(MINUTE_US / 200), nowUs) },
        { sql: fill(20, nowUs - SPAN_US + MINUTE_US, Math.floor((SPAN_US - 2 * MINUTE_US) / 20), nowUs) },
      ]);
      await settle((stored += 220));
      t0 = process.hrtime.bigint();
      last = await get();
      times.push(ms(t0));
    }
    return { name, written, first, median: percentile(times, 0.5), p90: percentile(times, 0.9), answer: { compliance: last.compliance, budget_remaining: last.budget_remaining, burn_rate: last.burn_rate } };
  } finally {
    await app.close();
    await events.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function sloEnginesBench() {
  if (!clickhouseBinary) {
    console.log('\nSLOs on each engine: clickhouse-server is not installed, skipped');
    return;
  }
  const runs = [await engineRun('DuckDB', 'duckdb')];
  for (const shards of [1, 2]) {
    const cluster = await startClickHouse(shards);
    try {
      runs.push(await engineRun(shards === 1 ? 'ClickHouse' : 'ClickHouse, 2 shards', cluster.setting()));
    } finally {
      await cluster.stop();
    }
  }
  const base = runs[0];
  console.log(`\nSLO detailed GET on each engine: ${EVENTS.toLocaleString('en')} events over ${DAYS} days, ${ITERATIONS} rounds of 200 new + 20 late events`);
  console.log('engine                 write s   first GET ms   GET median ms (x DuckDB)   p90 ms   answer = DuckDB');
  for (const r of runs) {
    const same = ['compliance', 'budget_remaining', 'burn_rate'].every((k) => Math.abs(r.answer[k] - base.answer[k]) <= 1e-9 * Math.max(1, Math.abs(base.answer[k])));
    console.log(
      `${r.name.padEnd(22)} ${(r.written / 1000).toFixed(1).padStart(7)}   ${r.first.toFixed(0).padStart(12)}   ${r.median.toFixed(1).padStart(13)} (${(r.median / base.median).toFixed(2)}x)   ${r.p90.toFixed(1).padStart(10)}   ${same ? 'yes' : `NO ${JSON.stringify(r.answer)}`}`,
    );
    if (!same) process.exitCode = 1;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await sloEnginesBench();
