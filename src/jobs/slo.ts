// SLO maths over real events, answered from per-minute rollups.
//
// The SLI is a calculated field evaluated per event: true = good, false = bad, null = not counted.
// Counts are weighted by the sample rate (an event stored with samplerate 10 stands for 10). Over
// the SLO's window (below), with G good, B bad, E = G + B eligible, t = target_per_million / 1e6:
//   compliance        = 100 × G / E                         (100 when E = 0)
//   allowed failures  A = (1 − t) × E
//   budget remaining  = 100 × (1 − B / A)                   (percent of the budget; negative once overspent; 100 when E = 0)
//   burn rate (4 h)   = (B₄ₕ / E₄ₕ) ÷ (1 − t)               (failure rate of the last 4 hours over the allowed rate; 0 without events)
//
// Windows are whole minutes ending with the current, partial minute: at time `now`, minute
// c = ⌊now / 60 s⌋, and "the last N minutes" are minutes c − N + 1 … c (events up to now). The
// SLO's window is its last time_period_days × 1440 minutes, starting no earlier than `reset_at`
// (to the microsecond): a reset starts the budget afresh.
//
// Every answer comes from the SLO's rollups (src/stores/events/slo-rollups.ts: counts per minute,
// kept as the event engine keeps them: on DuckDB brought up to date incrementally, at a cost that
// follows the events new since the last refresh; on ClickHouse aggregated per minute of the window
// at each refresh). Each evaluation refreshes them to its `now` first, so an answer counts every
// event committed before it was asked for. Refreshes of one SLO fly singly: while one runs, every
// caller that comes waits for the next one, which starts when it ends, at the latest `now` of
// those callers, and answers them all.
import { withLease, type Leadership } from '../cluster/leadership.js';
import { createHash } from 'node:crypto';
import type { ConfigStore, Dataset, Environment } from '../stores/config/types.js';
import { tableName, type EventStore } from '../stores/events/types.js';
import { INGESTED_COLUMN, TIME_COLUMN } from '../stores/events/engine.js';
import { MINUTE_US, sloRollups, type Counts, type RollupSource, type SloRollups } from '../stores/events/slo-rollups.js';
import { FieldScope, columnSources } from '../query/fields.js';
import { calculatedFieldsOf } from '../query/sources.js';
import { MINUTES_PER_DAY, type SloBody, type SloObject } from '../domain/slos.js';

export { MINUTE_US, type Counts };
/** Burn rate window of the detailed SLO answer (Honeycomb: the last 4 hours). */
export const BURN_RATE_MINUTES = 240;


export interface SloFigures {
  /** Weighted counts over the SLO's window. */
  good: number;
  bad: number;
  eligible: number;
  /** Percent. */
  compliance: number;
  /** Percent of the budget; may be negative. */
  budgetRemaining: number;
  /** Allowed failures over the window: (1 − target) × eligible. */
  allowed: number;
  burnRate: number;
  /** Current minute (⌊now / 60 s⌋) and the first minute of the SLO's window. */
  minute: number;
  firstMinute: number;
}

export function target(slo: SloBody): number {
  return slo.target_per_million / 1_000_000;
}

/** Compliance, budget remaining and burn rate from counts (see the header). */
export function sloMaths(slo: SloBody, window: Counts, last4h: Counts): Pick<SloFigures, 'compliance' | 'budgetRemaining' | 'allowed' | 'burnRate' | 'eligible'> {
  const eligible = window.good + window.bad;
  const allowedRate = 1 - target(slo);
  const allowed = allowedRate * eligible;
  const compliance = eligible > 0 ? (100 * window.good) / eligible : 100;
  const budgetRemaining = allowed > 0 ? 100 * (1 - window.bad / allowed) : 100;
  const e4 = last4h.good + last4h.bad;
  const burnRate = e4 > 0 ? last4h.bad / e4 / allowedRate : 0;
  return { eligible, compliance, budgetRemaining, allowed, burnRate };
}

/** One refresh of an SLO's rollups, and the callers waiting for it (see the header). */
interface Flight {
  env: Environment;
  slo: SloObject;
  nowMs: number;
  /** Windows (minutes back from now) its callers want counted, besides the SLO's own. */
  windows: Set<number>;
  result: Promise<FlightResult>;
}

interface FlightResult {
  nowMs: number;
  /** The SLO as refreshed (the newest of its callers'). */
  slo: SloObject;
  source: RollupSource;
  /** Counts over the SLO's window and over each of the flight's windows. */
  window: Counts;
  byWindow: Map<number, Counts>;
}

export class SloEvaluator {
  private readonly rollups: SloRollups;
  /** Per SLO: the newest flight (running or waiting) and the one waiting to start, if any. */
  private readonly flights = new Map<string, { last: Promise<FlightResult>; waiting?: Flight }>();

  constructor(
    private readonly store: ConfigStore,
    private readonly events: EventStore,
    /**
     * Several nodes on one store: a refresh reads the rollup state and writes it back, so one node
     * at a time refreshes an SLO (a lease, `slo_rollups:<id>`); alone, or where rollups keep no
     * state (ClickHouse), no lease.
     */
    private readonly shared?: Pick<Leadership, 'claim' | 'release'>,
  ) {
    this.rollups = sloRollups(events);
  }

  /** The SLI compiled against each dataset's columns and calculated fields as they are now. */
  async compile(env: Environment, slo: SloObject): Promise<RollupSource> {
    const params: unknown[] = [];
    const bind = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    const datasets = new Map((await this.store.listDatasets(env.id)).map((d) => [d.id, d]));
    const mine = slo.body.dataset_ids.map((id) => datasets.get(id)).filter((d): d is Dataset => d !== undefined);
    const tables = await this.rollups.existingTables(mine.map((d) => tableName(d.id)));
    const parts: RollupSource['parts'] = [];
    for (const ds of mine) {
      if (!tables.has(tableName(ds.id))) continue;
      const info = await this.resolveSli(env, ds, slo.body.sli.alias, bind);
      if (!info || info.type === 'null') continue;
      parts.push({ table: tableName(ds.id), sql: info.type === 'boolean' ? info.sql : this.events.dialect.tryCast(info.sql, 'boolean') });
    }
    const fingerprint = createHash('sha256')
      .update(JSON.stringify({ parts, params, ids: slo.body.dataset_ids, reset: slo.body.reset_at }))
      .digest('hex');
    return { parts, params, fingerprint };
  }

  /** The SLI's SQL and type in one dataset; undefined when the alias is not a field there (or no longer compiles). */
  async resolveSli(env: Environment, ds: Dataset, alias: string, bind: (v: unknown) => string) {
    const calculated = await calculatedFieldsOf(this.store, env, ds);
    if (!calculated.some((c) => c.name === alias)) return undefined;
    const d = this.events.dialect;
    const scope = new FieldScope({
      dialect: d,
      columns: columnSources(d, await this.store.listColumns(ds.id)),
      calculated,
      eventTimeSql: d.quoteIdent(TIME_COLUMN),
      ingestTimeSql: d.quoteIdent(INGESTED_COLUMN),
      bind,
    });
    try {
      return scope.resolve(alias);
    } catch {
      return undefined;
    }
  }

  /** First microsecond of the SLO's window at `nowMs`: its first minute, or reset_at if later. */
  windowStartUs(slo: SloBody, nowMs: number): number {
    const minute = Math.floor(nowMs / 60_000);
    const first = (minute - slo.time_period_days * MINUTES_PER_DAY + 1) * MINUTE_US;
    const reset = slo.reset_at ? Date.parse(slo.reset_at) * 1000 : -Infinity;
    return Math.max(first, reset, 0);
  }

  /**
   * Refreshes the SLO's rollups to `nowMs` or later (joining the refresh that waits to start, if
   * there is one) and counts its window and `windows` (minutes back from the refresh's now).
   */
  private fly(env: Environment, slo: SloObject, nowMs: number, windows: number[]): Promise<FlightResult> {
    const slot = this.flights.get(slo.id);
    const waiting = slot?.waiting;
    if (waiting) {
      waiting.env = env;
      if (slo.updatedAt >= waiting.slo.updatedAt) waiting.slo = slo;
      waiting.nowMs = Math.max(waiting.nowMs, nowMs);
      for (const w of windows) waiting.windows.add(w);
      return waiting.result;
    }
    const flight = { env, slo, nowMs, windows: new Set(windows) } as Flight;
    const start = () => {
      const current = this.flights.get(slo.id);
      if (current?.waiting === flight) current.waiting = undefined;
      return this.refresh(flight);
    };
    flight.result = slot ? slot.last.then(start, start) : start();
    this.flights.set(slo.id, { last: flight.result, waiting: slot ? flight : undefined });
    const settled = () => {
      if (this.flights.get(slo.id)?.last === flight.result) this.flights.delete(slo.id);
    };
    flight.result.then(settled, settled);
    return flight.result;
  }

  private async refresh(flight: Flight): Promise<FlightResult> {
    const { env, slo, nowMs } = flight;
    const source = await this.compile(env, slo);
    const minute = Math.floor(nowMs / 60_000);
    const startUs = this.windowStartUs(slo.body, nowMs);
    const windows = [...flight.windows];
    const refresh = () =>
      this.rollups.refresh({
        sloId: slo.id,
        source,
        startUs,
        nowUs: nowMs * 1000,
        fromMinutes: [Math.floor(startUs / MINUTE_US), ...windows.map((n) => minute - n + 1)],
      });
    const { counts } = await (this.shared && this.rollups.stateful ? withLease(this.shared, `slo_rollups:${slo.id}`, refresh) : refresh());
    return { nowMs, slo, source, window: counts[0], byWindow: new Map(windows.map((n, i) => [n, counts[i + 1]])) };
  }

  /**
   * The SLO's figures, from its rollups refreshed to `nowMs` (or a little later, when the
   * refresh it joins was asked for later); `extraMinutes`: more windows (minutes back) to count.
   */
  async evaluate(env: Environment, slo: SloObject, nowMs: number, extraMinutes: number[] = []): Promise<{ figures: SloFigures; extra: Counts[] }> {
    const r = await this.fly(env, slo, nowMs, [BURN_RATE_MINUTES, ...extraMinutes]);
    const minute = Math.floor(r.nowMs / 60_000);
    const firstMinute = Math.floor(this.windowStartUs(r.slo.body, r.nowMs) / MINUTE_US);
    const maths = sloMaths(r.slo.body, r.window, r.byWindow.get(BURN_RATE_MINUTES)!);
    return { figures: { ...r.window, ...maths, minute, firstMinute }, extra: extraMinutes.map((n) => r.byWindow.get(n)!) };
  }

  /** Drops the SLO's rollups (the SLO is gone), after the refreshes under way. */
  async forget(sloId: string): Promise<void> {
    await this.flights.get(sloId)?.last.catch(() => undefined);
    await this.rollups.forget(sloId);
  }

  /** Drops rollups of SLOs that no longer exist (deleted with their dataset or environment); not those being refreshed. */
  collectGarbage(liveIds: Set<string>): Promise<void> {
    return this.rollups.collectGarbage(new Set([...liveIds, ...this.flights.keys()]));
  }

  /**
   * The SLO's figures at each of `ends` (Unix seconds, not after `nowMs`): for each end T, the
   * window of whole minutes before T (time_period_days long, from reset_at's minute on when T is
   * after the reset). Used by the history report. Its range may reach before the rollups: the
   * minutes they hold (refreshed first) are read from them, earlier ones from raw events.
   */
  async history(env: Environment, slo: SloObject, ends: number[], nowMs: number): Promise<(Counts & { end: number })[]> {
    if (ends.length === 0) return [];
    const r = await this.fly(env, slo, nowMs, []);
    const period = slo.body.time_period_days * MINUTES_PER_DAY;
    const resetMs = slo.body.reset_at ? Date.parse(slo.body.reset_at) : undefined;
    const windows = ends.map((end) => {
      const hi = Math.floor(end / 60);
      let lo = hi - period;
      if (resetMs !== undefined && end * 1000 > resetMs) lo = Math.max(lo, Math.floor(resetMs / 60_000));
      return { lo, hi };
    });
    const counts = await this.rollups.windowCounts(slo.id, r.source, windows);
    return ends.map((end, i) => ({ end, ...counts[i] }));
  }
}
