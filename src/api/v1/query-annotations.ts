// /1/query_annotations/{datasetSlug|__all__}: list, create (201), get, full-replacement PUT and
// DELETE (204). An annotation names and describes a query; many may point at one query. Every
// route needs the configuration-key permission Manage Queries and Columns (`manage_columns`).
// What a body may say and how an annotation is answered (the decisions):
// src/domain/query-annotations.ts.
//
// - An annotation lives where its query lives: it is found (and listed) only under the same
//   dataset, or `__all__` for environment-wide queries, in the same environment; 404 elsewhere.
// - The list shows only `source: query` annotations unless `?include_board_annotations=true`
//   (`true`/`false` only; anything else → 422).
import { Type } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { errorResponses } from '../../http/error-schemas.js';
import { notFound } from '../../errors.js';
import type { ConfigStore, Environment, StoredObject } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import {
  createQueryAnnotation,
  listQueryAnnotations,
  MAX_ANNOTATION_DESCRIPTION,
  MAX_ANNOTATION_NAME,
  queryAnnotationAnswer,
  queryAnnotationChange,
  type QueryAnnotationInput,
  type StoredQueryAnnotation,
} from '../../domain/query-annotations.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { sendCreated, sendDeleted, findOwned } from '../resource.js';
import { SlugParams, itemParams } from './schemas.js';
import { QUERY_ANNOTATION_KIND } from '../../domain/kinds.js';

export { createQueryAnnotation };

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
  name: Type.String({ minLength: 1, maxLength: MAX_ANNOTATION_NAME }),
  description: Type.Optional(Type.String({ maxLength: MAX_ANNOTATION_DESCRIPTION })),
  query_id: Type.String({ description: 'Immutable after creation.' }),
  id: Type.Optional(Type.String({ description: 'Read-only; on PUT, when sent, it must be the id in the path.' })),
});

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
      const withBoards = request.query.include_board_annotations === 'true';
      return (await listQueryAnnotations(store, env, dataset, withBoards)).map(queryAnnotationAnswer);
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
      const body = request.body as QueryAnnotationInput;
      const created = await createQueryAnnotation(store, env, dataset, body);
      return sendCreated(reply, queryAnnotationAnswer(created));
    },
  );

  app.get(
    '/1/query_annotations/:datasetSlug/:queryAnnotationId',
    { schema: { tags, security, params: ItemParams, response: { 200: QueryAnnotation } }, config: { auth } },
    async (request) =>
      queryAnnotationAnswer(await getQueryAnnotation(store, envOf(request), request.params.datasetSlug, request.params.queryAnnotationId)),
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
      const body = request.body as QueryAnnotationInput;
      const updated = await store.updateObject<StoredQueryAnnotation>(QUERY_ANNOTATION_KIND, id, { body: queryAnnotationChange(current, body) });
      if (!updated) throw notFound('query annotation');
      return queryAnnotationAnswer(updated);
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
