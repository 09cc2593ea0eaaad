// /1/derived_columns: calculated fields (Honeycomb's "derived columns") of a dataset, or
// environment-wide with `__all__`. List (`?alias=` answers one object), create (201), get,
// full-replacement PUT, DELETE (204). Every route needs Manage Queries and Columns
// (`manage_columns`).
//
// Decisions:
// - Stored in the config store's generic object store: kind `derived_column`, scope = dataset id
//   (environment id for `__all__`), unique key = alias, so an alias is unique within a dataset and
//   within the environment-wide set (409 otherwise). A dataset field may share an alias with an
//   environment-wide one: in that dataset's queries the dataset's field wins.
// - A dataset's list shows only the dataset's own fields; `__all__` shows the environment-wide ones.
// - `expression` must parse and type-check (422, field `expression`, description
//   "expression: at position N: problem"); a field that would reference itself through other
//   fields is a 422 as well. References to fields that do not exist (yet) are allowed: they read
//   null until the column appears.
// - An id of another dataset, scope or environment → 404. PUT is a full replacement: `alias` and
//   `expression` are required, an omitted `description` becomes "". Read-only fields sent in a
//   body (`id`, timestamps) are ignored.
// - DELETE answers 409 while something uses the field: see calculatedFieldInUse (an SLO,
//   a trigger's query or a board's query panel reading it).
import { Type, type Static } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { ApiError, invalidField, notFound, BLANK } from '../../errors.js';
import { ALL_DATASETS, findDataset } from '../../domain/datasets.js';
import { shortId } from '../../domain/ids.js';
import { calculatedFieldInUse, checkCalculatedField, listCalculatedFieldObjects, type CalculatedFieldBody, type CalculatedFieldObject } from '../../domain/calculated-fields.js';
import { ExpressionError } from '../../query/expr/index.js';
import { type ConfigStore, type Dataset, type Environment } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { findOwned, orConflict, sendCreated, sendDeleted } from '../resource.js';
import { SlugParams, itemParams } from './schemas.js';
import { CALCULATED_FIELD_KIND } from '../../domain/kinds.js';

export { listCalculatedFields } from '../../domain/calculated-fields.js';

const tags = ['Calculated Fields'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_columns' } as const;

export const CalculatedField = Type.Object({
  id: Type.String(),
  alias: Type.String(),
  expression: Type.String(),
  description: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

const CalculatedFieldInput = Type.Object({
  alias: Type.String({ minLength: 1, maxLength: 255 }),
  expression: Type.String({ minLength: 1, maxLength: 4095, description: 'The calculated-field formula; see docs/calculated-fields.md.' }),
  description: Type.Optional(Type.String({ maxLength: 255 })),
});

const ListQuery = Type.Object({ alias: Type.Optional(Type.String()) });
const ItemParams = itemParams('derivedColumnId');

const Problem = Type.Object({
  error: Type.String(),
  status: Type.Number(),
  type: Type.String(),
  title: Type.String(),
  detail: Type.Optional(Type.String()),
  instance: Type.Optional(Type.String()),
});
const conflictResponse = { description: 'Conflict', content: { 'application/problem+json': { schema: Problem } } };

export function calculatedFieldResponse(o: CalculatedFieldObject): Static<typeof CalculatedField> {
  return {
    id: o.id,
    alias: o.body.alias,
    expression: o.body.expression,
    description: o.body.description,
    created_at: o.createdAt,
    updated_at: o.updatedAt,
  };
}

interface Scope {
  env: Environment;
  dataset: Dataset | null;
  /** The object store's scope: the dataset id, or the environment id for `__all__`. */
  key: string;
}

async function scopeOf(store: ConfigStore, env: Environment, segment: string): Promise<Scope> {
  if (segment === ALL_DATASETS) return { env, dataset: null, key: env.id };
  const dataset = await findDataset(store, env, segment);
  return { env, dataset, key: dataset.id };
}

const conflict = (alias: string) =>
  new ApiError(409, 'A resource by that name already exists.', { detail: `a calculated field with alias ${JSON.stringify(alias)} already exists here` });

function checkAlias(alias: string): void {
  if (alias.trim() === '') throw invalidField('alias', BLANK, 'missing');
}

async function checkExpressionOf(store: ConfigStore, scope: Scope, body: { alias: string; expression: string }, replacing?: string) {
  if (body.expression.trim() === '') throw invalidField('expression', BLANK, 'missing');
  try {
    await checkCalculatedField(store, scope.env, scope.dataset, body, replacing);
  } catch (err) {
    if (err instanceof ExpressionError) throw invalidField('expression', `at position ${err.position}: ${err.message}`);
    throw err;
  }
}

export function registerDerivedColumns(app: App, { store }: ApiContext): void {
  const findField = async (scope: Scope, id: string): Promise<CalculatedFieldObject> => {
    const o = await findOwned<CalculatedFieldBody>(store, CALCULATED_FIELD_KIND, id, 'calculated field', scope.env, scope.dataset);
    if (o.kind !== CALCULATED_FIELD_KIND || o.scope !== scope.key) throw notFound('calculated field');
    return o;
  };

  app.get(
    '/1/derived_columns/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        querystring: ListQuery,
        description: 'A dataset’s calculated fields, or the environment-wide ones with `__all__`. With `alias`, that one field (404 if none).',
        response: { 200: Type.Union([Type.Array(CalculatedField), CalculatedField]) },
      },
      config: { auth },
    },
    async (request) => {
      const scope = await scopeOf(store, envOf(request), request.params.datasetSlug);
      const fields = await listCalculatedFieldObjects(store, scope.env, scope.dataset?.id ?? null);
      const alias = request.query.alias;
      if (alias !== undefined) {
        const match = fields.find((f) => f.body.alias === alias);
        if (!match) throw notFound('calculated field');
        return calculatedFieldResponse(match);
      }
      return fields.map(calculatedFieldResponse);
    },
  );

  app.post(
    '/1/derived_columns/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        body: CalculatedFieldInput,
        description: 'Creates a calculated field. The expression must parse and type-check (422 naming the position otherwise); an alias already used here → 409.',
        response: { 201: CalculatedField, 409: conflictResponse },
      },
      config: { auth },
    },
    async (request, reply) => {
      const scope = await scopeOf(store, envOf(request), request.params.datasetSlug);
      const { alias, expression, description = '' } = request.body;
      checkAlias(alias);
      if ((await listCalculatedFieldObjects(store, scope.env, scope.dataset?.id ?? null)).some((f) => f.body.alias === alias)) throw conflict(alias);
      await checkExpressionOf(store, scope, { alias, expression });
      const created = await orConflict(
        store.createObject<CalculatedFieldBody>({
          id: shortId(),
          kind: CALCULATED_FIELD_KIND,
          teamId: scope.env.teamId,
          environmentId: scope.env.id,
          datasetId: scope.dataset?.id ?? null,
          scope: scope.key,
          uniqueKey: alias,
          body: { alias, expression, description },
        }),
        () => conflict(alias),
      );
      return sendCreated(reply, calculatedFieldResponse(created));
    },
  );

  app.get(
    '/1/derived_columns/:datasetSlug/:derivedColumnId',
    { schema: { tags, security, params: ItemParams, response: { 200: CalculatedField } }, config: { auth } },
    async (request) => {
      const scope = await scopeOf(store, envOf(request), request.params.datasetSlug);
      return calculatedFieldResponse(await findField(scope, request.params.derivedColumnId));
    },
  );

  app.put(
    '/1/derived_columns/:datasetSlug/:derivedColumnId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        body: CalculatedFieldInput,
        description: 'Full replacement: alias and expression required, an omitted description becomes "".',
        response: { 200: CalculatedField, 409: conflictResponse },
      },
      config: { auth },
    },
    async (request) => {
      const scope = await scopeOf(store, envOf(request), request.params.datasetSlug);
      const existing = await findField(scope, request.params.derivedColumnId);
      const { alias, expression, description = '' } = request.body;
      checkAlias(alias);
      const others = (await listCalculatedFieldObjects(store, scope.env, scope.dataset?.id ?? null)).filter((f) => f.id !== existing.id);
      if (others.some((f) => f.body.alias === alias)) throw conflict(alias);
      await checkExpressionOf(store, scope, { alias, expression }, existing.id);
      const updated = await orConflict(
        store.updateObject<CalculatedFieldBody>(CALCULATED_FIELD_KIND, existing.id, {
          body: { alias, expression, description },
          uniqueKey: alias,
          touch: true,
        }),
        () => conflict(alias),
      );
      if (!updated) throw notFound('calculated field');
      return calculatedFieldResponse(updated);
    },
  );

  app.delete(
    '/1/derived_columns/:datasetSlug/:derivedColumnId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        description: 'Answers 204; 409 while an SLO, a trigger or a board (through a query panel) uses the field.',
        response: { 204: Type.Null({ description: 'Deleted' }), 409: conflictResponse },
      },
      config: { auth },
    },
    async (request, reply) => {
      const scope = await scopeOf(store, envOf(request), request.params.datasetSlug);
      const field = await findField(scope, request.params.derivedColumnId);
      const user = await calculatedFieldInUse(store, scope.env, field);
      if (user) throw new ApiError(409, 'The calculated field is in use.', { detail: `the calculated field is used by ${user}; change or delete that first` });
      if (!(await store.deleteObject(CALCULATED_FIELD_KIND, field.id))) throw notFound('calculated field');
      return sendDeleted(reply);
    },
  );
}
