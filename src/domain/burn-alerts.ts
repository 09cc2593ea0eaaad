// Burn alerts of SLOs: what is stored (kind `burn_alert`; `triggered` in a state object the
// evaluation, src/jobs/burn-alerts.ts, writes), what a body may say and how an alert is answered.
// src/api/v1/burn-alerts.ts is the HTTP face.
//
// Decisions (also in docs/slos.md):
// - Stored in the object store, kind `burn_alert`, under the SLO's environment and dataset (an
//   alert of a dataset's SLO goes with the dataset). `triggered` lives in a separate state object.
// - An alert is found under `__all__` or under any dataset of its SLO, like the SLO; elsewhere
//   404. `slo.id` on create must be an SLO found the same way from the path (404 `SLO not found`
//   otherwise, as for the list's `slo_id`); on PUT `slo` is ignored (an alert cannot move).
// - `alert_type` `exhaustion_time` (the default, also for "" as the Terraform provider sends an
//   unset type) takes `exhaustion_minutes` (integer ≥ 0,
//   required); `budget_rate` takes `budget_rate_window_minutes` (integer, 60 … the SLO's period in
//   minutes) and `budget_rate_decrease_threshold_per_million` (integer 1 … 1,000,000), both
//   required. A field of the other type (not null) → 422 on that field.
// - `recipients` (1 … 100) required on create and PUT, checked by validateNotificationRecipients:
//   `{type: "email", target: "<address>"}` without an id names the team's email recipient of that
//   address or makes one (once the whole body is valid), and the answer names its id.
//   `description` ≤ 1023 (omitted: ""). `auto_investigate` (boolean, default false) is stored and
//   echoed only. Read-only (`id`, `triggered`, timestamps) and unknown fields are ignored. PUT
//   keeps the alert's triggered state; the next evaluation decides anew.
import { ApiError } from '../errors.js';
import type { ConfigStore, Environment, NewObject, StoredObject } from '../stores/config/types.js';
import type { Problems } from '../validation.js';
import { shortId } from './ids.js';
import { BURN_ALERT_KIND, BURN_ALERT_STATE_KIND, SLO_KIND } from './kinds.js';
import { validateNotificationRecipients, type NotificationRecipient } from './notification-recipients.js';
import { MINUTES_PER_DAY, type SLO_STATUSES, type SloObject } from './slos.js';

export const ALERT_TYPES = ['exhaustion_time', 'budget_rate'] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

export interface BurnAlertBody {
  slo_id: string;
  alert_type: AlertType;
  description: string;
  exhaustion_minutes?: number;
  budget_rate_window_minutes?: number;
  budget_rate_decrease_threshold_per_million?: number;
  /** Stored and echoed only (Honeycomb's automatic investigation has no Waggle counterpart). */
  auto_investigate?: boolean;
  recipients: NotificationRecipient[];
}
export type BurnAlertObject = StoredObject<BurnAlertBody>;

export interface BurnAlertState {
  triggered: boolean;
  /** When it last flipped (app clock). */
  changed_at?: string;
  /** The figures of the last evaluation. */
  last?: { at: string; budget_remaining: number; burn_rate: number; exhaustion_minutes: number | null; budget_drop_per_million: number | null };
}

export const stateId = (alertId: string) => `${alertId}_state`;

export async function getAlertState(store: ConfigStore, alertId: string): Promise<BurnAlertState> {
  const o = await store.getObject<BurnAlertState>(BURN_ALERT_STATE_KIND, stateId(alertId));
  return o?.body ?? { triggered: false };
}

/** Deletes an alert and its state. */
export async function deleteBurnAlert(store: ConfigStore, alertId: string): Promise<boolean> {
  await store.deleteObject(BURN_ALERT_STATE_KIND, stateId(alertId));
  return store.deleteObject(BURN_ALERT_KIND, alertId);
}

/** Deletes the SLO with its burn alerts (the alerts first). */
export async function deleteSlo(store: ConfigStore, slo: StoredObject<unknown>): Promise<void> {
  const alerts = await store.listObjects<BurnAlertBody>(BURN_ALERT_KIND, { teamId: slo.teamId });
  for (const a of alerts) if (a.body?.slo_id === slo.id) await deleteBurnAlert(store, a.id);
  await store.deleteObject(SLO_KIND, slo.id);
}

/** The burn alerts of the environment's SLO `sloId`, in creation order. */
export async function listSloBurnAlerts(store: ConfigStore, env: Environment, sloId: string): Promise<BurnAlertObject[]> {
  return (await store.listObjects<BurnAlertBody>(BURN_ALERT_KIND, { environmentId: env.id })).filter((a) => a.body?.slo_id === sloId);
}

/** A new burn alert of the environment's `slo` as the store takes it (the SLO's dataset, scoped to the SLO). */
export function newBurnAlert(env: Environment, slo: SloObject, body: BurnAlertBody): NewObject<BurnAlertBody> {
  return {
    id: shortId(),
    kind: BURN_ALERT_KIND,
    teamId: env.teamId,
    environmentId: env.id,
    datasetId: slo.datasetId,
    scope: slo.id,
    uniqueKey: null,
    body,
  };
}

export const MAX_DESCRIPTION = 1023;
export const MIN_BUDGET_RATE_WINDOW = 60;
export const MAX_THRESHOLD = 1_000_000;
const EXHAUSTION_FIELDS = ['exhaustion_minutes'] as const;
const BUDGET_RATE_FIELDS = ['budget_rate_window_minutes', 'budget_rate_decrease_threshold_per_million'] as const;

/** An alert as a list answers it (no recipients), in Honeycomb's key order. */
export function burnAlertListItem(o: BurnAlertObject, triggered: boolean) {
  const b = o.body;
  const typed =
    b.alert_type === 'exhaustion_time'
      ? { exhaustion_minutes: b.exhaustion_minutes ?? 0 }
      : { budget_rate_window_minutes: b.budget_rate_window_minutes ?? 0, budget_rate_decrease_threshold_per_million: b.budget_rate_decrease_threshold_per_million ?? 0 };
  return {
    id: o.id,
    alert_type: b.alert_type,
    description: b.description,
    triggered,
    ...typed,
    auto_investigate: b.auto_investigate ?? false,
    slo: { id: b.slo_id },
    created_at: o.createdAt,
    updated_at: o.updatedAt,
  };
}

/** An alert as answered alone: with its triggered state and recipients. */
export async function burnAlertDetail(store: ConfigStore, o: BurnAlertObject) {
  return { ...burnAlertListItem(o, (await getAlertState(store, o.id)).triggered), recipients: o.body.recipients };
}

/** The fields of a burn alert body, as the route schema (src/api/v1/burn-alerts.ts) has checked them; null is absent. */
export interface BurnAlertInput {
  alert_type?: AlertType | '' | null;
  description?: string | null;
  exhaustion_minutes?: number | null;
  budget_rate_window_minutes?: number | null;
  budget_rate_decrease_threshold_per_million?: number | null;
  auto_investigate?: boolean | null;
  recipients: unknown[];
}

/**
 * The alert's own fields of a checked body, with the rules its schema cannot say (problems go to
 * `p`): which of the typed fields the alert type needs and refuses, and a budget rate window
 * within the SLO's period.
 */
export function checkAlert(p: Problems, input: BurnAlertInput, slo: SloObject | undefined): Omit<BurnAlertBody, 'slo_id' | 'recipients'> {
  const alertType: AlertType = input.alert_type || 'exhaustion_time';
  const autoInvestigate = input.auto_investigate ?? false;
  const description = input.description ?? '';
  const present = (f: keyof BurnAlertInput) => input[f] !== undefined && input[f] !== null;
  const required = (f: (typeof EXHAUSTION_FIELDS | typeof BUDGET_RATE_FIELDS)[number], max = Number.MAX_SAFE_INTEGER, maxText?: string): number | undefined => {
    const v = input[f];
    if (v === undefined || v === null) return p.add(f, 'missing', `is required when alert_type is ${alertType}`) || undefined;
    if (v > max) return p.add(f, 'invalid', `must be at most ${maxText ?? max}`) || undefined;
    return v;
  };
  const others = alertType === 'exhaustion_time' ? BUDGET_RATE_FIELDS : EXHAUSTION_FIELDS;
  for (const f of others) if (present(f)) p.add(f, 'invalid', `must not be sent when alert_type is ${alertType}`);
  if (alertType === 'exhaustion_time') {
    return { alert_type: alertType, description, auto_investigate: autoInvestigate, exhaustion_minutes: required('exhaustion_minutes') };
  }
  const period = slo ? slo.body.time_period_days * MINUTES_PER_DAY : Number.MAX_SAFE_INTEGER;
  return {
    alert_type: alertType,
    description,
    auto_investigate: autoInvestigate,
    budget_rate_window_minutes: required('budget_rate_window_minutes', period, `the SLO's time period (${period} minutes)`),
    budget_rate_decrease_threshold_per_million: required('budget_rate_decrease_threshold_per_million'),
  };
}

/** The body's recipients (problems go to `p`); new inline email recipients are not made yet. */
export async function checkRecipients(p: Problems, store: ConfigStore, teamId: string, input: { recipients?: unknown }): Promise<NotificationRecipient[]> {
  try {
    return await validateNotificationRecipients(store, teamId, input.recipients ?? undefined, { minItems: 1 });
  } catch (err) {
    if (!(err instanceof ApiError && err.extra.typeDetail)) throw err;
    p.addAll(err.extra.typeDetail);
    return [];
  }
}

/** The SLO's status from its burn alerts (and whether it has events). */
export async function sloStatus(store: ConfigStore, slo: SloObject, eligible: number): Promise<(typeof SLO_STATUSES)[number]> {
  if (eligible <= 0) return 'no_events';
  const alerts = (await store.listObjects<BurnAlertBody>(BURN_ALERT_KIND, { environmentId: slo.environmentId ?? undefined })).filter(
    (a) => a.body?.slo_id === slo.id,
  );
  if (alerts.length === 0) return 'no_alerts';
  for (const a of alerts) if ((await getAlertState(store, a.id)).triggered) return 'triggered';
  return 'normal';
}

/** A budget_rate alert's window must stay within its SLO's period (as on the alert's own create): 422 on `time_period_days`. */
export async function checkPeriodOfAlerts(p: Problems, store: ConfigStore, env: Environment, sloId: string, days: number): Promise<void> {
  const alerts = await store.listObjects<BurnAlertBody>(BURN_ALERT_KIND, { environmentId: env.id });
  const widest = Math.max(0, ...alerts.filter((a) => a.body.slo_id === sloId && a.body.alert_type === 'budget_rate').map((a) => a.body.budget_rate_window_minutes ?? 0));
  if (widest > days * 1440) {
    p.add('time_period_days', 'invalid', `must be at least ${Math.ceil(widest / 1440)}: a budget_rate burn alert of this SLO has a ${widest}-minute window`);
  }
}
