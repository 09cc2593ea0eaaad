// Datasets and their definitions: naming rules, defaults and the response shapes.
import { prefixedId, slugify } from './ids.js';
import { invalidField, ApiError, notFound, BLANK } from '../http/errors.js';
import { UniqueViolation, type ConfigStore, type Dataset, type Environment } from '../stores/config/types.js';

export const ALL_DATASETS = '__all__';

/** The definition keys, each mapped by default to the field name Honeycomb auto-detects. */
export const DEFINITION_DEFAULTS: Record<string, string> = {
  span_id: 'trace.span_id',
  trace_id: 'trace.trace_id',
  parent_id: 'trace.parent_id',
  name: 'name',
  service_name: 'service.name',
  duration_ms: 'duration_ms',
  span_kind: 'meta.span_type',
  annotation_type: 'meta.annotation_type',
  link_span_id: 'trace.link.span_id',
  link_trace_id: 'trace.link.trace_id',
  error: 'error',
  status: 'response.status_code',
  route: 'http.route',
  user: 'user.id',
  log_severity: 'severity',
  log_message: 'body',
};
export const DEFINITION_KEYS = Object.keys(DEFINITION_DEFAULTS);

/**
 * The slug a path segment or name refers to. Names are case-insensitive and URL-decoded by the
 * router, so `My%20Dataset`, `my dataset` and `my-dataset` all name the dataset `my-dataset`.
 */
export function datasetSlug(nameOrSlug: string): string {
  return slugify(nameOrSlug);
}

/** Finds a dataset of the environment by path segment; `__all__` is never a dataset. */
export async function findDataset(store: ConfigStore, env: Environment, segment: string): Promise<Dataset> {
  // `__all__` is never a dataset, and names cannot contain a slash (an encoded %2F in the path).
  const ds = segment === ALL_DATASETS || segment.includes('/') ? undefined : await store.getDataset(env.id, datasetSlug(segment));
  if (!ds) throw notFound('dataset');
  return ds;
}

export function checkDatasetName(name: string): void {
  if (name.trim() === '') throw invalidField('name', BLANK, 'missing');
  if (name === ALL_DATASETS || datasetSlug(name) === ALL_DATASETS) {
    throw invalidField('name', '__all__ is reserved for environment-wide operations');
  }
  if (name.includes('/')) throw invalidField('name', 'must not contain "/"');
}

/**
 * Creates the dataset, or returns the existing one of the same slug (`created: false`), which
 * is how Honeycomb answers a repeated create (200 instead of 201).
 */
export async function createOrGetDataset(
  store: ConfigStore,
  env: Environment,
  input: { name: string; description?: string; expand_json_depth?: number },
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
      deleteProtected: false,
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
      for (const env of envs) out.push(...(await store.listDatasets(env.id)));
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

/** Every definition key, `null` where unmapped. */
export function definitionsResponse(ds: Dataset, calculatedFieldAliases: Set<string> = new Set()) {
  return Object.fromEntries(
    DEFINITION_KEYS.map((k) => {
      const name = ds.definitions[k];
      const columnType: 'column' | 'derived_column' = calculatedFieldAliases.has(name) ? 'derived_column' : 'column';
      return [k, name ? { name, column_type: columnType } : null];
    }),
  );
}
