// /1/derived_columns: calculated fields (Honeycomb's "derived columns") of a dataset, or
// environment-wide with `__all__`. List (`?alias=` answers one object), create (201), get,
// full-replacement PUT, DELETE (204). Every route needs Manage Queries and Columns
// (`manage_columns`). How a field is stored, what a body may say, and when a field may not be
// deleted (the decisions): src/domain/calculated-fields.ts.
//
// - A dataset's list shows only the dataset's own fields; `__all__` shows the environment-wide ones.
// - An id of another dataset, scope or environment → 404. PUT is a full replacement: `alias` and
//   `expression` are required, an omitted `description` becomes "". Read-only fields sent in a
//   body (`id`, timestamps) are ignored.
import { Type } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { notFound } from '../../errors.js';
import {
  calculatedFieldAnswer,
  calculatedFieldBody,
  calculatedFieldScope,
  deleteCalculatedField,
  duplicateAlias,
  listCalculatedFieldObjects,
  newCalculatedField,
  type CalculatedFieldBody,
  type CalculatedFieldObject,
  type CalculatedFieldScope,
} from '../../domain/calculated-fields.js';
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

export function registerDerivedColumns(app: App, { store }: ApiContext): void {
  const findField = async (scope: CalculatedFieldScope, id: string): Promise<CalculatedFieldObject> => {
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
      const scope = await calculatedFieldScope(store, envOf(request), request.params.datasetSlug);
      const fields = await listCalculatedFieldObjects(store, scope.env, scope.dataset?.id ?? null);
      const alias = request.query.alias;
      if (alias !== undefined) {
        const match = fields.find((f) => f.body.alias === alias);
        if (!match) throw notFound('calculated field');
        return calculatedFieldAnswer(match);
      }
      return fields.map(calculatedFieldAnswer);
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
      const scope = await calculatedFieldScope(store, envOf(request), request.params.datasetSlug);
      const body = await calculatedFieldBody(store, scope, request.body);
      const created = await orConflict(store.createObject(newCalculatedField(scope, body)), () => duplicateAlias(body.alias));
      return sendCreated(reply, calculatedFieldAnswer(created));
    },
  );

  app.get(
    '/1/derived_columns/:datasetSlug/:derivedColumnId',
    { schema: { tags, security, params: ItemParams, response: { 200: CalculatedField } }, config: { auth } },
    async (request) => {
      const scope = await calculatedFieldScope(store, envOf(request), request.params.datasetSlug);
      return calculatedFieldAnswer(await findField(scope, request.params.derivedColumnId));
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
      const scope = await calculatedFieldScope(store, envOf(request), request.params.datasetSlug);
      const existing = await findField(scope, request.params.derivedColumnId);
      const body = await calculatedFieldBody(store, scope, request.body, existing.id);
      const updated = await orConflict(
        store.updateObject<CalculatedFieldBody>(CALCULATED_FIELD_KIND, existing.id, { body, uniqueKey: body.alias, touch: true }),
        () => duplicateAlias(body.alias),
      );
      if (!updated) throw notFound('calculated field');
      return calculatedFieldAnswer(updated);
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
      const scope = await calculatedFieldScope(store, envOf(request), request.params.datasetSlug);
      const field = await findField(scope, request.params.derivedColumnId);
      if (!(await deleteCalculatedField(store, scope.env, field))) throw notFound('calculated field');
      return sendDeleted(reply);
    },
  );
}
