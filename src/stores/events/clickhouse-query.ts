// ClickHouse's query statements (statements.ts has the model the planner hands over). 18.16 has
// no common table expressions nor window functions, so every part is its own statement of nested
// subqueries: plain aggregates from one GROUP BY, percentiles from the sorted values (and weights)
// of each group, HEATMAP cells counted over the same arrays against bounds from the whole window.
// Neither does it have neighbor(): RATE_* take consecutive elements of a group's events sorted by
// time in one array.
import { UnsupportedByEngine } from './engine.js';
import { numeric, topGroups, type QueryModel, type QueryStatements, type StatementField } from './statements.js';

// ---- Aggregates over a group's values collected in an array
/** Whether two values are equal or both NULL (never NULL itself). */
const nullSafeEq = (a: string, b: string) => `((${a} IS NULL AND ${b} IS NULL) OR coalesce(${a} = ${b}, 0))`;
/** The non-NULL values with their weights, sorted by value. (groupArray skips NULLs, so value and weight travel together as a tuple, filtered after; a weight is NULL only beside a NULL value, in CONCURRENCY's and RATE_*'s extra rows.) */
const sortedWeighted = (value: string, weight: string) =>
  `arraySort(x -> x.1, arrayMap(x -> (assumeNotNull(x.1), x.2), arrayFilter(x -> isNotNull(x.1), groupArray((${value}, toInt64(assumeNotNull(${weight})))))))`;
/** Over such an array: the smallest value whose cumulative weight reaches k / 1000 of the total (exact integer comparison); NULL when empty. */
const nearestRank = (c: string, k: number) =>
  `if(length(${c}) = 0, NULL, arrayElement(arrayMap(x -> x.1, ${c}), ` +
  `arrayFirstIndex(s -> s * 1000 >= ${Math.trunc(k)} * arraySum(arrayMap(x -> x.2, ${c})), arrayCumSum(arrayMap(x -> x.2, ${c})))))`;
/** The non-NULL values, sorted (for when every weight is 1: half the memory, no cumulative sums). */
const sorted = (value: string) => `arraySort(groupArray(${value}))`;
/** Over such an array: the ⌈k·n/1000⌉-th value, 1-based (exact integer arithmetic); NULL when empty. */
const nearestRankOfSorted = (c: string, k: number) => `if(length(${c}) = 0, NULL, arrayElement(${c}, intDiv(${Math.trunc(k)} * length(${c}) + 999, 1000)))`;
/**
 * HEATMAP's cells as JSON text, `[{"lower", "upper", "count"}, …]` for the cells with values, in
 * order: `buckets` cells of `width` from `lo` (the last one takes everything above), counts the
 * sum of weights; NULL when there are no values. `values` and `weights` are a sortedWeighted
 * array's two halves as arrays of their own (heatmapArrays): 18.16 refuses a tuple's member read
 * inside a lambda within a lambda on some data ("Second argument to tupleElement must be a
 * constant"), so the cells' lambdas read plain arrays.
 */
const heatmapCells = (values: string, weights: string, nullableLo: string, nullableWidth: string, buckets: number) => {
  // (Non-NULL wherever the collection has values; lambdas must return UInt8, not Nullable.)
  const lo = `assumeNotNull(${nullableLo})`;
  const width = `assumeNotNull(${nullableWidth})`;
  const cell = (x: string) => `least(floor((${x} - ${lo}) / ${width}), ${buckets - 1})`;
  const count = `arraySum(arrayMap((v, w) -> if(${cell('v')} = i, w, 0), ${values}, ${weights}))`;
  const json = `concat('{"lower":', toString(${lo} + i * ${width}), ',"upper":', toString(${lo} + (i + 1) * ${width}), ',"count":', toString(${count}), '}')`;
  const present = `arrayFilter(i -> arrayExists(v -> ${cell('v')} = i, ${values}), range(${buckets}))`;
  // (Both arrays named outside the lambdas too: 18.16 drops from the subquery a column that only a
  // lambda within a lambda reads, "Unknown identifier".)
  return `if(length(${values}) = 0 OR length(${weights}) = 0, NULL, concat('[', arrayStringConcat(arrayMap(i -> ${json}, ${present}), ','), ']'))`;
};
/** A sortedWeighted array's values and weights, as two arrays (for heatmapCells). */
const heatmapArrays = (c: string, alias: string) => [`arrayMap(x -> x.1, ${c}) AS __hv_${alias}`, `arrayMap(x -> x.2, ${c}) AS __hw_${alias}`];

// ---- CONCURRENCY and RATE_*
/**
 * An aggregate: the group's per-second changes of `value` between consecutive events ordered by
 * `timeUs` then value, each with the later event's `bucket`, as an array of (bucket, rate);
 * only finite rates (two events at one instant give none).
 */
const rates = (t: string, value: string, bucket: string) => {
  // (time, value, bucket) sorted by time then value; pairs (i + 1, i + 2) of the 1-based array.
  const s = `arraySort(groupArray((toInt64(${t}), toFloat64(assumeNotNull(${value})), toInt64(${bucket}))))`;
  const pairs = `arrayMap(i -> (s[i + 2].3, (s[i + 2].2 - s[i + 1].2) / ((s[i + 2].1 - s[i + 1].1) / 1000000)), range(toUInt64(greatest(length(s), 1) - 1)))`;
  return `arrayFilter(x -> isFinite(x.2), arrayMap(s -> ${pairs}, [${s}])[1])`;
};
/** The `i`-th (1-based) member of a tuple. */
const element = (pair: string, i: number) => `tupleElement(${pair}, ${Math.trunc(i)})`;
/** The integers first … last as an array (empty when last < first). */
const range = (first: string, last: string) =>
  `arrayMap(i -> assumeNotNull(${first}) + i, range(toUInt64(greatest(assumeNotNull(${last}) - assumeNotNull(${first}) + 1, 0))))`;
/** Over the rows where `cond`, the largest per-`bucket` sum of `weight` (0 when none). (An array may not be Nullable: the condition is made non-NULL.) */
const busiestBucket = (bucket: string, weight: string, cond: string) =>
  `arrayReduce('max', tupleElement(sumMap(if(coalesce(${cond}, 0), [toInt64(assumeNotNull(${bucket}))], emptyArrayInt64()), ` +
  `if(coalesce(${cond}, 0), [toInt64(assumeNotNull(${weight}))], emptyArrayInt64())), 2))`;

/** The filtered events with their buckets, as a subquery named f. */
function filtered(m: QueryModel): string {
  const d = m.dialect;
  const whereSql = m.filter === undefined ? '' : ` WHERE ${m.filter}`;
  return `(SELECT *, ${d.intDiv(d.epochUs('__t'), String(m.bucketUs))} AS __b FROM (\n${m.events}\n) AS base${whereSql}) AS f`;
}

const isRate = (op: string) => op === 'RATE_AVG' || op === 'RATE_SUM' || op === 'RATE_MAX';

/**
 * CONCURRENCY and RATE_* without window functions: beside the level's events (__k = 0) come rows
 * of their own, carrying the breakdown keys: one per rate between consecutive events of a group
 * (__k = 3 + the column's index, __r the rate, __b the later event's bucket) and one per bucket a
 * span covers (__k = 2, __cw its weight). The level aggregates over all of them; the other
 * calculations read only the events' values (NULL in the extra rows; a field that is also a
 * breakdown key is read as __v_<alias>), so their answers are unchanged, and a series bucket only
 * running spans cover gets a row, as in DuckDB's plan.
 */
function withExtraRows(m: QueryModel, from: string): string {
  const d = m.dialect;
  const keyAliases = m.keys.map((k) => k.alias);
  const fs = m.fields;
  const num = (k: number) => d.cast(String(k), 'integer');
  const row = (k: number, b: string, w: string, values: (f: StatementField) => string, r: string, cw: string) =>
    [
      `${num(k)} AS __k`,
      `${d.cast(b, 'integer')} AS __b`,
      `${w} AS __w`,
      ...keyAliases.map((a) => `${d.cast(a, fs.find((f) => f.alias === a)!.type)} AS ${a}`),
      ...fs.filter((f) => !keyAliases.includes(f.alias)).map((f) => `${values(f)} AS ${f.alias}`),
      ...fs.filter((f) => keyAliases.includes(f.alias)).map((f) => `${values(f)} AS __v_${f.alias}`),
      `${r} AS __r`,
      `${cw} AS __cw`,
    ].join(', ');
  const none = (f: StatementField) => d.nullOf(f.type);
  const branches = [`SELECT ${row(0, '__b', d.cast('__w', 'integer'), (f) => d.cast(f.alias, f.type), d.nullOf('float'), d.nullOf('integer'))} FROM ${from}`];
  const groupBy = keyAliases.length ? ` GROUP BY ${keyAliases.join(', ')}` : '';
  for (const [i, alias] of rateColumns(m).entries()) {
    // One set of rate rows per column (__k = 3 + its index), shared by its RATE_* calculations.
    const n = numeric(d, fs.find((f) => f.alias === alias)!);
    const perGroup = `SELECT ${[...keyAliases, `${rates(d.epochUs('__t'), n, '__b')} AS __rs`].join(', ')} FROM ${from} WHERE ${n} IS NOT NULL${groupBy}`;
    const pairs = `SELECT ${[...keyAliases, 'arrayJoin(__rs) AS __x'].join(', ')} FROM (${perGroup}) AS rg`;
    branches.push(`SELECT ${row(3 + i, element('__x', 1), d.nullOf('integer'), none, d.cast(element('__x', 2), 'float'), d.nullOf('integer'))} FROM (${pairs}) AS rp`);
  }
  if (m.calcs.some((c) => c.op === 'CONCURRENCY')) {
    // Each span counts (weighted) in every bucket its [start, start + duration) overlaps, up to the window's last.
    const last = d.cast(`floor((${d.epochUs('__t')} + greatest(coalesce(__dur, 0), 0) * 1000 - 1) / ${m.bucketUs})`, 'integer');
    // (__w under another name: ClickHouse would read the branch's own NULL __w alias instead)
    const spans = `SELECT ${[...keyAliases, '__w AS __sw', `arrayJoin(${range('__b', `least(greatest(${last}, __b), ${m.lastBucket})`)}) AS __cb`].join(', ')} FROM ${from}`;
    branches.push(`SELECT ${row(2, '__cb', d.nullOf('integer'), none, d.nullOf('float'), d.cast('__sw', 'integer'))} FROM (${spans}) AS cs`);
  }
  return `(${branches.join('\nUNION ALL\n')}) AS x`;
}

/** The columns of RATE_* calculations; column i's rate rows have __k = 3 + i. */
const rateColumns = (m: QueryModel) => [...new Set(m.calcs.filter((c) => isRate(c.op)).map((c) => c.field!.alias))];

/** The calculations over `rawFrom` per `keys`, one row per group with events. */
function level(m: QueryModel, rawFrom: string, keys: string[]): string {
  const d = m.dialect;
  const keyAliases = m.keys.map((k) => k.alias);
  const extraOps = m.calcs.some((c) => c.op === 'CONCURRENCY' || isRate(c.op));
  const from = extraOps ? withExtraRows(m, rawFrom) : rawFrom;
  const inner = [...keys, 'count(*) AS __rows'];
  const outer = [...keys, '__rows'];
  const w = m.weighted;
  for (const c of m.calcs) {
    // (With extra rows, a breakdown key's own values are read from __v_<alias>.)
    const n = c.field && numeric(d, extraOps && keyAliases.includes(c.field.alias) ? { ...c.field, alias: `__v_${c.field.alias}` } : c.field);
    const plain = (expr: string) => {
      inner.push(`${expr} AS ${c.alias}`);
      outer.push(c.alias);
    };
    if (c.op === 'COUNT') plain(w ? 'coalesce(sum(__w), 0)' : extraOps ? 'sum(CASE WHEN __k = 0 THEN 1 ELSE 0 END)' : 'count(*)');
    else if (c.op === 'SUM') plain(`coalesce(sum(${w ? `${n} * __w` : n}), 0)`);
    else if (c.op === 'AVG') plain(w ? `sum(${n} * __w) / sum(CASE WHEN ${n} IS NOT NULL THEN __w END)` : `avg(${n})`);
    else if (c.op === 'MAX') plain(`max(${n})`);
    else if (c.op === 'MIN') plain(`min(${n})`);
    else if (c.op === 'COUNT_DISTINCT') plain(`coalesce(uniqExact(${c.field!.alias}), 0)`); // (0, not NULL, for a group without values, as DuckDB)
    else if (c.op === 'PERCENTILE') {
      // (With every weight 1, or one rate for every event, the values alone, sorted.)
      const pw = m.weightedPercentiles;
      inner.push(`${pw ? sortedWeighted(n!, '__w') : sorted(n!)} AS __q_${c.alias}`);
      const k = Math.round(c.p! * 1000);
      outer.push(`${pw ? nearestRank(`__q_${c.alias}`, k) : nearestRankOfSorted(`__q_${c.alias}`, k)} AS ${c.alias}`);
    } else if (c.op === 'HEATMAP') {
      // Bounds over every matching event (as in DuckDB's plan): the same cells in every part.
      inner.push(`${sortedWeighted(n!, w ? '__w' : '1')} AS __q_${c.alias}`, ...heatmapArrays(`__q_${c.alias}`, c.alias));
      const all = `FROM (SELECT * FROM ${filtered(m)} WHERE ${n} IS NOT NULL) AS hb`;
      outer.push(
        `(SELECT min(${n}) ${all}) AS __lo_${c.alias}`,
        `(SELECT greatest((max(${n}) - min(${n})) / ${m.heatmapBuckets}, 1e-9) ${all}) AS __width_${c.alias}`,
        `${heatmapCells(`__hv_${c.alias}`, `__hw_${c.alias}`, `__lo_${c.alias}`, `__width_${c.alias}`, m.heatmapBuckets)} AS ${c.alias}`,
      );
    } else if (c.op === 'CONCURRENCY') plain(keys.includes('__b') ? 'sum(__cw)' : busiestBucket('__b', '__cw', '__k = 2'));
    else if (c.op === 'RATE_AVG' || c.op === 'RATE_SUM' || c.op === 'RATE_MAX') {
      const f = { RATE_AVG: 'avg', RATE_SUM: 'sum', RATE_MAX: 'max' }[c.op];
      plain(`${f}(CASE WHEN __k = ${3 + rateColumns(m).indexOf(c.field!.alias)} THEN __r END)`);
    } else throw new UnsupportedByEngine(c.op, d.name);
  }
  return `SELECT ${outer.join(', ')} FROM (SELECT ${inner.join(', ')} FROM ${from}${keys.length ? ` GROUP BY ${keys.join(', ')}` : ''}) AS l WHERE __rows > 0`;
}

export const clickhouseQuery: QueryStatements = {
  scan: (m) => ({ prelude: '', from: filtered(m) }),

  part(m, part) {
    const f = filtered(m);
    if (part === 'results') return topGroups(m, `(${level(m, f, m.keys.map((k) => k.alias))}) AS r`);
    if (part === 'totals') return level(m, f, []);
    return `SELECT * FROM (${level(m, f, ['__b'])}) AS ts ORDER BY __b`;
  },

  ofGroups(m, part, groups) {
    const f = filtered(m);
    const keyAliases = m.keys.map((k) => k.alias);
    // Which events belong to the result groups.
    const inGroups =
      keyAliases.length === 0
        ? m.dialect.bool(groups.length > 0)
        : groups.map((g) => `(${keyAliases.map((k, i) => nullSafeEq(k, g[i])).join(' AND ')})`).join(' OR ') || m.dialect.bool(false);
    return part === 'series'
      ? `SELECT * FROM (${level(m, `(SELECT * FROM ${f} WHERE ${inGroups}) AS ft`, [...keyAliases, '__b'])}) AS s ORDER BY __b${keyAliases.map((k) => `, ${k}`).join('')}`
      : level(m, `(SELECT * FROM ${f} WHERE NOT (${inGroups})) AS fo`, []);
  },

  // The planner asks for one statement only of an engine with CTEs and window functions.
  combined: () => {
    throw new UnsupportedByEngine('one statement for every part of an answer', 'clickhouse');
  },
};
