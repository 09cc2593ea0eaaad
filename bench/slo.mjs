// The SLO benchmark (part of `npm run bench`, alone with `BENCH_ONLY=slo npm run bench`, or
// `node bench/slo.mjs` after `npm run build`): GET /1/slos/{ds}/{id}?detailed=true answered
// from the incrementally refreshed rollups, on a large dataset against a small one, and against
// recomputing the SLO's period from raw events (what every detailed GET cost once late events
// arrived, before the rollups followed ingest time).
//
// An app is built in this process (dist/, a temporary data dir, an app clock that starts on an
// hour boundary). Two datasets, `large` (EVENTS events) and `small` (SMALL_EVENTS), each with its
// events spread evenly over the 30 days before now (0.1 % failures), written straight into their
// DuckDB tables with one INSERT … SELECT over range(); a calculated field `ok = LT($status, 500)`
// and a 30-day SLO on each. Measured, ITERATIONS rounds (median and p90, ms):
//   - each round the clock moves a minute and each dataset gets the same new events: NEW_EVENTS
//     of the last minute and LATE_EVENTS late ones with times anywhere in the 30 days (the
//     stream that used to make every refresh re-aggregate most of the window); then
//     GET ?detailed=true on each, through HTTP (in turn, which goes first alternating);
//   - the baseline: the same figures (good and bad over the window and over the last 4 hours)
//     from raw events with hand-written DuckDB SQL, on each dataset, in the same round;
//   - CONCURRENT GETs at once on each dataset after a round of new events, 7 rounds (wall time
//     for all: they share one refresh, or two);
//   - the first GET of a new SLO on each (building its rollups: once per SLO or SLI change).
// Every round's answers are checked against the raw SQL's.
// BENCH_SLO_EVENTS (default 10,000,000), BENCH_SLO_SMALL_EVENTS (1,000), BENCH_SLO_ITERATIONS (25).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVENTS = Number(process.env.BENCH_SLO_EVENTS ?? 10_000_000);
const SMALL_EVENTS = Number(process.env.BENCH_SLO_SMALL_EVENTS ?? 1_000);
const ITERATIONS = Number(process.env.BENCH_SLO_ITERATIONS ?? 25);
const NEW_EVENTS = 200;
const LATE_EVENTS = 20;
const CONCURRENT = 32;
const DAYS = 30;
const MINUTE_US = 60_000_000;

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const timed = async (fn) => {
  const t0 = process.hrtime.bigint();
  const value = await fn();
  return { ms: ms(t0), value };
};

export async function sloBench() {
  const { createApp } = await import(join(ROOT, 'dist/app.js'));
  const { openSqliteStore } = await import(join(ROOT, 'dist/stores/config/store.js'));
  const { DuckDbEventStore } = await import(join(ROOT, 'dist/stores/events/duckdb-store.js'));
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
  const env = async () => store.getEnvironmentBySlug((await store.getTeamBySlug(init.team.slug)).id, init.environment.slug);
  const sloBody = (name) => ({ name, sli: { alias: 'ok' }, time_period_days: DAYS, target_per_million: 999000 });

  /** A dataset with `n` events over the 30 days, its field `ok` and a 30-day SLO. */
  async function dataset(slug, n) {
    await inject('POST', `/1/batch/${slug}`, [{ data: { status: 200, duration_ms: 1.5 }, time: new Date(nowMs - 1000).toISOString() }], ingestHeaders);
    const ds = await store.getDataset((await env()).id, slug);
    const cols = Object.fromEntries((await store.listColumns(ds.id)).map((c) => [c.keyName, c.physical]));
    const table = `ds_${ds.id.slice(6)}`;
    // `count` events, the i-th at fromUs + i × stepUs, ingested at ingestedUs; every 1000th fails.
    const fill = (count, fromUs, stepUs, ingestedUs) =>
      `INSERT INTO "${table}" ("__time", "__samplerate", "__ingested", "${cols.status}", "${cols.duration_ms}") ` +
      `SELECT make_timestamp(${fromUs}::BIGINT + i * ${stepUs}::BIGINT), 1, make_timestamp(${ingestedUs}::BIGINT), ` +
      `CASE WHEN i % 1000 = 7 THEN 500 ELSE 200 END, (i % 997) / 3.0 FROM range(${count}) t(i)`;
    const spanUs = DAYS * 86_400_000_000;
    await events.execute([{ sql: fill(n, nowMs * 1000 - spanUs, Math.floor(spanUs / n), nowMs * 1000 - 3_600_000_000) }]);
    await inject('POST', `/1/derived_columns/${slug}`, { alias: 'ok', expression: 'LT($status, 500)' });
    const slo = await inject('POST', `/1/slos/${slug}`, sloBody(slug));
    const get = () => inject('GET', `/1/slos/${slug}/${slo.id}?detailed=true`);
    // The hand-written recompute of the window and its last 4 hours at the app clock.
    const raw = async () => {
      const nowUs = nowMs * 1000;
      const minute = Math.floor(nowMs / 60_000);
      const from = (minute - DAYS * 1440 + 1) * MINUTE_US;
      const four = (minute - 239) * MINUTE_US;
      const s = `"${cols.status}"`;
      const rows = await events.query(
        `SELECT sum("__samplerate") FILTER (WHERE ${s} < 500) AS good, sum("__samplerate") FILTER (WHERE ${s} >= 500) AS bad, ` +
          `sum("__samplerate") FILTER (WHERE ${s} < 500 AND "__time" >= make_timestamp(${four}::BIGINT)) AS good4, ` +
          `sum("__samplerate") FILTER (WHERE ${s} >= 500 AND "__time" >= make_timestamp(${four}::BIGINT)) AS bad4 ` +
          `FROM "${table}" WHERE "__time" >= make_timestamp(${from}::BIGINT) AND "__time" < make_timestamp(${nowUs}::BIGINT)`,
      );
      const r = rows[0];
      const good = Number(r.good ?? 0);
      const bad = Number(r.bad ?? 0);
      return { compliance: good + bad > 0 ? (100 * good) / (good + bad) : 100 };
    };
    // A round's new events: NEW_EVENTS over the last minute, LATE_EVENTS anywhere in the window.
    const arrive = async () => {
      const nowUs = nowMs * 1000;
      await events.execute([
        { sql: fill(NEW_EVENTS, nowUs - MINUTE_US, Math.floor(MINUTE_US / NEW_EVENTS), nowUs) },
        { sql: fill(LATE_EVENTS, nowUs - spanUs + MINUTE_US, Math.floor((spanUs - 2 * MINUTE_US) / LATE_EVENTS), nowUs) },
      ]);
    };
    return { slug, n, get, raw, arrive };
  }

  try {
    let t0 = process.hrtime.bigint();
    const large = await dataset('large', EVENTS);
    const small = await dataset('small', SMALL_EVENTS);
    console.log(`\nSLO detail: ${EVENTS.toLocaleString('en')} and ${SMALL_EVENTS.toLocaleString('en')} events over ${DAYS} days written in ${(ms(t0) / 1000).toFixed(1)} s`);

    // The first GET of a new SLO builds its rollups.
    const build = { large: [], small: [] };
    for (let i = 0; i < 3; i++) {
      for (const d of [large, small]) {
        const s = await inject('POST', `/1/slos/${d.slug}`, sloBody(`build ${i}`));
        build[d.slug].push((await timed(() => inject('GET', `/1/slos/${d.slug}/${s.id}?detailed=true`))).ms);
        await inject('DELETE', `/1/slos/${d.slug}/${s.id}`);
      }
    }
    await large.get();
    await small.get();

    const get = { large: [], small: [] };
    const raw = { large: [], small: [] };
    const check = (d, answer, expected) => {
      if (Math.abs(answer.compliance - expected.compliance) > 1e-9) throw new Error(`${d.slug}: compliance ${answer.compliance}, raw events ${expected.compliance}`);
    };
    for (let i = 0; i < ITERATIONS + 2; i++) {
      nowMs += 60_000;
      for (const d of [large, small]) await d.arrive();
      for (const d of i % 2 ? [small, large] : [large, small]) {
        const g = await timed(d.get);
        const r = await timed(d.raw);
        check(d, g.value, r.value);
        if (i < 2) continue; // warm-up
        get[d.slug].push(g.ms);
        raw[d.slug].push(r.ms);
      }
    }

    const burst = { large: [], small: [] };
    for (let i = 0; i < 7; i++) {
      nowMs += 60_000;
      for (const d of [large, small]) await d.arrive();
      for (const d of i % 2 ? [small, large] : [large, small]) {
        const b = await timed(() => Promise.all(Array.from({ length: CONCURRENT }, d.get)));
        const expected = await d.raw();
        for (const answer of b.value) check(d, answer, expected);
        burst[d.slug].push(b.ms);
      }
    }

    const p50 = (xs) => percentile(xs, 0.5);
    const row = (name, xs, base, baseName) =>
      `| ${name} | ${p50(xs).toFixed(1)} | ${percentile(xs, 0.9).toFixed(1)} | ${base === undefined ? '' : `${(p50(xs) / p50(base)).toFixed(3)}x ${baseName}`} |`;
    const L = EVENTS.toLocaleString('en');
    const S = SMALL_EVENTS.toLocaleString('en');
    console.log(`(each round: ${NEW_EVENTS} new events of the last minute and ${LATE_EVENTS} late ones anywhere in the ${DAYS} days, per dataset; answers checked against the raw SQL)\n`);
    console.log('| run | median ms | p90 ms | ratio |');
    console.log('|---|---|---|---|');
    console.log(row(`baseline: raw recompute of ${DAYS} days, ${L} events (hand-written SQL)`, raw.large));
    console.log(row(`raw recompute of ${DAYS} days, ${S} events`, raw.small, raw.large, 'vs the baseline'));
    console.log(row(`GET ?detailed=true, ${S} events (HTTP)`, get.small, raw.large, 'vs the baseline'));
    console.log(row(`GET ?detailed=true, ${L} events (HTTP)`, get.large, raw.large, 'vs the baseline'));
    console.log(row(`  the same, against ${S} events`, get.large, get.small, `vs ${S} events`));
    console.log(row(`${CONCURRENT} concurrent GETs, ${S} events (all answered)`, burst.small, raw.large, 'vs the baseline'));
    console.log(row(`${CONCURRENT} concurrent GETs, ${L} events (all answered)`, burst.large, burst.small, `vs ${S} events`));
    console.log(row(`first GET of a new SLO (builds its rollups), ${L} events`, build.large, raw.large, 'vs the baseline'));
  } finally {
    await app.close();
    await events.close();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await sloBench();
