// Queries: immutable specs stored as objects of kind `query` (body = {id, ...spec}), each of a
// dataset or of the environment (`__all__`), seen only there (src/api/v1/queries.ts is the HTTP face).
import { ApiError, invalidField, notFound } from '../errors.js';
import { MAX_DURATION, timeWindow, truncatedWindow, type QuerySpec, type StoredQuery } from '../query/spec.js';
import type { ConfigStore, Dataset, Environment, StoredObject } from '../stores/config/types.js';
import { datasetOrAll } from './datasets.js';
import { shortId } from './ids.js';
import { QUERY_KIND } from './kinds.js';
import { belongsTo } from './scope.js';

/** Stores a validated spec as a new query of the dataset (or the environment, for null). */
export async function saveQuery(store: ConfigStore, env: Environment, dataset: Dataset | null, spec: QuerySpec): Promise<StoredQuery> {
  const body: StoredQuery = { id: shortId(), ...spec };
  await store.createObject<StoredQuery>({
    id: body.id,
    kind: QUERY_KIND,
    teamId: env.teamId,
    environmentId: env.id,
    datasetId: dataset?.id ?? null,
    scope: env.id,
    uniqueKey: null,
    body,
  });
  return body;
}

/**
 * The stored query object `id` of the dataset (or `__all__`) named by the path segment, in the
 * environment. 404 (`dataset not found` / `query not found`) otherwise.
 */
export async function getQueryObject(
  store: ConfigStore,
  env: Environment,
  datasetSlugOrAll: string,
  id: string,
): Promise<StoredObject<StoredQuery>> {
  const dataset = await datasetOrAll(store, env, datasetSlugOrAll);
  const obj = await store.getObject<StoredQuery>(QUERY_KIND, id);
  if (!belongsTo(obj, env, dataset)) throw notFound('query');
  return obj;
}

/** The query `id` of the dataset (or `__all__`) named by the path segment, in the environment; 404 otherwise. */
export async function getQuery(store: ConfigStore, env: Environment, datasetSlugOrAll: string, id: string): Promise<StoredQuery> {
  return (await getQueryObject(store, env, datasetSlugOrAll, id)).body;
}

/** The window a query result reads: truncated by its size, at most the past 7 days. */
export function resultWindow(query: StoredQuery, nowSeconds: number): { start: number; end: number } {
  const w = timeWindow(query, nowSeconds);
  if (w.end - w.start > MAX_DURATION) throw new ApiError(400, 'The query time range must not exceed 7 days.');
  return truncatedWindow(query, nowSeconds);
}

/**
 * The window a trace lookup searches (GET /1/traces, Unix seconds): by default everything kept
 * (`retentionDays`, 0: no limit) up to a day past `nowS`; `start_time` / `end_time` narrow it.
 * 422 when the end is not after the start.
 */
export function traceWindow(query: { start_time?: string; end_time?: string }, nowS: number, retentionDays: number): { start: number; end: number } {
  const kept = retentionDays > 0 ? nowS - retentionDays * 86_400 : 0;
  const start = query.start_time === undefined ? kept : Number(query.start_time);
  const end = query.end_time === undefined ? nowS + 86_400 : Number(query.end_time);
  if (end <= start) throw invalidField('querystring.end_time', 'must be after start_time');
  return { start, end };
}
