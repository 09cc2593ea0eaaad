// Columns as the Columns API sees them (/1/columns, src/api/v1/columns.ts): which dataset a path
// names, finding a column, what a create or PUT may say, and how a column is answered. The
// columns themselves are made and changed under the ingest writer's lock (the route calls it).
//
// Decisions:
// - `type` is what the API shows and queries read; `storedType` (the event store's type) is
//   untouched by the API after creation and only widens on ingest. A PUT that changes `type`
//   converts nothing.
// - A column is created in one dataset: `__all__` → 422 (field `params.datasetSlug`), since a
//   column lives in one dataset's table. Listing with `__all__` works (every dataset's columns,
//   in dataset-slug order; `?key_name=` answers the first match in that order); get, update and
//   delete need a real dataset (`__all__` → 404, as for any unknown dataset).
// - `key_name` is not blank (422 `missing`); a second column of one key name in a dataset → 409.
// - `histogram` is accepted by the schema but refused with 400: it is for metrics datasets only.
// - PUT is a full replacement like Honeycomb's other PUTs: an omitted `type` is `string`, an
//   omitted `description` is "" and an omitted `hidden` is false. `key_name` may be omitted; if
//   sent it must be the column's (422 otherwise).
// - `last_written` is left out until the column has received data: the contract types it as a
//   string, not nullable.
import { ApiError, BLANK, invalidField, notFound } from '../errors.js';
import type { Column, ColumnType, ConfigStore, Dataset, Environment } from '../stores/config/types.js';
import { ALL_DATASETS, findDataset } from './datasets.js';

/** The datasets a list path names: every dataset of the environment for `__all__`, else the one (404 if unknown). */
async function datasetsAt(store: ConfigStore, env: Environment, segment: string): Promise<Dataset[]> {
  return segment === ALL_DATASETS ? store.listDatasets(env.id) : [await findDataset(store, env, segment)];
}

/** The columns a list path names, dataset by dataset. */
export async function listColumnsAt(store: ConfigStore, env: Environment, segment: string): Promise<Column[]> {
  const columns: Column[] = [];
  for (const ds of await datasetsAt(store, env, segment)) columns.push(...(await store.listColumns(ds.id)));
  return columns;
}

/** The first column named `keyName` the list path names; 404 `column not found` otherwise. */
export async function findColumnByKey(store: ConfigStore, env: Environment, segment: string, keyName: string): Promise<Column> {
  for (const ds of await datasetsAt(store, env, segment)) {
    const match = (await store.listColumns(ds.id)).find((c) => c.keyName === keyName);
    if (match) return match;
  }
  throw notFound('column');
}

/** The column `id` of the dataset; 404 `column not found` otherwise. */
export async function findColumn(store: ConfigStore, ds: Dataset, id: string): Promise<Column> {
  const col = (await store.listColumns(ds.id)).find((c) => c.id === id);
  if (!col) throw notFound('column');
  return col;
}

/** The dataset a create path names: 422 for `__all__`, 404 for an unknown dataset. */
export async function columnDataset(store: ConfigStore, env: Environment, segment: string): Promise<Dataset> {
  if (segment === ALL_DATASETS) {
    throw invalidField('params.datasetSlug', 'environment-wide (__all__) column creation is not supported; create the column in a dataset');
  }
  return findDataset(store, env, segment);
}

/** The API's column type, refusing `histogram` (metrics datasets only, which Waggle has none of); omitted: `string`. */
export function apiColumnType(type: unknown): ColumnType {
  if (type === 'histogram') throw new ApiError(400, 'histogram columns are only supported in metrics datasets');
  return (type ?? 'string') as ColumnType;
}

/** The 409 of a key name the dataset has a column of. */
export const duplicateColumn = (keyName: string) =>
  new ApiError(409, 'A resource by that name already exists.', { detail: `column ${JSON.stringify(keyName)} already exists in this dataset` });

/**
 * A new column's fields from a body its route schema has checked (`keyName` as ingest would
 * write it): 422 on a blank key name, 400 on `histogram`, 409 when the dataset has the key name.
 */
export async function newColumn(
  store: ConfigStore,
  ds: Dataset,
  keyName: string,
  input: { type?: unknown; description?: string; hidden?: boolean },
): Promise<{ type: ColumnType; description: string; hidden: boolean }> {
  const { description = '', hidden = false } = input;
  if (keyName.trim() === '') throw invalidField('key_name', BLANK, 'missing');
  const type = apiColumnType(input.type);
  // A duplicate is a 409 even when the dataset is full (the writer checks the cap first).
  if ((await store.listColumns(ds.id)).some((c) => c.keyName === keyName)) throw duplicateColumn(keyName);
  return { type, description, hidden };
}

/** A PUT's full replacement of the column's fields (see the header); `keyName` is the body's, as ingest would write it. */
export function columnChange(
  col: Column,
  keyName: string | undefined,
  input: { type?: unknown; description?: string; hidden?: boolean },
): { type: ColumnType; description: string; hidden: boolean } {
  if (keyName !== undefined && keyName !== col.keyName) throw invalidField('key_name', 'is read-only and cannot be changed');
  return { type: apiColumnType(input.type), description: input.description ?? '', hidden: input.hidden ?? false };
}

/** A column as the API answers it. */
export function columnAnswer(c: Column) {
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
