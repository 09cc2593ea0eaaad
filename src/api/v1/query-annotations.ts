// /1/query_annotations/{datasetSlug|__all__}: list, create (201), get, full-replacement PUT and
// DELETE (204). An annotation names and describes a query; many may point at one query. Every
// route needs the configuration-key permission Manage Queries and Columns (`manage_columns`).
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
// - An annotation lives where its query lives: it is found (and listed) only under the same
//   dataset, or `__all__` for environment-wide queries, in the same environment; 404 elsewhere.
// - `source` is `query` for annotations made here; boards make `board` ones through
//   createQueryAnnotation(). The list shows only `query` ones unless
//   `?include_board_annotations=true` (`true`/`false` only; anything else → 422).
import { Type, type Static } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { errorResponses } from '../../http/error-schemas.js';
import { ApiError, invalidField, notFound, BLANK } from '../../errors.js';
import type { ConfigStore, Dataset, Environment, StoredObject } from '../../stores/config/types.js';
import { shortId } from '../../domain/ids.js';
import type { ApiContext, App } from '../context.js';
import type { AnnotationSource, StoredQueryAnnotation } from '../../domain/query-annotations.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { belongsTo } from '../../domain/scope.js';
import { sendCreated, sendDeleted, findOwned } from '../resource.js';
import { SlugParams, itemParams } from './schemas.js';
import { QUERY_ANNOTATION_KIND, QUERY_KIND } from '../../domain/kinds.js';

const tags = ['Query Annotations'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_columns' } as const;

export const QueryAnnotation = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  query_id: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  source: Type.Union([Type.Literal('query'), Type.Literal('board')]),
});

const AnnotationInput = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 320 }),
  description: Type.Optional(Type.String({ maxLength: 1023 })),
  query_id: Type.String({ description: 'Immutable after creation.' }),
  id: Type.Optional(Type.String({ description: 'Read-only; on PUT, when sent, it must be the id in the path.' })),
});
type AnnotationInput = Static<typeof AnnotationInput>;

const ListQuery = Type.Object({
  include_board_annotations: Type.Optional(Type.Unsafe<'true' | 'false'>({ type: 'string', enum: ['true', 'false'] })),
});
const ItemParams = itemParams('queryAnnotationId');

/** 400: Honeycomb's legacy `{error}` for annotation problems, problem+json for a malformed body. */
const badRequestResponse = {
  description: 'Bad Request',
  content: {
    'application/json': { schema: Type.Object({ error: Type.String() }) },
    ...(errorResponses('/1/') as Record<number, { content: object }>)[400].content,
  },
};

/** Honeycomb answers annotation input problems with 400 and a legacy `{error}` body. */
const badRequest = (message: string) => new ApiError(400, message, { dialect: 'legacy' });

export function annotationResponse(o: StoredObject<StoredQueryAnnotation>): Static<typeof QueryAnnotation> {
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

function checkName(name: string): void {
  if (name.trim() === '') throw invalidField('name', BLANK, 'missing');
}

/** 400 unless `queryId` is a query of this dataset (or `__all__`) and environment. */
async function checkQuery(store: ConfigStore, env: Environment, dataset: Dataset | null, queryId: string): Promise<void> {
  const query = await store.getObject(QUERY_KIND, queryId);
  if (!belongsTo(query, env)) throw badRequest('Query ID included in body is invalid');
  if (query.datasetId !== (dataset?.id ?? null)) throw badRequest('Query is not in the dataset');
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

/** The annotation `id` of the dataset (or `__all__`) named by the path segment, in the environment; 404 otherwise. */
export async function getQueryAnnotation(
  store: ConfigStore,
  env: Environment,
  datasetSlugOrAll: string,
  id: string,
): Promise<StoredObject<StoredQueryAnnotation>> {
  const dataset = await datasetOrAll(store, env, datasetSlugOrAll);
  return findOwned<StoredQueryAnnotation>(store, QUERY_ANNOTATION_KIND, id, 'query annotation', env, dataset);
}

export function registerQueryAnnotations(app: App, { store }: ApiContext): void {
  app.get(
    '/1/query_annotations/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        querystring: ListQuery,
        description: 'Lists the annotations of the dataset (or of environment-wide queries, with `__all__`). Board annotations only with `include_board_annotations=true`.',
        response: { 200: Type.Array(QueryAnnotation) },
      },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      const all = await store.listObjects<StoredQueryAnnotation>(QUERY_ANNOTATION_KIND, { environmentId: env.id, datasetId: dataset?.id ?? null });
      const withBoards = request.query.include_board_annotations === 'true';
      return all.filter((o) => withBoards || o.body.source === 'query').map(annotationResponse);
    },
  );

  app.post(
    '/1/query_annotations/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        body: AnnotationInput,
        description: '`query_id` must name a query of the same dataset (or `__all__`); otherwise 400.',
        response: { 201: QueryAnnotation, 400: badRequestResponse },
      },
      config: { auth },
    },
    async (request, reply) => {
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      const body = request.body as AnnotationInput;
      const created = await createQueryAnnotation(store, env, dataset, body);
      return sendCreated(reply, annotationResponse(created));
    },
  );

  app.get(
    '/1/query_annotations/:datasetSlug/:queryAnnotationId',
    { schema: { tags, security, params: ItemParams, response: { 200: QueryAnnotation } }, config: { auth } },
    async (request) =>
      annotationResponse(await getQueryAnnotation(store, envOf(request), request.params.datasetSlug, request.params.queryAnnotationId)),
  );

  app.put(
    '/1/query_annotations/:datasetSlug/:queryAnnotationId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        body: AnnotationInput,
        description: 'Full replacement of name and description (omitted description: ""). `query_id` cannot change (400).',
        response: { 200: QueryAnnotation, 400: badRequestResponse },
      },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const { datasetSlug, queryAnnotationId: id } = request.params;
      const current = await getQueryAnnotation(store, env, datasetSlug, id);
      const body = request.body as AnnotationInput;
      if (body.id !== undefined && body.id !== id) throw badRequest('Query annotation id included in body does not match URL');
      if (body.query_id !== current.body.query_id) throw badRequest('queries in annotations cannot be changed');
      checkName(body.name);
      const updated = await store.updateObject<StoredQueryAnnotation>(QUERY_ANNOTATION_KIND, id, {
        body: { ...current.body, name: body.name, description: body.description ?? '' },
      });
      if (!updated) throw notFound('query annotation');
      return annotationResponse(updated);
    },
  );

  app.delete(
    '/1/query_annotations/:datasetSlug/:queryAnnotationId',
    {
      schema: { tags, security, params: ItemParams, response: { 204: Type.Null({ description: 'Deleted' }) } },
      config: { auth },
    },
    async (request, reply) => {
      const env = envOf(request);
      const { datasetSlug, queryAnnotationId: id } = request.params;
      await getQueryAnnotation(store, env, datasetSlug, id);
      if (!(await store.deleteObject(QUERY_ANNOTATION_KIND, id))) throw notFound('query annotation');
      return sendDeleted(reply);
    },
  );
}
