// DuckDB's BubbleUp statements (the comparison itself: src/query/bubbleup.ts): common table
// expressions over the scan's `f`, each side's sample a reservoir sample, the top values per
// column by a window function.
import { bubbleUpSides, numeric, type BubbleUpStatements } from './statements.js';

export const duckdbBubbleUp: BubbleUpStatements = {
  counts: (scan, inSel, inBase) =>
    `${scan.prelude},\nside AS (SELECT __w, coalesce(${inSel}, false) AS __in FROM f${bubbleUpSides(scan.dialect, inSel, inBase)})\n` +
    'SELECT coalesce(sum(__w) FILTER (WHERE __in), 0) AS se, count(*) FILTER (WHERE __in) AS sr, ' +
    'coalesce(sum(__w) FILTER (WHERE NOT __in), 0) AS be, count(*) FILTER (WHERE NOT __in) AS br FROM side',

  stats(scan, inSel, fields, { sampleRows, topValues, bins, categoricalMax }, inBase) {
    const numbers = fields.filter((f) => f.type === 'integer' || f.type === 'float');
    const sample = (where: string) => `(SELECT * FROM (SELECT * FROM sides WHERE ${where}) USING SAMPLE reservoir(${sampleRows} ROWS) REPEATABLE (17))`;
    const ctes = [
      `sides AS NOT MATERIALIZED (SELECT *, coalesce(${inSel}, false) AS __in FROM f${bubbleUpSides(scan.dialect, inSel, inBase)})`,
      `b AS MATERIALIZED (SELECT * FROM ${sample('__in')} UNION ALL SELECT * FROM ${sample('NOT __in')})`,
      'tot AS MATERIALIZED (SELECT coalesce(sum(__w) FILTER (WHERE __in), 0) AS __ts, coalesce(sum(__w) FILTER (WHERE NOT __in), 0) AS __tr, ' +
        'count(*) FILTER (WHERE __in) AS __ns, count(*) FILTER (WHERE NOT __in) AS __nb FROM b)',
    ];
    if (numbers.length > 0) {
      const cols = numbers.flatMap((f) => {
        const n = numeric(scan.dialect, f);
        return [
          `approx_count_distinct(${f.alias}) AS d_${f.alias}`,
          `approx_quantile(${n}, 0.02) AS lo_${f.alias}`,
          `greatest((approx_quantile(${n}, 0.98) - approx_quantile(${n}, 0.02)) / ${bins}, 1e-9) AS w_${f.alias}`,
        ];
      });
      ctes.push(`nb AS MATERIALIZED (SELECT ${cols.join(', ')} FROM b)`);
    }
    const sums = 'sum(__w) FILTER (WHERE __in) AS __s, sum(__w) FILTER (WHERE NOT __in) AS __r';
    const parts = fields.map((f) => {
      const name = `'${f.alias}'`; // (a planner alias: f0, f1, …)
      if (f.type !== 'integer' && f.type !== 'float') {
        return `SELECT ${name} AS __f, CAST(${f.alias} AS VARCHAR) AS __v, CAST(NULL AS BIGINT) AS __bin, CAST(NULL AS DOUBLE) AS __lo, CAST(NULL AS DOUBLE) AS __width, ${sums} FROM b GROUP BY 2`;
      }
      const n = numeric(scan.dialect, f);
      const categorical = `(d_${f.alias} <= ${categoricalMax})`;
      return (
        `SELECT ${name} AS __f, CASE WHEN ${categorical} OR ${n} IS NULL THEN CAST(${f.alias} AS VARCHAR) END AS __v, ` +
        `CASE WHEN NOT ${categorical} AND ${n} IS NOT NULL THEN CAST(least(greatest(floor((${n} - lo_${f.alias}) / w_${f.alias}), 0), ${bins - 1}) AS BIGINT) END AS __bin, ` +
        `CASE WHEN NOT ${categorical} THEN lo_${f.alias} END AS __lo, CASE WHEN NOT ${categorical} THEN w_${f.alias} END AS __width, ${sums} ` +
        // (nb has one row: grouping by its columns only lets the SELECT read them)
        `FROM b, nb GROUP BY 2, 3, d_${f.alias}, lo_${f.alias}, w_${f.alias}`
      );
    });
    return (
      `${scan.prelude},\n${ctes.join(',\n')},\nstats AS (\n${parts.join('\nUNION ALL\n')}\n)\n` +
      'SELECT stats.*, tot.* FROM stats, tot ' +
      `QUALIFY row_number() OVER (PARTITION BY __f ORDER BY greatest(coalesce(__s, 0) / nullif(__ts, 0), coalesce(__r, 0) / nullif(__tr, 0)) DESC NULLS LAST, __v NULLS FIRST, __bin) <= ${topValues}`
    );
  },
};
