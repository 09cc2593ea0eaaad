// A query spec in the page's URL (`?query=<JSON>`), so that a query is shareable, survives a
// reload, and back/forward step through the queries run. Only the spec's own fields are kept,
// empty lists are left out, and the same spec always gives the same URL.
import type { QuerySpec } from './api/types.js';

const KEYS = [
  'calculations', 'filters', 'filter_combination', 'breakdowns', 'orders', 'havings', 'limit',
  'time_range', 'start_time', 'end_time', 'granularity', 'calculated_fields', 'compare_time_offset_seconds',
] as const;

/** The spec without empty or unset fields, keys in a fixed order; `filter_combination` AND is the default. */
export function normaliseSpec(spec: QuerySpec): QuerySpec {
  const out: Record<string, unknown> = {};
  for (const k of KEYS) {
    const v = (spec as Record<string, unknown>)[k];
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (k === 'filter_combination' && v === 'AND') continue;
    out[k] = v;
  }
  return out as QuerySpec;
}

export function specToSearch(spec: QuerySpec): string {
  return `?query=${encodeURIComponent(JSON.stringify(normaliseSpec(spec)))}`;
}

/**
 * The spec of a URL's `?query=`: undefined when there is none; `{error}` when it is not a JSON
 * object (a mangled link), so the page can say so instead of guessing.
 */
export function searchToSpec(search: URLSearchParams): QuerySpec | { error: string } | undefined {
  const raw = search.get('query');
  if (raw === null) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return { error: 'The query in this address is not valid JSON.' };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { error: 'The query in this address is not a JSON object.' };
  return normaliseSpec(v as QuerySpec);
}

export const sameSpec = (a: QuerySpec, b: QuerySpec) => JSON.stringify(normaliseSpec(a)) === JSON.stringify(normaliseSpec(b));
