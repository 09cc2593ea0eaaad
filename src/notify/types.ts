// What alerting code (triggers, burn alerts, signals) hands to delivery. Delivery
// (src/notify/) turns a Notification into each recipient type's wire format and sends it with
// retries; the alerting code never talks to the network itself.
import type { DeliverableRecipient } from '../domain/notification-recipients.js';

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
  recipient: DeliverableRecipient;
  alert: {
    /** Id of the trigger / burn alert / signal. */
    id: string;
    name: string;
    description: string;
    /** Stable key for deduplication at the receiver (PagerDuty dedup_key): same for a trigger and its resolve. */
    dedupKey: string;
    /**
     * Link a human can follow: the object's page in the web UI (a trigger's page, an SLO's page);
     * a path is made absolute with the server's public base URL.
     */
    url?: string;
    datasetSlug?: string;
    /**
     * Optional: the kind of alert. Burn alerts: `exhaustion_time` or `budget_rate` (chooses the
     * webhook payload template; when absent, `budget_rate` is assumed if `result.slo.burnRate` is
     * set and `exhaustionMinutes` is not). Triggers: `on_change` or `on_true`.
     */
    alertType?: string;
    /** Optional: the environment's name for messages and templates (looked up when absent). */
    environmentName?: string;
  };
  /** What was measured: for triggers the query result per group, for burn alerts the SLO figures. */
  result: {
    summary: string;
    value?: number;
    threshold?: { op: string; value: number };
    groups?: { group: Record<string, unknown>; value: number }[];
    /** The web UI page of the stored query result the evaluation measured (a path is made absolute like `alert.url`). */
    url?: string;
    /** That result's chart as a PNG (its `graph_image_url`; a path is made absolute like `alert.url`). */
    imageUrl?: string;
    /** Burn alerts: SLO figures. */
    slo?: { id: string; name: string; budgetRemaining?: number; exhaustionMinutes?: number; burnRate?: number };
  };
  /** ISO time the evaluation happened (the app clock). */
  timestamp: string;
  /** Optional: a test notification (shown as such in messages; `is_test` in webhook payloads). */
  isTest?: boolean;
}

export interface Notifier {
  /** Queues the notification for delivery; never throws and never waits for the network. */
  enqueue(n: Notification): void;
  /** Stops delivery after what is in flight (called when the app closes). */
  close?(): Promise<void>;
  /**
   * Every notification handed to enqueue (the most recent 1,000), for tests that assert what
   * alerting code enqueued without looking at the network.
   */
  readonly sent?: Notification[];
  /**
   * Resolves once delivery has nothing left to do: nothing queued or in flight, every delivery
   * log write done, and no retry due within `within` ms (default: no retry pending at all).
   * Rejects after `timeoutMs` (default 30,000).
   */
  idle?(opts?: { within?: number; timeoutMs?: number }): Promise<void>;
}
