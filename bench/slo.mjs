// The SLO benchmark (part of `npm run bench`, alone with `BENCH_ONLY=slo npm run bench`, or
// `node bench/slo.mjs` after `npm run build`): what the per-minute rollups save.
//
// An app is built in this process (dist/, a temporary data dir, a fixed app clock on an hour
// boundary). One dataset gets EVENTS events spread evenly over the 30 days before now (0.1 %
// failures, written straight into its DuckDB table with one INSERT … SELECT over range()), a
// calculated field `ok = LT($status, 500)` and a 30-day SLO. Measured, each ITERATIONS times
// (median and p90, ms):
//   - rollup build: the first evaluation, which aggregates the whole 30-day window into
//     minutes (what a new SLO, or a change of its SLI, costs once);
//   - incremental evaluation: the clock moves a minute, a minute's worth of events arrives, and
//     GET /1/slos/{ds}/{id}?detailed=true answers (refresh: the last LATE_MINUTES minutes
//     re-aggregated, the ingest-time check for older minutes, then the figures from the rollups);
//   - raw rescan (the baseline): the same figures (good and bad over 30 days and over 4 hours)
//     from raw events with hand-written DuckDB SQL, as an evaluation without rollups would have
//     to do every minute.
// BENCH_SLO_EVENTS (default 10,000,000), BENCH_SLO_ITERATIONS (15).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVENTS = Number(process.env.BENCH_SLO_EVENTS ?? 10_000_000);
const ITERATIONS = Number(process.env.BENCH_SLO_ITERATIONS ?? 15);
const DAYS = 30;
const DATASET = 'slo-bench';

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

export async function sloBench() {
  const { createApp } = await import(join(ROOT, 'dist/http/app.js'));
  const { openSqliteStore } = await import(join(ROOT, 'dist/stores/config/store.js'));
  const { DuckDbEventStore } = await import(join(ROOT, 'dist/stores/events/duckdb.js'));
  const { initialise } = await import(join(ROOT, 'dist/domain/tenancy.js'));
  const dataDir = mkdtempSync(join(tmpdir(), 'waggle-slo-bench-'));
  const store = openSqliteStore(join(dataDir, 'config.sqlite'));
  await store.migrate();
  const init = await initialise(store);
  const events = new DuckDbEventStore(join(dataDir, 'events.duckdb'));
  await events.open();
  let nowMs = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  const app = await createApp({ configStore: store, eventStore: events, settings: { dataDir, evaluationTickMs: 0, logLevel: 'warn' }, now: () => new Date(nowMs), logger: false });
  await app.ready();
  const config = { 'x-honeycomb-team': init.keys.configuration, 'content-type': 'application/json' };
  const ingestHeaders = { 'x-honeycomb-team': init.keys.ingest, 'content-type': 'application/json' };
  const inject = async (method, url, body, headers = config) => {
    const res = await app.inject({ method, url, headers, payload: body === undefined ? undefined : JSON.stringify(body) });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return JSON.parse(res.body || 'null');
  };
  try {
    await inject('POST', `/1/batch/${DATASET}`, [{ data: { status: 200, duration_ms: 1.5 }, time: new Date(nowMs - 1000).toISOString() }], ingestHeaders);
    const env = await store.getEnvironmentBySlug((await store.getTeamBySlug(init.team.slug)).id, init.environment.slug);
    const ds = await store.getDataset(env.id, DATASET);
    const cols = Object.fromEntries((await store.listColumns(ds.id)).map((c) => [c.keyName, c.physical]));
    const table = `ds_${ds.id.slice(6)}`;
    const spanUs = DAYS * 86_400_000_000;
    const startUs = nowMs * 1000 - spanUs;
    const stepUs = Math.floor(spanUs / EVENTS);
    const fill = (n, fromUs, step, ingestedUs) =>
      `INSERT INTO "${table}" ("__time", "__samplerate", "__ingested", "${cols.status}", "${cols.duration_ms}") ` +
      `SELECT make_timestamp(${fromUs}::BIGINT + i * ${step}), 1, make_timestamp(${ingestedUs}::BIGINT), ` +
      `CASE WHEN i % 1000 = 7 THEN 500 ELSE 200 END, (i % 997) / 3.0 FROM range(${n}) t(i)`;
    let t0 = process.hrtime.bigint();
    await events.execute([{ sql: fill(EVENTS, startUs, stepUs, nowMs * 1000 - 3_600_000_000) }]);
    console.log(`\nSLO rollups: ${EVENTS.toLocaleString('en')} events over ${DAYS} days written in ${(ms(t0) / 1000).toFixed(1)} s`);

    await inject('POST', `/1/derived_columns/${DATASET}`, { alias: 'ok', expression: 'LT($status, 500)' });
    const slo = await inject('POST', `/1/slos/${DATASET}`, { name: 'bench', sli: { alias: 'ok' }, time_period_days: DAYS, target_per_million: 999000 });

    // Rollup build: a fresh SLO each time (the first evaluation builds its window).
    const build = [];
    for (let i = 0; i < Math.min(ITERATIONS, 5); i++) {
      const s = await inject('POST', `/1/slos/${DATASET}`, { name: `build ${i}`, sli: { alias: 'ok' }, time_period_days: DAYS, target_per_million: 999000 });
      t0 = process.hrtime.bigint();
      await inject('GET', `/1/slos/${DATASET}/${s.id}?detailed=true`);
      build.push(ms(t0));
      await inject('DELETE', `/1/slos/${DATASET}/${s.id}`);
    }
    const first = await inject('GET', `/1/slos/${DATASET}/${slo.id}?detailed=true`);

    // Incremental: a minute later, with a minute of new events.
    const perMinute = Math.max(1, Math.round(EVENTS / (DAYS * 1440)));
    const incremental = [];
    let last;
    for (let i = 0; i < ITERATIONS; i++) {
      const fromUs = nowMs * 1000;
      nowMs += 60_000;
      await events.execute([{ sql: fill(perMinute, fromUs, Math.floor(60_000_000 / perMinute), nowMs * 1000) }]);
      t0 = process.hrtime.bigint();
      last = await inject('GET', `/1/slos/${DATASET}/${slo.id}?detailed=true`);
      incremental.push(ms(t0));
    }

    // Baseline: the figures from raw events, hand-written.
    const nowUs = nowMs * 1000;
    const windowFrom = (Math.floor(nowMs / 60_000) - DAYS * 1440 + 1) * 60_000_000;
    const fourHours = (Math.floor(nowMs / 60_000) - 239) * 60_000_000;
    const rawSql =
      `SELECT sum("__samplerate") FILTER (WHERE "${cols.status}" < 500) AS good, sum("__samplerate") FILTER (WHERE "${cols.status}" >= 500) AS bad, ` +
      `sum("__samplerate") FILTER (WHERE "${cols.status}" < 500 AND "__time" >= make_timestamp(${fourHours}::BIGINT)) AS good4, ` +
      `sum("__samplerate") FILTER (WHERE "${cols.status}" >= 500 AND "__time" >= make_timestamp(${fourHours}::BIGINT)) AS bad4 ` +
      `FROM "${table}" WHERE "__time" >= make_timestamp(${windowFrom}::BIGINT) AND "__time" < make_timestamp(${nowUs}::BIGINT)`;
    const raw = [];
    let rawRow;
    for (let i = 0; i < ITERATIONS + 2; i++) {
      t0 = process.hrtime.bigint();
      rawRow = (await events.query(rawSql))[0];
      if (i >= 2) raw.push(ms(t0));
    }
    const good = Number(rawRow.good);
    const bad = Number(rawRow.bad);
    const check = (100 * good) / (good + bad);
    if (Math.abs(check - last.compliance) > 1e-9) throw new Error(`compliance differs: rollups ${last.compliance}, raw ${check}`);

    const row = (name, xs, base) =>
      `| ${name} | ${percentile(xs, 0.5).toFixed(1)} | ${percentile(xs, 0.9).toFixed(1)} | ${base ? (percentile(xs, 0.5) / base).toFixed(3) + 'x' : '1x'} |`;
    const baseMedian = percentile(raw, 0.5);
    console.log(`(first figures: compliance ${first.compliance.toFixed(4)} %, budget remaining ${first.budget_remaining.toFixed(2)} %; same from raw events)\n`);
    console.log('| run | median ms | p90 ms | vs raw rescan |');
    console.log('|---|---|---|---|');
    console.log(row('raw rescan of 30 days (baseline, hand-written SQL)', raw));
    console.log(row('rollup build (first evaluation of a new SLO, HTTP)', build, baseMedian));
    console.log(row(`incremental evaluation, 1 min of new events (${perMinute}/min), HTTP GET ?detailed`, incremental, baseMedian));
  } finally {
    await app.close();
    await events.close();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await sloBench();
