// DuckDB's SQL for the planner, the calculated-field compiler and the engine's own statements.
import type { ColumnType } from '../config/types.js';
import type { SqlDialect } from './engine.js';

const SQL_TYPE: Record<ColumnType, string> = { string: 'VARCHAR', integer: 'BIGINT', float: 'DOUBLE', boolean: 'BOOLEAN' };

export const duckdbDialect: SqlDialect = {
  name: 'duckdb',
  quoteIdent: (name) => `"${name.replace(/"/g, '""')}"`,
  type: (t) => SQL_TYPE[t],
  cast: (expr, t) => `CAST(${expr} AS ${SQL_TYPE[t]})`,
  tryCast: (expr, t) => `TRY_CAST(${expr} AS ${SQL_TYPE[t]})`,
  nullOf: (t) => `CAST(NULL AS ${SQL_TYPE[t]})`,
  timestamp: (us) => `make_timestamp(${Math.trunc(us)}::BIGINT)`,
  epochUs: (expr) => `epoch_us(${expr})`,
  epochSeconds: (expr) => `epoch(${expr})`,
  boolToInt: (expr) => `CAST(${expr} AS INTEGER)`,
  startsWith: (text, part) => `starts_with(${text}, ${part})`,
  endsWith: (text, part) => `ends_with(${text}, ${part})`,
  contains: (text, part) => `contains(${text}, ${part})`,
  intDiv: (a, b) => `${a} // ${b}`,
  bool: (b) => (b ? 'true' : 'false'),
  nullTime: () => 'CAST(NULL AS TIMESTAMP)',
  // sqrt is correctly rounded (so monotone), × 16 and floor are exact: a bucket is 1/(4·v^¼) of
  // the value wide (6 % at 1, 2.5 % at 10,000). Cheaper than ln (about 0.4x a quantile_disc on
  // 10M events for ln's CASE, not exactly monotone) and exact; ±inf and NaN get buckets of their
  // own at the ends (DuckDB orders NaN last, as it orders the values).
  trimSpaces: (text) => `trim(${text})`,
  monotoneBucket: (v) => `CASE WHEN ${v} < 0 THEN -floor(sqrt(sqrt(-${v})) * 16) ELSE floor(sqrt(sqrt(${v})) * 16) END`,
};
