// /1/slos/{datasetSlug|__all__}: list, create (201), get (`?detailed` adds status, burn_rate,
// budget_remaining, compliance), full-replacement PUT, DELETE (204, with the SLO's burn alerts),
// and Waggle's reset: POST /1/slos/{datasetSlug|__all__}/{sloId}/reset. Every route needs Manage
// SLOs (`manage_slos`). The maths is in src/jobs/slo.ts.
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
import { Type, type Static } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { ApiError, notFound, validationError } from '../../errors.js';
import { ALL_DATASETS, datasetSlug, findDataset } from '../../domain/datasets.js';
import { shortId } from '../../domain/ids.js';
import { checkTags, MAX_TAGS, tagsMember } from '../../domain/tags.js';
import type { ConfigStore, Dataset, Environment, StoredObject } from '../../stores/config/types.js';
import { deleteBurnAlert, getAlertState, type BurnAlertBody } from '../../jobs/burn-alerts.js';
import { isSlo, type SloBody, type SloEngine, type SloObject } from '../../jobs/slo.js';
import type { ApiContext, App } from '../context.js';
import { sendCreated, sendDeleted } from '../resource.js';
import { bodyObject, isObject, Problems, textLength, type Json } from '../../validation.js';
import { SlugParams, itemParams } from './schemas.js';
import { BURN_ALERT_KIND, SLO_KIND } from '../../domain/kinds.js';

const tags = ['SLOs'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_slos' } as const;

export const LIMITS = {
  name: 120,
  description: 1023,
  alias: 255,
  minPeriodDays: 1,
  maxTargetPerMillion: 999_999,
  datasets: 10,
} as const;

const TagSchema = Type.Object({ key: Type.String({ maxLength: 32 }), value: Type.String({ maxLength: 128 }) });
const SloInput = Type.Object({
  name: Type.String({ minLength: 1, maxLength: LIMITS.name }),
  description: Type.Optional(Type.String({ maxLength: LIMITS.description })),
  sli: Type.Object({ alias: Type.String({ minLength: 1, maxLength: LIMITS.alias }) }),
  time_period_days: Type.Integer({ minimum: LIMITS.minPeriodDays }),
  target_per_million: Type.Integer({ minimum: 0, maximum: LIMITS.maxTargetPerMillion }),
  tags: Type.Optional(Type.Array(TagSchema, { maxItems: MAX_TAGS })),
  dataset_slugs: Type.Optional(
    Type.Array(Type.String(), { minItems: 1, maxItems: LIMITS.datasets, description: 'Required on `__all__` creates; ignored otherwise.' }),
  ),
});
export const SloResponse = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  sli: Type.Object({ alias: Type.String() }),
  time_period_days: Type.Integer(),
  target_per_million: Type.Integer(),
  tags: Type.Optional(Type.Array(TagSchema, { description: 'Absent when the SLO has no tags.' })),
  dataset_slugs: Type.Array(Type.String()),
  reset_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export const SLO_STATUSES = ['normal', 'triggered', 'no_alerts', 'no_events'] as const;
const SloDetailed = Type.Intersect([
  SloResponse,
  Type.Object({
    compliance: Type.Optional(Type.Number()),
    budget_remaining: Type.Optional(Type.Number()),
    status: Type.Optional(Type.Unsafe<(typeof SLO_STATUSES)[number]>({ type: 'string', enum: [...SLO_STATUSES] })),
    burn_rate: Type.Optional(Type.Number()),
  }),
]);
const ItemParams = itemParams('sloId');
const GetQuery = Type.Object({ detailed: Type.Optional(Type.String({ description: '`true` (or empty) adds reporting data; `false` does not.' })) });

/** The path's scope: a dataset, or the whole environment (`__all__`). */
export interface SloScope {
  env: Environment;
  dataset: Dataset | null;
}

export async function sloScope(store: ConfigStore, env: Environment, segment: string): Promise<SloScope> {
  if (segment === ALL_DATASETS) return { env, dataset: null };
  return { env, dataset: await findDataset(store, env, segment) };
}

const inScope = (o: SloObject, scope: SloScope) => o.environmentId === scope.env.id && (scope.dataset === null || o.body.dataset_ids.includes(scope.dataset.id));

/** The SLO `id` as seen from the path; 404 `SLO not found` otherwise. */
export async function getSloObject(store: ConfigStore, scope: SloScope, id: string): Promise<SloObject> {
  const o = await store.getObject<unknown>(SLO_KIND, id);
  if (!o || !isSlo(o) || !inScope(o, scope)) throw notFound('SLO');
  return o;
}

export async function listSloObjects(store: ConfigStore, scope: SloScope): Promise<SloObject[]> {
  return (await store.listObjects<unknown>(SLO_KIND, { environmentId: scope.env.id })).filter(isSlo).filter((o) => inScope(o, scope));
}

async function slugsById(store: ConfigStore, env: Environment): Promise<Map<string, string>> {
  return new Map((await store.listDatasets(env.id)).map((d) => [d.id, d.slug]));
}

export function sloResponse(o: SloObject, slugs: Map<string, string>): Static<typeof SloResponse> {
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

interface Draft {
  name: string;
  description: string;
  alias: string;
  time_period_days: number;
  target_per_million: number;
  tags: SloBody['tags'];
}

function checkSloFields(p: Problems, input: Json): Draft {
  p.string('name', input.name, { max: LIMITS.name, notBlank: true });
  let description = '';
  if (input.description !== undefined && input.description !== null) {
    if (typeof input.description !== 'string') p.type('description', 'a string', input.description);
    else if (textLength(input.description) > LIMITS.description) {
      p.add('description', 'invalid', `must be at most ${LIMITS.description} characters, not ${textLength(input.description)}`);
    } else description = input.description;
  }
  let alias = '';
  if (input.sli === undefined || input.sli === null) p.missing('sli');
  else if (!isObject(input.sli)) p.type('sli', 'an object', input.sli);
  else if (p.string('sli.alias', input.sli.alias, { max: LIMITS.alias, notBlank: true })) alias = input.sli.alias;
  const integer = (field: string, min: number, max: number) => {
    const v = input[field];
    if (v === undefined || v === null) return p.missing(field) || 0;
    if (!p.integer(field, v, min)) return 0;
    if (v > max) return p.add(field, 'invalid', `must be at most ${max}`) || 0;
    return v;
  };
  const time_period_days = integer('time_period_days', LIMITS.minPeriodDays, Number.MAX_SAFE_INTEGER);
  const target_per_million = integer('target_per_million', 0, LIMITS.maxTargetPerMillion);
  const t = checkTags(input.tags);
  p.addAll(t.problems);
  return { name: input.name as string, description, alias, time_period_days, target_per_million, tags: t.tags };
}

/** `dataset_slugs` of an `__all__` create: 1..10 distinct datasets of the environment. */
async function checkDatasetSlugs(p: Problems, store: ConfigStore, env: Environment, v: unknown): Promise<Dataset[]> {
  if (v === undefined || v === null) return p.add('dataset_slugs', 'missing', 'is required when the path is __all__') || [];
  if (!Array.isArray(v)) return p.type('dataset_slugs', 'an array', v) || [];
  if (v.length < 1) return p.add('dataset_slugs', 'invalid', 'must name at least 1 dataset') || [];
  if (v.length > LIMITS.datasets) return p.add('dataset_slugs', 'invalid', `must name at most ${LIMITS.datasets} datasets, not ${v.length}`) || [];
  const out: Dataset[] = [];
  for (const [i, s] of v.entries()) {
    const at = `dataset_slugs[${i}]`;
    if (!p.string(at, s)) continue;
    const ds = s === ALL_DATASETS ? undefined : await store.getDataset(env.id, datasetSlug(s));
    if (!ds) p.add(at, 'invalid', `no dataset ${JSON.stringify(s)} in this environment`);
    else if (out.some((d) => d.id === ds.id)) p.add(at, 'invalid', `names the dataset ${JSON.stringify(ds.slug)} twice`);
    else out.push(ds);
  }
  return out;
}

/** 422 on `sli.alias` unless it is a boolean calculated field visible in every dataset. */
async function checkSli(p: Problems, engine: SloEngine, env: Environment, datasets: Dataset[], alias: string): Promise<void> {
  for (const ds of datasets) {
    const info = await engine.resolveSli(env, ds, alias, () => '?');
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

function parseDetailed(v: string | undefined): boolean {
  if (v === undefined || v === 'false') return false;
  if (v === '' || v === 'true') return true;
  throw validationError([{ field: 'query.detailed', code: 'invalid', description: 'must be true or false' }]);
}

/** The SLO's status from its burn alerts (and whether it has events). */
async function sloStatus(store: ConfigStore, slo: SloObject, eligible: number): Promise<(typeof SLO_STATUSES)[number]> {
  if (eligible <= 0) return 'no_events';
  const alerts = (await store.listObjects<BurnAlertBody>(BURN_ALERT_KIND, { environmentId: slo.environmentId ?? undefined })).filter(
    (a) => a.body?.slo_id === slo.id,
  );
  if (alerts.length === 0) return 'no_alerts';
  for (const a of alerts) if ((await getAlertState(store, a.id)).triggered) return 'triggered';
  return 'normal';
}

export async function deleteSlo(store: ConfigStore, engine: SloEngine, slo: StoredObject<unknown>): Promise<void> {
  const alerts = await store.listObjects<BurnAlertBody>(BURN_ALERT_KIND, { teamId: slo.teamId });
  for (const a of alerts) if (a.body?.slo_id === slo.id) await deleteBurnAlert(store, a.id);
  await store.deleteObject(SLO_KIND, slo.id);
  await engine.forget(slo.id);
}

export function registerSlos(app: App, ctx: ApiContext): void {
  const { store } = ctx;
  const engine = ctx.slos;
  const noSchemaValidation = () => () => true;

  app.get(
    '/1/slos/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        description: 'The SLOs that include the dataset (multi-dataset ones too), or every SLO of the environment with `__all__`.',
        response: { 200: Type.Array(SloResponse) },
      },
      config: { auth },
    },
    async (request) => {
      const scope = await sloScope(store, envOf(request), request.params.datasetSlug);
      const slugs = await slugsById(store, scope.env);
      return (await listSloObjects(store, scope)).map((o) => sloResponse(o, slugs));
    },
  );

  app.post(
    '/1/slos/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        body: SloInput,
        description: 'Creates an SLO. On `__all__`, `dataset_slugs` (1..10) is required; on a dataset, the SLO is that dataset’s.',
        response: { 201: SloResponse },
      },
      validatorCompiler: noSchemaValidation,
      config: { auth },
    },
    async (request, reply) => {
      const { datasetSlug: segment } = request.params as Static<typeof SlugParams>;
      const scope = await sloScope(store, envOf(request), segment);
      const input = bodyObject(request.body);
      const p = new Problems();
      const draft = checkSloFields(p, input);
      const datasets = scope.dataset ? [scope.dataset] : await checkDatasetSlugs(p, store, scope.env, input.dataset_slugs);
      if (draft.alias && datasets.length > 0) await checkSli(p, engine, scope.env, datasets, draft.alias);
      p.throwIfAny();
      const created = await store.createObject<SloBody>({
        id: shortId(),
        kind: SLO_KIND,
        teamId: scope.env.teamId,
        environmentId: scope.env.id,
        datasetId: scope.dataset?.id ?? null,
        scope: scope.env.id,
        uniqueKey: null,
        body: {
          name: draft.name,
          description: draft.description,
          sli: { alias: draft.alias },
          time_period_days: draft.time_period_days,
          target_per_million: draft.target_per_million,
          tags: draft.tags,
          dataset_ids: datasets.map((d) => d.id),
          reset_at: null,
        },
      });
      return sendCreated(reply, sloResponse(created, await slugsById(store, scope.env)));
    },
  );

  app.get(
    '/1/slos/:datasetSlug/:sloId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        querystring: GetQuery,
        description: 'One SLO; with `detailed=true` (or `?detailed`) also `status`, `burn_rate` (last 4 hours), `budget_remaining` and `compliance`, computed now.',
        response: { 200: SloDetailed },
      },
      config: { auth },
    },
    async (request) => {
      const scope = await sloScope(store, envOf(request), request.params.datasetSlug);
      const detailed = parseDetailed(request.query.detailed);
      const slo = await getSloObject(store, scope, request.params.sloId);
      const out = sloResponse(slo, await slugsById(store, scope.env));
      if (!detailed) return out;
      const { figures } = await engine.evaluate(scope.env, slo, ctx.now().getTime());
      return {
        ...out,
        compliance: figures.compliance,
        budget_remaining: figures.budgetRemaining,
        status: await sloStatus(store, slo, figures.eligible),
        burn_rate: figures.burnRate,
      };
    },
  );

  app.put(
    '/1/slos/:datasetSlug/:sloId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        body: SloInput,
        description: 'Full replacement (description and tags default to empty); datasets, created_at and reset_at are kept.',
        response: { 200: SloResponse },
      },
      validatorCompiler: noSchemaValidation,
      config: { auth },
    },
    async (request) => {
      const { datasetSlug: segment, sloId } = request.params as Static<typeof ItemParams>;
      const scope = await sloScope(store, envOf(request), segment);
      const current = await getSloObject(store, scope, sloId);
      const input = bodyObject(request.body);
      const p = new Problems();
      const draft = checkSloFields(p, input);
      const slugs = await slugsById(store, scope.env);
      const datasets = (await store.listDatasets(scope.env.id)).filter((d) => current.body.dataset_ids.includes(d.id));
      if (draft.alias && datasets.length > 0) await checkSli(p, engine, scope.env, datasets, draft.alias);
      if (draft.time_period_days) {
        // A budget_rate alert's window must stay within the period (as on the alert's own create).
        const alerts = await store.listObjects<BurnAlertBody>(BURN_ALERT_KIND, { environmentId: scope.env.id });
        const widest = Math.max(0, ...alerts.filter((a) => a.body.slo_id === sloId && a.body.alert_type === 'budget_rate').map((a) => a.body.budget_rate_window_minutes ?? 0));
        if (widest > draft.time_period_days * 1440) {
          p.add('time_period_days', 'invalid', `must be at least ${Math.ceil(widest / 1440)}: a budget_rate burn alert of this SLO has a ${widest}-minute window`);
        }
      }
      p.throwIfAny();
      const updated = await store.updateObject<SloBody>(SLO_KIND, sloId, {
        body: {
          ...current.body,
          name: draft.name,
          description: draft.description,
          sli: { alias: draft.alias },
          time_period_days: draft.time_period_days,
          target_per_million: draft.target_per_million,
          tags: draft.tags,
        },
      });
      if (!updated) throw notFound('SLO');
      return sloResponse(updated as SloObject, slugs);
    },
  );

  app.delete(
    '/1/slos/:datasetSlug/:sloId',
    {
      schema: { tags, security, params: ItemParams, description: 'Deletes the SLO and its burn alerts.', response: { 204: Type.Null({ description: 'Deleted' }) } },
      config: { auth },
    },
    async (request, reply) => {
      const scope = await sloScope(store, envOf(request), request.params.datasetSlug);
      const slo = await getSloObject(store, scope, request.params.sloId);
      await deleteSlo(store, engine, slo);
      return sendDeleted(reply);
    },
  );

  app.post(
    '/1/slos/:datasetSlug/:sloId/reset',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        description: 'Waggle extension: resets the SLO. `reset_at` becomes now and the budget is counted from then on (the window starts there until it is a whole period old).',
        response: { 200: SloResponse },
      },
      config: { auth },
    },
    async (request) => {
      const scope = await sloScope(store, envOf(request), request.params.datasetSlug);
      const slo = await getSloObject(store, scope, request.params.sloId);
      const updated = await store.updateObject<SloBody>(SLO_KIND, slo.id, { body: { ...slo.body, reset_at: ctx.now().toISOString() } });
      if (!updated) throw new ApiError(404, 'SLO not found');
      return sloResponse(updated as SloObject, await slugsById(store, scope.env));
    },
  );
}
