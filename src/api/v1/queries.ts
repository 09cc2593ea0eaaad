// /1/queries/{datasetSlug|__all__}: create (POST → 200, as Honeycomb answers) and get. Queries
// are immutable specs identified by id: no list, update or delete. Creating does not run one.
// Both routes need the configuration-key permission Manage Queries and Columns (`manage_columns`).
//
// Decisions:
// - The body is validated by its schema (QueryInput, src/api/v1/shapes/query.ts) and then by the rules
//   it cannot say (checkQuerySpec, src/query/validate.ts), so every problem is one 422 naming
//   fields like `calculations.1.column`. The response is the spec as sent (known fields, the
//   client's order, no defaults added) plus `id`.
// - A query belongs to the dataset it was created on, or to the environment (`__all__`). It is
//   found only under that same path segment and environment: a query of dataset A is not found
//   under dataset B, nor under `__all__`, and an `__all__` query is not found under a dataset
//   (404 `query not found`). Another environment's query is a 404 the same way.
// - Queries are stored in the generic object store (kind `query`, body = {id, ...spec}).
import type { Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envOf } from '../../http/auth.js';
import { validateQuerySpec } from '../../query/validate.js';
import type { ApiContext, App } from '../context.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { getQuery, saveQuery } from '../../domain/queries.js';
import { QuerySchema, SlugParams, itemParams } from './schemas.js';
import { QueryInput } from './shapes/query.js';

const tags = ['Queries'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_columns' } as const;

const ItemParams = itemParams('queryId');

export function registerQueries(app: App, { store }: ApiContext): void {
  const datasetOf = (request: FastifyRequest) => datasetOrAll(store, envOf(request), (request.params as { datasetSlug: string }).datasetSlug);
  app.post(
    '/1/queries/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        body: QueryInput,
        description:
          'Creates a query from a specification (does not run it) and answers 200 with the spec as sent plus `id`. ' +
          '`__all__` makes an environment-wide query.',
        response: { 200: QuerySchema },
      },
      // A path's 404 (its dataset) comes before a body's 422.
      preValidation: async (request: FastifyRequest) => void (await datasetOf(request)),
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      return saveQuery(store, env, dataset, validateQuerySpec(request.body as Static<typeof QueryInput>));
    },
  );

  app.get(
    '/1/queries/:datasetSlug/:queryId',
    { schema: { tags, security, params: ItemParams, response: { 200: QuerySchema } }, config: { auth } },
    async (request) => getQuery(store, envOf(request), request.params.datasetSlug, request.params.queryId),
  );
}
