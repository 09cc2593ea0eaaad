// /1/triggers/{datasetSlug|__all__}: list, create (201 + relative Location), get, full-replacement
// PUT and DELETE (204), following Honeycomb's Trigger objects (CreateTriggerRequest /
// TriggerResponse). Every route needs the configuration-key permission Manage Triggers
// (`manage_triggers`): 403 without it; another environment's trigger answers 404 like a missing one.
// What a body may say and how a trigger is answered: src/domain/trigger-bodies.ts (its header
// lists the decisions); src/jobs/triggers.ts evaluates triggers.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envOf } from '../../http/auth.js';
import { notFound } from '../../errors.js';
import { ALL_DATASETS, datasetOrAll } from '../../domain/datasets.js';
import { shortId } from '../../domain/ids.js';
import { MAX_NOTIFICATION_RECIPIENTS, NotificationRecipientSchema } from '../../domain/notification-recipients.js';
import { ALERT_TYPES, BASELINE_OFFSETS, BASELINE_TYPES, DAYS_OF_WEEK, LIMITS, SCHEDULE_TYPES, THRESHOLD_OPS, TIME_OF_DAY, stateIdOf, type StoredTrigger, type TriggerState } from '../../domain/triggers.js';
import { resolveOnDelete } from '../../jobs/triggers.js';
import type { ConfigStore, Dataset, Environment, StoredObject } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { triggerResponse, triggerResponses, validateTrigger } from '../../domain/trigger-bodies.js';
import { SlugParams, TagsInput, itemParams, QuerySchema, tagsOutput } from './schemas.js';
import { sendCreated, sendDeleted, findOwned } from '../resource.js';
import { TRIGGER_KIND, TRIGGER_STATE_KIND } from '../../domain/kinds.js';

const tags = ['Triggers'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_triggers' } as const;

// ---- schemas (OpenAPI document; validation is validateTrigger's) ------------------------------

const enumOf = <T extends string | number>(values: readonly T[], extra: Record<string, unknown> = {}) =>
  Type.Unsafe<T>({ type: typeof values[0] === 'number' ? 'integer' : 'string', enum: [...values], ...extra });
const ThresholdSchema = Type.Object({
  op: enumOf(THRESHOLD_OPS),
  value: Type.Number(),
  exceeded_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5, default: 1, description: 'Consecutive breaching evaluations before it fires.' })),
});
const ScheduleSchema = Type.Object({
  window: Type.Object({
    days_of_week: Type.Array(enumOf(DAYS_OF_WEEK), { minItems: 1, maxItems: 7 }),
    start_time: Type.String({ pattern: TIME_OF_DAY.source, description: 'UTC, HH:mm' }),
    end_time: Type.String({ pattern: TIME_OF_DAY.source, description: 'UTC, HH:mm; ≤ start_time means the next day' }),
  }),
});
const BaselineSchema = Type.Object({ offset_minutes: Type.Optional(enumOf(BASELINE_OFFSETS)), type: Type.Optional(enumOf(BASELINE_TYPES)) }, {
  description: '`{}` (or null) clears the baseline.',
});
const triggerFields = {
  name: Type.String({ minLength: 1, maxLength: LIMITS.name }),
  description: Type.Optional(Type.String({ maxLength: LIMITS.description })),
  tags: TagsInput,
  query: Type.Optional(QuerySchema),
  query_id: Type.Optional(Type.String()),
  threshold: ThresholdSchema,
  frequency: Type.Optional(Type.Integer({ minimum: LIMITS.minFrequency, maximum: LIMITS.maxFrequency, multipleOf: 60, default: LIMITS.defaultFrequency })),
  alert_type: Type.Optional(enumOf(ALERT_TYPES, { default: 'on_change' })),
  disabled: Type.Optional(Type.Boolean({ default: false })),
  auto_investigate: Type.Optional(Type.Boolean({ default: false, description: 'Stored and echoed; Waggle runs no automatic investigation.' })),
  recipients: Type.Optional(Type.Array(NotificationRecipientSchema, { maxItems: MAX_NOTIFICATION_RECIPIENTS })),
  evaluation_schedule_type: Type.Optional(enumOf(SCHEDULE_TYPES)),
  evaluation_schedule: Type.Optional(ScheduleSchema),
  baseline_details: Type.Optional(BaselineSchema),
};
const TriggerRequest = Type.Object(triggerFields, { description: 'Exactly one of `query` and `query_id`.' });
export const TriggerResponseSchema = Type.Object({
  id: Type.String(),
  dataset_slug: Type.String({ description: '`__all__` for environment-wide triggers' }),
  ...triggerFields,
  description: Type.String(),
  tags: tagsOutput('trigger'),
  query: QuerySchema,
  query_id: Type.String(),
  frequency: Type.Integer(),
  alert_type: enumOf(ALERT_TYPES),
  disabled: Type.Boolean(),
  auto_investigate: Type.Optional(Type.Boolean({ description: 'Absent from an environment-wide trigger created without it.' })),
  triggered: Type.Boolean({ description: 'Whether it has crossed its threshold without resolving.' }),
  last_evaluation: Type.Optional(
    Type.Union([
      Type.Object({
        at: Type.String({ format: 'date-time', description: 'The evaluation slot' }),
        value: Type.Optional(Type.Number({ description: 'The most extreme value in the threshold’s direction' })),
        breaching: Type.Boolean(),
        no_data: Type.Boolean(),
        error: Type.Optional(Type.String()),
      }),
      Type.Null(),
    ], { description: 'Waggle extension: the outcome of the last evaluation; null before the first.' }),
  ),
  recipients: Type.Array(NotificationRecipientSchema),
  evaluation_schedule_type: enumOf(SCHEDULE_TYPES),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
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
/** A whole-second ISO time: evaluation slots are whole seconds. */
const wholeSecond = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString();

export function registerTriggers(app: App, ctx: ApiContext): void {
  const { store } = ctx;
  const noSchemaValidation = () => () => true;
  const respond = async (o: StoredObject<StoredTrigger>, dataset: Dataset | null) => (await triggerResponses(store, [o]))[0] ?? triggerResponse(o, slugOfPath(dataset));
  const datasetOf = (request: FastifyRequest) => datasetOrAll(store, envOf(request), (request.params as { datasetSlug: string }).datasetSlug);

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
      validatorCompiler: noSchemaValidation,
      config: { auth },
    },
    async (request, reply) => {
      const env = envOf(request);
      const dataset = await datasetOf(request);
      const body = await validateTrigger(store, env, dataset, request.body);
      const id = shortId();
      const created = await store.createObject<StoredTrigger>({
        id,
        kind: TRIGGER_KIND,
        teamId: env.teamId,
        environmentId: env.id,
        datasetId: dataset?.id ?? null,
        scope: env.id,
        uniqueKey: null,
        body,
      });
      // The first evaluation is due at once (the next tick); later ones every `frequency` from here.
      const state: TriggerState = { triggerId: id, nextRun: wholeSecond(ctx.now()), consecutive: 0, triggered: false };
      await store.createObject<TriggerState>({
        id: stateIdOf(id),
        kind: TRIGGER_STATE_KIND,
        teamId: env.teamId,
        environmentId: env.id,
        datasetId: dataset?.id ?? null,
        scope: env.id,
        uniqueKey: id,
        body: state,
      });
      return sendCreated(reply, await respond(created, dataset), `/1/triggers/${encodeURIComponent(slugOfPath(dataset))}/${id}`);
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
      validatorCompiler: noSchemaValidation,
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOf(request);
      const { triggerId } = request.params as Static<typeof ItemParams>;
      const current = await getTriggerObject(store, env, dataset, triggerId);
      const body = await validateTrigger(store, env, dataset, request.body, current.body);
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
