// ClickHouse's SQL, in the subset both 18.16 (Debian's package) and current versions accept: no
// DateTime64 (event and ingest times are Int64 microseconds since the epoch), no boolean type
// (UInt8 1/0), every field column Nullable.
import type { ColumnType } from '../config/types.js';
import { clickhouseBubbleUp } from './clickhouse-bubbleup.js';
import { clickhouseQuery } from './clickhouse-query.js';
import { clickhouseServiceMap } from './clickhouse-service-map.js';
import { clickhouseBucketStates } from './clickhouse-bucket-states.js';
import { clickhouseTraces } from './clickhouse-traces.js';
import { clickhouseIdent } from './clickhouse-sql.js';
import { attributeBucket, type ExprFunctions } from './engine.js';
import type { EngineDialect } from './statements.js';

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

// ---- The calculated-field functions: the values DuckDB's give (duckdb-dialect.ts). 18.16 has
// no 128-bit integers (overflow is checked on the 64-bit result), no fmod, no trimBoth, and
// evaluates both branches of if() on every row (so no branch may throw, e.g. intDiv by 0).
const MIN_INT64 = "toInt64('-9223372036854775808')";
/** `body(x, y)` over the values of a and b, each computed once (a lambda over one-element arrays). */
let lambdas = 0;
/** A divisor that never throws: 1 where the value is 0, -1 or NULL (functions run on NULL rows' default 0 too). */
const divisor = (x: string) => `if(isNull(${x}) OR ${x} = 0 OR ${x} = -1, toInt64(1), assumeNotNull(${x}))`;
const let2 = (a: string, b: string, body: (x: string, y: string) => string) => {
  // (each lambda's own names: 18.16 mixes up nested lambdas sharing parameter names)
  const [x, y] = [`__x${++lambdas}`, `__y${lambdas}`];
  return `arrayMap((${x}, ${y}) -> ${body(x, y)}, [${a}], [${b}])[1]`;
};
const pad = (n: string, width: number) => `substring(toString(${10 ** width} + ${n}), 2)`;
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const names = (list: string[], len?: number) => `[${list.map((x) => `'${len ? x.slice(0, len) : x}'`).join(', ')}]`;

/** strftime (DuckDB's conversions, docs/calculated-fields.md) over a DateTime `t` (UTC) and its microseconds `us`. */
function strftime(t: string, us: string, format: string, bind: (v: string) => string): string {
  const hour12 = `((toHour(${t}) + 11) % 12 + 1)`;
  const yday0 = `(toDayOfYear(${t}) - 1)`;
  const wday = `(toDayOfWeek(${t}) % 7)`; // Sunday 0
  const conv: Record<string, string> = {
    a: `${names(DAYS, 3)}[toDayOfWeek(${t})]`,
    A: `${names(DAYS)}[toDayOfWeek(${t})]`,
    w: `toString(${wday})`,
    d: pad(`toDayOfMonth(${t})`, 2),
    b: `${names(MONTHS, 3)}[toMonth(${t})]`,
    B: `${names(MONTHS)}[toMonth(${t})]`,
    m: pad(`toMonth(${t})`, 2),
    y: pad(`(toYear(${t}) % 100)`, 2),
    Y: `toString(toYear(${t}))`,
    H: pad(`toHour(${t})`, 2),
    I: pad(hour12, 2),
    p: `if(toHour(${t}) < 12, 'AM', 'PM')`,
    M: pad(`toMinute(${t})`, 2),
    S: pad(`toSecond(${t})`, 2),
    f: pad(us, 6),
    g: pad(`intDiv(${us}, 1000)`, 3),
    n: `concat(${pad(us, 6)}, '000')`,
    z: "'+00'",
    Z: "''",
    j: pad(`toDayOfYear(${t})`, 3),
    U: pad(`intDiv(${yday0} + 7 - ${wday}, 7)`, 2),
    W: pad(`intDiv(${yday0} + 7 - (${wday} + 6) % 7, 7)`, 2),
    '%': "'%'",
  };
  conv.x = `concat(${conv.Y}, '-', ${conv.m}, '-', ${conv.d})`;
  conv.X = `concat(${conv.H}, ':', ${conv.M}, ':', ${conv.S})`;
  conv.c = `concat(${conv.x}, ' ', ${conv.X})`;
  const unpadded: Record<string, string> = {
    d: `toDayOfMonth(${t})`, m: `toMonth(${t})`, y: `(toYear(${t}) % 100)`, H: `toHour(${t})`,
    I: hour12, M: `toMinute(${t})`, S: `toSecond(${t})`, j: `toDayOfYear(${t})`,
  };
  const parts: string[] = [];
  let text = '';
  const flush = () => {
    if (text) parts.push(bind(text));
    text = '';
  };
  for (let i = 0; i < format.length; i++) {
    if (format[i] !== '%') {
      text += format[i];
      continue;
    }
    const c = format[++i];
    if (c === '-') {
      flush();
      parts.push(`toString(${unpadded[format[++i]]})`);
    } else if (c === '%') text += '%';
    else {
      flush();
      parts.push(conv[c]);
    }
  }
  flush();
  return `concat(${[...parts, "''", "''"].join(', ')})`;
}

const expr: ExprFunctions = {
  // Not Nullable: 18.16's coalesce() answers NULL (or crashes) with a constant Nullable argument.
  literal: (p, t) => `CAST(${p} AS ${SQL_TYPE[t]})`,
  share: (name, value, body) => `arrayMap(${name} -> ${body}, [${value}])[1]`,
  nullIf: (a, b) => `nullIf(${a}, ${b})`,
  // (toFloat64OrNull refuses surrounding spaces, which DuckDB's cast allows)
  parseFloat: (text) => `toFloat64OrNull(replaceRegexpAll(${text}, '^[[:space:]]+|[[:space:]]+$', ''))`,
  text: (e, t) => {
    switch (t) {
      case 'string':
        return e;
      case 'integer':
        return `toString(${e})`;
      case 'boolean':
        return `CASE WHEN ${e} IS NULL THEN NULL WHEN ${e} = 1 THEN 'true' ELSE 'false' END`;
      case 'float':
        // DuckDB writes a whole float below 1e16 with ".0"; above, the forms differ (1e+16 / 10000000000000000).
        return `arrayMap(__f -> if(isFinite(__f) AND __f = floor(__f) AND abs(__f) < 1e16, concat(toString(__f), '.0'), toString(__f)), [${e}])[1]`;
    }
  },
  notDistinct: (a, b) => `((${a} IS NULL AND ${b} IS NULL) OR coalesce(${a} = ${b}, 0))`,
  // The wrapped 64-bit sum, NULL when it is further than 2^62 from the float sum (it wrapped:
  // they then differ by about 2^64; the float sum's rounding error is far below 2^62).
  intSum: (parts) => {
    const a = `__a${++lambdas}`;
    const values = `arrayMap(x -> assumeNotNull(x), ${a})`;
    const wrapped = `arraySum(${values})`;
    const float = `arraySum(arrayMap(x -> toFloat64(x), ${values}))`;
    return `arrayMap(${a} -> if(arrayExists(x -> isNull(x), ${a}) OR abs(${float} - toFloat64(${wrapped})) > 4611686018427387904, NULL, ${wrapped}), [[${parts.join(', ')}]])[1]`;
  },
  intArith: (op, a, b) =>
    let2(a, b, (x, y) => {
      switch (op) {
        case '-':
          return `if((${x} >= 0) != (${y} >= 0) AND ((${x} - ${y}) >= 0) != (${x} >= 0), NULL, ${x} - ${y})`;
        case '*':
          return `if(${x} != 0 AND (intDiv(${x} * ${y}, ${divisor(x)}) != if(${x} = -1, -${y}, ${y}) OR (${x} = -1 AND ${y} = ${MIN_INT64})), NULL, ${x} * ${y})`;
        case '%':
          return `if(${x} IS NULL OR ${y} = 0, NULL, if(${y} = -1, toInt64(0), ${x} % ${divisor(y)}))`;
      }
    }),
  floatMod: (a, b) => let2(`toFloat64(${a})`, `toFloat64(${b})`, (x, y) => `if(${y} = 0, NULL, ${x} - ${y} * trunc(${x} / ${y}))`),
  // (least()/greatest() are NULL when an argument is; the aggregates skip NULLs)
  least: (parts) => `arrayReduce('min', [${parts.join(', ')}])`,
  greatest: (parts) => `arrayReduce('max', [${parts.join(', ')}])`,
  log10: (x) => `log10(${x})`,
  truncToInt: (x) => `toInt64OrNull(toString(trunc(${x})))`,
  wideInt: (x) => `CAST(${x} AS Nullable(Int64))`,
  concat: (parts) => `concat(${[...parts.map((p) => `coalesce(${p}, '')`), "''"].join(', ')})`,
  lower: (t) => `lowerUTF8(${t})`,
  length: (t, unit) => `${unit === 'bytes' ? 'length' : 'lengthUTF8'}(${t})`,
  regexMatches: (t, re) => `match(${t}, ${re})`,
  // (extract gives the first group when the pattern has one, else the whole match)
  regexExtract: (t, re) => `extract(${t}, ${re})`,
  // (an array may not be Nullable)
  regexCount: (t, re) => `if(isNull(${t}), NULL, length(extractAll(assumeNotNull(${t}), ${re})))`,
  // Dates from 1970 to 2105 (DateTime); fractions of a second read from the text.
  parseTime: (x) => {
    const text = `assumeNotNull(${x})`;
    const dt = `parseDateTimeBestEffortOrNull(${text}, 'UTC')`;
    const fraction = `toFloat64OrZero(concat('0', extract(${text}, '[0-9]:[0-9][0-9]:[0-9][0-9]([.][0-9]+)')))`;
    return `if(isNull(${x}) OR NOT match(${text}, '^[[:space:]]*[0-9]{4}-[0-9][0-9]-[0-9][0-9]') OR isNull(${dt}), NULL, toFloat64(toUInt32(assumeNotNull(${dt}))) + ${fraction})`;
  },
  formatTime: (secs, format, bind) => {
    // Microseconds rounded as DuckDB's make_timestamp; 1970 to 2105 only (DateTime), else NULL.
    const us = `toInt64(round(${secs} * 1000000))`;
    const t = `toDateTime(toUInt32(intDiv(${us}, 1000000)), 'UTC')`;
    return `if(${secs} >= 0 AND ${secs} < 4294967296, ${strftime(t, `(${us} % 1000000)`, format, bind)}, NULL)`;
  },
  random: () => '(rand() / 4294967296)',
  md5Low64: (t) => `reinterpretAsInt64(substring(MD5(${t}), 9, 8))`,
};

export const clickhouseDialect: EngineDialect = {
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
  // The safe cast goes through text (above), which on a 10M-event window costs seconds per
  // column: a column already stored as the type read, or an integer read as a float, is read
  // directly (an integer converts exactly as its text would, up to 2^53).
  readColumn: (column, stored, t) =>
    stored === t ? column : stored === 'integer' && t === 'float' ? `CAST(${column} AS Nullable(Float64))` : clickhouseDialect.tryCast(column, t),
  attribute: (bucket, key, t) => {
    const [keys, values] = [`${attributeBucket(bucket)}_k`, `${attributeBucket(bucket)}_v`];
    const k = Math.trunc(key);
    const text = `if(has(${keys}, ${k}), CAST(${values}[indexOf(${keys}, ${k})] AS Nullable(String)), CAST(NULL AS Nullable(String)))`;
    return t === 'string' ? text : clickhouseDialect.tryCast(text, t);
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
  // As DuckDB's (duckdb-dialect.ts); ClickHouse's query statements (clickhouse-query.ts) do not use it today.
  monotoneBucket: (v) => `if(${v} < 0, -floor(sqrt(sqrt(-${v})) * 16), floor(sqrt(sqrt(${v})) * 16))`,
  nullTime: () => 'CAST(NULL AS Nullable(Int64))',
  // (18.16 has no trim.)
  trimSpaces: (text) => `replaceRegexpAll(${text}, '^ +| +$', '')`,
  expr,
  // (18.16: no common table expressions nor window functions; its statements are nested subqueries)
  capabilities: { ctes: false, windowFunctions: false },
  query: clickhouseQuery,
  bubbleUp: clickhouseBubbleUp,
  serviceMap: clickhouseServiceMap,
  traces: clickhouseTraces,
  bucketStates: clickhouseBucketStates,
};
