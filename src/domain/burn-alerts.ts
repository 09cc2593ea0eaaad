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
import { ApiError, notFound } from '../errors.js';
import type { ConfigStore, Environment, NewObject, StoredObject } from '../stores/config/types.js';
import { Problems } from '../validation.js';
import { shortId } from './ids.js';
import { BURN_ALERT_KIND, BURN_ALERT_STATE_KIND, SLO_KIND } from './kinds.js';
import { saveNotificationRecipients, validateNotificationRecipients, type NotificationRecipient } from './notification-recipients.js';
import { belongsTo } from './scope.js';
import { MINUTES_PER_DAY, getSloObject, sloResponse, type SLO_STATUSES, type SloObject, type SloScope } from './slos.js';

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

/**
 * The alert `id` as seen from the path, with its SLO (which must be visible there, like the
 * alert); 404 `burn alert not found` otherwise.
 */
export async function findBurnAlert(store: ConfigStore, scope: SloScope, id: string): Promise<{ alert: BurnAlertObject; slo: SloObject }> {
  const alert = await store.getObject<BurnAlertBody>(BURN_ALERT_KIND, id);
  if (!belongsTo(alert, scope.env) || !alert.body || typeof alert.body.slo_id !== 'string') throw notFound('burn alert');
  try {
    return { alert, slo: await getSloObject(store, scope, alert.body.slo_id) };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw notFound('burn alert');
    throw err;
  }
}

/**
 * The stored alert on `slo` a body (already type-checked) makes: checkAlert's and
 * checkRecipients' rules, every problem in one 422; then new inline email recipients are made.
 */
export async function parseBurnAlert(store: ConfigStore, teamId: string, input: BurnAlertInput, slo: SloObject): Promise<BurnAlertBody> {
  const p = new Problems();
  const fields = checkAlert(p, input, slo);
  const checked = await checkRecipients(p, store, teamId, input);
  p.throwIfAny();
  const recipients = await saveNotificationRecipients(store, teamId, checked);
  return { slo_id: slo.id, ...fields, recipients };
}

/** What the SLO evaluator computes for `?detailed` (src/jobs/slo.ts, SloFigures). */
export interface DetailFigures {
  compliance: number;
  budgetRemaining: number;
  burnRate: number;
  eligible: number;
}

/** An SLO answered with `?detailed`: its answer, its figures and its status from its burn alerts. */
export async function detailedSloResponse(store: ConfigStore, slo: SloObject, slugs: Map<string, string>, figures: DetailFigures) {
  return {
    ...sloResponse(slo, slugs),
    compliance: figures.compliance,
    budget_remaining: figures.budgetRemaining,
    status: await sloStatus(store, slo, figures.eligible),
    burn_rate: figures.burnRate,
  };
}
