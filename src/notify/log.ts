// The delivery log: one document per (notification, recipient) in the generic object store,
// kind `delivery`, with the team and environment of the alert. It is also the persistent queue:
// a delivery whose state is `queued` or `retrying` still has to be sent and is resumed when the
// server starts. Finished deliveries beyond the newest N are pruned.
import { sha256 } from '../domain/ids.js';
import type { RecipientType } from '../domain/recipients.js';
import type { ConfigStore, StoredObject } from '../stores/config/types.js';
import type { AlertSource, Notification } from './types.js';
import { DELIVERY_KIND } from '../domain/kinds.js';

export type DeliveryState = 'queued' | 'retrying' | 'delivered' | 'failed' | 'refused';
export const FINAL_STATES: readonly DeliveryState[] = ['delivered', 'failed', 'refused'];
export const isFinal = (s: DeliveryState) => FINAL_STATES.includes(s);

export interface DeliveryAttempt {
  /** When the attempt started (ISO, wall clock). */
  at: string;
  durationMs: number;
  /** delivered; retry (failed, will be retried); failed (failed for good); interrupted (shutdown; not counted). */
  outcome: 'delivered' | 'retry' | 'failed' | 'interrupted';
  httpStatus?: number;
  error?: string;
}

export interface DeliveryRecord {
  notificationId: string;
  source: AlertSource;
  status: 'triggered' | 'resolved';
  alert: { id: string; name: string };
  recipient: { id: string; type: RecipientType; target: string };
  state: DeliveryState;
  /** Counted attempts (interrupted ones are listed but not counted). */
  attemptCount: number;
  attempts: DeliveryAttempt[];
  /** When the next attempt is due (ISO, wall clock), while `retrying`. */
  nextAttemptAt?: string;
  /** Why it failed or was refused, or the last error while retrying. */
  error?: string;
  finishedAt?: string;
  /** The notification as enqueued: what a restart resumes from. */
  notification: Notification;
}

/**
 * A delivery as GET /1/deliveries answers it (src/api/v1/deliveries.ts): snake_case, without the
 * notification; optional members only when set. Here rather than in domain/: the delivery log is
 * notify's stored shape.
 */
export function deliveryAnswer(o: StoredObject<DeliveryRecord>) {
  const b = o.body;
  return {
    id: o.id,
    created_at: o.createdAt,
    updated_at: o.updatedAt,
    source: b.source,
    status: b.status,
    alert: b.alert,
    recipient: b.recipient,
    state: b.state,
    attempt_count: b.attemptCount,
    attempts: b.attempts.map((a) => ({
      at: a.at,
      duration_ms: a.durationMs,
      outcome: a.outcome,
      ...(a.httpStatus !== undefined ? { http_status: a.httpStatus } : {}),
      ...(a.error !== undefined ? { error: a.error } : {}),
    })),
    ...(b.nextAttemptAt ? { next_attempt_at: b.nextAttemptAt } : {}),
    ...(b.finishedAt ? { finished_at: b.finishedAt } : {}),
    ...(b.error ? { error: b.error } : {}),
  };
}

/**
 * A trigger's delivery as its history answers it (GET /1/triggers/…/history): the last attempt's
 * HTTP status only; optional members only when set.
 */
export function triggerDeliveryAnswer(o: StoredObject<DeliveryRecord>) {
  const b = o.body;
  const last = b.attempts.at(-1);
  return {
    id: o.id,
    created_at: o.createdAt,
    status: b.status,
    recipient: b.recipient,
    state: b.state,
    attempt_count: b.attemptCount,
    ...(last?.httpStatus !== undefined ? { http_status: last.httpStatus } : {}),
    ...(b.finishedAt ? { finished_at: b.finishedAt } : {}),
    ...(b.error ? { error: b.error } : {}),
  };
}

/** The store's unique key of a delivery: one per notification and recipient. */
export const deliveryKey = (n: Notification) => sha256(`${n.id}\u0000${n.recipient.id}`);

export interface DeliveryFilter {
  teamId?: string;
  environmentId?: string;
  state?: DeliveryState;
  recipientId?: string;
  alertId?: string;
  /** Newest first; at most this many. */
  limit?: number;
}

/** Deliveries, newest first. */
export async function listDeliveries(store: ConfigStore, f: DeliveryFilter = {}): Promise<StoredObject<DeliveryRecord>[]> {
  const all = await store.listObjects<DeliveryRecord>(DELIVERY_KIND, { teamId: f.teamId, environmentId: f.environmentId });
  const out: StoredObject<DeliveryRecord>[] = [];
  for (let i = all.length - 1; i >= 0 && (f.limit === undefined || out.length < f.limit); i--) {
    const o = all[i];
    if (f.state && o.body.state !== f.state) continue;
    if (f.recipientId && o.body.recipient.id !== f.recipientId) continue;
    if (f.alertId && o.body.alert.id !== f.alertId) continue;
    out.push(o);
  }
  return out;
}

/** Deletes the oldest finished deliveries so that at most `keep` remain; returns how many went. */
export async function pruneDeliveries(store: ConfigStore, keep: number): Promise<number> {
  const all = await store.listObjects<DeliveryRecord>(DELIVERY_KIND, {});
  let excess = all.length - keep;
  let deleted = 0;
  for (const o of all) {
    if (excess <= 0) break;
    if (!isFinal(o.body.state)) continue;
    if (await store.deleteObject(DELIVERY_KIND, o.id)) deleted++;
    excess--;
  }
  return deleted;
}
