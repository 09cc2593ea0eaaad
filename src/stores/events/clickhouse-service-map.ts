// ClickHouse's service-map statement (the rules: src/jobs/service-map.ts): DuckDB's as nested
// subqueries (18.16 has no common table expressions), the two sides' columns renamed apart for
// the join, whose keys must not be Nullable.
import type { ServiceMapStatements } from './statements.js';

export const clickhouseServiceMap: ServiceMapStatements = {
  dependencies(spans, services, limit) {
    const children =
      `SELECT assumeNotNull(trace_id) AS c_trace, assumeNotNull(parent_id) AS c_parent, service AS c_service, w AS c_w, e AS c_e FROM (${spans}) AS s ` +
      `WHERE trace_id IS NOT NULL AND parent_id IS NOT NULL AND parent_id <> '' AND service IS NOT NULL AND service <> ''`;
    const parents =
      `SELECT assumeNotNull(trace_id) AS p_trace, assumeNotNull(span_id) AS p_span, min(service) AS p_service FROM (${spans}) AS s ` +
      `WHERE trace_id IS NOT NULL AND span_id IS NOT NULL AND service IS NOT NULL AND service <> '' GROUP BY trace_id, span_id`;
    const where = services === undefined ? '' : `WHERE p_service IN (${services}) OR c_service IN (${services})`;
    return (
      `SELECT parent, child, CAST(calls AS Nullable(Float64)) AS calls, CAST(errors AS Nullable(Float64)) AS errors FROM (` +
      `SELECT p_service AS parent, c_service AS child, sum(c_w) AS calls, sum(c_e) AS errors FROM (${children}) AS c ` +
      `ALL INNER JOIN (${parents}) AS p ON c_trace = p_trace AND c_parent = p_span ${where} GROUP BY p_service, c_service` +
      `) AS edges ORDER BY calls DESC, parent ASC, child ASC LIMIT ${limit}`
    );
  },
};
