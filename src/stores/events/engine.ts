// The event-engine seam. An event engine is a storage (EventStore: tables per dataset, append,
// durable commit, drop, retention, read-only SQL) and the SQL dialect the planner, the
// calculated-field compiler, service maps, SLO rollups and signals write their statements in.
// Each engine lives in `<engine>-store.ts`, `<engine>-dialect.ts` and `<engine>-slo-rollups.ts`
// (how it keeps SLOs' per-minute counts, behind slo-rollups.ts) in this folder; nothing outside
// this folder names an engine. Code elsewhere reaches the dialect through `events.dialect`.
// Signals' statistics are plain SQL in the dialect. (Not yet behind the dialect: the
// calculated-field compiler's functions and BubbleUp's statements are still DuckDB SQL; on
// another engine those features answer UnsupportedByEngine or fail. docs/clickhouse.md.)
import type { ColumnType } from '../config/types.js';

/** Columns every dataset table has, before the field columns. */
export const TIME_COLUMN = '__time';
export const SAMPLERATE_COLUMN = '__samplerate';
export const INGESTED_COLUMN = '__ingested';
/** A minute in microseconds (SLO rollups count per minute of event time). */
export const MINUTE_US = 60_000_000;

/**
 * The SQL an engine speaks. Every method returns a SQL fragment; arguments named `expr` are SQL
 * the caller built (quoted identifiers, bound placeholders, the planner's own numbers), never
 * user text. User values always travel as bound parameters (`$1`, `$2`, … in the text).
 */
export interface SqlDialect {
  /** The engine's name (for logs and documentation, never for branching outside this folder). */
  readonly name: string;
  /** Quotes an identifier; every identifier goes through here. */
  quoteIdent(name: string): string;
  /** The SQL type a column of the given type is stored and read as. */
  type(t: ColumnType): string;
  /** `CAST(expr AS type)`. */
  cast(expr: string, t: ColumnType): string;
  /** A cast that gives NULL where the value does not convert. */
  tryCast(expr: string, t: ColumnType): string;
  /** A typed NULL. */
  nullOf(t: ColumnType): string;
  /** SQL of a timestamp the planner computed (microseconds since the epoch; never user text). */
  timestamp(us: number): string;
  /** Microseconds since the epoch of a timestamp expression (an integer). */
  epochUs(expr: string): string;
  /** Seconds since the epoch of a timestamp expression (a float). */
  epochSeconds(expr: string): string;
  /** A boolean as 1 or 0 (NULL stays NULL). */
  boolToInt(expr: string): string;
  /** Whether text starts with, ends with or contains another (NULL when either is NULL). */
  startsWith(text: string, part: string): string;
  endsWith(text: string, part: string): string;
  contains(text: string, part: string): string;
  /** Integer division of two integers, rounding down. */
  intDiv(a: string, b: string): string;
  /** A boolean constant. */
  bool(b: boolean): string;
  /** A NULL of the event-time type. */
  nullTime(): string;
  /**
   * A coarse bucket of a number (DOUBLE), exactly non-decreasing in it: v ≤ v' ⇒ bucket(v) ≤
   * bucket(v') for every value, so the planner can find a weighted percentile's bucket first and
   * sort only that bucket's events. About 150 buckets cover 0.1 to 20,000.
   */
  monotoneBucket(expr: string): string;
  /**
   * Present when the engine has no common table expressions nor window functions (ClickHouse
   * 18.16): the planner then writes nested subqueries, and the aggregates that need ordering
   * come from these.
   */
  nested?: NestedAggregates;

  // --- For anomaly signals (src/engine/signals.ts); their statistics are otherwise plain SQL both engines run.
  /** Text without its leading and trailing spaces (spaces only, as DuckDB's trim). */
  trimSpaces(text: string): string;
}

/** Something the event engine does not offer yet (named in the message). */
export class UnsupportedByEngine extends Error {
  constructor(what: string, engine: string) {
    super(`${what} is not supported on the ${engine} event store yet`);
    this.name = 'UnsupportedByEngine';
  }
}

export interface NestedAggregates {
  /** Whether two values are equal or both NULL (never NULL itself). */
  nullSafeEq(a: string, b: string): string;
  /** The number of distinct non-NULL values (an aggregate). */
  countDistinct(expr: string): string;
  /** An aggregate collecting the non-NULL values with their weights, sorted by value. */
  sortedWeighted(value: string, weight: string): string;
  /**
   * Over such a collection: the smallest value whose cumulative weight reaches `thousandths` /
   * 1000 of the total (exact integer comparison); NULL when it is empty.
   */
  nearestRank(collection: string, thousandths: number): string;
  /**
   * Over such a collection: HEATMAP's cells as JSON text, `[{"lower", "upper", "count"}, …]` for
   * the cells with values, in order: `buckets` cells of `width` from `lo` (the last one takes
   * everything above), counts the sum of weights; NULL when the collection is empty.
   */
  heatmapCells(collection: string, lo: string, width: string, buckets: number): string;
}
