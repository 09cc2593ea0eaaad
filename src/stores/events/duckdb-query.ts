// DuckDB's query statements (statements.ts has the model the planner hands over). Every
// statement starts with the same two common table expressions:
//   base   the model's events (a SELECT per dataset, each restricted to the window so DuckDB
//          prunes row groups by their `__time` min/max);
//   f      base with the filters and each event's time bucket (`__b`).
// Two plans:
//   combined  every calculation decomposable (COUNT, SUM, AVG, MIN, MAX, at most one HEATMAP):
//          one statement for all parts; f is aggregated once per (breakdowns, bucket[, HEATMAP
//          cell]) into mergeable partials, and each part merges those at its own level.
//   per part  otherwise: one statement per part; a Level computes the aggregates grouped by the
//          breakdowns (results), breakdowns + bucket (series), nothing (totals, other) or the
//          bucket (total series). Plain aggregates come from one GROUP BY; the ops that need
//          ordering, expansion or a set (sample-weighted percentiles, HEATMAP, CONCURRENCY,
//          RATE_*, COUNT_DISTINCT) each come from their own CTE joined on the keys. The series
//          and "other" statements take the groups `results` answered as bound parameters.
import { numeric, topGroups, type Aggregation, type Part, type QueryModel, type QueryStatements } from './statements.js';

/** The CTEs `base` and `f`. */
function prelude(m: QueryModel): string {
  const d = m.dialect;
  const whereSql = m.filter === undefined ? '' : ` WHERE ${m.filter}`;
  // NOT MATERIALIZED: a part reading `f` more than once (series, HEATMAP bounds, other) would
  // otherwise copy every event of the window into a temporary result first; scanning the table
  // again (time-pruned, only the columns that reference reads) costs less (bench/query.mjs).
  return `WITH base AS NOT MATERIALIZED (\n${m.events}\n),\nf AS NOT MATERIALIZED (SELECT *, ${d.intDiv(d.epochUs('__t'), String(m.bucketUs))} AS __b FROM base${whereSql})`;
}

const keyAliases = (m: QueryModel) => m.keys.map((k) => k.alias);
/** Rows of `a` and `b` with the same keys (NULL equal to NULL). */
const onKeys = (m: QueryModel, a: string, b: string) => keyAliases(m).map((k) => `${a}.${k} IS NOT DISTINCT FROM ${b}.${k}`).join(' AND ') || 'true';
/** A breakdown column of null (a part without groups, or an empty list of groups). */
const nullKey = (m: QueryModel, k: QueryModel['keys'][number]) => `${m.dialect.nullOf(k.type)} AS ${k.alias}`;

export const duckdbQuery: QueryStatements = {
  scan: (m) => ({ prelude: prelude(m), from: 'f' }),

  part(m, part) {
    const keys = keyAliases(m);
    const level = new Level(m);
    switch (part) {
      case 'results':
        return `${prelude(m)},\n${level.ctes('r', 'f', keys)},\ntop AS (${topGroups(m, 'r')})\nSELECT * FROM top ORDER BY ${m.order}`;
      case 'totals':
        return `${prelude(m)},\n${level.ctes('t', 'f', [])}\nSELECT * FROM t`;
      case 'totalSeries':
        return `${prelude(m)},\n${level.ctes('ts', 'f', ['__b'])}\nSELECT * FROM ts ORDER BY __b`;
    }
  },

  ofGroups(m, part, groups) {
    const keys = keyAliases(m);
    const level = new Level(m);
    const start = prelude(m);
    if (keys.length === 0) {
      const shown = groups.length > 0;
      return part === 'series'
        ? `${start},\n${level.ctes('s', shown ? 'f' : '(SELECT * FROM f WHERE false)', ['__b'])}\nSELECT * FROM s ORDER BY __b`
        : `${start},\n${level.ctes('o', shown ? '(SELECT * FROM f WHERE false)' : 'f', [])}\nSELECT * FROM o`;
    }
    // The groups come in as a VALUES list, so the ranking is not computed again.
    const values = groups.length
      ? `SELECT * FROM (VALUES ${groups.map((g) => `(${g.join(', ')})`).join(', ')}) AS v(${keys.join(', ')})`
      : `SELECT ${m.keys.map((k) => nullKey(m, k)).join(', ')} WHERE false`;
    const top = `top AS MATERIALIZED (${values})`;
    return part === 'series'
      ? `${start},\n${top},\nft AS (SELECT f.* FROM f SEMI JOIN top ON ${onKeys(m, 'f', 'top')}),\n${level.ctes('s', 'ft', [...keys, '__b'])}\n` +
          `SELECT * FROM s ORDER BY __b, ${[...keys, '__b'].join(', ')}`
      : `${start},\n${top},\nfo AS (SELECT f.* FROM f ANTI JOIN top ON ${onKeys(m, 'f', 'top')}),\n${level.ctes('o', 'fo', [])}\nSELECT * FROM o`;
  },

  combined,
};

/**
 * The decomposable plan: one aggregation of `f` per (breakdowns, time bucket[, HEATMAP cell])
 * holding mergeable partial aggregates (sums, minima, maxima, row counts), materialised once;
 * every part merges those partials at its own level (results: per group; series: per group and
 * bucket of the top groups; totals; total series; other: the groups outside the top). The top
 * groups are ranked once, in `top`. HEATMAP bounds come from one pass over all matching events.
 */
function combined(m: QueryModel, parts: Part[]): string {
  const d = m.dialect;
  const keyAliases = m.keys.map((k) => k.alias);
  const buckets = m.heatmapBuckets;
  type Merge = 'sum' | 'min' | 'max';
  const partials: { name: string; expr: string; merge: Merge }[] = [{ name: '__rows', expr: 'count(*)', merge: 'sum' }];
  const finals = new Map<string, string>();
  for (const c of m.calcs) {
    const n = c.field && numeric(d, c.field);
    const p = (suffix: string, expr: string, merge: Merge) => {
      const name = `__p_${c.alias}${suffix}`;
      partials.push({ name, expr, merge });
      return name;
    };
    const w = m.weighted;
    if (c.op === 'COUNT') finals.set(c.alias, w ? `coalesce(${p('', 'sum(__w)', 'sum')}, 0)` : 'coalesce(__rows, 0)');
    else if (c.op === 'SUM') finals.set(c.alias, `coalesce(${p('', w ? `sum(${n} * __w)` : `sum(${n})`, 'sum')}, 0)`);
    else if (c.op === 'AVG')
      finals.set(
        c.alias,
        `${p('_n', w ? `sum(${n} * __w)` : `sum(${n})`, 'sum')} / ${p('_d', w ? `sum(CASE WHEN ${n} IS NOT NULL THEN __w END)` : `count(${n})`, 'sum')}`,
      );
    else if (c.op === 'MIN') finals.set(c.alias, p('', `min(${n})`, 'min'));
    else if (c.op === 'MAX') finals.set(c.alias, p('', `max(${n})`, 'max'));
  }
  const hm = m.calcs.find((c) => c.op === 'HEATMAP');
  const hmN = hm?.field && numeric(d, hm.field);
  // A HEATMAP cell's count: the weight of its events (at m's grain, one row is one cell).
  const cellCount = hm && m.weighted ? (partials.push({ name: '__p_cell', expr: 'sum(__w)', merge: 'sum' }), '__p_cell') : '__rows';
  const grain = [...keyAliases, '__b', ...(hm ? ['__hb'] : [])];
  const groupBy = (cols: string[]) => (cols.length ? ` GROUP BY ${cols.join(', ')}` : '');
  const ctes: string[] = [];
  if (hm) {
    ctes.push(`hb_bounds AS MATERIALIZED (SELECT min(${hmN}) AS __lo, greatest((max(${hmN}) - min(${hmN})) / ${buckets}, 1e-9) AS __width FROM f)`);
  }
  ctes.push(
    `m AS MATERIALIZED (SELECT ${[
      ...keyAliases,
      '__b',
      // (least() skips nulls: an event without a value must get no cell, not the last one)
      ...(hm ? [`CASE WHEN ${hmN} IS NOT NULL THEN least(floor((${hmN} - __lo) / __width), ${buckets - 1}) END AS __hb`] : []),
      ...partials.map((x) => `${x.expr} AS ${x.name}`),
    ].join(', ')} FROM f${hm ? ', hb_bounds' : ''}${groupBy(grain)})`,
  );
  /** The calculations over `src` (rows at the grain of m) per `levelKeys`; no row for no events. */
  const level = (src: string, levelKeys: string[]) => {
    const merged = (from: string, cols: string[]) =>
      `SELECT ${[...cols, ...partials.map((x) => `${x.merge}(${x.name}) AS ${x.name}`)].join(', ')} FROM ${from}${groupBy(cols)}`;
    let rows = merged(src, hm ? [...levelKeys, '__hb'] : levelKeys);
    if (hm) {
      const cell = `{'lower': __lo + __hb * __width, 'upper': __lo + (__hb + 1) * __width, 'count': c.${cellCount}}`;
      rows =
        `SELECT ${[
          ...levelKeys,
          ...partials.map((x) => `${x.merge}(c.${x.name}) AS ${x.name}`),
          `to_json(list(${cell} ORDER BY __hb) FILTER (WHERE __hb IS NOT NULL))::VARCHAR AS __hm`,
        ].join(', ')} FROM (${rows}) AS c, hb_bounds${groupBy(levelKeys)}`;
      finals.set(hm.alias, '__hm');
    }
    return `SELECT ${[...levelKeys, '__rows', ...m.calcs.map((c) => `${finals.get(c.alias)} AS ${c.alias}`)].join(', ')} FROM (${rows}) AS l WHERE __rows > 0`;
  };
  ctes.push(`r AS (${level('m', keyAliases)})`, `top AS MATERIALIZED (${topGroups(m, 'r')})`);
  const inTop = keyAliases.length
    ? `(SELECT m.* FROM m SEMI JOIN top ON ${onKeys(m, 'm', 'top')})`
    : '(SELECT * FROM m WHERE EXISTS (SELECT 1 FROM top))';
  const notInTop = keyAliases.length
    ? `(SELECT m.* FROM m ANTI JOIN top ON ${onKeys(m, 'm', 'top')})`
    : '(SELECT * FROM m WHERE NOT EXISTS (SELECT 1 FROM top))';
  const aliases = m.calcs.map((c) => c.alias);
  const select = (i: number, rowOrder: string, withKeys: boolean, withBucket: boolean, from: string) =>
    `SELECT ${[
      `${i} AS __part`,
      `row_number() OVER (ORDER BY ${rowOrder}) AS __rn`,
      ...(withKeys ? keyAliases : m.keys.map((k) => nullKey(m, k))),
      withBucket ? '__b' : 'CAST(NULL AS BIGINT) AS __b',
      ...aliases,
    ].join(', ')} FROM ${from}`;
  const byBucket = ['__b', ...keyAliases].join(', ');
  const selects = parts.map((part, i) => {
    switch (part) {
      case 'results':
        return select(i, m.order, true, false, 'top');
      case 'series':
        return select(i, byBucket, true, true, `(${level(inTop, [...keyAliases, '__b'])}) AS s`);
      case 'totals':
        return select(i, '1', false, false, `(${level('m', [])}) AS t`);
      case 'totalSeries':
        return select(i, '__b', false, true, `(${level('m', ['__b'])}) AS ts`);
      case 'other':
        return select(i, '1', false, false, `(${level(notInTop, [])}) AS o`);
    }
  });
  return `${prelude(m)},\n${ctes.join(',\n')}\nSELECT * FROM (\n${selects.join('\nUNION ALL\n')}\n) AS parts ORDER BY __part, __rn`;
}

/**
 * CTEs answering the sample-weighted nearest-rank percentile `p` of `value` over `from` per `keys`
 * as column `alias` of CTE `name`: per group, the smallest value whose cumulative weight (`__w`)
 * reaches p × the group's total weight. Sorting every event of the window with a window function
 * cost 36x DuckDB's own quantile_disc on 10M events, so it takes two passes instead:
 * 1. each group's weight per coarse bucket of the value (`name_h`), then, in that small table,
 *    the bucket where the cumulative weight first reaches p × total and the weight below it
 *    (`name_t`);
 * 2. only the events of that bucket, sorted, their cumulative weight counted on from there.
 * The dialect's bucket is exactly monotone (v ≤ v' ⇒ bucket(v) ≤ bucket(v')), so every event of
 * a lower bucket is smaller than every event of the chosen one and the answer is the exact one.
 */
function weightedPercentileCtes(m: QueryModel, name: string, alias: string, from: string, keys: string[], value: string, p: number): string[] {
  const bucket = (v: string) => m.dialect.monotoneBucket(v);
  const partition = keys.length ? `PARTITION BY ${keys.join(', ')} ` : '';
  const groupBy = (extra: string[]) => (keys.length || extra.length ? ` GROUP BY ${[...keys, ...extra].join(', ')}` : '');
  // The chosen buckets' keys under names of their own, so that the join below leaves the event's
  // columns (a key may also be the value's field) unambiguous.
  const picked = keys.map((k, i) => `${k} AS __qk${i}`);
  const on = [...keys.map((k, i) => `__e.${k} IS NOT DISTINCT FROM __q.__qk${i}`), `${bucket(value)} = __q.__qb`].join(' AND ');
  return [
    `${name}_h AS (SELECT ${[...keys, `${bucket(value)} AS __qb`, 'sum(__w) AS __bw'].join(', ')} FROM ${from} WHERE ${value} IS NOT NULL${groupBy(['__qb'])})`,
    `${name}_t AS (SELECT ${[...picked, '__qb', '__cum - __bw AS __before', '__tot'].join(', ')} FROM (` +
      `SELECT *, sum(__bw) OVER (${partition}ORDER BY __qb ROWS UNBOUNDED PRECEDING) AS __cum, sum(__bw) OVER (${partition.trim()}) AS __tot FROM ${name}_h) ` +
      `WHERE __cum >= ${p} * __tot AND __cum - __bw < ${p} * __tot)`,
    `${name} AS (SELECT ${[...keys, `min(__v) FILTER (WHERE __before + __cum >= ${p} * __tot) AS ${alias}`].join(', ')} FROM (` +
      `SELECT ${[...keys.map((k) => `__e.${k} AS ${k}`), `${value} AS __v`, '__q.__before', '__q.__tot', `sum(__e.__w) OVER (${keys.length ? `PARTITION BY ${keys.map((k) => `__e.${k}`).join(', ')} ` : ''}ORDER BY ${value} ROWS UNBOUNDED PRECEDING) AS __cum`].join(', ')} ` +
      `FROM ${from} __e JOIN ${name}_t __q ON ${on} WHERE ${value} IS NOT NULL)${groupBy([])})`,
  ];
}

/** The aggregates of one grouping level, as CTEs named `<name>` (and `<name>_…` helpers). */
class Level {
  /** The breakdown keys: RATE_* differences are taken within each group's own sequence. */
  private readonly groupKeys: string[];

  constructor(private readonly m: QueryModel) {
    this.groupKeys = keyAliases(m);
  }

  ctes(name: string, from: string, keys: string[]): string {
    const m = this.m;
    const d = m.dialect;
    const ctes: string[] = [];
    const keyList = keys.join(', ');
    const groupBy = keys.length ? ` GROUP BY ${keyList}` : ' HAVING count(*) > 0';
    const partition = (ks: string[]) => (ks.length ? `PARTITION BY ${ks.join(', ')} ` : '');
    const select = (exprs: string[]) => [...keys, ...exprs].join(', ');

    const plain: string[] = ['count(*) AS __rows'];
    const joins: { cte: string; aliases: string[] }[] = [];
    for (const c of m.calcs) {
      const n = c.field && numeric(d, c.field);
      const w = m.weighted;
      if (c.op === 'COUNT') plain.push(w ? `coalesce(sum(__w), 0) AS ${c.alias}` : `count(*) AS ${c.alias}`);
      else if (c.op === 'SUM') plain.push(`coalesce(sum(${w ? `${n} * __w` : n}), 0) AS ${c.alias}`);
      else if (c.op === 'AVG') plain.push(w ? `sum(${n} * __w) / sum(CASE WHEN ${n} IS NOT NULL THEN __w END) AS ${c.alias}` : `avg(${n}) AS ${c.alias}`);
      else if (c.op === 'MAX') plain.push(`max(${n}) AS ${c.alias}`);
      else if (c.op === 'MIN') plain.push(`min(${n}) AS ${c.alias}`);
      else if (c.op === 'COUNT_DISTINCT' && keys.length === 0) plain.push(`count(DISTINCT ${c.field!.alias}) AS ${c.alias}`);
      else if (c.op === 'COUNT_DISTINCT') {
        // Per group (breakdowns, time buckets), a GROUP BY of (keys, value) and a count per group,
        // not count(DISTINCT …): its sets of many groups passed the default 256 MB memory limit
        // over 7 days of 100M events (a series of 84 buckets), while a GROUP BY spills. One set
        // alone (no keys, above) it holds within the limit, faster: 12.5M distinct trace ids of
        // those 100M events in 5.0 s against 8.8 s.
        const cte = `${name}_${c.alias}`;
        const v = c.field!.alias;
        const pairs = [...new Set([...keys, v])].join(', ');
        ctes.push(
          `${cte} AS (SELECT ${select([`count(*) AS ${c.alias}`])} FROM (SELECT ${pairs} FROM ${from} WHERE ${v} IS NOT NULL GROUP BY ${pairs}) GROUP BY ${keyList})`,
        );
        joins.push({ cte, aliases: [c.alias] });
      } else if (c.op === 'PERCENTILE' && !m.weightedPercentiles) plain.push(`quantile_disc(${n}, ${c.p}) AS ${c.alias}`);
      else if (c.op === 'PERCENTILE') {
        // Sample-weighted nearest rank: the smallest value whose cumulative weight reaches p × total.
        const cte = `${name}_${c.alias}`;
        ctes.push(...weightedPercentileCtes(m, cte, c.alias, from, keys, n!, c.p!));
        joins.push({ cte, aliases: [c.alias] });
      } else if (c.op === 'HEATMAP') {
        const cte = `${name}_${c.alias}`;
        const bounds = `${cte}_bounds`;
        const buckets = m.heatmapBuckets;
        ctes.push(
          // Bounds over every matching event (f), whatever the level reads: the same buckets in
          // results, series, totals and other.
          `${bounds} AS (SELECT min(${n}) AS lo, greatest((max(${n}) - min(${n})) / ${buckets}, 1e-9) AS width FROM f)`,
          `${cte}_cells AS (SELECT ${select([`least(floor((${n} - lo) / width), ${buckets - 1}) AS __hb`, 'any_value(lo) AS lo', 'any_value(width) AS width', 'sum(__w) AS __n'])} ` +
            `FROM ${from}, ${bounds} WHERE ${n} IS NOT NULL GROUP BY ${[...keys, '__hb'].join(', ')})`,
          `${cte} AS (SELECT ${select([`to_json(list({'lower': lo + __hb * width, 'upper': lo + (__hb + 1) * width, 'count': __n} ORDER BY __hb))::VARCHAR AS ${c.alias}`])} ` +
            `FROM ${cte}_cells${keys.length ? ` GROUP BY ${keyList}` : ''})`,
        );
        joins.push({ cte, aliases: [c.alias] });
      } else if (c.op === 'CONCURRENCY') {
        // Each span counts (weighted) in every bucket its [start, start + duration) overlaps;
        // a level without buckets takes the busiest bucket.
        const cte = `${name}_${c.alias}`;
        const spanKeys = keys.filter((k) => k !== '__b');
        const start = d.epochUs('__t');
        const last = `CAST(floor((${start} + greatest(coalesce(__dur, 0), 0) * 1000 - 1) / ${m.bucketUs}) AS BIGINT)`;
        const endBucket = `least(greatest(${last}, __b), ${m.lastBucket})`;
        ctes.push(
          `${cte}_spans AS (SELECT ${[...spanKeys, '__w', `unnest(range(__b, ${endBucket} + 1)) AS __cb`].join(', ')} FROM ${from})`,
          `${cte}_per AS (SELECT ${[...spanKeys, '__cb AS __b', 'sum(__w) AS __n'].join(', ')} FROM ${cte}_spans GROUP BY ${[...spanKeys, '__cb'].join(', ')})`,
          keys.includes('__b')
            ? `${cte} AS (SELECT ${select([`__n AS ${c.alias}`])} FROM ${cte}_per)`
            : `${cte} AS (SELECT ${select([`max(__n) AS ${c.alias}`])} FROM ${cte}_per${keys.length ? ` GROUP BY ${keyList}` : ''})`,
        );
        joins.push({ cte, aliases: [c.alias] });
      } else if (c.op === 'RATE_AVG' || c.op === 'RATE_SUM' || c.op === 'RATE_MAX') {
        // Per-second change between consecutive events of the same group, ordered by time.
        const cte = `${name}_${c.alias}`;
        // Ties at one instant are ordered by value, so which value the next rate starts from is defined.
        const w = `(${partition(this.groupKeys)}ORDER BY __t, ${n})`;
        const agg = { RATE_AVG: 'avg', RATE_SUM: 'sum', RATE_MAX: 'max' }[c.op];
        ctes.push(
          `${cte} AS (SELECT ${select([`${agg}(__r) AS ${c.alias}`])} FROM (` +
            `SELECT ${[...new Set([...keys, ...this.groupKeys])].join(', ')}${keys.length || this.groupKeys.length ? ', ' : ''}` +
            `(${n} - lag(${n}) OVER ${w}) / ((${d.epochUs('__t')} - ${d.epochUs(`lag(__t) OVER ${w}`)}) / 1000000) AS __r FROM ${from} WHERE ${n} IS NOT NULL` +
            `) WHERE __r IS NOT NULL AND isfinite(__r)${keys.length ? ` GROUP BY ${keyList}` : ''})`,
        );
        joins.push({ cte, aliases: [c.alias] });
      }
    }

    ctes.push(`${name}_plain AS (SELECT ${select(plain)} FROM ${from}${groupBy})`);
    // The rows: the keys where events start; in a series with CONCURRENCY also the buckets that
    // only spans still running cover (there COUNT and SUM are 0, the other calculations null).
    const isConcurrency = (j: { aliases: string[] }) => m.calcs.some((c: Aggregation) => c.op === 'CONCURRENCY' && j.aliases.includes(c.alias));
    const running = keys.includes('__b') ? joins.filter(isConcurrency) : [];
    let rows = `${name}_plain`;
    if (running.length > 0) {
      rows = `${name}_rows`;
      ctes.push(`${rows} AS (${[`${name}_plain`, ...running.map((j) => j.cte)].map((t) => `SELECT ${keyList} FROM ${t}`).join(' UNION ')})`);
      joins.unshift({ cte: `${name}_plain`, aliases: [] });
    }
    const on = (other: string) => keys.map((k) => `${rows}.${k} IS NOT DISTINCT FROM ${other}.${k}`).join(' AND ') || 'true';
    const cols = [
      ...keys.map((k) => `${rows}.${k}`),
      ...m.calcs.map((c) => {
        const j = joins.find((x) => x.aliases.includes(c.alias));
        // (A group without values has no row in a COUNT_DISTINCT CTE: its count is 0.)
        if (j) return c.op === 'COUNT_DISTINCT' ? `coalesce(${j.cte}.${c.alias}, 0) AS ${c.alias}` : `${j.cte}.${c.alias}`;
        const zero = running.length > 0 && (c.op === 'COUNT' || c.op === 'SUM' || c.op === 'COUNT_DISTINCT');
        return zero ? `coalesce(${name}_plain.${c.alias}, 0) AS ${c.alias}` : `${name}_plain.${c.alias}`;
      }),
    ];
    ctes.push(`${name} AS (SELECT ${cols.join(', ')} FROM ${rows}${joins.map((j) => ` LEFT JOIN ${j.cte} ON ${on(j.cte)}`).join('')})`);
    return ctes.join(',\n');
  }
}
