// The notifier the app uses. PLACEHOLDER until delivery lands: it only records notifications
// (tests read them through `app.engine.notifier.sent`).
import type { Notification, Notifier } from './types.js';

export class RecordingNotifier implements Notifier {
  readonly sent: Notification[] = [];
  enqueue(n: Notification): void {
    this.sent.push(n);
  }
}

export function createNotifier(): Notifier & { sent?: Notification[]; close?: () => Promise<void> } {
  return new RecordingNotifier();
}
