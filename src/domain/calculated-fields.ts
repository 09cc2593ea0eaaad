// Calculated fields (Honeycomb's "derived columns") as stored configuration objects, and the
// checks a create or update runs: the expression parses and type-checks in every scope the field
// is visible in, and no chain of calculated fields references itself.
import { ExpressionError } from '../query/expr/index.js';
import { columnSources, FieldScope, type CalculatedSource } from '../query/fields.js';
import type { ConfigStore, Dataset, Environment, StoredObject } from '../stores/config/types.js';

export const CALCULATED_FIELD_KIND = 'derived_column';

export interface CalculatedFieldBody {
  alias: string;
  expression: string;
  description: string;
}
export type CalculatedFieldObject = StoredObject<CalculatedFieldBody>;

const toSource = (o: CalculatedFieldObject): CalculatedSource => ({
  name: o.body.alias,
  expression: o.body.expression,
  origin: o.datasetId === null ? 'environment-wide calculated field' : 'calculated field of the dataset',
});

/** The stored calculated fields of one scope: a dataset's, or the environment-wide ones (null). */
export function listCalculatedFieldObjects(store: ConfigStore, env: Environment, datasetId: string | null): Promise<CalculatedFieldObject[]> {
  return store.listObjects<CalculatedFieldBody>(CALCULATED_FIELD_KIND, { environmentId: env.id, datasetId });
}

/**
 * The calculated fields a query of the dataset sees (null: an environment-wide query):
 * environment-wide fields first, then the dataset's own, so FieldScope lets the dataset's shadow
 * environment-wide ones of the same alias.
 */
export async function listCalculatedFields(store: ConfigStore, env: Environment, datasetId: string | null): Promise<CalculatedSource[]> {
  const envWide = await listCalculatedFieldObjects(store, env, null);
  const own = datasetId === null ? [] : await listCalculatedFieldObjects(store, env, datasetId);
  return [...envWide, ...own].map(toSource);
}

/** Placeholder binder for validation: nothing is executed. */
const dryBind = () => {
  let n = 0;
  return () => `$${++n}`;
};

/**
 * Checks a calculated field about to be stored (`replacing`: the id it replaces on update).
 * A dataset field is compiled with the dataset's columns and the fields it can see; an
 * environment-wide one in the environment's scope and in the scope of every dataset (where
 * dataset fields could close a cycle through it). Throws ExpressionError.
 */
export async function checkCalculatedField(
  store: ConfigStore,
  env: Environment,
  dataset: Dataset | null,
  candidate: { alias: string; expression: string },
  replacing?: string,
): Promise<void> {
  const envWide = (await listCalculatedFieldObjects(store, env, null)).filter((o) => o.id !== replacing);
  const scopes: { columns: Parameters<typeof columnSources>[0]; calculated: CalculatedSource[] }[] = [];
  const self: CalculatedSource = { name: candidate.alias, expression: candidate.expression };
  if (dataset) {
    const own = (await listCalculatedFieldObjects(store, env, dataset.id)).filter((o) => o.id !== replacing);
    scopes.push({ columns: await store.listColumns(dataset.id), calculated: [...envWide.map(toSource), ...own.map(toSource), self] });
  } else {
    scopes.push({ columns: [], calculated: [...envWide.map(toSource), self] });
    for (const ds of await store.listDatasets(env.id)) {
      const own = await listCalculatedFieldObjects(store, env, ds.id);
      if (own.length === 0) continue;
      // The dataset's fields shadow environment-wide ones: only check where this one is visible.
      if (own.some((o) => o.body.alias === candidate.alias)) continue;
      scopes.push({ columns: await store.listColumns(ds.id), calculated: [...envWide.map(toSource), self, ...own.map(toSource)] });
    }
  }
  for (const s of scopes) {
    const scope = new FieldScope({
      columns: columnSources(s.columns),
      calculated: s.calculated,
      eventTimeSql: '__time',
      ingestTimeSql: '__ingested',
      bind: dryBind(),
    });
    scope.compileAs(candidate.alias);
  }
}

/**
 * Hook for "a calculated field used by an SLO, trigger or board cannot be deleted (409)": returns
 * a description of the first dependant (e.g. `SLO "checkout" (id …)`), which the DELETE route
 * turns into a 409. SLOs (kind `slo`, body `sli.alias` and `dataset_ids`) use a dataset's field
 * when they include the dataset, and an environment-wide field when one of their datasets has no
 * field of its own by that alias (which would shadow it).
 */
export async function calculatedFieldInUse(store: ConfigStore, env: Environment, field: CalculatedFieldObject): Promise<string | undefined> {
  const slos = await store.listObjects<{ name?: unknown; sli?: { alias?: unknown }; dataset_ids?: unknown }>('slo', { environmentId: env.id });
  for (const slo of slos) {
    if (slo.body?.sli?.alias !== field.body.alias) continue;
    const ids = Array.isArray(slo.body.dataset_ids) ? (slo.body.dataset_ids as string[]) : [];
    let uses = false;
    if (field.datasetId !== null) uses = ids.includes(field.datasetId);
    else {
      for (const id of ids) {
        const own = await listCalculatedFieldObjects(store, env, id);
        if (!own.some((o) => o.body.alias === field.body.alias)) uses = true;
      }
    }
    if (uses) return `SLO ${JSON.stringify(String(slo.body.name))} (id ${slo.id})`;
  }
  return undefined;
}

export { ExpressionError };
