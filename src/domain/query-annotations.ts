// Query annotations: a name and description on a saved query, made by the query-annotation routes
// (src/api/v1/query-annotations.ts) or by boards' query panels (source `board`). What a body may
// say, what is stored, and how an annotation is answered.
//
// Decisions:
// - `query_id` must name a query of the same dataset (or `__all__`) in the same environment.
//   Honeycomb's OpenAPI document answers these with 400 and a legacy `{error}` body
//   (application/json), and so does Waggle, with its texts: an unknown query (or another
//   environment's) → `Query ID included in body is invalid`; a query of this environment made
//   on another dataset or on `__all__` → `Query is not in the dataset`.
// - `query_id` is immutable: a PUT with another one → 400 `queries in annotations cannot be
//   changed` (the document's example for that case; not 422). A PUT whose body carries an `id`
//   other than the path's → 400 `Query annotation id included in body does not match URL`.
// - PUT is a full replacement: `name` and `query_id` are required, an omitted `description`
//   becomes "". Read-only fields in the body (`created_at`, `updated_at`, `source`) and unknown
//   fields are ignored.
// - `name` is 1..320 characters and not blank; `description` at most 1023 characters.
// - `source` is `query` for annotations made through the API; boards make `board` ones through
//   createQueryAnnotation().
import { ApiError, BLANK, invalidField } from '../errors.js';
import { shortId } from './ids.js';
import { belongsTo } from './scope.js';
import type { ConfigStore, Dataset, Environment, StoredObject } from '../stores/config/types.js';
import { QUERY_ANNOTATION_KIND, QUERY_KIND } from './kinds.js';

export const MAX_ANNOTATION_NAME = 320;
export const MAX_ANNOTATION_DESCRIPTION = 1023;

export type AnnotationSource = 'query' | 'board';
/** What the object store holds for an annotation (timestamps come from the object). */
export interface StoredQueryAnnotation {
  name: string;
  description: string;
  query_id: string;
  source: AnnotationSource;
}
/** An annotation body as its route schema has checked it (lengths). */
export interface QueryAnnotationInput {
  name: string;
  description?: string;
  query_id: string;
  id?: string;
}

/** Honeycomb answers annotation input problems with 400 and a legacy `{error}` body. */
const badRequest = (message: string) => new ApiError(400, message, { dialect: 'legacy' });

function checkName(name: string): void {
  if (name.trim() === '') throw invalidField('name', BLANK, 'missing');
}

/** 400 unless `queryId` is a query of this dataset (or `__all__`) and environment. */
async function checkQuery(store: ConfigStore, env: Environment, dataset: Dataset | null, queryId: string): Promise<void> {
  const query = await store.getObject(QUERY_KIND, queryId);
  if (!belongsTo(query, env)) throw badRequest('Query ID included in body is invalid');
  if (query.datasetId !== (dataset?.id ?? null)) throw badRequest('Query is not in the dataset');
}

/** The annotations of `dataset` (null: `__all__`), in creation order; `source: board` ones only `withBoards`. */
export async function listQueryAnnotations(
  store: ConfigStore,
  env: Environment,
  dataset: Dataset | null,
  withBoards: boolean,
): Promise<StoredObject<StoredQueryAnnotation>[]> {
  const all = await store.listObjects<StoredQueryAnnotation>(QUERY_ANNOTATION_KIND, { environmentId: env.id, datasetId: dataset?.id ?? null });
  return all.filter((o) => withBoards || o.body.source === 'query');
}

/** Creates an annotation of a query of `dataset` (null: `__all__`); boards pass source `board`. */
export async function createQueryAnnotation(
  store: ConfigStore,
  env: Environment,
  dataset: Dataset | null,
  input: { name: string; description?: string; query_id: string },
  source: AnnotationSource = 'query',
): Promise<StoredObject<StoredQueryAnnotation>> {
  checkName(input.name);
  await checkQuery(store, env, dataset, input.query_id);
  return store.createObject<StoredQueryAnnotation>({
    id: shortId(),
    kind: QUERY_ANNOTATION_KIND,
    teamId: env.teamId,
    environmentId: env.id,
    datasetId: dataset?.id ?? null,
    scope: env.id,
    uniqueKey: null,
    body: { name: input.name, description: input.description ?? '', query_id: input.query_id, source },
  });
}

/** What a PUT makes of the annotation: name and description replaced; 400 on another id or query, 422 on a blank name. */
export function queryAnnotationChange(current: StoredObject<StoredQueryAnnotation>, input: QueryAnnotationInput): StoredQueryAnnotation {
  if (input.id !== undefined && input.id !== current.id) throw badRequest('Query annotation id included in body does not match URL');
  if (input.query_id !== current.body.query_id) throw badRequest('queries in annotations cannot be changed');
  checkName(input.name);
  return { ...current.body, name: input.name, description: input.description ?? '' };
}

/** An annotation as the API answers it. */
export function queryAnnotationAnswer(o: StoredObject<StoredQueryAnnotation>) {
  return {
    id: o.id,
    name: o.body.name,
    description: o.body.description,
    query_id: o.body.query_id,
    created_at: o.createdAt,
    updated_at: o.updatedAt,
    source: o.body.source,
  };
}
