// SLOs: what is stored for one (kind `slo`), the path's scope an SLO is seen from, what a body may
// say and how an SLO is answered. src/api/v1/slos.ts is the HTTP face; src/jobs/slo.ts does the
// maths.
//
// Decisions (also in docs/slos.md):
// - Stored in the object store, kind `slo`, with the ids of its datasets. An SLO made on a dataset
//   path belongs to that dataset (object datasetId: deleted with it); one made on `__all__` names
//   1..10 `dataset_slugs` and belongs to the environment.
// - Found under `__all__` or under any of its datasets; elsewhere (another dataset, environment)
//   → 404. A dataset's list holds every SLO that includes the dataset, `__all__`'s every SLO of
//   the environment, in creation order.
// - `dataset_slugs` is required on `__all__` creates (1..10 distinct datasets of the environment)
//   and ignored elsewhere and on PUT (not part of the update request): an SLO's datasets change
//   only when one is deleted; answers list the slugs of the datasets that still exist.
// - `sli.alias` must name a calculated field visible in every dataset of the SLO (the dataset's
//   own or an environment-wide one) that evaluates to a boolean (true good, false bad, null not
//   counted): 422 on `sli.alias` otherwise.
// - PUT replaces name, description (omitted: ""), sli, time_period_days, target_per_million and
//   tags (omitted: none), keeping id, datasets, created_at and reset_at. Read-only and unknown
//   fields are ignored. The body is checked by hand so every problem is in one 422.
// - Reset: `reset_at` is read-only in Honeycomb's API (its UI resets). Waggle resets with
//   `POST …/{sloId}/reset` (no body): reset_at becomes now and the budget is counted from then on.
import { notFound } from '../errors.js';
import type { ConfigStore, Dataset, Environment, NewObject, StoredObject } from '../stores/config/types.js';
import { Problems } from '../validation.js';
import type { BurnAlertBody } from './burn-alerts.js';
import { ALL_DATASETS, datasetSlug, findDataset } from './datasets.js';
import { BURN_ALERT_KIND, SLO_KIND } from './kinds.js';
import { belongsTo } from './scope.js';
import { shortId } from './ids.js';
import { duplicateTagKeys, storedTags, tagsMember, type Tag } from './tags.js';

export const MINUTES_PER_DAY = 1440;

export const LIMITS = {
  name: 120,
  description: 1023,
  alias: 255,
  minPeriodDays: 1,
  maxTargetPerMillion: 999_999,
  datasets: 10,
} as const;

export const SLO_STATUSES = ['normal', 'triggered', 'no_alerts', 'no_events'] as const;

export interface SloBody {
  name: string;
  description: string;
  sli: { alias: string };
  time_period_days: number;
  target_per_million: number;
  tags: Tag[];
  /** Ids of the datasets (slugs are looked up when answering). */
  dataset_ids: string[];
  reset_at: string | null;
}
export type SloObject = StoredObject<SloBody>;

/** Objects of kind `slo` written by something else (old tests, hand edits) are skipped. */
export function isSlo(o: StoredObject<unknown>): o is SloObject {
  const b = o.body as Partial<SloBody> | null;
  return (
    !!b &&
    typeof b.sli?.alias === 'string' &&
    Number.isInteger(b.time_period_days) &&
    Number.isInteger(b.target_per_million) &&
    Array.isArray(b.dataset_ids)
  );
}

/** A new SLO of `scope` as the store takes it: a dataset's, or environment-wide (`__all__`). */
export function newSlo(scope: SloScope, body: SloBody): NewObject<SloBody> {
  return {
    id: shortId(),
    kind: SLO_KIND,
    teamId: scope.env.teamId,
    environmentId: scope.env.id,
    datasetId: scope.dataset?.id ?? null,
    scope: scope.env.id,
    uniqueKey: null,
    body,
  };
}

/** The path's scope: a dataset, or the whole environment (`__all__`). */
export interface SloScope {
  env: Environment;
  dataset: Dataset | null;
}

export async function sloScope(store: ConfigStore, env: Environment, segment: string): Promise<SloScope> {
  if (segment === ALL_DATASETS) return { env, dataset: null };
  return { env, dataset: await findDataset(store, env, segment) };
}

const inScope = (o: SloObject, scope: SloScope) => belongsTo(o, scope.env) && (scope.dataset === null || o.body.dataset_ids.includes(scope.dataset.id));

/** The SLO `id` as seen from the path; 404 `SLO not found` otherwise. */
export async function getSloObject(store: ConfigStore, scope: SloScope, id: string): Promise<SloObject> {
  const o = await store.getObject<unknown>(SLO_KIND, id);
  if (!o || !isSlo(o) || !inScope(o, scope)) throw notFound('SLO');
  return o;
}

export async function listSloObjects(store: ConfigStore, scope: SloScope): Promise<SloObject[]> {
  return (await store.listObjects<unknown>(SLO_KIND, { environmentId: scope.env.id })).filter(isSlo).filter((o) => inScope(o, scope));
}

export async function slugsById(store: ConfigStore, env: Environment): Promise<Map<string, string>> {
  return new Map((await store.listDatasets(env.id)).map((d) => [d.id, d.slug]));
}

/** An SLO as answered, in Honeycomb's key order; `slugs` maps its dataset ids to slugs. */
export function sloResponse(o: SloObject, slugs: Map<string, string>) {
  const b = o.body;
  return {
    id: o.id,
    name: b.name,
    description: b.description,
    sli: { alias: b.sli.alias },
    time_period_days: b.time_period_days,
    target_per_million: b.target_per_million,
    ...tagsMember(b.tags),
    dataset_slugs: b.dataset_ids.map((id) => slugs.get(id)).filter((s): s is string => s !== undefined),
    reset_at: b.reset_at,
    created_at: o.createdAt,
    updated_at: o.updatedAt,
  };
}

export interface Draft {
  name: string;
  description: string;
  alias: string;
  time_period_days: number;
  target_per_million: number;
  tags: SloBody['tags'];
}

/** The fields of an SLO body, as the route schema (src/api/v1/slos.ts) has checked them. */
export interface SloInput {
  name: string;
  description?: string | null;
  sli: { alias: string };
  time_period_days: number;
  target_per_million: number;
  tags?: Tag[] | null;
  dataset_slugs?: string[] | null;
}

/** The SLO's own fields of a checked body; what its schema cannot say (tag keys unique) goes to `p`. */
export function sloDraft(p: Problems, input: SloInput): Draft {
  p.addAll(duplicateTagKeys(input.tags));
  return {
    name: input.name,
    description: input.description ?? '',
    alias: input.sli.alias,
    time_period_days: input.time_period_days,
    target_per_million: input.target_per_million,
    tags: storedTags(input.tags),
  };
}

/**
 * `dataset_slugs` of an `__all__` create: 1..10 distinct datasets of the environment. The schema
 * says it is a list of at most 10 strings; that the path needs it, and what it names, it cannot.
 */
export async function checkDatasetSlugs(p: Problems, store: ConfigStore, env: Environment, v: readonly string[] | null | undefined): Promise<Dataset[]> {
  if (v === undefined || v === null) return p.add('dataset_slugs', 'missing', 'is required when the path is __all__') || [];
  if (v.length < 1) return p.add('dataset_slugs', 'invalid', 'must name at least 1 dataset') || [];
  const out: Dataset[] = [];
  for (const [i, s] of v.entries()) {
    const at = `dataset_slugs.${i}`;
    if (!p.string(at, s)) continue;
    const ds = s === ALL_DATASETS ? undefined : await store.getDataset(env.id, datasetSlug(s));
    if (!ds) p.add(at, 'invalid', `no dataset ${JSON.stringify(s)} in this environment`);
    else if (out.some((d) => d.id === ds.id)) p.add(at, 'invalid', `names the dataset ${JSON.stringify(ds.slug)} twice`);
    else out.push(ds);
  }
  return out;
}

/** The stored fields a body's draft sets (the datasets and `reset_at` are the SLO's own). */
export const sloFields = (d: Draft): Pick<SloBody, 'name' | 'description' | 'sli' | 'time_period_days' | 'target_per_million' | 'tags'> => ({
  name: d.name,
  description: d.description,
  sli: { alias: d.alias },
  time_period_days: d.time_period_days,
  target_per_million: d.target_per_million,
  tags: d.tags,
});

/**
 * 422 on `sli.alias` unless it is a boolean calculated field visible in every dataset; `resolve`
 * gives the field's type in a dataset (the SLO evaluator, src/jobs/slo.ts, resolves SLIs).
 */
export async function checkSli(p: Problems, datasets: Dataset[], alias: string, resolve: (ds: Dataset) => Promise<{ type: string } | undefined>): Promise<void> {
  for (const ds of datasets) {
    const info = await resolve(ds);
    if (!info) {
      p.add('sli.alias', 'invalid', `no calculated field ${JSON.stringify(alias)} in dataset ${JSON.stringify(ds.slug)} or the environment`);
      return;
    }
    if (info.type !== 'boolean' && info.type !== 'null') {
      p.add('sli.alias', 'invalid', `the calculated field must evaluate to a boolean (true: success, false: failure, null: not counted), not ${info.type}`);
      return;
    }
  }
}

/** A budget_rate alert's window must stay within its SLO's period (as on the alert's own create): 422 on `time_period_days`. */
export async function checkPeriodOfAlerts(p: Problems, store: ConfigStore, env: Environment, sloId: string, days: number): Promise<void> {
  const alerts = await store.listObjects<BurnAlertBody>(BURN_ALERT_KIND, { environmentId: env.id });
  const widest = Math.max(0, ...alerts.filter((a) => a.body.slo_id === sloId && a.body.alert_type === 'budget_rate').map((a) => a.body.budget_rate_window_minutes ?? 0));
  if (widest > days * 1440) {
    p.add('time_period_days', 'invalid', `must be at least ${Math.ceil(widest / 1440)}: a budget_rate burn alert of this SLO has a ${widest}-minute window`);
  }
}

/** The type of calculated field `alias` in a dataset of the environment; undefined when it is none there (the SLO evaluator's resolveSli). */
export type SliResolver = (env: Environment, ds: Dataset, alias: string) => Promise<{ type: string } | undefined>;

/**
 * The stored SLO a create body (already type-checked) makes in the scope: its fields, its
 * datasets (the path's, or for `__all__` its `dataset_slugs`) and its SLI checked there, every
 * problem in one 422.
 */
export async function parseNewSlo(store: ConfigStore, scope: SloScope, input: SloInput, resolveSli: SliResolver): Promise<SloBody> {
  const p = new Problems();
  const draft = sloDraft(p, input);
  const datasets = scope.dataset ? [scope.dataset] : await checkDatasetSlugs(p, store, scope.env, input.dataset_slugs);
  if (draft.alias && datasets.length > 0) await checkSli(p, datasets, draft.alias, (ds) => resolveSli(scope.env, ds, draft.alias));
  p.throwIfAny();
  return { ...sloFields(draft), dataset_ids: datasets.map((d) => d.id), reset_at: null };
}

/**
 * The stored SLO a full-replacement body (already type-checked) makes of `current`: its fields
 * replaced, its datasets and `reset_at` kept; the SLI checked in its datasets and the period
 * against its burn alerts' windows, every problem in one 422.
 */
export async function parseSloReplacement(store: ConfigStore, scope: SloScope, current: SloObject, input: SloInput, resolveSli: SliResolver): Promise<SloBody> {
  const p = new Problems();
  const draft = sloDraft(p, input);
  const datasets = (await store.listDatasets(scope.env.id)).filter((d) => current.body.dataset_ids.includes(d.id));
  if (draft.alias && datasets.length > 0) await checkSli(p, datasets, draft.alias, (ds) => resolveSli(scope.env, ds, draft.alias));
  if (draft.time_period_days) await checkPeriodOfAlerts(p, store, scope.env, current.id, draft.time_period_days);
  p.throwIfAny();
  return { ...current.body, ...sloFields(draft) };
}
