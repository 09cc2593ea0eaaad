// Anomaly-detection signals (public beta): the model. What a signal stores and its evaluation
// state (the evaluation, src/jobs/signals.ts, writes that state; its header says how statuses
// move), the figures' constants, the band a baseline gives, what a signal body may say
// (parseSignal) and how a signal and an anomaly are answered (Waggle's own /1/signals shapes,
// src/api/v1/signals.ts).
//
// Decisions:
// - A signal watches one service (`service_name`) for one `kind`; both are fixed at creation (a
//   different value on PUT → 422) and the pair is unique per dataset (409), since two identical
//   signals would only notify twice.
// - PUT is a full replacement: omitted optional fields take their defaults again (`name` the
//   generated one, `description` "", `enabled` true, `sensitivity` medium,
//   `training_period_hours` 24, `recipients` []). `null` counts as omitted. Read-only and unknown
//   fields are ignored. Every problem of a body is reported in one 422 naming its field.
// - `status`, `status_reason`, `baseline`, `last_observation`, … are the evaluation state the
//   evaluation (src/jobs/signals.ts) keeps in its own object, written only by it, so an
//   update never races an evaluation. A disabled signal reads `off` at once; the other statuses
//   change at the next evaluation (within a minute of app time).
// - Deleting a signal closes its open anomaly (recipients get `resolved`) and deletes its
//   anomalies. Deleting the dataset deletes its signals.
import { ApiError } from '../errors.js';
import type { ConfigStore, Dataset, Environment, NewObject, StoredObject } from '../stores/config/types.js';
import { Problems } from '../validation.js';
import { shortId } from './ids.js';
import { ANOMALY_KIND, SIGNAL_KIND, SIGNAL_STATE_KIND } from './kinds.js';
import { refreshNotificationRecipients, saveNotificationRecipients, validateNotificationRecipients, type NotificationRecipient } from './notification-recipients.js';

export const SIGNAL_KINDS = ['error_rate', 'presence'] as const;
export type SignalKind = (typeof SIGNAL_KINDS)[number];
export const SENSITIVITIES = ['low', 'medium', 'high'] as const;
export type Sensitivity = (typeof SENSITIVITIES)[number];
export const SIGNAL_STATUSES = ['onboarding', 'training', 'active', 'off', 'ineligible'] as const;
export type SignalStatus = (typeof SIGNAL_STATUSES)[number];
export const ENDED_REASONS = ['recovered', 'off', 'ineligible', 'training', 'onboarding', 'deleted'] as const;
export type EndedReason = (typeof ENDED_REASONS)[number];

/** Cadence: each signal is evaluated once per minute of app time, at the minute boundary. */
export const EVALUATION_INTERVAL_SECONDS = 60;
/** The window a figure is taken over (error rate, baseline windows). */
export const WINDOW_SECONDS = 300;
/** How often the baseline is recomputed (it is frozen while an anomaly is open). */
export const BASELINE_REFRESH_SECONDS = 300;
/** Error rate: a window counts (in the baseline and when judging) only with this many spans. */
export const MIN_WINDOW_SPANS = 10;
/** Error rate: at least this many counting windows, and a quarter of the baseline's, to be eligible. */
export const MIN_QUALIFIED_WINDOWS = 6;
/** Presence: share of the baseline windows that must hold a span of the service to be eligible. */
export const PRESENCE_MIN_SHARE = 0.9;
export const TRAINING_HOURS_DEFAULT = 24;
export const TRAINING_HOURS_MIN = 1;
export const TRAINING_HOURS_MAX = 168;
/** Older anomalies beyond this many per signal are deleted. */
export const MAX_ANOMALIES_PER_SIGNAL = 500;

/**
 * What sensitivity means. `k`: half-width of the error-rate band in standard deviations;
 * `minWidth`: the band reaches at least this far above the mean (so a service that never errs
 * is not anomalous at its first error); `silentSeconds`: how long a service must send no span
 * for a presence anomaly.
 */
export const SENSITIVITY: Record<Sensitivity, { k: number; minWidth: number; silentSeconds: number }> = {
  low: { k: 4, minWidth: 0.05, silentSeconds: 900 },
  medium: { k: 3, minWidth: 0.02, silentSeconds: 600 },
  high: { k: 2, minWidth: 0.01, silentSeconds: 300 },
};

/** The configuration of a signal (object kind `signal`, one per dataset × service × kind). */
export interface StoredSignal {
  name: string;
  description: string;
  service_name: string;
  kind: SignalKind;
  enabled: boolean;
  sensitivity: Sensitivity;
  training_period_hours: number;
  recipients: NotificationRecipient[];
}

export interface ErrorRateStats {
  kind: 'error_rate';
  /** Windows in the baseline period. */
  windows: number;
  /** Windows with at least MIN_WINDOW_SPANS spans. */
  qualified: number;
  /** Mean and population standard deviation of the qualified windows' error rates. */
  mean: number | null;
  stddev: number | null;
}
export interface PresenceStats {
  kind: 'presence';
  windows: number;
  /** Windows holding at least one span of the service. */
  present: number;
  /** Mean (sample-weighted) span count per window. */
  meanCount: number;
}
export interface Baseline {
  /** Unix seconds of the evaluation that computed it, the training period and the judged window it was computed for. */
  computedAt: number;
  hours: number;
  windowSeconds: number;
  stats: ErrorRateStats | PresenceStats;
}

/** The normal band: `upper` null for presence (only silence is anomalous). */
export interface Band {
  expected: number;
  lower: number;
  upper: number | null;
}

export interface Observation {
  /** Unix seconds: the evaluation time (the window's end). */
  time: number;
  /** Error rate (0…1) or span count (presence). */
  value: number;
  /** Sample-weighted spans in the window. */
  spans: number;
  windowSeconds: number;
}

/** Evaluation state (object kind `signal_state`, id = stateId(signal id)); written by the evaluation only. */
export interface SignalState {
  status: SignalStatus;
  reason: string;
  /** Unix seconds of the last evaluation (a minute boundary). */
  lastEvaluatedAt: number | null;
  /** Unix seconds of the service's first span (event time). */
  firstSeenAt: number | null;
  baseline: Baseline | null;
  openAnomalyId: string | null;
  lastObservation: Observation | null;
}

/** A detected anomaly (object kind `signal_anomaly`). */
export interface StoredAnomaly {
  signal_id: string;
  kind: SignalKind;
  service_name: string;
  /** Unix seconds: the evaluation that first saw the service outside the band. */
  started_at: number;
  /** Start of the window that evaluation looked at. */
  window_start: number;
  ended_at: number | null;
  ended_reason: EndedReason | null;
  /** The figure when the anomaly opened, its most extreme value while open, and the latest. */
  observed: number;
  peak: number;
  last_observed: number;
  spans: number;
  band: Band;
}

export const stateId = (signalId: string) => `${signalId}.state`;

export function initialState(enabled: boolean): SignalState {
  return {
    status: enabled ? 'onboarding' : 'off',
    reason: enabled ? 'waiting for the first evaluation' : 'the signal is disabled',
    lastEvaluatedAt: null,
    firstSeenAt: null,
    baseline: null,
    openAnomalyId: null,
    lastObservation: null,
  };
}

export const defaultSignalName = (kind: SignalKind, service: string) =>
  `${kind === 'error_rate' ? 'Error rate' : 'Presence'} of ${service}`;

/** Error-rate windows that must count for a baseline of `windows` windows. */
export const requiredWindows = (windows: number) => Math.max(MIN_QUALIFIED_WINDOWS, Math.ceil(windows / 4));

/**
 * The band for a baseline at a sensitivity, or a reason why there is none (too little traffic:
 * the signal is then ineligible).
 */
export function bandOf(baseline: Baseline, sensitivity: Sensitivity): { band: Band } | { reason: string } {
  const { stats, hours } = baseline;
  const s = SENSITIVITY[sensitivity];
  if (stats.kind === 'error_rate') {
    const need = requiredWindows(stats.windows);
    if (stats.qualified < need || stats.mean === null || stats.stddev === null) {
      return {
        reason:
          `too little traffic for a reliable baseline: ${stats.qualified} of the ${stats.windows} five-minute windows of the ` +
          `last ${hours} h had at least ${MIN_WINDOW_SPANS} spans (${need} needed)`,
      };
    }
    const upper = Math.min(1, Math.max(stats.mean + s.k * stats.stddev, stats.mean + s.minWidth));
    return { band: { expected: stats.mean, lower: Math.max(0, stats.mean - s.k * stats.stddev), upper } };
  }
  const share = stats.windows > 0 ? stats.present / stats.windows : 0;
  if (share < PRESENCE_MIN_SHARE) {
    return {
      reason:
        `too little traffic for a reliable baseline: the service sent spans in ${stats.present} of the ${stats.windows} ` +
        `five-minute windows of the last ${hours} h (${Math.round(PRESENCE_MIN_SHARE * 100)}% needed)`,
    };
  }
  return { band: { expected: (stats.meanCount * s.silentSeconds) / WINDOW_SECONDS, lower: 1, upper: null } };
}

/**
 * Mean and population standard deviation of `values` (null for none), in two passes: stable
 * (values all alike give 0, where one pass over sums of squares leaves rounding noise, and an
 * engine's stddev may be either). The signals' baseline and the anomaly bands of any query
 * (src/domain/anomaly-bands.ts) both take their figures from it.
 */
export function meanAndStddev(values: number[]): { mean: number; stddev: number } | null {
  if (values.length === 0) return null;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return { mean, stddev: Math.sqrt(values.reduce((a, r) => a + (r - mean) ** 2, 0) / values.length) };
}

/** An anomaly band needs at least this many past values of a bucket (earlier periods with a value). */
export const MIN_BAND_HISTORY = 2;

/**
 * The expected band of one value of any series from its past values (the same bucket one, two, …
 * periods earlier), with the signals' bounds at a sensitivity: mean ± k·stddev, at least
 * `minWidth` of the mean wide on each side (relative here, since a series may be in any unit: a
 * series that never moved is not anomalous at its first small change), and not below 0 when no
 * past value was. Null with fewer than MIN_BAND_HISTORY past values.
 */
export function seasonalBand(history: number[], sensitivity: Sensitivity): Band | null {
  const values = history.filter((v) => Number.isFinite(v));
  const m = values.length >= MIN_BAND_HISTORY ? meanAndStddev(values) : null;
  if (!m) return null;
  const s = SENSITIVITY[sensitivity];
  const half = Math.max(s.k * m.stddev, s.minWidth * Math.abs(m.mean));
  const lower = m.mean - half;
  return { expected: m.mean, lower: values.every((v) => v >= 0) ? Math.max(0, lower) : lower, upper: m.mean + half };
}

/** Whether a value is outside its band (either side: for any series, a drop is as telling as a rise). */
export const outsideBand = (value: number, band: Band) => value < band.lower || (band.upper !== null && value > band.upper);

export const SIGNAL_NAME_MAX = 120;
export const SIGNAL_DESCRIPTION_MAX = 1023;
export const SERVICE_NAME_MAX = 255;
export const SIGNAL_RECIPIENTS_MAX = 100;

/** The anomalies of a signal, oldest first. */
export async function listAnomalies(store: ConfigStore, obj: StoredObject<StoredSignal>): Promise<StoredObject<StoredAnomaly>[]> {
  const all = await store.listObjects<StoredAnomaly>(ANOMALY_KIND, { environmentId: obj.environmentId ?? undefined, datasetId: obj.datasetId });
  return all.filter((a) => a.body.signal_id === obj.id).sort((a, b) => a.body.started_at - b.body.started_at || (a.id < b.id ? -1 : 1));
}

export async function getState(store: ConfigStore, signalId: string): Promise<SignalState | undefined> {
  return (await store.getObject<SignalState>(SIGNAL_STATE_KIND, stateId(signalId)))?.body;
}

const iso = (unixSeconds: number | null | undefined) => (unixSeconds === null || unixSeconds === undefined ? null : new Date(unixSeconds * 1000).toISOString());

// --- Answers

function signalResponse(o: StoredObject<StoredSignal>, dataset: Dataset, state: SignalState | undefined) {
  const b = o.body;
  const st = state ?? initialState(b.enabled);
  const status = !b.enabled ? 'off' : st.status === 'off' ? 'onboarding' : st.status;
  const reason = !b.enabled ? 'the signal is disabled' : st.status === 'off' ? 'waiting for the next evaluation' : st.reason;
  let baseline: { expected: number; lower: number; upper: number | null; windows: number; computed_at: string } | null = null;
  if (st.baseline) {
    const b2 = bandOf(st.baseline, b.sensitivity);
    if ('band' in b2) baseline = { ...b2.band, windows: st.baseline.stats.windows, computed_at: iso(st.baseline.computedAt)! };
  }
  const obs = st.lastObservation;
  return {
    id: o.id,
    dataset_slug: dataset.slug,
    name: b.name,
    description: b.description,
    service_name: b.service_name,
    kind: b.kind,
    enabled: b.enabled,
    sensitivity: b.sensitivity,
    training_period_hours: b.training_period_hours,
    recipients: b.recipients,
    status,
    status_reason: reason,
    anomalous: st.openAnomalyId !== null,
    baseline,
    last_observation: obs ? { time: iso(obs.time)!, value: obs.value, spans: obs.spans, window_seconds: obs.windowSeconds } : null,
    first_seen_at: iso(st.firstSeenAt),
    training_ends_at: st.firstSeenAt === null ? null : iso(st.firstSeenAt + b.training_period_hours * 3600),
    last_evaluated_at: iso(st.lastEvaluatedAt),
    created_at: o.createdAt,
    updated_at: o.updatedAt,
  };
}

type SignalAnswer = ReturnType<typeof signalResponse>;

/** While an anomaly is open the band shown is the anomaly's (frozen). */
async function withOpenBand(store: ConfigStore, r: SignalAnswer, state: SignalState | undefined): Promise<SignalAnswer> {
  if (!state?.openAnomalyId) return r;
  const open = await store.getObject<StoredAnomaly>(ANOMALY_KIND, state.openAnomalyId);
  if (!open) return r;
  return { ...r, baseline: { ...open.body.band, windows: state.baseline?.stats.windows ?? 0, computed_at: iso(state.baseline?.computedAt ?? open.body.started_at)! } };
}

export function anomalyResponse(o: StoredObject<StoredAnomaly>) {
  const a = o.body;
  return {
    id: o.id,
    signal_id: a.signal_id,
    kind: a.kind,
    service_name: a.service_name,
    status: a.ended_at === null ? 'open' : 'resolved',
    started_at: iso(a.started_at)!,
    window_start: iso(a.window_start)!,
    ended_at: iso(a.ended_at),
    ended_reason: a.ended_reason,
    observed: a.observed,
    peak: a.peak,
    last_observed: a.last_observed,
    spans: a.spans,
    band: a.band,
  };
}

// --- Bodies

/** A signal's unique key in its dataset: one signal per kind and service. */
export const uniqueKey = (kind: SignalKind, service: string) => `${kind}:${service}`;

/** The signals of the dataset, in creation order. */
export function listSignals(store: ConfigStore, env: Environment, dataset: Dataset): Promise<StoredObject<StoredSignal>[]> {
  return store.listObjects<StoredSignal>(SIGNAL_KIND, { environmentId: env.id, datasetId: dataset.id });
}

/** A new signal of the dataset as the store takes it; its kind and service are the unique key (`duplicate` otherwise). */
export function newSignal(env: Environment, dataset: Dataset, body: StoredSignal): NewObject<StoredSignal> {
  return {
    id: shortId(),
    kind: SIGNAL_KIND,
    teamId: env.teamId,
    environmentId: env.id,
    datasetId: dataset.id,
    scope: dataset.id,
    uniqueKey: uniqueKey(body.kind, body.service_name),
    body,
  };
}

/** The evaluation state a new signal starts with, as the store takes it. */
export function newSignalState(signal: StoredObject<StoredSignal>): NewObject<SignalState> {
  return {
    id: stateId(signal.id),
    kind: SIGNAL_STATE_KIND,
    teamId: signal.teamId,
    environmentId: signal.environmentId,
    datasetId: signal.datasetId,
    scope: signal.id,
    uniqueKey: null,
    body: initialState(signal.body.enabled),
  };
}

/** A signal body as the route's schema admits it (types checked; the rest is parseSignal's). */
export interface SignalInput {
  service_name: string;
  kind: SignalKind;
  name?: string | null;
  description?: string | null;
  enabled?: boolean | null;
  sensitivity?: Sensitivity | null;
  training_period_hours?: number | null;
  recipients?: unknown[] | null;
}

/**
 * The stored signal for a body (already type-checked by the schema): blank names, immutable
 * fields on update and the recipients, all reported together.
 */
export async function parseSignal(store: ConfigStore, teamId: string, input: SignalInput, current?: StoredSignal): Promise<StoredSignal> {
  const p = new Problems();
  if (input.service_name.trim() === '') p.missing('service_name');
  if (input.name !== undefined && input.name !== null && input.name.trim() === '') p.missing('name');
  if (current && input.kind !== current.kind) p.add('kind', 'invalid', `cannot be changed (it is ${current.kind}); create another signal`);
  if (current && input.service_name !== current.service_name) {
    p.add('service_name', 'invalid', `cannot be changed (it is ${JSON.stringify(current.service_name)}); create another signal`);
  }
  let recipients: StoredSignal['recipients'] = [];
  try {
    recipients = await validateNotificationRecipients(store, teamId, input.recipients ?? []);
  } catch (err) {
    if (!(err instanceof ApiError) || !err.extra.typeDetail) throw err;
    p.addAll(err.extra.typeDetail);
  }
  p.throwIfAny();
  recipients = await saveNotificationRecipients(store, teamId, recipients);
  return {
    name: input.name ?? defaultSignalName(input.kind, input.service_name),
    description: input.description ?? '',
    service_name: input.service_name,
    kind: input.kind,
    enabled: input.enabled ?? true,
    sensitivity: input.sensitivity ?? 'medium',
    training_period_hours: input.training_period_hours ?? TRAINING_HOURS_DEFAULT,
    recipients,
  };
}

export const duplicate = () => new ApiError(409, 'A signal of this kind for this service already exists in the dataset.');

/** A signal as answered: its status and band, and its recipients as they are now. */
export async function signalAnswer(store: ConfigStore, o: StoredObject<StoredSignal>, dataset: Dataset): Promise<SignalAnswer> {
  const state = await getState(store, o.id);
  const r = signalResponse({ ...o, body: { ...o.body, recipients: await refreshNotificationRecipients(store, o.teamId, o.body.recipients) } }, dataset, state);
  return withOpenBand(store, r, state);
}
