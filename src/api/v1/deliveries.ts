// GET /1/deliveries (Waggle extension; docs/web-ui.md, "Alerts"): the notification delivery log
// of the key's environment, newest first: what was sent (which alert, triggered or resolved), to
// which recipient, when, and how it went (state, attempts with their HTTP status or error). The
// same log `waggle deliveries` prints (src/notify/log.ts); recipient secrets are never in it.
// `state` narrows to one state, `alert_id` to one alert's, `limit` 1…1000 (default 100). Needs
// Manage Recipients.
import { Type } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { deliveryAnswer, listDeliveries, type DeliveryState } from '../../notify/log.js';
import type { ApiContext, App } from '../context.js';

const STATES = ['queued', 'retrying', 'delivered', 'failed', 'refused'] as const;
const StateSchema = Type.Unsafe<DeliveryState>({ type: 'string', enum: [...STATES] });

const Delivery = Type.Object({
  id: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  source: Type.String({ description: 'trigger, burn_alert or signal' }),
  status: Type.Union([Type.Literal('triggered'), Type.Literal('resolved')]),
  alert: Type.Object({ id: Type.String(), name: Type.String() }),
  recipient: Type.Object({ id: Type.String(), type: Type.String(), target: Type.String() }),
  state: StateSchema,
  attempt_count: Type.Integer(),
  attempts: Type.Array(
    Type.Object({
      at: Type.String({ format: 'date-time' }),
      duration_ms: Type.Number(),
      outcome: Type.String(),
      http_status: Type.Optional(Type.Integer()),
      error: Type.Optional(Type.String()),
    }),
  ),
  next_attempt_at: Type.Optional(Type.String({ format: 'date-time' })),
  finished_at: Type.Optional(Type.String({ format: 'date-time' })),
  error: Type.Optional(Type.String()),
});

export function registerDeliveries(app: App, { store }: ApiContext): void {
  app.get(
    '/1/deliveries',
    {
      schema: {
        tags: ['Recipients'],
        security: [{ configuration_key: [] }],
        querystring: Type.Object({
          state: Type.Optional(StateSchema),
          alert_id: Type.Optional(Type.String({ maxLength: 128, description: 'Only the deliveries of this alert (a trigger, burn alert, signal, or a test: POST /1/recipients/{id}/test).' })),
          limit: Type.Optional(Type.String({ pattern: '^([1-9][0-9]{0,2}|1000)$', description: '1…1000, default 100' })),
        }),
        description: "The environment's notification delivery log, newest first (Waggle extension).",
        response: { 200: Type.Array(Delivery) },
      },
      config: { auth: { kind: 'team', permission: 'manage_recipients' } },
    },
    async (request) => {
      const env = envOf(request);
      const rows = await listDeliveries(store, {
        teamId: env.teamId,
        environmentId: env.id,
        state: request.query.state as DeliveryState | undefined,
        alertId: request.query.alert_id,
        limit: request.query.limit === undefined ? 100 : Number(request.query.limit),
      });
      return rows.map(deliveryAnswer);
    },
  );
}
