// ClickHouse's SQL, in the subset both 18.16 (Debian's package) and current versions accept: no
// DateTime64 (event and ingest times are Int64 microseconds since the epoch), no boolean type
// (UInt8 1/0), every field column Nullable.
import type { ColumnType } from '../config/types.js';
import { clickhouseIdent } from './clickhouse-sql.js';
import type { SqlDialect } from './engine.js';

const SQL_TYPE: Record<ColumnType, string> = { string: 'String', integer: 'Int64', float: 'Float64', boolean: 'UInt8' };
const nullable = (t: ColumnType) => `Nullable(${SQL_TYPE[t]})`;

/** The column type a field of this type is stored as. */
export function clickhouseColumnType(t: ColumnType): string {
  return nullable(t);
}

/** The field type of a stored column type (Nullable(Int64) → integer), string when unknown. */
export function fieldTypeOf(sqlType: string): ColumnType {
  const inner = /^Nullable\((.*)\)$/.exec(sqlType)?.[1] ?? sqlType;
  return (Object.entries(SQL_TYPE).find(([, v]) => v === inner)?.[0] as ColumnType | undefined) ?? 'string';
}

export const clickhouseDialect: SqlDialect = {
  name: 'clickhouse',
  quoteIdent: clickhouseIdent,
  type: nullable,
  cast: (expr, t) => `CAST(${expr} AS ${nullable(t)})`,
  tryCast: (expr, t) => {
    // Through the text form: ClickHouse's …OrNull conversions read strings only.
    const text = `toString(${expr})`;
    switch (t) {
      case 'string':
        return `CAST(${expr} AS Nullable(String))`;
      case 'integer':
        return `toInt64OrNull(${text})`;
      case 'float':
        return `toFloat64OrNull(${text})`;
      case 'boolean':
        return `multiIf(${text} IN ('true', '1'), toNullable(toUInt8(1)), ${text} IN ('false', '0'), toNullable(toUInt8(0)), CAST(NULL AS Nullable(UInt8)))`;
    }
  },
  nullOf: (t) => `CAST(NULL AS ${nullable(t)})`,
  timestamp: (us) => `toInt64(${Math.trunc(us)})`,
  epochUs: (expr) => expr,
  epochSeconds: (expr) => `(${expr} / 1000000)`,
  boolToInt: (expr) => `CAST(${expr} AS Nullable(Int64))`,
  startsWith: (text, part) => `startsWith(${text}, ${part})`,
  endsWith: (text, part) => `endsWith(${text}, ${part})`,
  contains: (text, part) => `(position(${text}, ${part}) > 0)`,
  intDiv: (a, b) => `intDiv(${a}, ${b})`,
  bool: (b) => (b ? '1' : '0'),
  // As DuckDB's (duckdb-dialect.ts); the nested plan ClickHouse runs does not use it today.
  monotoneBucket: (v) => `if(${v} < 0, -floor(sqrt(sqrt(-${v})) * 16), floor(sqrt(sqrt(${v})) * 16))`,
  nullTime: () => 'CAST(NULL AS Nullable(Int64))',
  // (18.16 has no trim.)
  trimSpaces: (text) => `replaceRegexpAll(${text}, '^ +| +$', '')`,
  nested: {
    nullSafeEq: (a, b) => `((${a} IS NULL AND ${b} IS NULL) OR coalesce(${a} = ${b}, 0))`,
    countDistinct: (expr) => `uniqExact(${expr})`,
    // (groupArray skips NULLs, so value and weight travel together as a tuple, filtered after.)
    sortedWeighted: (value, weight) =>
      `arraySort(x -> x.1, arrayMap(x -> (assumeNotNull(x.1), x.2), arrayFilter(x -> isNotNull(x.1), groupArray((${value}, toInt64(${weight}))))))`,
    nearestRank: (c, k) =>
      `if(length(${c}) = 0, NULL, arrayElement(arrayMap(x -> x.1, ${c}), ` +
      `arrayFirstIndex(s -> s * 1000 >= ${Math.trunc(k)} * arraySum(arrayMap(x -> x.2, ${c})), arrayCumSum(arrayMap(x -> x.2, ${c})))))`,
    heatmapCells: (c, nullableLo, nullableWidth, buckets) => {
      // (Non-NULL wherever the collection has values; lambdas must return UInt8, not Nullable.)
      const lo = `assumeNotNull(${nullableLo})`;
      const width = `assumeNotNull(${nullableWidth})`;
      const cell = (x: string) => `least(floor((${x} - ${lo}) / ${width}), ${buckets - 1})`;
      const count = `arraySum(arrayMap(x -> if(${cell('x.1')} = i, x.2, 0), ${c}))`;
      const json = `concat('{"lower":', toString(${lo} + i * ${width}), ',"upper":', toString(${lo} + (i + 1) * ${width}), ',"count":', toString(${count}), '}')`;
      const present = `arrayFilter(i -> arrayExists(x -> ${cell('x.1')} = i, ${c}), range(${buckets}))`;
      return `if(length(${c}) = 0, NULL, concat('[', arrayStringConcat(arrayMap(i -> ${json}, ${present}), ','), ']'))`;
    },
  },
};
