// DuckDB's typical-trace statement (the rules: src/query/typical-trace.ts): the qualifying roots
// and their median as common table expressions over the scan's `f`.
import type { TraceStatements } from './statements.js';

export const duckdbTraces: TraceStatements = {
  typical: (scan, { trace, duration, where, exclude }) =>
    `${scan.prelude},\n` +
    `r AS MATERIALIZED (SELECT ${trace} AS trace_id, CAST(${duration} AS DOUBLE) AS d, __t FROM f WHERE ${where}),\n` +
    'm AS (SELECT quantile_disc(d, 0.5) AS median_ms, count(*) AS roots FROM r)\n' +
    `SELECT r.trace_id, r.d AS duration_ms, m.median_ms, m.roots FROM r, m WHERE r.trace_id <> ${exclude} ` +
    'ORDER BY abs(r.d - m.median_ms) ASC, r.__t DESC, r.trace_id ASC LIMIT 1',
};
