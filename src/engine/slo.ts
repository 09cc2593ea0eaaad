// SLO maths over real events, and the per-minute rollups that keep it cheap.
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
// Rollups: per SLO, a DuckDB table `slo_rollup_<hex id>` (minute, good, bad) holds the weighted
// counts per minute of the SLO's window, and `slo_rollup_state` one row per SLO: a fingerprint of
// what the counts were computed from (the SLI's SQL per dataset, with the columns and calculated
// fields as they are now, the datasets, reset_at), the start of what is covered and `through`,
// the time of the last refresh. A refresh at `now`:
//   - fingerprint changed (SLI expression or its fields, columns, datasets, reset), the window
//     reaching before what is covered (a longer time_period_days), or the clock behind `through`:
//     drop and rebuild the window from raw events;
//   - otherwise re-aggregate from min(the minute of `through`, now − LATE_MINUTES) to now
//     (late-arriving events of the last minutes), and further back only if events *ingested*
//     since the last refresh (`__ingested` ≥ through − INGEST_MARGIN) carry older times (a
//     backfill): then from the oldest such minute. Minutes that fell out of the window are pruned.
// Everything of one refresh (deletes, the insert, the state row) is one transaction, so rollups and
// their state never disagree. Each statement reads the dataset tables with the window's `__time`
// range, so DuckDB skips row groups by their min/max; the ingest-time check is pruned the same way
// by `__ingested`.
import { createHash } from 'node:crypto';
import type { ConfigStore, Dataset, Environment, StoredObject } from '../stores/config/types.js';
import { quoteIdent, tableName, type EventStore } from '../stores/events/types.js';
import { INGESTED_COLUMN, SAMPLERATE_COLUMN, TIME_COLUMN } from '../stores/events/duckdb.js';
import { FieldScope, columnSources } from '../query/fields.js';
import { calculatedFieldsOf } from '../query/sources.js';
import type { Tag } from '../domain/tags.js';

export const SLO_KIND = 'slo';
export const MINUTE_US = 60_000_000;
export const MINUTES_PER_DAY = 1440;
/** Minutes re-aggregated on every refresh, for events that arrive a little late. */
export const LATE_MINUTES = 10;
/** How far before the last refresh an ingest time still counts as "since then" (commits in flight). */
const INGEST_MARGIN_US = 5 * MINUTE_US;
/** Burn rate window of the detailed SLO answer (Honeycomb: the last 4 hours). */
export const BURN_RATE_MINUTES = 240;
/** Changes whenever the rollup table's meaning changes, so old rollups are rebuilt. */
const ROLLUP_VERSION = 1;
const STATE_TABLE = 'slo_rollup_state';

export interface SloBody {
  name: string;
  description: string;
  sli: { alias: string };
  time_period_days: number;
  target_per_million: number;
  tags: Tag[];
  /** Ids of the datasets (slugs are looked up when answering). */
  dataset_ids: string[];
  reset_at: string | null;
}
export type SloObject = StoredObject<SloBody>;

/** Objects of kind `slo` written by something else (old tests, hand edits) are skipped. */
export function isSlo(o: StoredObject<unknown>): o is SloObject {
  const b = o.body as Partial<SloBody> | null;
  return (
    !!b &&
    typeof b.sli?.alias === 'string' &&
    Number.isInteger(b.time_period_days) &&
    Number.isInteger(b.target_per_million) &&
    Array.isArray(b.dataset_ids)
  );
}

export interface Counts {
  good: number;
  bad: number;
}

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

const timestampSql = (us: number) => `make_timestamp(${Math.trunc(us)}::BIGINT)`;
const T = quoteIdent(TIME_COLUMN);
const W = quoteIdent(SAMPLERATE_COLUMN);
const I = quoteIdent(INGESTED_COLUMN);

/** The rollup table of an SLO. Ids are alphanumeric but DuckDB names are case-insensitive: hex keeps them apart. */
export function rollupTable(sloId: string): string {
  return quoteIdent(`slo_rollup_${Buffer.from(sloId, 'utf8').toString('hex')}`);
}

interface CompiledSli {
  /** Per dataset with a table and the SLI visible: the table and the SQL of the SLI as a boolean. */
  parts: { table: string; sql: string }[];
  params: unknown[];
  fingerprint: string;
}

export class SloEngine {
  private stateReady?: Promise<unknown>;
  /** Refreshes in progress per SLO: one at a time each. */
  private readonly refreshing = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: ConfigStore,
    private readonly events: EventStore,
  ) {}

  private ensureState(): Promise<unknown> {
    this.stateReady ??= this.events
      .execute([{ sql: `CREATE TABLE IF NOT EXISTS ${STATE_TABLE} (slo_id VARCHAR, fingerprint VARCHAR, start_us BIGINT, through_us BIGINT)` }])
      .catch((err) => {
        this.stateReady = undefined;
        throw err;
      });
    return this.stateReady;
  }

  /** The SLI compiled against each dataset's columns and calculated fields as they are now. */
  async compile(env: Environment, slo: SloObject): Promise<CompiledSli> {
    const params: unknown[] = [];
    const bind = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    const datasets = new Map((await this.store.listDatasets(env.id)).map((d) => [d.id, d]));
    const tables = await this.existingTables();
    const parts: CompiledSli['parts'] = [];
    for (const id of slo.body.dataset_ids) {
      const ds = datasets.get(id);
      if (!ds || !tables.has(tableName(ds.id))) continue;
      const info = await this.resolveSli(env, ds, slo.body.sli.alias, bind);
      if (!info || info.type === 'null') continue;
      parts.push({ table: tableName(ds.id), sql: info.type === 'boolean' ? info.sql : `TRY_CAST(${info.sql} AS BOOLEAN)` });
    }
    const fingerprint = createHash('sha256')
      .update(JSON.stringify({ v: ROLLUP_VERSION, parts, params, ids: slo.body.dataset_ids, reset: slo.body.reset_at }))
      .digest('hex');
    return { parts, params, fingerprint };
  }

  /** The SLI's SQL and type in one dataset; undefined when the alias is not a field there (or no longer compiles). */
  async resolveSli(env: Environment, ds: Dataset, alias: string, bind: (v: unknown) => string) {
    const calculated = await calculatedFieldsOf(this.store, env, ds);
    if (!calculated.some((c) => c.name === alias)) return undefined;
    const scope = new FieldScope({
      columns: columnSources(await this.store.listColumns(ds.id)),
      calculated,
      eventTimeSql: T,
      ingestTimeSql: I,
      bind,
    });
    try {
      return scope.resolve(alias);
    } catch {
      return undefined;
    }
  }

  private async existingTables(): Promise<Set<string>> {
    const rows = await this.events.query(`SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'ds\\_%' ESCAPE '\\'`);
    return new Set(rows.map((r) => String(r.table_name)));
  }

  /** Per-minute weighted good and bad counts of events in [fromUs, toUs), one SELECT per dataset. */
  private minuteCountsSql(compiled: CompiledSli, fromUs: number, toUs: number): string {
    const selects = compiled.parts.map(
      (p) =>
        `SELECT epoch_us(${T}) // ${MINUTE_US} AS minute, ` +
        `sum(CASE WHEN s THEN w ELSE 0 END) AS good, sum(CASE WHEN s THEN 0 ELSE w END) AS bad ` +
        `FROM (SELECT ${T}, ${W} AS w, (${p.sql}) AS s FROM ${quoteIdent(p.table)} ` +
        `WHERE ${T} >= ${timestampSql(fromUs)} AND ${T} < ${timestampSql(toUs)}) WHERE s IS NOT NULL GROUP BY minute`,
    );
    return `SELECT minute, sum(good)::BIGINT AS good, sum(bad)::BIGINT AS bad FROM (\n${selects.join('\nUNION ALL\n')}\n) GROUP BY minute`;
  }

  /** Brings the SLO's rollups up to `nowMs` (see the header). */
  refresh(env: Environment, slo: SloObject, nowMs: number): Promise<void> {
    const previous = this.refreshing.get(slo.id) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(() => this.refreshNow(env, slo, nowMs));
    const tracked = run.finally(() => {
      if (this.refreshing.get(slo.id) === tracked) this.refreshing.delete(slo.id);
    });
    this.refreshing.set(slo.id, tracked.catch(() => undefined));
    return run;
  }

  private async refreshNow(env: Environment, slo: SloObject, nowMs: number): Promise<void> {
    await this.ensureState();
    const compiled = await this.compile(env, slo);
    const nowUs = nowMs * 1000;
    const lowerUs = this.windowStartUs(slo.body, nowMs);
    const table = rollupTable(slo.id);
    const rows = await this.events.query(`SELECT fingerprint, start_us, through_us FROM ${STATE_TABLE} WHERE slo_id = ?`, [slo.id]);
    const state = rows[0] ? { fingerprint: String(rows[0].fingerprint), start: Number(rows[0].start_us), through: Number(rows[0].through_us) } : undefined;
    const statements: { sql: string; params?: unknown[] }[] = [];
    let fromUs: number;
    let startUs: number;
    if (!state || state.fingerprint !== compiled.fingerprint || state.start > lowerUs || state.through > nowUs) {
      statements.push({ sql: `DROP TABLE IF EXISTS ${table}` }, { sql: `CREATE TABLE ${table} (minute BIGINT, good BIGINT, bad BIGINT)` });
      fromUs = startUs = lowerUs;
    } else {
      startUs = Math.max(state.start, lowerUs);
      const minute = Math.floor(nowUs / MINUTE_US);
      let from = Math.min(Math.floor(state.through / MINUTE_US) * MINUTE_US, (minute - LATE_MINUTES) * MINUTE_US);
      if (from > startUs) {
        const late = await this.oldestIngestedSince(compiled, state.through - INGEST_MARGIN_US, startUs, from);
        if (late !== undefined) from = Math.min(from, Math.floor(late / MINUTE_US) * MINUTE_US);
      }
      fromUs = Math.max(from, startUs);
      statements.push(
        { sql: `DELETE FROM ${table} WHERE minute >= ${Math.floor(fromUs / MINUTE_US)}` },
        { sql: `DELETE FROM ${table} WHERE minute < ${Math.floor(startUs / MINUTE_US)}` },
      );
    }
    if (compiled.parts.length > 0 && fromUs < nowUs) {
      statements.push({
        sql: `INSERT INTO ${table} (minute, good, bad) ${this.minuteCountsSql(compiled, fromUs, nowUs)}`,
        params: compiled.params,
      });
    }
    statements.push(
      { sql: `DELETE FROM ${STATE_TABLE} WHERE slo_id = $1`, params: [slo.id] },
      { sql: `INSERT INTO ${STATE_TABLE} VALUES ($1, $2, $3, $4)`, params: [slo.id, compiled.fingerprint, Math.trunc(startUs), Math.trunc(nowUs)] },
    );
    await this.events.execute(statements);
  }

  /** The earliest event time in [fromUs, beforeUs) among events ingested at or after `sinceUs`. */
  private async oldestIngestedSince(compiled: CompiledSli, sinceUs: number, fromUs: number, beforeUs: number): Promise<number | undefined> {
    if (compiled.parts.length === 0) return undefined;
    const selects = compiled.parts.map(
      (p) =>
        `SELECT min(epoch_us(${T})) AS t FROM ${quoteIdent(p.table)} WHERE ${I} >= ${timestampSql(sinceUs)} ` +
        `AND ${T} >= ${timestampSql(fromUs)} AND ${T} < ${timestampSql(beforeUs)}`,
    );
    const rows = await this.events.query(`SELECT min(t) AS t FROM (${selects.join(' UNION ALL ')})`);
    const t = rows[0]?.t;
    return t === null || t === undefined ? undefined : Number(t);
  }

  /** First microsecond of the SLO's window at `nowMs`: its first minute, or reset_at if later. */
  windowStartUs(slo: SloBody, nowMs: number): number {
    const minute = Math.floor(nowMs / 60_000);
    const first = (minute - slo.time_period_days * MINUTES_PER_DAY + 1) * MINUTE_US;
    const reset = slo.reset_at ? Date.parse(slo.reset_at) * 1000 : -Infinity;
    return Math.max(first, reset, 0);
  }

  /**
   * Weighted counts from the rollups over minutes `from` … the current one, for each `from`
   * (never before the SLO's window). Call refresh first.
   */
  async countsSince(slo: SloObject, nowMs: number, fromMinutes: number[]): Promise<Counts[]> {
    const first = Math.floor(this.windowStartUs(slo.body, nowMs) / MINUTE_US);
    const last = Math.floor(nowMs / 60_000);
    if (fromMinutes.length === 0) return [];
    const cols = fromMinutes.map((m, i) => {
      const from = Math.max(Math.trunc(m), first);
      return `sum(good) FILTER (WHERE minute >= ${from}) AS g${i}, sum(bad) FILTER (WHERE minute >= ${from}) AS b${i}`;
    });
    const rows = await this.events.query(`SELECT ${cols.join(', ')} FROM ${rollupTable(slo.id)} WHERE minute <= ${last}`);
    const r = rows[0] ?? {};
    return fromMinutes.map((_, i) => ({ good: Number(r[`g${i}`] ?? 0), bad: Number(r[`b${i}`] ?? 0) }));
  }

  /** Refreshes the rollups and answers the SLO's figures at `nowMs`; `extra`: more windows (minutes back) to count. */
  async evaluate(env: Environment, slo: SloObject, nowMs: number, extraMinutes: number[] = []): Promise<{ figures: SloFigures; extra: Counts[] }> {
    await this.refresh(env, slo, nowMs);
    const minute = Math.floor(nowMs / 60_000);
    const firstMinute = Math.floor(this.windowStartUs(slo.body, nowMs) / MINUTE_US);
    const [window, last4h, ...extra] = await this.countsSince(slo, nowMs, [
      firstMinute,
      minute - BURN_RATE_MINUTES + 1,
      ...extraMinutes.map((n) => minute - n + 1),
    ]);
    const maths = sloMaths(slo.body, window, last4h);
    return { figures: { ...window, ...maths, minute, firstMinute }, extra };
  }

  /** Drops the SLO's rollups (the SLO is gone). */
  async forget(sloId: string): Promise<void> {
    await this.ensureState();
    await this.events.execute([
      { sql: `DROP TABLE IF EXISTS ${rollupTable(sloId)}` },
      { sql: `DELETE FROM ${STATE_TABLE} WHERE slo_id = $1`, params: [sloId] },
    ]);
  }

  /** Drops rollups of SLOs that no longer exist (deleted with their dataset or environment). */
  async collectGarbage(liveIds: Set<string>): Promise<void> {
    // Nothing to collect (and no table to create) in an event store that never had an SLO.
    const exists = await this.events.query(`SELECT 1 FROM information_schema.tables WHERE table_name = '${STATE_TABLE}'`);
    if (exists.length === 0) return;
    const rows = await this.events.query(`SELECT slo_id FROM ${STATE_TABLE}`);
    for (const r of rows) {
      const id = String(r.slo_id);
      if (!liveIds.has(id)) await this.forget(id);
    }
  }

  /**
   * The SLO's figures at each of `ends` (Unix seconds), from raw events: for each end T, the
   * window of whole minutes before T (time_period_days long, from reset_at's minute on when T is
   * after the reset). Used by the history report, whose range may reach before the rollups.
   */
  async history(env: Environment, slo: SloObject, ends: number[]): Promise<(Counts & { end: number })[]> {
    if (ends.length === 0) return [];
    const compiled = await this.compile(env, slo);
    const period = slo.body.time_period_days * MINUTES_PER_DAY;
    const resetMs = slo.body.reset_at ? Date.parse(slo.body.reset_at) : undefined;
    const windows = ends.map((end) => {
      const hi = Math.floor(end / 60);
      let lo = hi - period;
      if (resetMs !== undefined && end * 1000 > resetMs) lo = Math.max(lo, Math.floor(resetMs / 60_000));
      return { end, lo, hi };
    });
    if (compiled.parts.length === 0) return windows.map((w) => ({ end: w.end, good: 0, bad: 0 }));
    const fromUs = Math.max(0, Math.min(...windows.map((w) => w.lo))) * MINUTE_US;
    const toUs = Math.max(...windows.map((w) => w.hi)) * MINUTE_US;
    const list = (xs: number[]) => `[${xs.map((x) => Math.trunc(x)).join(', ')}]::BIGINT[]`;
    const sql =
      `WITH m AS (${this.minuteCountsSql(compiled, fromUs, toUs)}),\n` +
      `e AS (SELECT unnest(${list(windows.map((w) => w.end))}) AS e, unnest(${list(windows.map((w) => w.lo))}) AS lo, unnest(${list(windows.map((w) => w.hi))}) AS hi)\n` +
      `SELECT e.e AS e, coalesce(sum(m.good), 0) AS good, coalesce(sum(m.bad), 0) AS bad FROM e LEFT JOIN m ON m.minute >= e.lo AND m.minute < e.hi GROUP BY e.e ORDER BY e.e`;
    const rows = await this.events.query(sql, compiled.params);
    const byEnd = new Map(rows.map((r) => [Number(r.e), { good: Number(r.good), bad: Number(r.bad) }]));
    return windows.map((w) => ({ end: w.end, ...(byEnd.get(w.end) ?? { good: 0, bad: 0 }) }));
  }
}
