// What alerting code (triggers, burn alerts, signals) hands to delivery. Delivery
// (src/notify/) turns a Notification into each recipient type's wire format and sends it with
// retries; the alerting code never talks to the network itself.
import type { NotificationRecipient } from '../domain/recipients.js';

export type AlertSource = 'trigger' | 'burn_alert' | 'signal';

export interface Notification {
  /** Unique per notification: delivery deduplicates on it and the delivery log shows it. */
  id: string;
  source: AlertSource;
  /** `triggered` when the alert starts (or, for on_true triggers, at every breaching run), `resolved` when it ends. */
  status: 'triggered' | 'resolved';
  teamId: string;
  environmentId: string;
  /** The recipient as the alert references it (id + per-alert details: severity, variables). */
  recipient: NotificationRecipient;
  alert: {
    /** Id of the trigger / burn alert / signal. */
    id: string;
    name: string;
    description: string;
    /** Stable key for deduplication at the receiver (PagerDuty dedup_key): same for a trigger and its resolve. */
    dedupKey: string;
    /** Link a human can follow (Waggle has no UI: the API URL of the object). */
    url?: string;
    datasetSlug?: string;
  };
  /** What was measured: for triggers the query result per group, for burn alerts the SLO figures. */
  result: {
    summary: string;
    value?: number;
    threshold?: { op: string; value: number };
    groups?: { group: Record<string, unknown>; value: number }[];
    /** Burn alerts: SLO figures. */
    slo?: { id: string; name: string; budgetRemaining?: number; exhaustionMinutes?: number; burnRate?: number };
  };
  /** ISO time the evaluation happened (the app clock). */
  timestamp: string;
}

export interface Notifier {
  /** Queues the notification for delivery; never throws and never waits for the network. */
  enqueue(n: Notification): void;
  /** Stops delivery after what is in flight (called when the app closes). */
  close?(): Promise<void>;
}
