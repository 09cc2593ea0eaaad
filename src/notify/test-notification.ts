// A test notification to one recipient ("Send test" in the web UI, POST /1/recipients/{id}/test):
// a trigger-shaped notification marked as a test (`[TEST]` in messages, `is_test` in webhook
// payloads), through the same queue, retries and delivery log as a real one, so what the
// recipient receives and what the log says are exactly what a trigger would give.
import { randomUUID } from 'node:crypto';
import { recipientTarget, type StoredRecipient } from '../domain/recipients.js';
import type { StoredObject } from '../stores/config/types.js';
import type { Notification } from './types.js';

export function testNotification(recipient: StoredObject<StoredRecipient>, env: { id: string; teamId: string }, now: Date): Notification {
  const alertId = `test-${randomUUID()}`;
  return {
    id: alertId,
    source: 'trigger',
    status: 'triggered',
    teamId: env.teamId,
    environmentId: env.id,
    recipient: { id: recipient.id, type: recipient.body.type, target: recipientTarget(recipient.body) },
    alert: { id: alertId, name: 'Test notification from Waggle', description: 'Sent from the recipient page to check that this recipient receives alerts.', dedupKey: alertId },
    result: { summary: 'This is a test: nothing is wrong.', value: 1, threshold: { op: '>', value: 0 }, groups: [{ group: {}, value: 1 }] },
    timestamp: now.toISOString(),
    isTest: true,
  };
}
