// ClickHouse's BubbleUp statements (the comparison itself: src/query/bubbleup.ts), as nested
// subqueries: 18.16 has no common table expressions, no window functions, and samples only
// tables with a sampling key, so each side's sample is the first events ordered by a hash of time
// and sample rate, every compared column's values and bins come from one pass over the samples
// (arrayJoin of one tuple per column), and the top values per column from LIMIT … BY.
import { bubbleUpSides, numeric, type BubbleUpStatements } from './statements.js';

/** Up to `rows` rows of `from` where `where`: a pseudo-random sample, the same each time. */
const sample = (from: string, where: string, rows: number) => `SELECT * FROM ${from} WHERE ${where} ORDER BY cityHash64(__t, __w) LIMIT ${Math.trunc(rows)}`;

export const clickhouseBubbleUp: BubbleUpStatements = {
  counts(scan, inSel, inBase) {
    const d = scan.dialect;
    return (
      'SELECT coalesce(sum(CASE WHEN __in = 1 THEN __w END), 0) AS se, sum(CASE WHEN __in = 1 THEN 1 ELSE 0 END) AS sr, ' +
      'coalesce(sum(CASE WHEN __in = 0 THEN __w END), 0) AS be, sum(CASE WHEN __in = 0 THEN 1 ELSE 0 END) AS br ' +
      `FROM (SELECT __w, ${d.boolToInt(`coalesce(${inSel}, ${d.bool(false)})`)} AS __in FROM ${scan.f}${bubbleUpSides(d, inSel, inBase)}) AS side`
    );
  },

  stats(scan, inSel, fields, { sampleRows, topValues, bins, categoricalMax }, inBase) {
    const d = scan.dialect;
    const numbers = fields.filter((f) => f.type === 'integer' || f.type === 'float');
    const sides = `(SELECT *, ${d.boolToInt(`coalesce(${inSel}, ${d.bool(false)})`)} AS __in FROM ${scan.f}${bubbleUpSides(d, inSel, inBase)}) AS sides`;
    const b = `(SELECT * FROM (${sample(sides, '__in = 1', sampleRows)}) AS bs UNION ALL SELECT * FROM (${sample(sides, '__in = 0', sampleRows)}) AS bb)`;
    const tot =
      'SELECT coalesce(sum(CASE WHEN __in = 1 THEN __w END), 0) AS __ts, coalesce(sum(CASE WHEN __in = 0 THEN __w END), 0) AS __tr, ' +
      `sum(CASE WHEN __in = 1 THEN 1 ELSE 0 END) AS __ns, sum(CASE WHEN __in = 0 THEN 1 ELSE 0 END) AS __nb FROM ${b} AS b`;
    const nb = numbers.flatMap((f) => {
      const n = numeric(d, f);
      return [
        `uniq(${f.alias}) AS d_${f.alias}`,
        `quantile(0.02)(${n}) AS lo_${f.alias}`,
        `greatest((quantile(0.98)(${n}) - quantile(0.02)(${n})) / ${bins}, 1e-9) AS w_${f.alias}`,
      ];
    });
    // One row per (event, column): the column's value as text (categorical), or its bin.
    const tuples = fields.map((f) => {
      const text = d.expr.text(f.alias, f.type);
      const none = [d.nullOf('integer'), d.nullOf('float'), d.nullOf('float')];
      if (f.type !== 'integer' && f.type !== 'float') return [`'${f.alias}'`, d.cast(text, 'string'), ...none]; // (a planner alias: f0, f1, …)
      const n = numeric(d, f);
      const categorical = `(d_${f.alias} <= ${categoricalMax})`;
      return [
        `'${f.alias}'`,
        `CASE WHEN ${categorical} OR ${n} IS NULL THEN ${d.cast(text, 'string')} ELSE ${d.nullOf('string')} END`,
        `CASE WHEN NOT ${categorical} AND ${n} IS NOT NULL THEN ${d.cast(`least(greatest(floor((${n} - lo_${f.alias}) / w_${f.alias}), 0), ${bins - 1})`, 'integer')} ELSE ${d.nullOf('integer')} END`,
        `CASE WHEN NOT ${categorical} THEN ${d.cast(`lo_${f.alias}`, 'float')} ELSE ${d.nullOf('float')} END`,
        `CASE WHEN NOT ${categorical} THEN ${d.cast(`w_${f.alias}`, 'float')} ELSE ${d.nullOf('float')} END`,
      ];
    });
    const from = nb.length ? `${b} AS b CROSS JOIN (SELECT ${nb.join(', ')} FROM ${b} AS b) AS nb` : `${b} AS b`;
    const el = (i: number) => `tupleElement(__p, ${i})`;
    const unpivot = `arrayJoin([${tuples.map((t) => `tuple(${t.join(', ')})`).join(', ')}])`;
    const stats =
      `SELECT ${el(1)} AS __f, ${el(2)} AS __v, ${el(3)} AS __bin, ${el(4)} AS __lo, ${el(5)} AS __width, ` +
      'sum(CASE WHEN __in = 1 THEN __w END) AS __s, sum(CASE WHEN __in = 0 THEN __w END) AS __r ' +
      `FROM (SELECT __in, __w, ${unpivot} AS __p FROM ${from}) AS p GROUP BY __f, __v, __bin, __lo, __width`;
    const share = (x: string, total: string) => `coalesce(${x} / ${d.expr.nullIf(total, '0')}, 0)`;
    return (
      'SELECT __f, __v, __bin, __lo, __width, __s, __r, __ts, __tr, __ns, __nb ' +
      `FROM (${stats}) AS s CROSS JOIN (${tot}) AS tot ` +
      `ORDER BY __f, greatest(${share('__s', '__ts')}, ${share('__r', '__tr')}) DESC, __v NULLS FIRST, __bin LIMIT ${Math.trunc(topValues)} BY __f`
    );
  },
};
