// POST /1/recipients/{id}/test (a Waggle extension; "Send test" in the web UI): queues a test
// notification to the recipient through the real delivery path (src/notify/test-notification.ts)
// and answers 202 with its `alert_id`; `GET /1/deliveries?alert_id=` then shows how it went.
// Needs Manage Recipients; another team's recipient → 404, as on every recipient route.
import { Type } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { getRecipient } from '../../domain/recipients.js';
import { testNotification } from '../../notify/test-notification.js';
import type { ApiContext, App } from '../context.js';

export function registerRecipientTest(app: App, { store, notifier, now }: ApiContext): void {
  app.post(
    '/1/recipients/:recipientId/test',
    {
      schema: {
        tags: ['Recipients'],
        security: [{ configuration_key: [] }],
        params: Type.Object({ recipientId: Type.String() }),
        description:
          'Waggle extension: sends the recipient a test notification (marked as a test) through the delivery queue. 202 with the alert id to find it in GET /1/deliveries?alert_id=.',
        response: { 202: Type.Object({ alert_id: Type.String() }) },
      },
      config: { auth: { kind: 'team', permission: 'manage_recipients' } },
    },
    async (request, reply) => {
      const env = envOf(request);
      const recipient = await getRecipient(store, env.teamId, request.params.recipientId);
      const n = testNotification(recipient, env, now());
      notifier.enqueue(n);
      return reply.code(202).send({ alert_id: n.alert.id });
    },
  );
}
