// The event-engine seam. An event engine is a storage (EventStore: tables per dataset, append,
// durable commit, drop, retention, read-only SQL) and the SQL dialect the planner, the
// calculated-field compiler, service maps, SLO rollups and signals write in. Each engine lives in
// `<engine>-<role>.ts` files in this folder: its store, its dialect (the expressions below), its
// statements (statements.ts: `-query.ts`, `-bubbleup.ts`, `-service-map.ts`) and its SLO rollups
// (behind slo-rollups.ts); nothing outside this folder names an engine. Code elsewhere reaches
// the dialect through `events.dialect`. Signals' statistics are plain SQL in the dialect; the
// calculated-field compiler's functions are `dialect.expr`. docs/clickhouse.md.
import type { ColumnType } from '../config/types.js';

/** Columns every dataset table has, before the field columns. */
export const TIME_COLUMN = '__time';
export const SAMPLERATE_COLUMN = '__samplerate';
export const INGESTED_COLUMN = '__ingested';
/** The table column (DuckDB) or pair of columns (ClickHouse: `_k`, `_v`) of an attribute bucket (placement.ts). */
export const attributeBucket = (bucket: number): string => `__a${Math.trunc(bucket)}`;
/** Whether a table column is one of Waggle's own (fixed columns, attribute buckets), not a field's. */
export const isOwnColumn = (name: string): boolean => name.startsWith('__');
/** A minute in microseconds (SLO rollups count per minute of event time). */
export const MINUTE_US = 60_000_000;

/**
 * The SQL expressions an engine speaks (its statements: EngineDialect, statements.ts). Every method returns a SQL fragment; arguments named `expr` are SQL
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
  /**
   * A stored column read as the type queries see it (`asType`), NULL where a value does not
   * convert. `stored` is the registry's stored type; the table's own type may be wider for a
   * moment while the column widens (the table changes first), so an engine that relies on it
   * can at worst fail that query, never answer wrongly.
   */
  readColumn(column: string, stored: ColumnType, asType: ColumnType): string;
  /**
   * An attribute's value (placement.ts) as the given type: NULL where the event has no such
   * attribute or its text does not convert. `bucket` and `key` are the planner's own numbers.
   */
  attribute(bucket: number, key: number, t: ColumnType): string;
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
   * bucket(v') for every value, so a weighted percentile's bucket can be found first and only
   * that bucket's events sorted (duckdb-query.ts). About 150 buckets cover 0.1 to 20,000.
   */
  monotoneBucket(expr: string): string;
  /** The calculated-field compiler's functions (src/query/expr/compile.ts). */
  expr: ExprFunctions;

  // --- For anomaly signals (src/jobs/signals.ts); their statistics are otherwise plain SQL both engines run.
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

/**
 * What the calculated-field compiler writes in the engine's own SQL: each method gives the same
 * value on every engine (docs/calculated-fields.md has the semantics), NULL in, NULL out unless
 * said otherwise. Arguments are SQL the compiler built; `pattern` and `format` pieces are bound
 * placeholders or compile-time checked literals handed to `bind`.
 */
export interface ExprFunctions {
  /** A bound literal (a placeholder) as a value of the type. */
  literal(placeholder: string, t: ColumnType): string;
  /** `body`, in which `name` stands for the value of `value` (computed once). */
  share(name: string, value: string, body: string): string;
  /** NULL when `a` equals `b`, else `a`. */
  nullIf(a: string, b: string): string;
  /** Text read as a float, surrounding spaces allowed; NULL when it is not a number. */
  parseFloat(text: string): string;
  /**
   * A value as text: integers in decimal, floats in shortest round-trip form with ".0" when whole
   * ("2.5", "3.0"), booleans "true"/"false".
   */
  text(expr: string, t: ColumnType): string;
  /** Whether two values are equal or both NULL (never NULL). */
  notDistinct(a: string, b: string): string;
  /** 64-bit integer `a op b`; NULL outside the 64-bit range (and for `%` by 0). */
  intArith(op: '-' | '*' | '%', a: string, b: string): string;
  /** The 64-bit integer sum of the parts; NULL when the sum (not a partial sum) is outside the range. */
  intSum(parts: string[]): string;
  /** Float remainder with the dividend's sign; NULL for a zero divisor. */
  floatMod(a: string, b: string): string;
  /** Smallest / largest of values of one kind, NULLs skipped (NULL when all are). */
  least(parts: string[]): string;
  greatest(parts: string[]): string;
  log10(x: string): string;
  /** A float truncated toward zero, as an integer; NULL outside the 64-bit range. */
  truncToInt(x: string): string;
  /** Cast to the integer type BUCKET computes in (wider than 64 bits where the engine has one). */
  wideInt(x: string): string;
  /** Text concatenation skipping NULLs ("" when all are NULL). */
  concat(parts: string[]): string;
  /** Unicode lower case. */
  lower(text: string): string;
  /** Length in code points, or in UTF-8 bytes. */
  length(text: string, unit: 'chars' | 'bytes'): string;
  /** RE2 regular expressions; `pattern` is a bound placeholder of a checked pattern. */
  regexMatches(text: string, pattern: string): string;
  /** The first match's first group (the whole match without groups); '' when none. */
  regexExtract(text: string, pattern: string, group: 0 | 1): string;
  regexCount(text: string, pattern: string): string;
  /** Seconds since the epoch (a float) of an ISO-8601-like text; with no zone it is UTC; NULL when unreadable. */
  parseTime(text: string): string;
  /** strftime of seconds since the epoch, UTC (`format` checked by the compiler; bind binds text). */
  formatTime(seconds: string, format: string, bind: (v: string) => string): string;
  /** A float in [0, 1), per row. */
  random(): string;
  /** The low 64 bits of the MD5 of the text, as a signed 64-bit integer. */
  md5Low64(text: string): string;
}
