// SLO rollups on ClickHouse: the per-minute counts are aggregated from the dataset tables at every
// refresh, over the SLO's window; nothing is stored in ClickHouse (the interface is in
// slo-rollups.ts, the maths in src/jobs/slo.ts).
//
// Why not DuckDB's design (duckdb-slo-rollups.ts: rollup tables changed by what was ingested since
// the last refresh): it needs an exact ingest-time cut — "every event ingested before the newest
// ingest time seen is visible, and none will come later" — and one transaction for the rollups and
// their state. ClickHouse gives neither: several Waggle nodes each keep their own ingest-time
// sequence (their clocks differ, docs/several-nodes.md); an insert through a Distributed table
// lands on each shard separately, so a reader may see one shard's rows of it and not yet
// another's; and there are no transactions to keep a rollup table and its state row in agreement
// (a ReplacingMergeTree with FINAL would make the rows agree eventually, not the cut exact).
// Counting any event twice or never, on a late event, a retry or a slow shard, would be silent.
//
// Recomputing instead is exact by construction: every answer counts the events ClickHouse holds
// in the window at that moment — late events and backfills anywhere in it, events after now once
// the clock reaches them, a clock that goes back, a reset, an SLI change — with no state to agree
// on across nodes and nothing to collect. The cost is one aggregation of the window per refresh
// (per detailed GET, per burn-alert evaluation), reading `__time`, `__samplerate` and the SLI's
// columns of the window's events only: tables are ordered by `__time`, so ClickHouse reads just
// the window's granules, in parallel over the shards. Concurrent callers share one refresh per
// SLO (src/jobs/slo.ts). Events deleted by retention are no longer counted (DuckDB keeps counts
// it made before): keep WAGGLE_RETENTION_DAYS above the longest SLO period, as for DuckDB.
import type { EventStore } from './types.js';
import { MINUTE_US, SAMPLERATE_COLUMN, TIME_COLUMN } from './engine.js';
import { clickhouseLiteral } from './clickhouse-sql.js';
import type { Counts, Refreshed, RefreshRequest, RollupSource, SloRollups } from './slo-rollups.js';

interface MinuteCounts {
  /** Minutes with events, ascending, and the running sums of their good and bad counts. */
  minutes: number[];
  good: number[];
  bad: number[];
}

export class ClickHouseSloRollups implements SloRollups {
  /** Nothing is stored: refreshes need no lease between nodes. */
  readonly stateful = false;

  constructor(private readonly events: EventStore) {}

  async existingTables(names: string[]): Promise<Set<string>> {
    if (names.length === 0) return new Set();
    const rows = await this.events.query(
      `SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN (${names.map(clickhouseLiteral).join(', ')})`,
    );
    return new Set(rows.map((r) => String(r.name)));
  }

  /** Per part of the source, its events with times in [fromUs, toUs) that count: t (time), g and b (weighted good and bad). */
  private eventsSql(source: RollupSource, fromUs: number, toUs: number): string {
    const d = this.events.dialect;
    const T = d.quoteIdent(TIME_COLUMN);
    const selects = source.parts.map(
      (p) =>
        `SELECT ${T} AS t, CASE WHEN s THEN w ELSE 0 END AS g, CASE WHEN s THEN 0 ELSE w END AS b ` +
        `FROM (SELECT ${T}, ${d.quoteIdent(SAMPLERATE_COLUMN)} AS w, (${p.sql}) AS s FROM ${d.quoteIdent(p.table)} ` +
        `WHERE ${T} >= ${d.timestamp(fromUs)} AND ${T} < ${d.timestamp(toUs)}) WHERE s IS NOT NULL`,
    );
    return selects.join('\nUNION ALL\n');
  }

  /** Weighted good and bad counts per minute of the events with times in [fromUs, toUs), as running sums. */
  private async minuteCounts(source: RollupSource, fromUs: number, toUs: number): Promise<MinuteCounts> {
    const out: MinuteCounts = { minutes: [], good: [], bad: [] };
    if (source.parts.length === 0 || fromUs >= toUs) return out;
    const minute = this.events.dialect.intDiv('t', String(MINUTE_US));
    // (Outer names differ from the inner ones: ClickHouse resolves a SELECT's aliases before its columns.)
    const rows = await this.events.query(
      `SELECT ${minute} AS m, sum(g) AS good, sum(b) AS bad FROM (\n${this.eventsSql(source, fromUs, toUs)}\n) GROUP BY m ORDER BY m`,
      source.params,
    );
    let good = 0;
    let bad = 0;
    for (const r of rows) {
      out.minutes.push(Number(r.m));
      out.good.push((good += Number(r.good)));
      out.bad.push((bad += Number(r.bad)));
    }
    return out;
  }

  /** The window's counts from each of the request's minutes, summed in one pass over its events (no per-minute rows come back). */
  async refresh(req: RefreshRequest): Promise<Refreshed> {
    const first = Math.floor(req.startUs / MINUTE_US);
    const froms = req.fromMinutes.map((m) => Math.max(Math.trunc(m), first) * MINUTE_US);
    if (req.source.parts.length === 0 || req.startUs >= req.nowUs) return { rebuilt: true, counts: froms.map(() => ({ good: 0, bad: 0 })) };
    const d = this.events.dialect;
    // Events are in [start, now): every minute counted is ≤ the current one.
    const cols = froms.map((from, i) => `sum(CASE WHEN t >= ${d.timestamp(from)} THEN g ELSE 0 END) AS g${i}, sum(CASE WHEN t >= ${d.timestamp(from)} THEN b ELSE 0 END) AS b${i}`);
    const rows = await this.events.query(`SELECT ${cols.join(', ')} FROM (\n${this.eventsSql(req.source, req.startUs, req.nowUs)}\n)`, req.source.params);
    const r = rows[0] ?? {};
    return { rebuilt: true, counts: froms.map((_, i) => ({ good: Number(r[`g${i}`] ?? 0), bad: Number(r[`b${i}`] ?? 0) })) };
  }

  async windowCounts(_sloId: string, source: RollupSource, windows: { lo: number; hi: number }[]): Promise<Counts[]> {
    if (windows.length === 0 || source.parts.length === 0) return windows.map(() => ({ good: 0, bad: 0 }));
    // Reduced, not spread into Math.min/max: a call's arguments live on the stack.
    const from = Math.max(0, windows.reduce((x, w) => Math.min(x, w.lo), Infinity));
    const to = windows.reduce((x, w) => Math.max(x, w.hi), -Infinity);
    const m = await this.minuteCounts(source, from * MINUTE_US, to * MINUTE_US);
    return windows.map((w) => between(m, w.lo, w.hi));
  }

  async forget(): Promise<void> {}

  async collectGarbage(): Promise<void> {}
}

/** The counts of the minutes in [lo, hi). */
function between(m: MinuteCounts, lo: number, hi: number): Counts {
  const a = lowerBound(m.minutes, lo);
  const b = lowerBound(m.minutes, hi);
  const at = (sums: number[], i: number) => (i > 0 ? sums[i - 1] : 0);
  return { good: at(m.good, b) - at(m.good, a), bad: at(m.bad, b) - at(m.bad, a) };
}

/** The index of the first element ≥ x in an ascending array. */
function lowerBound(xs: number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
