// The notifier the app uses: real delivery (DeliveryNotifier) built from the settings, or, for
// code that has no store to hand, a RecordingNotifier that only records what was enqueued.
import { backgroundBaseUrl, DEFAULTS, type Settings } from '../settings.js';
import type { ConfigStore } from '../stores/config/types.js';
import { DeliveryNotifier, type DeliveryNotifierDeps, type NotifyLogger } from './notifier.js';
import type { Notification, Notifier } from './types.js';

export { DeliveryNotifier } from './notifier.js';
export type { DeliveryOptions, DeliveryNotifierDeps, NotifyLogger } from './notifier.js';
export { listDeliveries, pruneDeliveries, type DeliveryAttempt, type DeliveryFilter, type DeliveryRecord, type DeliveryState } from './log.js';
export { renderTemplate, parseTemplate, TemplateError } from './template.js';
export { webhookSignature, WEBHOOK_HEADERS } from './transports.js';
export type { Notification, Notifier, AlertSource } from './types.js';

/** Records notifications and delivers nothing. */
export class RecordingNotifier implements Notifier {
  readonly sent: Notification[] = [];
  enqueue(n: Notification): void {
    this.sent.push(n);
  }
  async idle(): Promise<void> {}
}

export interface CreateNotifierDeps {
  store: ConfigStore;
  settings: Partial<Settings>;
  log: NotifyLogger;
  /** Wall clock in ms for the delivery log and backoff (default Date.now). */
  clock?: () => number;
  onOutcome?: DeliveryNotifierDeps['onOutcome'];
  /**
   * Claims shared with other nodes (cluster/leadership.ts). When `shared`, unfinished deliveries
   * are not resumed at construction: the leader takes them over (resumeUnfinished).
   */
  claims?: DeliveryNotifierDeps['claims'] & { shared: boolean };
}

/** The app's notifier: DeliveryNotifier over the store with the delivery settings; RecordingNotifier without deps. */
export function createNotifier(
  deps?: CreateNotifierDeps,
): Notifier & { sent: Notification[]; close?: () => Promise<void>; resumeUnfinished?: () => Promise<number> } {
  if (!deps) return new RecordingNotifier();
  const s: Settings = { ...DEFAULTS, ...deps.settings };
  return new DeliveryNotifier({
    store: deps.store,
    log: deps.log,
    clock: deps.clock,
    onOutcome: deps.onOutcome,
    claims: deps.claims?.shared ? deps.claims : undefined,
    resume: !deps.claims?.shared,
    options: {
      queueSize: s.notifyQueueSize,
      concurrency: s.notifyConcurrency,
      maxAttempts: s.notifyMaxAttempts,
      retryBaseMs: s.notifyRetryBaseMs,
      retryMaxMs: s.notifyRetryMaxMs,
      logSize: s.deliveryLogSize,
      closeGraceMs: Math.min(s.notifyTimeoutMs, 3000),
      linkBase: backgroundBaseUrl(s),
      // Longer than one attempt (its timeout), so that a live node's claim never lapses mid-request.
      claimMs: s.notifyTimeoutMs + 5000,
    },
    transport: {
      timeoutMs: s.notifyTimeoutMs,
      pagerdutyUrl: s.pagerdutyUrl,
      slackWebhookUrl: s.slackWebhookUrl,
      slackToken: s.slackToken,
      slackApiUrl: s.slackApiUrl,
      smtp: {
        host: s.smtpHost,
        port: s.smtpPort,
        secure: s.smtpSecure,
        starttls: s.smtpStarttls,
        user: s.smtpUser,
        password: s.smtpPassword,
        from: s.smtpFrom,
        caFile: s.smtpCaFile,
      },
    },
  });
}
