// /1/queries/{datasetSlug|__all__}: create (POST → 200, as Honeycomb answers) and get. Queries
// are immutable specs identified by id: no list, update or delete. Creating does not run one.
// Both routes need the configuration-key permission Manage Queries and Columns (`manage_columns`).
//
// Decisions:
// - The body is validated by src/query/validate.ts only (not by the route's schema, which is
//   there for the OpenAPI document), so every problem is one 422 naming fields like
//   `calculations[1].column`. The response is the spec as sent (known fields, the client's order,
//   no defaults added) plus `id`.
// - A query belongs to the dataset it was created on, or to the environment (`__all__`). It is
//   found only under that same path segment and environment: a query of dataset A is not found
//   under dataset B, nor under `__all__`, and an `__all__` query is not found under a dataset
//   (404 `query not found`). Another environment's query is a 404 the same way.
// - Queries are stored in the generic object store (kind `query`, body = {id, ...spec}).
import { Type, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { unparseable } from '../../validation.js';
import { ALL_DATASETS, findDataset } from '../../domain/datasets.js';
import { shortId } from '../../domain/ids.js';
import { COMPARE_TIME_OFFSETS, FILTER_OPS, HAVING_OPS, QUERY_OPS, type QuerySpec, type StoredQuery } from '../../query/spec.js';
import { MAX_FILTER_VALUES, validateQuerySpec } from '../../query/validate.js';
import type { ConfigStore, Dataset, Environment, StoredObject } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { findOwned } from '../resource.js';
import { SlugParams, itemParams } from './schemas.js';
import { QUERY_KIND } from '../../domain/kinds.js';

const tags = ['Queries'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_columns' } as const;

const enumOf = <T extends string | number>(values: readonly T[]): TUnsafe<T> =>
  Type.Unsafe<T>({ type: typeof values[0] === 'number' ? 'integer' : 'string', enum: [...values] });
const nullable = (s: TSchema) => Type.Union([s, Type.Null()]);

/** Honeycomb's Query object, for the OpenAPI document (validation is validateQuerySpec's). */
export const QuerySchema = Type.Object(
  {
    id: Type.Optional(Type.String({ readOnly: true })),
    calculations: Type.Optional(
      Type.Array(Type.Object({ op: enumOf(QUERY_OPS), column: Type.Optional(nullable(Type.String())) }), { maxItems: 100 }),
    ),
    filters: Type.Optional(
      Type.Array(
        Type.Object({
          column: nullable(Type.String()),
          op: enumOf(FILTER_OPS),
          value: Type.Optional(
            Type.Union([Type.Null(), Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.String(), { maxItems: MAX_FILTER_VALUES })]),
          ),
        }),
        { maxItems: 100 },
      ),
    ),
    filter_combination: Type.Optional(enumOf(['AND', 'OR'] as const)),
    breakdowns: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 100 })),
    orders: Type.Optional(
      Type.Array(
        Type.Object({
          column: Type.Optional(Type.String()),
          op: Type.Optional(enumOf(QUERY_OPS)),
          order: Type.Optional(enumOf(['ascending', 'descending'] as const)),
        }),
        { maxItems: 100 },
      ),
    ),
    havings: Type.Optional(
      Type.Array(
        Type.Object({
          calculate_op: enumOf(QUERY_OPS.filter((op) => op !== 'HEATMAP')),
          column: Type.Optional(nullable(Type.String())),
          op: enumOf(HAVING_OPS),
          value: Type.Number(),
        }),
        { maxItems: 100 },
      ),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, description: 'At most 1000 on create; 10000 for disable_series query results.' })),
    time_range: Type.Optional(Type.Integer({ minimum: 1 })),
    start_time: Type.Optional(Type.Integer({ minimum: 1 })),
    end_time: Type.Optional(Type.Integer({ minimum: 1 })),
    granularity: Type.Optional(Type.Integer({ minimum: 0, description: '0 or absent: automatic; otherwise T/1000…T seconds for a query of duration T.' })),
    calculated_fields: Type.Optional(
      Type.Array(Type.Object({ name: Type.String({ minLength: 1 }), expression: Type.String({ minLength: 1 }) }), { maxItems: 100 }),
    ),
    compare_time_offset_seconds: Type.Optional(enumOf(COMPARE_TIME_OFFSETS)),
  },
  { description: 'A query specification. Unknown fields are ignored and not echoed.' },
);

const ItemParams = itemParams('queryId');

/** The dataset a `{datasetSlug}` path segment names, or null for `__all__`; 404 for unknown datasets. */
export async function datasetOrAll(store: ConfigStore, env: Environment, segment: string): Promise<Dataset | null> {
  return segment === ALL_DATASETS ? null : findDataset(store, env, segment);
}

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
  return findOwned<StoredQuery>(store, QUERY_KIND, id, 'query', env, dataset);
}

/** The query `id` of the dataset (or `__all__`) named by the path segment, in the environment; 404 otherwise. */
export async function getQuery(store: ConfigStore, env: Environment, datasetSlugOrAll: string, id: string): Promise<StoredQuery> {
  return (await getQueryObject(store, env, datasetSlugOrAll, id)).body;
}

export function registerQueries(app: App, { store }: ApiContext): void {
  app.post(
    '/1/queries/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        body: QuerySchema,
        description:
          'Creates a query from a specification (does not run it) and answers 200 with the spec as sent plus `id`. ' +
          '`__all__` makes an environment-wide query.',
        response: { 200: QuerySchema },
      },
      // The spec is validated by validateQuerySpec (field paths like `calculations[1].column`).
      validatorCompiler: () => () => true,
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      const input: unknown = request.body;
      if (input === undefined) throw unparseable();
      return saveQuery(store, env, dataset, validateQuerySpec(input));
    },
  );

  app.get(
    '/1/queries/:datasetSlug/:queryId',
    { schema: { tags, security, params: ItemParams, response: { 200: QuerySchema } }, config: { auth } },
    async (request) => getQuery(store, envOf(request), request.params.datasetSlug, request.params.queryId),
  );
}
