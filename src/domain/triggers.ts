// Triggers: what is stored for a trigger and for its evaluation, and the rules that need no HTTP
// and no SQL (threshold comparison, evaluation-schedule windows, the trigger query subset).
// src/api/v1/triggers.ts is the HTTP face; src/jobs/triggers.ts evaluates them.
//
// Storage (the generic object store, no tables of its own):
// - kind `trigger` (TRIGGER_KIND, src/domain/kinds.ts): the trigger's configuration as the
//   API accepted it. `recipients` are NotificationRecipients `{id, type, target, details}`, so the
//   recipient in-use check (DELETE /1/recipients/{id} → 409) finds them. datasetId is null for
//   environment-wide (`__all__`) triggers.
// - kind `trigger_state` (id `<trigger id>.state`, unique key = the trigger id): the evaluation
//   state, written only by the trigger job (src/jobs/triggers.ts) and created with the trigger. Kept
//   apart so that an evaluation never overwrites a concurrent PUT and never changes the trigger's
//   `updated_at`.
//   It lives under the same dataset, so deleting the dataset deletes both. It also keeps the
//   trigger's newest state changes (`history`, at most HISTORY_KEPT): when it fired and when it
//   resolved, with the value and the stored query result of that evaluation (what
//   GET /1/triggers/{dataset}/{id}/history answers, a Waggle extension: docs/triggers.md).
import type { NotificationRecipient } from './notification-recipients.js';
import type { Tag } from './tags.js';
import type { QueryOp, QuerySpec } from '../query/spec.js';
import type { Dataset, Environment, NewObject, StoredObject } from '../stores/config/types.js';
import { shortId } from './ids.js';
import { TRIGGER_KIND, TRIGGER_STATE_KIND } from './kinds.js';

export const stateIdOf = (triggerId: string) => `${triggerId}.state`;

export const THRESHOLD_OPS = ['>', '>=', '<', '<='] as const;
export type ThresholdOp = (typeof THRESHOLD_OPS)[number];
export const ALERT_TYPES = ['on_change', 'on_true'] as const;
export type AlertType = (typeof ALERT_TYPES)[number];
export const SCHEDULE_TYPES = ['frequency', 'window'] as const;
export type ScheduleType = (typeof SCHEDULE_TYPES)[number];
export const DAYS_OF_WEEK = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
export type DayOfWeek = (typeof DAYS_OF_WEEK)[number];
export const BASELINE_OFFSETS = [60, 1440, 10080, 40320] as const;
export const BASELINE_TYPES = ['percentage', 'value'] as const;
export type BaselineType = (typeof BASELINE_TYPES)[number];

export const LIMITS = {
  name: 120,
  description: 1023,
  minFrequency: 60,
  maxFrequency: 86_400,
  frequencyStep: 60,
  defaultFrequency: 900,
  /** The query's time range may be at most this many frequencies. */
  durationPerFrequency: 4,
  minExceededLimit: 1,
  maxExceededLimit: 5,
  maxHavings: 1,
} as const;

/** `HH:mm` (hours 0–23, optionally one digit), the contract's pattern. */
export const TIME_OF_DAY = /^([0-1]?[0-9]|2[0-3]):[0-5][0-9]$/;
/** Calculations a trigger may not use. */
export const TRIGGER_FORBIDDEN_OPS: readonly QueryOp[] = ['HEATMAP', 'CONCURRENCY'];
/** Calculations whose value over no events is 0 (the others have no value then). */
export const ZERO_WHEN_EMPTY_OPS: readonly QueryOp[] = ['COUNT', 'SUM', 'COUNT_DISTINCT'];

export interface Threshold {
  op: ThresholdOp;
  value: number;
  exceeded_limit: number;
}
export interface ScheduleWindow {
  days_of_week: DayOfWeek[];
  start_time: string;
  end_time: string;
}
export interface BaselineDetails {
  offset_minutes: (typeof BASELINE_OFFSETS)[number];
  type: BaselineType;
}

/** What the object store holds for a trigger (timestamps come from the object). */
export interface StoredTrigger {
  name: string;
  description: string;
  tags: Tag[];
  /** The query the trigger runs (an inline query is saved as a query first). */
  query_id: string;
  /** That query's spec (queries are immutable, so the copy never goes stale). */
  query: QuerySpec;
  threshold: Threshold;
  frequency: number;
  alert_type: AlertType;
  disabled: boolean;
  /** Stored and echoed only (Honeycomb's automatic investigation has no Waggle counterpart). */
  auto_investigate?: boolean;
  recipients: NotificationRecipient[];
  evaluation_schedule_type: ScheduleType;
  evaluation_schedule?: { window: ScheduleWindow };
  baseline_details?: BaselineDetails;
}

/** The evaluation state of a trigger (kind `trigger_state`). */
export interface TriggerState {
  triggerId: string;
  /** ISO time of the next scheduled evaluation slot (app clock). */
  nextRun: string;
  /** ISO time of the slot last evaluated, if any. */
  lastRun?: string;
  /** Consecutive breaching evaluations, up to now. */
  consecutive: number;
  triggered: boolean;
  /** When `triggered` last became true. */
  triggeredAt?: string;
  /** The last evaluation's outcome, for operators (not part of the API). */
  last?: { value?: number; breaching: boolean; noData: boolean; error?: string };
  /** The newest state changes, oldest first (at most HISTORY_KEPT). */
  history?: StateChange[];
}

/** A new trigger of the environment (under `dataset`, or environment-wide for null), as the store takes it. */
export function newTrigger(env: Environment, dataset: Dataset | null, body: StoredTrigger): NewObject<StoredTrigger> {
  return {
    id: shortId(),
    kind: TRIGGER_KIND,
    teamId: env.teamId,
    environmentId: env.id,
    datasetId: dataset?.id ?? null,
    scope: env.id,
    uniqueKey: null,
    body,
  };
}

/** A whole-second ISO time: evaluation slots are whole seconds. */
export const wholeSecond = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString();

/** The state a trigger starts with: its first evaluation is due at `now` (the next tick), nothing breached yet. */
export const initialTriggerState = (triggerId: string, now: Date): TriggerState => ({
  triggerId,
  nextRun: wholeSecond(now),
  consecutive: 0,
  triggered: false,
});

/** The trigger's evaluation state object (id `<trigger id>.state`, unique key the trigger id), as the store takes it. */
export function newTriggerState(trigger: StoredObject<StoredTrigger>, body: TriggerState): NewObject<TriggerState> {
  return {
    id: stateIdOf(trigger.id),
    kind: TRIGGER_STATE_KIND,
    teamId: trigger.teamId,
    environmentId: trigger.environmentId,
    datasetId: trigger.datasetId,
    scope: trigger.environmentId ?? trigger.teamId,
    uniqueKey: trigger.id,
    body,
  };
}

/** Most state changes a trigger keeps. */
export const HISTORY_KEPT = 100;

/** A change of a trigger's state: it fired, or it resolved. */
export interface StateChange {
  /** ISO time of the evaluation slot (for a resolve without evaluation: when it happened). */
  at: string;
  status: 'triggered' | 'resolved';
  /** The evaluation's value (the most extreme in the threshold's direction). */
  value?: number;
  /** The threshold when it changed. */
  threshold: { op: ThresholdOp; value: number };
  /** The stored query result of the evaluation's window (kind `query_result`), when one was stored. */
  resultId?: string;
  /** Why, when not an evaluation: `disabled`. */
  reason?: 'disabled';
}

/** `history` with `change` added, the oldest dropped past HISTORY_KEPT. */
export function withChange(history: StateChange[] | undefined, change: StateChange): StateChange[] {
  return [...(history ?? []), change].slice(-HISTORY_KEPT);
}

/**
 * The state half of a trigger's history (GET …/history): whether it is triggered (and since
 * when) and its state changes, newest first; `resultUrl` gives a stored result's UI page.
 */
export function triggerHistoryAnswer(state: TriggerState | undefined, resultUrl: (resultId: string) => string) {
  return {
    triggered: state?.triggered ?? false,
    ...(state?.triggered && state.triggeredAt ? { triggered_at: state.triggeredAt } : {}),
    state_changes: [...(state?.history ?? [])].reverse().map((c) => ({
      at: c.at,
      status: c.status,
      ...(c.value !== undefined ? { value: c.value } : {}),
      threshold: c.threshold,
      ...(c.reason ? { reason: c.reason } : {}),
      ...(c.resultId ? { result_id: c.resultId, result_url: resultUrl(c.resultId) } : {}),
    })),
  };
}

/** `value op threshold`. */
export function breaches(value: number, op: ThresholdOp, threshold: number): boolean {
  switch (op) {
    case '>':
      return value > threshold;
    case '>=':
      return value >= threshold;
    case '<':
      return value < threshold;
    case '<=':
      return value <= threshold;
  }
}

/** Minutes since midnight of an `HH:mm` time. */
export function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':');
  return Number(h) * 60 + Number(m);
}

/**
 * Whether `at` lies in the schedule window (UTC). The window opens at `start_time` on each listed
 * day and closes at `end_time` the same day, or the next day when `end_time` ≤ `start_time` (so
 * equal times make a 24-hour window). Start inclusive, end exclusive.
 */
export function inScheduleWindow(window: ScheduleWindow, at: Date): boolean {
  const start = minutesOf(window.start_time);
  const end = minutesOf(window.end_time);
  const minute = at.getUTCHours() * 60 + at.getUTCMinutes() + at.getUTCSeconds() / 60 + at.getUTCMilliseconds() / 60_000;
  const today = DAYS_OF_WEEK[at.getUTCDay()];
  const yesterday = DAYS_OF_WEEK[(at.getUTCDay() + 6) % 7];
  const days = new Set<string>(window.days_of_week);
  if (end > start) return days.has(today) && minute >= start && minute < end;
  // Crosses midnight: opened today at start, or opened yesterday and not yet closed.
  return (days.has(today) && minute >= start) || (days.has(yesterday) && minute < end);
}

/** The time range, in seconds, a trigger's query covers: its `time_range`, else the frequency. */
export function triggerDuration(query: QuerySpec, frequency: number): number {
  return query.time_range ?? frequency;
}
