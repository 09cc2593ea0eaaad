// Calculated fields (Honeycomb's "derived columns") as stored configuration objects, and the
// checks a create or update runs: the expression parses and type-checks in every scope the field
// is visible in, and no chain of calculated fields references itself. Also what a body becomes
// (calculatedFieldBody), the answer, and the in-use rule of a delete (/1/derived_columns,
// src/api/v1/derived-columns.ts).
//
// Decisions:
// - Stored in the config store's generic object store: kind `derived_column`, scope = dataset id
//   (environment id for `__all__`), unique key = alias, so an alias is unique within a dataset and
//   within the environment-wide set (409 otherwise). A dataset field may share an alias with an
//   environment-wide one: in that dataset's queries the dataset's field wins.
// - `alias` and `expression` are not blank (422 `missing`); `expression` must parse and
//   type-check (422, field `expression`, description "at position N: problem"); a field that
//   would reference itself through other fields is a 422 as well. References to fields that do
//   not exist (yet) are allowed: they read null until the column appears.
// - A delete answers 409 while something uses the field: see calculatedFieldInUse (an SLO, a
//   trigger's query or a board's query panel reading it).
import { ApiError, BLANK, invalidField } from '../errors.js';
import { CHECK_ONLY_DIALECT, ExpressionError, parseExpression, references } from '../query/expr/index.js';
import { belongsTo } from './scope.js';
import { ALL_DATASETS, findDataset } from './datasets.js';
import { shortId } from './ids.js';
import { columnSources, FieldScope, type CalculatedSource } from '../query/fields.js';
import type { ConfigStore, Dataset, Environment, NewObject, StoredObject } from '../stores/config/types.js';
import { BOARD_KIND, CALCULATED_FIELD_KIND, QUERY_KIND, SLO_KIND, TRIGGER_KIND } from './kinds.js';

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
 * dataset fields could close a cycle through it). Throws ExpressionError; answers the field's
 * value type (in its first scope).
 */
export async function checkCalculatedField(
  store: ConfigStore,
  env: Environment,
  dataset: Dataset | null,
  candidate: { alias: string; expression: string },
  replacing?: string,
): Promise<string> {
  const envWide = (await listCalculatedFieldObjects(store, env, null)).filter((o) => o.id !== replacing);
  const scopes: { columns: Parameters<typeof columnSources>[1]; calculated: CalculatedSource[] }[] = [];
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
  let type = '';
  for (const s of scopes) {
    const scope = new FieldScope({
      dialect: CHECK_ONLY_DIALECT,
      columns: columnSources(CHECK_ONLY_DIALECT, s.columns),
      calculated: s.calculated,
      eventTimeSql: '__time',
      ingestTimeSql: '__ingested',
      bind: dryBind(),
    });
    const compiled = scope.compileAs(candidate.alias); // (in every scope: any may close a cycle)
    type ||= compiled.type;
  }
  return type;
}

interface SpecLike {
  calculations?: { column?: string | null }[];
  filters?: { column?: string }[];
  breakdowns?: string[];
  orders?: { column?: string }[];
  havings?: { column?: string }[];
  calculated_fields?: { name?: string; expression?: string }[];
}

/** The field names a query spec reads (columns, and `$names` of its inline fields not defined inline). */
function specReferences(spec: SpecLike | undefined): Set<string> {
  const names = new Set<string>();
  if (!spec) return names;
  for (const c of spec.calculations ?? []) if (typeof c.column === 'string') names.add(c.column);
  for (const f of spec.filters ?? []) if (typeof f.column === 'string') names.add(f.column);
  for (const b of spec.breakdowns ?? []) if (typeof b === 'string') names.add(b);
  for (const o of spec.orders ?? []) if (typeof o.column === 'string') names.add(o.column);
  for (const h of spec.havings ?? []) if (typeof h.column === 'string') names.add(h.column);
  const inline = new Set((spec.calculated_fields ?? []).map((f) => f.name));
  for (const f of spec.calculated_fields ?? []) {
    try {
      for (const r of references(parseExpression(String(f.expression)))) names.add(r);
    } catch {
      // A stored spec was checked when saved; an unparsable one reads nothing.
    }
  }
  for (const n of inline) if (typeof n === 'string') names.delete(n);
  return names;
}

/**
 * Whether something scoped to `datasetIds` (an empty list: an environment-wide user) resolves
 * the alias to this field: a dataset's field serves that dataset; an environment-wide one serves
 * environment-wide users and every dataset without a field of its own by that alias.
 */
async function resolvesTo(store: ConfigStore, env: Environment, field: CalculatedFieldObject, datasetIds: (string | null)[]): Promise<boolean> {
  for (const id of datasetIds) {
    if (field.datasetId !== null) {
      if (id === field.datasetId) return true;
    } else if (id === null) return true;
    else if (!(await listCalculatedFieldObjects(store, env, id)).some((o) => o.body.alias === field.body.alias)) return true;
  }
  return false;
}

/**
 * Hook for "a calculated field used by an SLO, trigger or board cannot be deleted (409)": returns
 * a description of the first dependant (e.g. `SLO "checkout" (id …)`), which the DELETE route
 * turns into a 409. Users: SLOs (`sli.alias` over their `dataset_ids`), triggers (their query)
 * and boards (the queries of their query panels), each where the alias resolves to this field
 * rather than to a shadowing one. Another calculated field reading it is not a user: it reads
 * null once the field is gone, as it would for a column that never appeared.
 */
export async function calculatedFieldInUse(store: ConfigStore, env: Environment, field: CalculatedFieldObject): Promise<string | undefined> {
  const alias = field.body.alias;
  const slos = await store.listObjects<{ name?: unknown; sli?: { alias?: unknown }; dataset_ids?: unknown }>(SLO_KIND, { environmentId: env.id });
  for (const slo of slos) {
    if (slo.body?.sli?.alias !== alias) continue;
    const ids = Array.isArray(slo.body.dataset_ids) ? (slo.body.dataset_ids as string[]) : [];
    if (await resolvesTo(store, env, field, ids)) return `SLO ${JSON.stringify(String(slo.body.name))} (id ${slo.id})`;
  }

  const triggers = await store.listObjects<{ name?: unknown; query?: SpecLike }>(TRIGGER_KIND, { environmentId: env.id });
  for (const t of triggers) {
    if (!specReferences(t.body?.query).has(alias)) continue;
    if (await resolvesTo(store, env, field, [t.datasetId])) return `trigger ${JSON.stringify(String(t.body.name))} (id ${t.id})`;
  }

  const boards = await store.listObjects<{ name?: unknown; panels?: { query_panel?: { query_id?: unknown } }[] }>(BOARD_KIND, { environmentId: env.id });
  for (const b of boards) {
    for (const panel of b.body?.panels ?? []) {
      const queryId = panel?.query_panel?.query_id;
      if (typeof queryId !== 'string') continue;
      const query = await store.getObject<SpecLike>(QUERY_KIND, queryId);
      if (!belongsTo(query, env) || !specReferences(query.body).has(alias)) continue;
      if (await resolvesTo(store, env, field, [query.datasetId])) return `board ${JSON.stringify(String(b.body.name))} (id ${b.id})`;
    }
  }
  return undefined;
}

/** Where a path puts a calculated field: a dataset, or the environment-wide set (`__all__`). */
export interface CalculatedFieldScope {
  env: Environment;
  dataset: Dataset | null;
  /** The object store's scope: the dataset id, or the environment id for `__all__`. */
  key: string;
}

/** The scope a `{datasetSlug}` path segment names; 404 for an unknown dataset. */
export async function calculatedFieldScope(store: ConfigStore, env: Environment, segment: string): Promise<CalculatedFieldScope> {
  if (segment === ALL_DATASETS) return { env, dataset: null, key: env.id };
  const dataset = await findDataset(store, env, segment);
  return { env, dataset, key: dataset.id };
}

/** The 409 of an alias already used in the scope. */
export const duplicateAlias = (alias: string) =>
  new ApiError(409, 'A resource by that name already exists.', { detail: `a calculated field with alias ${JSON.stringify(alias)} already exists here` });

/**
 * The stored field for a body its route schema has checked (lengths), in `scope`; `replacing` is
 * the id of the field a PUT replaces. 422 on a blank alias, 409 on an alias the scope already
 * has, 422 on a blank or invalid expression (in that order).
 */
export async function calculatedFieldBody(
  store: ConfigStore,
  scope: CalculatedFieldScope,
  input: { alias: string; expression: string; description?: string },
  replacing?: string,
): Promise<CalculatedFieldBody> {
  const { alias, expression, description = '' } = input;
  if (alias.trim() === '') throw invalidField('alias', BLANK, 'missing');
  const others = (await listCalculatedFieldObjects(store, scope.env, scope.dataset?.id ?? null)).filter((f) => f.id !== replacing);
  if (others.some((f) => f.body.alias === alias)) throw duplicateAlias(alias);
  await checkExpression(store, scope, { alias, expression }, replacing);
  return { alias, expression, description };
}

/**
 * A field's expression checked in `scope` as a create or update checks it (the 422 of a blank or
 * invalid one, field `expression`); answers its value type. Also POST …/validate's check.
 */
export async function checkExpression(
  store: ConfigStore,
  scope: Pick<CalculatedFieldScope, 'env' | 'dataset'>,
  candidate: { alias: string; expression: string },
  replacing?: string,
): Promise<string> {
  if (candidate.expression.trim() === '') throw invalidField('expression', BLANK, 'missing');
  try {
    return await checkCalculatedField(store, scope.env, scope.dataset, candidate, replacing);
  } catch (err) {
    if (err instanceof ExpressionError) throw invalidField('expression', `at position ${err.position}: ${err.message}`);
    throw err;
  }
}

/** The new field of `scope` as the store takes it; its alias is the unique key. */
export function newCalculatedField(scope: CalculatedFieldScope, body: CalculatedFieldBody): NewObject<CalculatedFieldBody> {
  return {
    id: shortId(),
    kind: CALCULATED_FIELD_KIND,
    teamId: scope.env.teamId,
    environmentId: scope.env.id,
    datasetId: scope.dataset?.id ?? null,
    scope: scope.key,
    uniqueKey: body.alias,
    body,
  };
}

/** Deletes the field unless something uses it (409, calculatedFieldInUse); false when it was gone already. */
export async function deleteCalculatedField(store: ConfigStore, env: Environment, field: CalculatedFieldObject): Promise<boolean> {
  const user = await calculatedFieldInUse(store, env, field);
  if (user) throw new ApiError(409, 'The calculated field is in use.', { detail: `the calculated field is used by ${user}; change or delete that first` });
  return store.deleteObject(CALCULATED_FIELD_KIND, field.id);
}

/** A calculated field as the API answers it. */
export function calculatedFieldAnswer(o: CalculatedFieldObject) {
  return {
    id: o.id,
    alias: o.body.alias,
    expression: o.body.expression,
    description: o.body.description,
    created_at: o.createdAt,
    updated_at: o.updatedAt,
  };
}

export { ExpressionError };
