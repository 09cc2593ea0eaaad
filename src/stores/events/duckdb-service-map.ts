// DuckDB's service-map statement (the rules: src/jobs/service-map.ts): the spans, their parents
// and children as common table expressions, joined into edges.
import type { ServiceMapStatements } from './statements.js';

export const duckdbServiceMap: ServiceMapStatements = {
  dependencies: (spans, services, limit) => `WITH spans AS (
${spans}
),
parents AS (
  SELECT trace_id, span_id, min(service) AS service FROM spans
  WHERE trace_id IS NOT NULL AND span_id IS NOT NULL AND service IS NOT NULL AND service <> ''
  GROUP BY trace_id, span_id
),
children AS (
  SELECT trace_id, parent_id, service, w, e FROM spans
  WHERE trace_id IS NOT NULL AND parent_id IS NOT NULL AND parent_id <> '' AND service IS NOT NULL AND service <> ''
),
edges AS (
  SELECT p.service AS parent, c.service AS child, sum(c.w) AS calls, sum(c.e) AS errors
  FROM children c JOIN parents p ON c.trace_id = p.trace_id AND c.parent_id = p.span_id
  ${services === undefined ? '' : `WHERE p.service IN (${services}) OR c.service IN (${services})`}
  GROUP BY p.service, c.service
)
SELECT parent, child, CAST(calls AS DOUBLE) AS calls, CAST(errors AS DOUBLE) AS errors FROM edges
ORDER BY calls DESC, parent ASC, child ASC
LIMIT ${limit}`,
};
