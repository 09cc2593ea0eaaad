// ClickHouse's typical-trace statement (the rules: src/query/typical-trace.ts): DuckDB's as two
// subqueries over the scan (18.16 has no common table expressions), the median one row joined to
// every root. quantileExactLow is not in 18.16: the lower middle value is the sorted values'
// element (n + 1) / 2, as DuckDB's quantile_disc(…, 0.5) picks it.
import type { TraceStatements } from './statements.js';

export const clickhouseTraces: TraceStatements = {
  typical(scan, { trace, duration, where, exclude }) {
    const roots = `SELECT ${trace} AS trace_id, toFloat64(${duration}) AS d, __t FROM ${scan.f} WHERE ${where}`;
    return (
      'SELECT trace_id, d AS duration_ms, median_ms, roots FROM (' +
      `SELECT trace_id, d, __t, 1 AS __one FROM (${roots}) AS r0) AS r ALL INNER JOIN (` +
      `SELECT 1 AS __one, arrayElement(arraySort(groupArray(assumeNotNull(d))), toUInt64(intDiv(count() + 1, 2))) AS median_ms, count() AS roots FROM (${roots}) AS m0` +
      `) AS m USING __one WHERE trace_id <> ${exclude} ORDER BY abs(d - median_ms) ASC, __t DESC, trace_id ASC LIMIT 1`
    );
  },
};
