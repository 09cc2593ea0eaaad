// Datasets and their definitions: naming rules, defaults and the response shapes.
import { prefixedId, slugify } from './ids.js';
import { invalidField, ApiError, datasetNotFound, BLANK } from '../errors.js';
import { UniqueViolation, type ConfigStore, type Dataset, type Environment } from '../stores/config/types.js';
import { DEFINITION_DEFAULTS, DEFINITION_KEYS } from '../query/definitions.js';

export const ALL_DATASETS = '__all__';

/**
 * The slug a path segment or name refers to. Names are case-insensitive and URL-decoded by the
 * router, so `My%20Dataset`, `my dataset` and `my-dataset` all name the dataset `my-dataset`.
 */
export function datasetSlug(nameOrSlug: string): string {
  return slugify(nameOrSlug);
}

/** The longest dataset name, in characters (code points, as JSON Schema counts): Honeycomb's `Dataset.name` maxLength. */
export const DATASET_NAME_MAX = 255;

/**
 * Why `name` cannot name a new dataset, or undefined when it can: the one naming rule, asked by
 * every path that creates a dataset (the datasets API, every ingest path, OTLP). Refused: names
 * longer than DATASET_NAME_MAX, and whatever nameFormProblem refuses.
 */
export function datasetNameProblem(name: string): string | undefined {
  const form = nameFormProblem(name);
  if (form) return form;
  const length = [...name].length;
  if (length > DATASET_NAME_MAX) return `must be at most ${DATASET_NAME_MAX} characters, not ${length}`;
  return undefined;
}

/**
 * The part of the naming rule that also decides whether a path can name an existing dataset
 * (findDataset). Length is left out there: a dataset made before the length rule existed stays
 * reachable, so it can still be written to, read and deleted. Refused: blank names; `__all__`
 * (environment-wide operations); a `/`; control characters (C0, DEL, C1: NUL included); text
 * that is not well-formed Unicode, i.e. lone surrogates, or U+FFFD, which is what bytes that are
 * not UTF-8 become when read (in a body or in a path); and names whose slug has no letter or
 * digit (`..`, `-`, `日本`), which would all share slugs like `--` with unrelated names.
 */
export function nameFormProblem(name: string): string | undefined {
  if (name.trim() === '') return BLANK;
  if (name === ALL_DATASETS || datasetSlug(name) === ALL_DATASETS) return '__all__ is reserved for environment-wide operations';
  if (name.includes('/')) return 'must not contain "/"';
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return 'must not contain control characters';
  if (!name.isWellFormed() || name.includes('\ufffd')) return 'must be valid UTF-8 text';
  if (!/[a-z0-9]/.test(datasetSlug(name))) return 'must contain a letter (a-z) or digit, so that it has a slug';
  return undefined;
}

/**
 * Finds a dataset of the environment by path segment. A segment no dataset could be named
 * (`__all__`, `%00`, an encoded `/`, ...) names none: 404 like an unknown one.
 */
export async function findDataset(store: ConfigStore, env: Environment, segment: string): Promise<Dataset> {
  const ds = nameFormProblem(segment) ? undefined : await store.getDataset(env.id, datasetSlug(segment));
  if (!ds) throw datasetNotFound();
  return ds;
}

/** 422 on `name` unless it can name a dataset (datasetNameProblem). */
export function checkDatasetName(name: string): void {
  const problem = datasetNameProblem(name);
  if (problem) throw invalidField('name', problem, problem === BLANK ? 'missing' : 'invalid');
}

/**
 * Creates the dataset, or returns the existing one of the same slug (`created: false`), which
 * is how Honeycomb answers a repeated create (200 instead of 201). A new dataset is delete
 * protected unless `settings.delete_protected` is false; that holds for datasets ingest creates
 * too (docs/api.md).
 */
export async function createOrGetDataset(
  store: ConfigStore,
  env: Environment,
  input: { name: string; description?: string; expand_json_depth?: number; settings?: { delete_protected?: boolean } },
): Promise<{ dataset: Dataset; created: boolean }> {
  checkDatasetName(input.name);
  const slug = datasetSlug(input.name);
  const existing = await store.getDataset(env.id, slug);
  if (existing) return { dataset: existing, created: false };
  try {
    const dataset = await store.createDataset({
      id: prefixedId('hcxds'),
      environmentId: env.id,
      slug,
      name: input.name,
      description: input.description ?? '',
      expandJsonDepth: input.expand_json_depth ?? 0,
      deleteProtected: input.settings?.delete_protected ?? true,
      definitions: { ...DEFINITION_DEFAULTS },
    });
    return { dataset, created: true };
  } catch (err) {
    // A concurrent create of the same name won the race: answer with its dataset.
    if (err instanceof UniqueViolation) {
      const winner = await store.getDataset(env.id, slug);
      if (winner) return { dataset: winner, created: false };
    }
    throw err;
  }
}

/** Every dataset of every environment of every team. */
export async function allDatasets(store: ConfigStore): Promise<Dataset[]> {
  const out: Dataset[] = [];
  for (const team of await store.listTeams()) {
    for (let after: string | undefined; ; ) {
      const envs = await store.listEnvironments(team.id, { after, limit: 1000 });
      for (const env of envs) for (const ds of await store.listDatasets(env.id)) out.push(ds);
      if (envs.length < 1000) break;
      after = envs[envs.length - 1].id;
    }
  }
  return out;
}

/** Deletes the dataset with its events (`dropEvents`) and its columns. */
export async function deleteDataset(
  store: ConfigStore,
  env: Environment,
  segment: string,
  dropEvents: (datasetId: string) => Promise<void>,
): Promise<void> {
  const ds = await findDataset(store, env, segment);
  if (ds.deleteProtected) {
    throw new ApiError(409, 'dataset is delete protected; set settings.delete_protected to false first');
  }
  await dropEvents(ds.id);
  await store.deleteDataset(env.id, ds.slug);
}

export function datasetResponse(ds: Dataset, regularColumnsCount: number | null = null) {
  return {
    name: ds.name,
    description: ds.description,
    settings: { delete_protected: ds.deleteProtected },
    expand_json_depth: ds.expandJsonDepth,
    slug: ds.slug,
    regular_columns_count: regularColumnsCount,
    last_written_at: ds.lastWrittenAt,
    created_at: ds.createdAt,
  };
}

/**
 * The dataset's definitions after a PATCH: only the keys sent change; one sent as null or with an
 * empty name reverts to its default mapping (a `column_type` sent is ignored).
 */
export function definitionsChange(ds: Dataset, patch: Record<string, { name: string } | null | undefined>): Record<string, string> {
  const definitions = { ...ds.definitions };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    const name = v?.name ?? '';
    if (name === '') definitions[k] = DEFINITION_DEFAULTS[k];
    else definitions[k] = name;
  }
  return definitions;
}

/** Every definition key, `null` where unmapped. A key naming one of `calculatedFieldAliases` is a `derived_column`. */
export function definitionsResponse(ds: Dataset, calculatedFieldAliases: Set<string> = new Set()) {
  return Object.fromEntries(
    DEFINITION_KEYS.map((k) => {
      const name = ds.definitions[k];
      const columnType: 'column' | 'derived_column' = calculatedFieldAliases.has(name) ? 'derived_column' : 'column';
      return [k, name ? { name, column_type: columnType } : null];
    }),
  );
}

/** The dataset a `{datasetSlug}` path segment names, or null for `__all__`; 404 for unknown datasets. */
export async function datasetOrAll(store: ConfigStore, env: Environment, segment: string): Promise<Dataset | null> {
  return segment === ALL_DATASETS ? null : findDataset(store, env, segment);
}
