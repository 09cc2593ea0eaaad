// /1/columns: list (a dataset's, or the environment's with `__all__`; `?key_name=` answers one
// Column), create, get, full-replacement PUT, DELETE. Every route needs the configuration-key
// permission Manage Queries and Columns (`manage_columns`). What a body may say, which dataset a
// path names and how a column is answered (the decisions): src/domain/columns.ts.
//
// Columns normally appear on ingest (src/ingest/writer.ts). Every change of a dataset's columns
// goes through the ingest writer's lock: create and delete run inside it; a PUT changes only
// the config store's copy (type, description, hidden), then drops the writer's cached copy.
//
// - Creating past the per-dataset column cap → 400 `Dataset has too many columns.` (the ingest text).
// - A `key_name` that is not well-formed Unicode (a lone surrogate) follows the ingest rule
//   (wellFormed, src/ingest/normalise.ts): each lone surrogate becomes U+FFFD, in a create and in
//   a lookup alike, so the column is the one an event with that field name writes to.
import { Type, type TUnsafe } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { ApiError, notFound } from '../../errors.js';
import { findDataset } from '../../domain/datasets.js';
import { columnAnswer, columnChange, columnDataset, duplicateColumn, findColumn, findColumnByKey, listColumnsAt, newColumn } from '../../domain/columns.js';
import { wellFormed } from '../../ingest/normalise.js';
import { DATASET_TOO_MANY_COLUMNS } from '../../ingest/writer.js';
import type { ApiContext, App } from '../context.js';
import { orConflict, sendCreated, sendDeleted } from '../resource.js';
import { SlugParams, itemParams } from './schemas.js';

const tags = ['Columns'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_columns' } as const;

// Plain string enums: one readable validation error ("must be equal to one of the allowed values").
const enumOf = <T extends string>(values: readonly T[], description?: string): TUnsafe<T> =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });
const StoredType = enumOf(['string', 'float', 'integer', 'boolean'] as const);
const ColumnTypeSchema = enumOf(
  ['string', 'float', 'integer', 'boolean', 'histogram'] as const,
  'histogram is only accepted in metrics datasets (400 here).',
);

export const Column = Type.Object({
  id: Type.String(),
  key_name: Type.String(),
  type: StoredType,
  description: Type.String(),
  hidden: Type.Boolean(),
  last_written: Type.Optional(Type.String({ description: 'Absent until the column has received data.' })),
  created_at: Type.String(),
  updated_at: Type.String(),
});

const CreateColumn = Type.Object({
  key_name: Type.String({ minLength: 1, maxLength: 255 }),
  type: Type.Optional(ColumnTypeSchema),
  description: Type.Optional(Type.String({ maxLength: 255 })),
  hidden: Type.Optional(Type.Boolean()),
});

const UpdateColumn = Type.Object({
  key_name: Type.Optional(Type.String({ description: 'Read-only: when sent it must be the column’s key name.' })),
  type: Type.Optional(ColumnTypeSchema),
  description: Type.Optional(Type.String({ maxLength: 255 })),
  hidden: Type.Optional(Type.Boolean()),
});

const ListQuery = Type.Object({ key_name: Type.Optional(Type.String()) });
const ItemParams = itemParams('columnId');

const Conflict = Type.Object(
  {
    error: Type.String(),
    status: Type.Number(),
    type: Type.String(),
    title: Type.String(),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String()),
  },
  { description: 'A column of that key name already exists' },
);
const conflictResponse = { description: 'Conflict', content: { 'application/problem+json': { schema: Conflict } } };

export function registerColumns(app: App, { store, writer }: ApiContext): void {
  app.get(
    '/1/columns/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        querystring: ListQuery,
        description: '`__all__` lists the columns of every dataset of the environment. With `key_name`, answers that one Column (404 if none).',
        response: { 200: Type.Union([Type.Array(Column), Column]) },
      },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const { datasetSlug } = request.params;
      const keyName = request.query.key_name;
      if (keyName !== undefined) return columnAnswer(await findColumnByKey(store, env, datasetSlug, wellFormed(keyName)));
      return (await listColumnsAt(store, env, datasetSlug)).map(columnAnswer);
    },
  );

  app.post(
    '/1/columns/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        body: CreateColumn,
        description: 'Creates a column before any event has it. `__all__` is refused (422): a column belongs to one dataset.',
        response: { 201: Column, 409: conflictResponse },
      },
      config: { auth },
    },
    async (request, reply) => {
      const ds = await columnDataset(store, envOf(request), request.params.datasetSlug);
      const keyName = wellFormed(request.body.key_name);
      const fields = await newColumn(store, ds, keyName, request.body);
      try {
        const col = await orConflict(writer.createColumn(ds, keyName, fields), () => duplicateColumn(keyName));
        return sendCreated(reply, columnAnswer(col));
      } catch (err) {
        // The writer's cap on a dataset's columns (its error, its text).
        if (err instanceof Error && err.message === DATASET_TOO_MANY_COLUMNS) throw new ApiError(400, DATASET_TOO_MANY_COLUMNS);
        throw err;
      }
    },
  );

  app.get(
    '/1/columns/:datasetSlug/:columnId',
    { schema: { tags, security, params: ItemParams, response: { 200: Column } }, config: { auth } },
    async (request) => {
      const ds = await findDataset(store, envOf(request), request.params.datasetSlug);
      return columnAnswer(await findColumn(store, ds, request.params.columnId));
    },
  );

  app.put(
    '/1/columns/:datasetSlug/:columnId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        body: UpdateColumn,
        description:
          'Full replacement of type, description and hidden (omitted: string, "", false). `key_name` is read-only. ' +
          'Changing `type` changes how the values are shown and read, not how they are stored.',
        response: { 200: Column },
      },
      config: { auth },
    },
    async (request) => {
      const ds = await findDataset(store, envOf(request), request.params.datasetSlug);
      const col = await findColumn(store, ds, request.params.columnId);
      const { key_name } = request.body;
      const change = columnChange(col, key_name === undefined ? undefined : wellFormed(key_name), request.body);
      // Under the writer's lock: a concurrent commit widening this column cannot interleave.
      const updated = await writer.editColumn(ds.id, () => store.updateColumn(ds.id, col.id, change));
      if (!updated) throw notFound('column');
      return columnAnswer(updated);
    },
  );

  app.delete(
    '/1/columns/:datasetSlug/:columnId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        description: 'Answers 204. The values go with the column; a later event with that field starts a new column.',
        response: { 204: Type.Null({ description: 'Deleted' }) },
      },
      config: { auth },
    },
    async (request, reply) => {
      const ds = await findDataset(store, envOf(request), request.params.datasetSlug);
      const col = await findColumn(store, ds, request.params.columnId);
      if (!(await writer.deleteColumn(ds, col))) throw notFound('column');
      return sendDeleted(reply);
    },
  );
}
