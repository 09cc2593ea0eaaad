// What a query reads: the datasets named by a path segment (one, or every dataset of the
// environment for `__all__`), each with its columns and the calculated fields visible in it.
import type { ConfigStore, Dataset, Environment } from '../stores/config/types.js';
import type { CalculatedSource } from './fields.js';
import type { Source } from './plan.js';

/** The body of a stored calculated field (object kind `derived_column`). */
interface CalculatedFieldBody {
  alias: string;
  expression: string;
}

/** Environment-wide calculated fields first, then the dataset's (later ones shadow earlier). */
export async function calculatedFieldsOf(store: ConfigStore, env: Environment, dataset: Dataset | null): Promise<CalculatedSource[]> {
  const own = async (datasetId: string | null, origin: string) =>
    (await store.listObjects<CalculatedFieldBody>('derived_column', { environmentId: env.id, datasetId })).map((o) => ({
      name: o.body.alias,
      expression: o.body.expression,
      origin,
    }));
  return [...(await own(null, 'environment')), ...(dataset ? await own(dataset.id, dataset.slug) : [])];
}

/** The sources of a query on `dataset`, or on every dataset of the environment when null. */
export async function querySources(store: ConfigStore, env: Environment, dataset: Dataset | null): Promise<Source[]> {
  const datasets = dataset ? [dataset] : await store.listDatasets(env.id);
  return Promise.all(
    datasets.map(async (ds) => ({ dataset: ds, columns: await store.listColumns(ds.id), calculated: await calculatedFieldsOf(store, env, ds) })),
  );
}
