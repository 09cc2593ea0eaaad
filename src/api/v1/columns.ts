// /1/columns: list (a dataset's, or the environment's with `__all__`; `?key_name=` answers one
// Column), create, get, full-replacement PUT, DELETE. Every route needs the configuration-key
// permission Manage Queries and Columns (`manage_columns`).
//
// Columns normally appear on ingest (src/ingest/writer.ts). Every change of a dataset's columns
// goes through the ingest writer's lock: create and delete run inside it; a PUT changes only
// the config store's copy (type, description, hidden), then drops the writer's cached copy.
//
// Decisions:
// - `type` is what the API shows and queries read; `storedType` (the event store's type) is
//   untouched by the API after creation and only widens on ingest. A PUT that changes `type`
//   converts nothing.
// - POST `/1/columns/__all__` → 422 (field `params.datasetSlug`): a column lives in one dataset's
//   table, so environment-wide creation is not supported. Listing with `__all__` works; get,
//   update and delete need a real dataset (`__all__` → 404, as for any unknown dataset).
// - `?key_name=` with `__all__` answers the first match in dataset-slug order.
// - `histogram` is accepted by the schema but refused with 400: it is for metrics datasets only.
// - Creating past the per-dataset column cap → 400 `Dataset has too many columns.` (the ingest text).
// - PUT is a full replacement like Honeycomb's other PUTs: an omitted `type` is `string`, an omitted
//   `description` is "" and an omitted `hidden` is false. `key_name` may be omitted; if sent it
//   must be the column's (422 otherwise). Other read-only fields (`id`, timestamps) are ignored.
// - `last_written` is left out until the column has received data: the contract types it as a
//   string, not nullable.
// - A `key_name` that is not well-formed Unicode (a lone surrogate) follows the ingest rule
//   (wellFormed, src/ingest/normalise.ts): each lone surrogate becomes U+FFFD, in a create and in
//   a lookup alike, so the column is the one an event with that field name writes to.
import { Type, type Static, type TUnsafe } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { ApiError, invalidField, notFound, BLANK } from '../../errors.js';
import { ALL_DATASETS, findDataset } from '../../domain/datasets.js';
import { wellFormed } from '../../ingest/normalise.js';
import { DATASET_TOO_MANY_COLUMNS } from '../../ingest/writer.js';
import { UniqueViolation, type Column as ColumnRecord, type ColumnType, type Dataset } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { sendCreated, sendDeleted } from '../resource.js';
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

export function columnResponse(c: ColumnRecord): Static<typeof Column> {
  return {
    id: c.id,
    key_name: c.keyName,
    type: c.type,
    description: c.description,
    hidden: c.hidden,
    ...(c.lastWritten ? { last_written: c.lastWritten } : {}),
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

/** The API's column type, refusing `histogram` (metrics datasets only, which Waggle has none of). */
/** `type` as validated by the schema's enum (the Fastify provider's TypeBox types it `unknown`). */
function apiType(type: unknown): ColumnType {
  if (type === 'histogram') throw new ApiError(400, 'histogram columns are only supported in metrics datasets');
  return (type ?? 'string') as ColumnType;
}

function checkKeyName(keyName: string): void {
  if (keyName.trim() === '') throw invalidField('key_name', BLANK, 'missing');
}

export function registerColumns(app: App, { store, writer }: ApiContext): void {
  const findColumn = async (ds: Dataset, id: string): Promise<ColumnRecord> => {
    const col = (await store.listColumns(ds.id)).find((c) => c.id === id);
    if (!col) throw notFound('column');
    return col;
  };

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
      const datasets = datasetSlug === ALL_DATASETS ? await store.listDatasets(env.id) : [await findDataset(store, env, datasetSlug)];
      const keyName = request.query.key_name === undefined ? undefined : wellFormed(request.query.key_name);
      const columns: ColumnRecord[] = [];
      for (const ds of datasets) {
        const own = await store.listColumns(ds.id);
        if (keyName === undefined) for (const c of own) columns.push(c);
        else {
          const match = own.find((c) => c.keyName === keyName);
          if (match) return columnResponse(match);
        }
      }
      if (keyName !== undefined) throw notFound('column');
      return columns.map(columnResponse);
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
      const env = envOf(request);
      const { datasetSlug } = request.params;
      if (datasetSlug === ALL_DATASETS) {
        throw invalidField('params.datasetSlug', 'environment-wide (__all__) column creation is not supported; create the column in a dataset');
      }
      const ds = await findDataset(store, env, datasetSlug);
      const { description = '', hidden = false } = request.body;
      const keyName = wellFormed(request.body.key_name);
      checkKeyName(keyName);
      const type = apiType(request.body.type);
      const conflict = () =>
        new ApiError(409, 'A resource by that name already exists.', { detail: `column ${JSON.stringify(keyName)} already exists in this dataset` });
      // A duplicate is a 409 even when the dataset is full (the writer checks the cap first).
      if ((await store.listColumns(ds.id)).some((c) => c.keyName === keyName)) throw conflict();
      try {
        const col = await writer.createColumn(ds, keyName, { type, description, hidden });
        return sendCreated(reply, columnResponse(col));
      } catch (err) {
        if (err instanceof UniqueViolation) throw conflict();
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
      return columnResponse(await findColumn(ds, request.params.columnId));
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
      const col = await findColumn(ds, request.params.columnId);
      const body = request.body;
      if (body.key_name !== undefined && wellFormed(body.key_name) !== col.keyName) throw invalidField('key_name', 'is read-only and cannot be changed');
      const type = apiType(body.type);
      // Under the writer's lock: a concurrent commit widening this column cannot interleave.
      const updated = await writer.editColumn(ds.id, () => store.updateColumn(ds.id, col.id, { type, description: body.description ?? '', hidden: body.hidden ?? false }));
      if (!updated) throw notFound('column');
      return columnResponse(updated);
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
      const col = await findColumn(ds, request.params.columnId);
      if (!(await writer.deleteColumn(ds, col))) throw notFound('column');
      return sendDeleted(reply);
    },
  );
}
