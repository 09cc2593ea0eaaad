// /1/triggers/{datasetSlug|__all__}: list, create (201 + relative Location), get, full-replacement
// PUT and DELETE (204), following Honeycomb's Trigger objects (CreateTriggerRequest /
// TriggerResponse). Every route needs the configuration-key permission Manage Triggers
// (`manage_triggers`): 403 without it; another environment's trigger answers 404 like a missing one.
// A body is validated by its schema (TriggerRequest, ./shapes/triggers.ts), then by what it cannot
// say and how a trigger is answered: src/domain/trigger-bodies.ts (its header lists the
// decisions); src/jobs/triggers.ts evaluates triggers.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envOf } from '../../http/auth.js';
import { notFound } from '../../errors.js';
import { ALL_DATASETS, datasetOrAll } from '../../domain/datasets.js';
import { initialTriggerState, newTrigger, newTriggerState, stateIdOf, type StoredTrigger, type TriggerState } from '../../domain/triggers.js';
import { resolveOnDelete } from '../../jobs/triggers.js';
import type { ConfigStore, Dataset, Environment, StoredObject } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { triggerResponse, triggerResponses, validateTrigger, type TriggerInput } from '../../domain/trigger-bodies.js';
import { SlugParams, itemParams } from './schemas.js';
import { TriggerRequest, TriggerResponseSchema } from './shapes/triggers.js';
import { sendCreated, sendDeleted, findOwned } from '../resource.js';
import { TRIGGER_KIND, TRIGGER_STATE_KIND } from '../../domain/kinds.js';

const tags = ['Triggers'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_triggers' } as const;

const ItemParams = itemParams('triggerId');

// ---- routes ----------------------------------------------------------------------------------------

/** The trigger `id` under the path segment (dataset or `__all__`) in the environment; 404 otherwise. */
export async function getTriggerObject(
  store: ConfigStore,
  env: Environment,
  dataset: Dataset | null,
  id: string,
): Promise<StoredObject<StoredTrigger>> {
  return findOwned<StoredTrigger>(store, TRIGGER_KIND, id, 'trigger', env, dataset);
}

const slugOfPath = (dataset: Dataset | null) => dataset?.slug ?? ALL_DATASETS;

export function registerTriggers(app: App, ctx: ApiContext): void {
  const { store } = ctx;
  const respond = async (o: StoredObject<StoredTrigger>, dataset: Dataset | null) => (await triggerResponses(store, [o]))[0] ?? triggerResponse(o, slugOfPath(dataset));
  const datasetOf = (request: FastifyRequest) => datasetOrAll(store, envOf(request), (request.params as { datasetSlug: string }).datasetSlug);
  // A path's 404 (its dataset, the trigger) comes before a body's 422, as the handler's lookups would make it.
  const pathFirst = async (request: FastifyRequest) => {
    const dataset = await datasetOf(request);
    const { triggerId } = request.params as { triggerId?: string };
    if (triggerId !== undefined) await getTriggerObject(store, envOf(request), dataset, triggerId);
  };

  app.get(
    '/1/triggers/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        description: "The dataset's triggers (or, for `__all__`, the environment-wide ones), in creation order.",
        response: { 200: Type.Array(TriggerResponseSchema) },
      },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOf(request);
      const list = await store.listObjects<StoredTrigger>(TRIGGER_KIND, { environmentId: env.id, datasetId: dataset?.id ?? null });
      return triggerResponses(store, list);
    },
  );

  app.post(
    '/1/triggers/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        body: TriggerRequest,
        description: 'Creates a trigger; 201 with a relative `Location`. Exactly one of `query` (saved as a query) and `query_id`.',
        response: { 201: TriggerResponseSchema },
      },
      preValidation: pathFirst,
      config: { auth },
    },
    async (request, reply) => {
      const env = envOf(request);
      const dataset = await datasetOf(request);
      const body = await validateTrigger(store, env, dataset, request.body as TriggerInput);
      const created = await store.createObject(newTrigger(env, dataset, body));
      // The first evaluation is due at once (the next tick); later ones every `frequency` from here.
      await store.createObject(newTriggerState(created, initialTriggerState(created.id, ctx.now())));
      return sendCreated(reply, await respond(created, dataset), `/1/triggers/${encodeURIComponent(slugOfPath(dataset))}/${created.id}`);
    },
  );

  app.get(
    '/1/triggers/:datasetSlug/:triggerId',
    { schema: { tags, security, params: ItemParams, response: { 200: TriggerResponseSchema } }, config: { auth } },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOf(request);
      const { triggerId } = request.params as Static<typeof ItemParams>;
      return respond(await getTriggerObject(store, env, dataset, triggerId), dataset);
    },
  );

  app.put(
    '/1/triggers/:datasetSlug/:triggerId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        body: TriggerRequest,
        description: 'Full replacement (omitted fields take their defaults). The evaluation schedule and state carry on.',
        response: { 200: TriggerResponseSchema },
      },
      preValidation: pathFirst,
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOf(request);
      const { triggerId } = request.params as Static<typeof ItemParams>;
      const current = await getTriggerObject(store, env, dataset, triggerId);
      const body = await validateTrigger(store, env, dataset, request.body as TriggerInput, current.body);
      const updated = await store.updateObject<StoredTrigger>(TRIGGER_KIND, triggerId, { body });
      if (!updated) throw notFound('trigger');
      return respond(updated, dataset);
    },
  );

  app.delete(
    '/1/triggers/:datasetSlug/:triggerId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        description: 'Deletes the trigger (its recipients are then free to delete). A triggered trigger sends `resolved` first.',
        response: { 204: Type.Null({ description: 'Deleted' }) },
      },
      config: { auth },
    },
    async (request, reply) => {
      const env = envOf(request);
      const dataset = await datasetOf(request);
      const { triggerId } = request.params as Static<typeof ItemParams>;
      const trigger = await getTriggerObject(store, env, dataset, triggerId);
      const state = await store.getObject<TriggerState>(TRIGGER_STATE_KIND, stateIdOf(triggerId));
      if (!(await store.deleteObject(TRIGGER_KIND, triggerId))) throw notFound('trigger');
      await store.deleteObject(TRIGGER_STATE_KIND, stateIdOf(triggerId));
      if (state?.body.triggered) resolveOnDelete(ctx, trigger, slugOfPath(dataset));
      return sendDeleted(reply);
    },
  );
}
