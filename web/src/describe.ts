// A query spec in one line, as lists and titles show it: `COUNT, P99(duration_ms) by service where status >= 500`.
import { calculationKey, type QuerySpec } from './api/types.js';

export function describeQuery(spec: QuerySpec): string {
  const calcs = (spec.calculations?.length ? spec.calculations : [{ op: 'COUNT' as const }]).map(calculationKey).join(', ');
  const by = spec.breakdowns?.length ? ` by ${spec.breakdowns.join(', ')}` : '';
  const where = spec.filters?.length
    ? ` where ${spec.filters
        .map((f) => `${f.column} ${f.op}${f.value === undefined || f.value === null ? '' : ` ${Array.isArray(f.value) ? f.value.join(',') : String(f.value)}`}`)
        .join(spec.filter_combination === 'OR' ? ' or ' : ' and ')}`
    : '';
  return `${calcs}${by}${where}`;
}
