// /1/slos/{datasetSlug|__all__}: list, create (201), get (`?detailed` adds status, burn_rate,
// budget_remaining, compliance), full-replacement PUT, DELETE (204, with the SLO's burn alerts),
// and Waggle's reset: POST /1/slos/{datasetSlug|__all__}/{sloId}/reset. Every route needs Manage
// SLOs (`manage_slos`). The rules of an SLO (the decisions), its stored shape and answer are
// src/domain/slos.ts's; the maths is in src/jobs/slo.ts.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envOf } from '../../http/auth.js';
import { ApiError, notFound, validationError } from '../../errors.js';
import { datasetSlug } from '../../domain/datasets.js';
import { deleteSlo, detailedSloResponse } from '../../domain/burn-alerts.js';
import type { ApiContext, App } from '../context.js';
import { LIMITS, SLO_STATUSES, getSloObject, listSloObjects, newSlo, parseNewSlo, parseSloReplacement, sloResponse, sloScope, slugsById, type SliResolver, type SloBody, type SloObject } from '../../domain/slos.js';
import { sendCreated, sendDeleted } from '../resource.js';
import { NOT_BLANK } from '../../validation.js';
import { SlugParams, TagsInput, itemParams, orNull, tagsOutput } from './schemas.js';
import { SLO_KIND } from '../../domain/kinds.js';

const tags = ['SLOs'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_slos' } as const;

// The body's schema validates it (ajv); parseNewSlo and parseSloReplacement (src/domain/slos.ts)
// check only what it cannot say: the datasets and the SLI it names, `dataset_slugs` being required
// on `__all__`, the periods of the SLO's burn alerts, unique tag keys.
const SloInput = Type.Object({
  name: Type.String({ minLength: 1, maxLength: LIMITS.name, pattern: NOT_BLANK }),
  description: Type.Optional(orNull(Type.String({ maxLength: LIMITS.description }), 'Omitted or null: "".')),
  sli: Type.Object({ alias: Type.String({ minLength: 1, maxLength: LIMITS.alias, pattern: NOT_BLANK }) }),
  time_period_days: Type.Integer({ minimum: LIMITS.minPeriodDays }),
  target_per_million: Type.Integer({ minimum: 0, maximum: LIMITS.maxTargetPerMillion }),
  tags: TagsInput,
  dataset_slugs: Type.Optional(
    orNull(Type.Array(Type.String(), { maxItems: LIMITS.datasets }), 'Required on `__all__` creates (1..10 datasets); ignored otherwise.'),
  ),
});
export const SloResponse = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  sli: Type.Object({ alias: Type.String() }),
  time_period_days: Type.Integer(),
  target_per_million: Type.Integer(),
  tags: tagsOutput('SLO'),
  dataset_slugs: Type.Array(Type.String()),
  reset_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});
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

function parseDetailed(v: string | undefined): boolean {
  if (v === undefined || v === 'false') return false;
  if (v === '' || v === 'true') return true;
  throw validationError([{ field: 'query.detailed', code: 'invalid', description: 'must be true or false' }]);
}

export function registerSlos(app: App, ctx: ApiContext): void {
  const { store } = ctx;
  const evaluator = ctx.slos;
  const resolveSli: SliResolver = (env, ds, alias) => evaluator.resolveSli(env, ds, alias, () => '?');
  // A path's 404 (its dataset, the SLO) comes before a body's 422, as the handler's lookups would make it.
  const scopeFirst = async (request: FastifyRequest) => {
    const { datasetSlug: segment, sloId } = request.params as { datasetSlug: string; sloId?: string };
    const scope = await sloScope(store, envOf(request), segment);
    if (sloId !== undefined) await getSloObject(store, scope, sloId);
  };

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
      preValidation: scopeFirst,
      config: { auth },
    },
    async (request, reply) => {
      const { datasetSlug: segment } = request.params;
      const scope = await sloScope(store, envOf(request), segment);
      const body = await parseNewSlo(store, scope, request.body as Static<typeof SloInput>, resolveSli);
      const created = await store.createObject(newSlo(scope, body));
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
      const slugs = await slugsById(store, scope.env);
      if (!detailed) return sloResponse(slo, slugs);
      const { figures } = await evaluator.evaluate(scope.env, slo, ctx.now().getTime());
      return detailedSloResponse(store, slo, slugs, figures);
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
      preValidation: scopeFirst,
      config: { auth },
    },
    async (request) => {
      const { datasetSlug: segment, sloId } = request.params;
      const scope = await sloScope(store, envOf(request), segment);
      const current = await getSloObject(store, scope, sloId);
      const body = await parseSloReplacement(store, scope, current, request.body as Static<typeof SloInput>, resolveSli);
      const slugs = await slugsById(store, scope.env);
      const updated = await store.updateObject<SloBody>(SLO_KIND, sloId, { body });
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
      await deleteSlo(store, slo);
      await evaluator.forget(slo.id);
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
