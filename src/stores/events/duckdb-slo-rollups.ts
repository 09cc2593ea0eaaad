// SLO rollups on DuckDB: the tables the event store keeps for SLOs (the maths is in
// src/jobs/slo.ts; the interface in slo-rollups.ts).
//
// Per SLO, a table `slo_rollup_<hex id>` (minute PRIMARY KEY, good, bad) holds the weighted good
// and bad counts per minute of the events in a span [start, through) of event time that were
// ingested before `ingested_below` (their `__ingested`), and `slo_rollup_state` one row per SLO
// with those three bounds and a fingerprint of what the counts were computed from (the SLI's SQL
// per dataset table, its parameters; made by the engine).
//
// Why an ingest-time bound: the event store gives every append transaction an ingest time later
// than the one before, and commits them in that order (duckdb.ts, nextIngestedUs). So once a
// reader sees an event ingested at i, every event ingested before i is there to see, and none
// will come later: "ingested before the newest ingest time seen, plus 1 µs" is an exact cut.
//
// A refresh to [start′, now) and ingested_below W′ (the newest ingest time in the SLO's tables,
// plus 1 µs; found by reading only what was ingested since W, which DuckDB's min/max row-group
// statistics make cheap) changes the counts by what is in the new set and not the old, and back:
//   + events ingested in [W, W′) with times the rollups covered already (late events, backfills);
//   + events ingested before W′ with times in [through, now) (time has moved on);
//   + events ingested before W′ with times in [start′, start) (a longer period);
//   − events ingested before W with times in [now, through) (a clock that went back);
//   and the minutes before start′ are dropped (the window moved on).
// Each of these reads the dataset tables within a literal range of `__time` or `__ingested`, so
// DuckDB skips every row group outside it: the cost follows the events that are new to the
// rollups, not the events the window holds. A new SLO, or one whose fingerprint changed (its SLI,
// the fields it reads, its datasets, a reset), starts from an empty set: one aggregation over its
// window. The changes of one refresh (the upsert of the changed minutes, the pruning, the state
// row) are one transaction, so rollups and state never disagree.
import type { EventStore } from './types.js';
import { INGESTED_COLUMN, MINUTE_US, SAMPLERATE_COLUMN, TIME_COLUMN } from './engine.js';
import { duckdbDialect } from './duckdb-dialect.js';
import type { Counts, Refreshed, RefreshRequest, RollupSource, SloRollups } from './slo-rollups.js';

const quoteIdent = duckdbDialect.quoteIdent;

/** Changes whenever what a rollup table holds changes, so rollups made before are rebuilt. */
const ROLLUP_VERSION = 2;
const STATE_TABLE = 'slo_rollup_state';

const T = quoteIdent(TIME_COLUMN);
const W = quoteIdent(SAMPLERATE_COLUMN);
const I = quoteIdent(INGESTED_COLUMN);
const timestampSql = (us: number) => `make_timestamp(${Math.trunc(us)}::BIGINT)`;

interface State {
  fingerprint: string;
  startUs: number;
  throughUs: number;
  ingestedBelowUs: number;
}

/** The rollup table of an SLO. Ids are alphanumeric but DuckDB names are case-insensitive: hex keeps them apart. */
export function rollupTable(sloId: string): string {
  return quoteIdent(`slo_rollup_${Buffer.from(sloId, 'utf8').toString('hex')}`);
}

/** A span of event times and ingest times to count, with a sign (−1 takes counts away). */
interface Span {
  fromUs: number;
  toUs: number;
  ingestedFromUs?: number;
  ingestedBelowUs?: number;
  sign: 1 | -1;
}

export class DuckDbSloRollups implements SloRollups {
  readonly stateful = true;
  private stateReady?: Promise<unknown>;

  constructor(private readonly events: EventStore) {}

  private ensureState(): Promise<unknown> {
    this.stateReady ??= this.events
      .execute([
        { sql: `CREATE TABLE IF NOT EXISTS ${STATE_TABLE} (slo_id VARCHAR, fingerprint VARCHAR, start_us BIGINT, through_us BIGINT)` },
        // Added with the incremental refresh; rows from before have none and are rebuilt.
        { sql: `ALTER TABLE ${STATE_TABLE} ADD COLUMN IF NOT EXISTS ingested_below_us BIGINT` },
      ])
      .catch((err) => {
        this.stateReady = undefined;
        throw err;
      });
    return this.stateReady;
  }

  /** The dataset tables that exist, of those named. */
  async existingTables(names: string[]): Promise<Set<string>> {
    if (names.length === 0) return new Set();
    const rows = await this.events.query(
      `SELECT table_name FROM duckdb_tables() WHERE table_name IN (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
      names,
    );
    return new Set(rows.map((r) => String(r.table_name)));
  }

  private async state(sloId: string): Promise<State | undefined> {
    const rows = await this.events.query(`SELECT fingerprint, start_us, through_us, ingested_below_us FROM ${STATE_TABLE} WHERE slo_id = $1`, [sloId]);
    const r = rows[0];
    if (!r || r.ingested_below_us === null || r.ingested_below_us === undefined) return undefined;
    return { fingerprint: String(r.fingerprint), startUs: Number(r.start_us), throughUs: Number(r.through_us), ingestedBelowUs: Number(r.ingested_below_us) };
  }

  /** The newest ingest time in the source's tables plus 1 µs, reading only what was ingested from `sinceUs` on; `sinceUs` if nothing was. */
  private async ingestedBelow(source: RollupSource, sinceUs: number): Promise<number> {
    if (source.parts.length === 0) return sinceUs;
    const selects = source.parts.map((p) => `SELECT max(epoch_us(${I})) AS m FROM ${quoteIdent(p.table)} WHERE ${I} >= ${timestampSql(sinceUs)}`);
    const rows = await this.events.query(`SELECT max(m) AS m FROM (${selects.join(' UNION ALL ')})`);
    const m = rows[0]?.m;
    return m === null || m === undefined ? sinceUs : Math.max(sinceUs, Number(m) + 1);
  }

  /** Per-minute weighted good and bad counts of the events in the spans, signed, summed per minute. */
  private minuteCountsSql(source: RollupSource, spans: Span[]): string {
    const selects = spans.flatMap((span) =>
      source.parts.map((p) => {
        const where = [`${T} >= ${timestampSql(span.fromUs)}`, `${T} < ${timestampSql(span.toUs)}`];
        if (span.ingestedFromUs !== undefined) where.push(`${I} >= ${timestampSql(span.ingestedFromUs)}`);
        if (span.ingestedBelowUs !== undefined) where.push(`${I} < ${timestampSql(span.ingestedBelowUs)}`);
        return (
          `SELECT epoch_us(${T}) // ${MINUTE_US} AS minute, ` +
          `${span.sign} * sum(CASE WHEN s THEN w ELSE 0 END) AS good, ${span.sign} * sum(CASE WHEN s THEN 0 ELSE w END) AS bad ` +
          `FROM (SELECT ${T}, ${W} AS w, (${p.sql}) AS s FROM ${quoteIdent(p.table)} WHERE ${where.join(' AND ')}) WHERE s IS NOT NULL GROUP BY minute`
        );
      }),
    );
    return `SELECT minute, sum(good)::BIGINT AS good, sum(bad)::BIGINT AS bad FROM (\n${selects.join('\nUNION ALL\n')}\n) GROUP BY minute`;
  }

  /** Brings the SLO's rollups to the request's span (see the header) and answers its counts. */
  async refresh(req: RefreshRequest): Promise<Refreshed> {
    await this.ensureState();
    const { sloId, source, startUs, nowUs } = req;
    const table = rollupTable(sloId);
    const fingerprint = stored(source);
    const previous = await this.state(sloId);
    // Minutes are dropped whole: a start that moves forward to inside a minute (only a reset
    // does that, and it changes the fingerprint) would need that minute counted anew.
    const rebuilt =
      !previous ||
      previous.fingerprint !== fingerprint ||
      (startUs > previous.startUs && startUs % MINUTE_US !== 0);
    const old: State = rebuilt ? { fingerprint: '', startUs, throughUs: startUs, ingestedBelowUs: 0 } : previous;
    const below = await this.ingestedBelow(source, old.ingestedBelowUs);

    const spans: Span[] = [];
    const add = (span: Span) => span.fromUs < span.toUs && spans.push(span);
    if (below > old.ingestedBelowUs) {
      add({ fromUs: Math.max(old.startUs, startUs), toUs: Math.min(old.throughUs, nowUs), ingestedFromUs: old.ingestedBelowUs, ingestedBelowUs: below, sign: 1 });
    }
    add({ fromUs: Math.max(old.throughUs, startUs), toUs: nowUs, ingestedBelowUs: below, sign: 1 });
    add({ fromUs: startUs, toUs: Math.min(old.startUs, nowUs), ingestedBelowUs: below, sign: 1 });
    add({ fromUs: Math.max(nowUs, startUs), toUs: old.throughUs, ingestedBelowUs: old.ingestedBelowUs, sign: -1 });

    const statements: { sql: string; params?: unknown[] }[] = [];
    if (rebuilt) {
      statements.push({ sql: `DROP TABLE IF EXISTS ${table}` }, { sql: `CREATE TABLE ${table} (minute BIGINT PRIMARY KEY, good BIGINT NOT NULL, bad BIGINT NOT NULL)` });
    }
    if (spans.length > 0 && source.parts.length > 0) {
      statements.push({
        sql:
          `INSERT INTO ${table} (minute, good, bad) ${this.minuteCountsSql(source, spans)}\n` +
          `ON CONFLICT (minute) DO UPDATE SET good = good + excluded.good, bad = bad + excluded.bad`,
        params: source.params,
      });
    }
    if (startUs > old.startUs) statements.push({ sql: `DELETE FROM ${table} WHERE minute < ${Math.floor(startUs / MINUTE_US)}` });
    if (nowUs < old.throughUs) statements.push({ sql: `DELETE FROM ${table} WHERE good = 0 AND bad = 0` });
    statements.push(
      { sql: `DELETE FROM ${STATE_TABLE} WHERE slo_id = $1`, params: [sloId] },
      {
        sql: `INSERT INTO ${STATE_TABLE} (slo_id, fingerprint, start_us, through_us, ingested_below_us) VALUES ($1, $2, $3, $4, $5)`,
        params: [sloId, fingerprint, Math.trunc(startUs), Math.trunc(nowUs), Math.trunc(below)],
      },
    );
    // The counts, read in the same transaction.
    const first = Math.floor(startUs / MINUTE_US);
    const last = Math.floor(nowUs / MINUTE_US);
    const cols = req.fromMinutes.map((m, i) => {
      const from = Math.max(Math.trunc(m), first);
      return `sum(good) FILTER (WHERE minute >= ${from}) AS g${i}, sum(bad) FILTER (WHERE minute >= ${from}) AS b${i}`;
    });
    statements.push({ sql: `SELECT ${['0 AS none', ...cols].join(', ')} FROM ${table} WHERE minute <= ${last}` });
    const rows = await this.events.execute(statements);
    const r = rows[0] ?? {};
    return { rebuilt, counts: req.fromMinutes.map((_, i) => ({ good: Number(r[`g${i}`] ?? 0), bad: Number(r[`b${i}`] ?? 0) })) };
  }

  /**
   * For each window [lo, hi) of whole minutes, the counts of the events in it (all of them, not
   * only those ingested before a bound). The minutes the SLO's rollups hold whole (from the
   * first that starts at or after their start) are read from them when they reach to the last
   * window's end (refresh them first); minutes before, from raw events.
   */
  async windowCounts(sloId: string, source: RollupSource, windows: { lo: number; hi: number }[]): Promise<Counts[]> {
    if (windows.length === 0 || source.parts.length === 0) return windows.map(() => ({ good: 0, bad: 0 }));
    // Reduced, not spread into Math.min/max: a call's arguments live on the stack.
    const from = Math.max(0, windows.reduce((m, w) => Math.min(m, w.lo), Infinity));
    const to = windows.reduce((m, w) => Math.max(m, w.hi), -Infinity);
    const list = (xs: number[]) => `[${xs.map((x) => Math.trunc(x)).join(', ')}]::BIGINT[]`;
    const windowsSql = `SELECT unnest(${list(windows.map((_, i) => i))}) AS k, unnest(${list(windows.map((w) => w.lo))}) AS lo, unnest(${list(windows.map((w) => w.hi))}) AS hi`;
    // The rollups may change (a refresh drops the minutes that left the window) between reading
    // their state and reading them: the query reads the state again and is retried if it moved.
    for (let attempt = 0; attempt < 3; attempt++) {
      const state = await this.state(sloId);
      const usable = (s: State | undefined) => !!s && s.fingerprint === stored(source) && s.throughUs >= to * MINUTE_US;
      const covered = usable(state) ? Math.ceil(state!.startUs / MINUTE_US) : to;
      const split = Math.min(Math.max(covered, from), to);
      const parts: string[] = [];
      const params: unknown[] = [];
      if (from < split) {
        parts.push(this.minuteCountsSql(source, [{ fromUs: from * MINUTE_US, toUs: split * MINUTE_US, sign: 1 }]));
        params.push(...source.params);
      }
      let check = '';
      if (split < to) {
        parts.push(`SELECT minute, good, bad FROM ${rollupTable(sloId)} WHERE minute >= ${split} AND minute < ${to}`);
        params.push(sloId);
        const now = (col: string) => `(SELECT ${col} FROM ${STATE_TABLE} WHERE slo_id = $${params.length}) AS ${col}`;
        check = `, ${now('fingerprint')}, ${now('start_us')}, ${now('through_us')}`;
      }
      const sql =
        `WITH m AS (${parts.join('\nUNION ALL\n')}),\ne AS (${windowsSql})\n` +
        `SELECT e.k AS k, coalesce(sum(m.good), 0) AS good, coalesce(sum(m.bad), 0) AS bad${check} ` +
        `FROM e LEFT JOIN m ON m.minute >= e.lo AND m.minute < e.hi GROUP BY e.k ORDER BY e.k`;
      const rows = await this.events.query(sql, params);
      const moved = (r: Record<string, unknown>) =>
        !usable({ fingerprint: String(r.fingerprint), startUs: Number(r.start_us), throughUs: Number(r.through_us), ingestedBelowUs: 0 }) || Number(r.start_us) !== state!.startUs;
      if (split < to && rows.some(moved)) continue;
      const byWindow = new Map(rows.map((r) => [Number(r.k), { good: Number(r.good), bad: Number(r.bad) }]));
      return windows.map((_, i) => byWindow.get(i) ?? { good: 0, bad: 0 });
    }
    throw new Error('windowCounts: the rollups kept moving');
  }

  /** Drops an SLO's rollups (the SLO is gone). */
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
}

/** The fingerprint kept in the state: the source's, and the version of what a rollup table holds. */
const stored = (source: RollupSource) => `${ROLLUP_VERSION}:${source.fingerprint}`;
