// GET /1/triggers/{datasetSlug|__all__}/{triggerId}/history (Waggle extension; docs/triggers.md,
// "State history"): what the web UI's trigger page shows besides the query's graph. The trigger's
// newest state changes (it fired, it resolved: when, the value, the threshold then, the stored
// query result of that evaluation and its UI page), newest first, as the evaluation keeps them in
// the trigger's state (src/domain/triggers.ts, at most 100); and the newest deliveries of its
// notifications from the delivery log (src/notify/log.ts, at most 50): to which recipient, how it
// went. Needs Manage Triggers, like the trigger itself; another environment's trigger is a 404.
import { Type, type Static } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { TRIGGER_KIND, TRIGGER_STATE_KIND } from '../../domain/kinds.js';
import { stateIdOf, triggerHistoryAnswer, type StoredTrigger, type TriggerState } from '../../domain/triggers.js';
import { resultPagePath } from '../../domain/ui-links.js';
import { listDeliveries, triggerDeliveryAnswer } from '../../notify/log.js';
import type { ApiContext, App } from '../context.js';
import { findOwned } from '../resource.js';
import { itemParams } from './schemas.js';

/** Most deliveries answered. */
const DELIVERIES = 50;

const StateChange = Type.Object({
  at: Type.String({ format: 'date-time', description: 'The evaluation slot (a resolve on disabling: when it happened)' }),
  status: Type.Union([Type.Literal('triggered'), Type.Literal('resolved')]),
  value: Type.Optional(Type.Number()),
  threshold: Type.Object({ op: Type.String(), value: Type.Number() }),
  reason: Type.Optional(Type.String({ description: '`disabled`: resolved because the trigger was disabled' })),
  result_id: Type.Optional(Type.String({ description: 'The stored query result of the evaluation’s window' })),
  result_url: Type.Optional(Type.String({ description: 'Its page in the web UI' })),
});
const Delivery = Type.Object({
  id: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  status: Type.Union([Type.Literal('triggered'), Type.Literal('resolved')]),
  recipient: Type.Object({ id: Type.String(), type: Type.String(), target: Type.String() }),
  state: Type.String({ description: 'queued, retrying, delivered, failed or refused' }),
  attempt_count: Type.Integer(),
  http_status: Type.Optional(Type.Integer({ description: 'Of the last attempt' })),
  finished_at: Type.Optional(Type.String({ format: 'date-time' })),
  error: Type.Optional(Type.String()),
});
const History = Type.Object({
  triggered: Type.Boolean(),
  triggered_at: Type.Optional(Type.String({ format: 'date-time', description: 'When it last fired, while triggered' })),
  state_changes: Type.Array(StateChange, { description: 'Newest first, at most 100' }),
  deliveries: Type.Array(Delivery, { description: 'Newest first, at most 50' }),
});
const Params = itemParams('triggerId');

export function registerTriggerHistory(app: App, { store }: ApiContext): void {
  app.get(
    '/1/triggers/:datasetSlug/:triggerId/history',
    {
      schema: {
        tags: ['Triggers'],
        security: [{ configuration_key: [] }],
        params: Params,
        description: "The trigger's state changes and the deliveries of its notifications, newest first (Waggle extension).",
        response: { 200: History },
      },
      config: { auth: { kind: 'team', permission: 'manage_triggers' } },
    },
    async (request): Promise<Static<typeof History>> => {
      const env = envOf(request);
      const { datasetSlug, triggerId } = request.params as Static<typeof Params>;
      const dataset = await datasetOrAll(store, env, datasetSlug);
      const trigger = await findOwned<StoredTrigger>(store, TRIGGER_KIND, triggerId, 'trigger', env, dataset);
      const state = (await store.getObject<TriggerState>(TRIGGER_STATE_KIND, stateIdOf(trigger.id)))?.body;
      const team = request.auth!.team.slug;
      const deliveries = await listDeliveries(store, { teamId: env.teamId, environmentId: env.id, alertId: trigger.id });
      const resultUrl = (resultId: string) => request.publicBase + resultPagePath(team, env.slug, datasetSlug, resultId);
      return {
        ...triggerHistoryAnswer(state, resultUrl),
        deliveries: deliveries
          .filter((o) => o.body.source === 'trigger')
          .slice(0, DELIVERIES)
          .map(triggerDeliveryAnswer),
      };
    },
  );
}
