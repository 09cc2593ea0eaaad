// Anomaly-detection signals (public beta): evaluation. A signal watches one service of one
// dataset for one kind of deviation from its own history:
//
//   error_rate  the share of the service's spans that are errors, per 5-minute window, against
//               a band learned from recent traffic: mean ± k·stddev of the per-window error
//               rates of the baseline period (k by sensitivity). Only a rise above the band is
//               an anomaly (fewer errors than usual is good news).
//   presence    whether the service emits spans at all: once the baseline shows the service in
//               (nearly) every 5-minute window, a silence longer than the sensitivity's allowance
//               is an anomaly.
//
// Every minute of app time (a Job on the scheduler; idempotent per evaluation minute, state in
// the config store) each signal's status is derived afresh, in this order:
//
//   off         `enabled: false`.
//   onboarding  the dataset has no events yet, or the service has sent no span yet.
//   ineligible  the dataset has events but its `service_name` definition names no column or
//               calculated field of it (or a calculated field that does not compile); or,
//               after training, the baseline is too thin to be reliable (see bandOf).
//   training    the service's first span (by event time) is less than `training_period_hours`
//               old: the baseline is being learned.
//   active      trained and monitoring; anomalies open and close.
//
// So statuses move both ways (a dataset that gains a service.name column leaves ineligible), and
// a signal created over existing history is active at its first evaluation. An anomaly is open
// from the evaluation that first sees the service outside its band until the first evaluation
// that sees it back inside (`recovered`), or until the signal stops being active (`off`,
// `ineligible`, `training`, `onboarding`); recipients get a `triggered` notification when it
// opens and a `resolved` one when it closes. While an anomaly is open the band is frozen, so an
// outage never becomes the new normal.
//
// SQL: every figure comes from the event store over the stored spans, in the store's dialect: plain
// nested subqueries and aggregates (no common table expressions, FILTER or lists) that every event
// engine runs. The service and error fields are resolved through the dataset's definitions by the
// query module's FieldScope (columns read as their API type, calculated fields compiled),
// identifiers quoted by quoteIdent/tableName; the service name is a bound parameter, and the
// numbers written into the SQL (time bounds, sizes, excluded windows) are the engine's own. The
// time window is a `__time` range, so the engine reads only what lies in it. Span events and
// links (a non-empty `annotation_type` field) are not spans and are left out, as in service maps.
// Counts are weighted by the sample rate, as COUNT is.
import type { ConfigStore, Dataset, Environment, StoredObject } from '../stores/config/types.js';
import { tableName, type EventStore } from '../stores/events/types.js';
import { INGESTED_COLUMN, SAMPLERATE_COLUMN, TIME_COLUMN, type SqlDialect } from '../stores/events/engine.js';
import { DEFINITION_DEFAULTS } from '../query/definitions.js';
import { shortId } from '../domain/ids.js';
import { isDeliverable, refreshNotificationRecipients } from '../domain/notification-recipients.js';
import { FieldScope, columnSources } from '../query/fields.js';
import { isStored } from '../stores/events/placement.js';
import { calculatedFieldsOf } from '../query/sources.js';
import type { FieldInfo } from '../query/expr/index.js';
import type { Notification, Notifier } from '../notify/types.js';
import type { Job } from './scheduler.js';
import { type SignalKind, type SignalStatus, type EndedReason, EVALUATION_INTERVAL_SECONDS, WINDOW_SECONDS, BASELINE_REFRESH_SECONDS, MIN_WINDOW_SPANS, MAX_ANOMALIES_PER_SIGNAL, SENSITIVITY, meanAndStddev, type StoredSignal, type ErrorRateStats, type PresenceStats, type Baseline, type Band, type Observation, type SignalState, type StoredAnomaly, stateId, bandOf, listAnomalies, getState } from '../domain/signals.js';
import { ANOMALY_KIND, SIGNAL_KIND, SIGNAL_STATE_KIND } from '../domain/kinds.js';

// --- SQL

/** What a signal reads in its dataset, resolved through the dataset definitions. */
interface SpanFields {
  dataset: Dataset;
  service: FieldInfo;
  error?: FieldInfo;
  annotationType?: FieldInfo;
}

type Resolution = { fields: (bind: (v: string | number | boolean) => string) => SpanFields } | { status: SignalStatus; reason: string };

const definitionName = (ds: Dataset, key: string) => ds.definitions[key] || DEFINITION_DEFAULTS[key];

/** Whether the dataset can feed the signal, and a way to resolve its fields (per statement, as literals of calculated fields bind). */
async function resolveFields(store: ConfigStore, events: EventStore, env: Environment, dataset: Dataset, kind: SignalKind): Promise<Resolution> {
  const shape = await events.shape(dataset.id);
  if (!shape || (shape.columns.length === 0 && shape.buckets === 0)) return { status: 'onboarding', reason: 'the dataset has no events yet' };
  const columns = (await store.listColumns(dataset.id)).filter((c) => isStored(shape, c.physical));
  const calculated = await calculatedFieldsOf(store, env, dataset);
  const scopeOf = (bind: (v: string | number | boolean) => string) =>
    new FieldScope({
      dialect: events.dialect,
      columns: columnSources(events.dialect, columns),
      calculated,
      eventTimeSql: events.dialect.quoteIdent(TIME_COLUMN),
      ingestTimeSql: events.dialect.quoteIdent(INGESTED_COLUMN),
      bind,
    });
  const serviceName = definitionName(dataset, 'service_name');
  let probe: FieldInfo | undefined;
  try {
    probe = scopeOf(() => 'NULL').resolve(serviceName);
    if (kind === 'error_rate') scopeOf(() => 'NULL').resolve(definitionName(dataset, 'error'));
  } catch (err) {
    return { status: 'ineligible', reason: `a calculated field of the service_name or error definition does not compile: ${(err as Error).message}` };
  }
  if (!probe || probe.type === 'null') {
    return {
      status: 'ineligible',
      reason: `the dataset has no column or calculated field "${serviceName}" (its service_name definition), so its spans name no service`,
    };
  }
  return {
    fields: (bind) => {
      const scope = scopeOf(bind);
      const error = kind === 'error_rate' ? scope.resolve(definitionName(dataset, 'error')) : undefined;
      return {
        dataset,
        service: scope.resolve(serviceName)!,
        // No error field yet: no span has carried one, so none is an error.
        error: error && error.type !== 'null' ? error : undefined,
        annotationType: scope.resolve(definitionName(dataset, 'annotation_type')),
      };
    },
  };
}

/** SQL that is true for an erroring span, by the error field's type. */
function isErrorSql(d: SqlDialect, f: FieldInfo | undefined): string {
  const no = d.bool(false);
  if (!f) return no;
  switch (f.type) {
    case 'boolean':
      return `coalesce(${f.sql}, ${no})`;
    case 'integer':
    case 'float':
      return `coalesce(${f.sql} <> 0, ${no})`;
    case 'string':
      return `coalesce(lower(${d.trimSpaces(f.sql)}) NOT IN ('', 'false', '0'), ${no})`;
    default:
      return no;
  }
}

class Statement {
  readonly params: unknown[] = [];
  bind = (v: unknown): string => {
    this.params.push(v);
    return `$${this.params.length}`;
  };
}

/** The service's spans in [fromUs, toUs): ts (µs), w (sample rate), e (error). */
function spansSql(d: SqlDialect, st: Statement, resolve: (bind: (v: string | number | boolean) => string) => SpanFields, service: string, fromUs: number, toUs: number): string {
  const f = resolve(st.bind);
  const quoteIdent = d.quoteIdent;
  const time = quoteIdent(TIME_COLUMN);
  const where = [
    `${time} >= ${d.timestamp(fromUs)}`,
    `${time} < ${d.timestamp(toUs)}`,
    `${d.cast(f.service.sql, 'string')} = ${d.cast(st.bind(service), 'string')}`,
  ];
  if (f.annotationType && f.annotationType.type !== 'null') where.push(`coalesce(${d.cast(f.annotationType.sql, 'string')}, '') = ''`);
  return (
    `SELECT ${d.epochUs(time)} AS ts, ${quoteIdent(SAMPLERATE_COLUMN)} AS w, ${isErrorSql(d, f.error)} AS e ` +
    `FROM ${quoteIdent(tableName(f.dataset.id))} WHERE ${where.join(' AND ')}`
  );
}

const US = 1_000_000;
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

interface EvalDeps {
  store: ConfigStore;
  events: EventStore;
  notifier: Notifier;
  timeoutMs: number;
  onError?: (signalId: string, err: unknown) => void;
}

async function firstSeen(d: EvalDeps, resolve: Exclude<Resolution, { status: SignalStatus }>['fields'], service: string, t: number): Promise<number | null> {
  const st = new Statement();
  const dialect = d.events.dialect;
  // (The count: an engine may answer min() of no rows with 0 rather than NULL.)
  const sql = `SELECT CASE WHEN count(*) = 0 THEN NULL ELSE ${dialect.cast('min(ts)', 'float')} END AS first FROM (${spansSql(dialect, st, resolve, service, 0, t * US)})`;
  const rows = await d.events.analyse(sql, st.params, d.timeoutMs);
  const first = num(rows[0]?.first);
  return first === null ? null : first / US;
}

/** Spans and errors (sample-weighted) in [t − seconds, t). */
async function observe(d: EvalDeps, resolve: Exclude<Resolution, { status: SignalStatus }>['fields'], service: string, t: number, seconds: number) {
  const st = new Statement();
  const dialect = d.events.dialect;
  const sql =
    `SELECT ${dialect.cast('coalesce(sum(w), 0)', 'float')} AS total, ${dialect.cast('coalesce(sum(CASE WHEN e THEN w ELSE 0 END), 0)', 'float')} AS errors ` +
    `FROM (${spansSql(dialect, st, resolve, service, (t - seconds) * US, t * US)})`;
  const rows = await d.events.analyse(sql, st.params, d.timeoutMs);
  return { total: num(rows[0]?.total) ?? 0, errors: num(rows[0]?.errors) ?? 0 };
}

/** Seconds of traffic judged at each evaluation: the error-rate window, or the presence silence. */
export const judgedSeconds = (signal: StoredSignal) =>
  signal.kind === 'error_rate' ? WINDOW_SECONDS : SENSITIVITY[signal.sensitivity].silentSeconds;

/**
 * The baseline: the `hours` before the judged window (so what is being judged never trains the
 * band), cut into 5-minute windows counted from its start (window k covers [start + k·W,
 * start + (k+1)·W)), aggregated per window by the event store (one statement; at most 2,016
 * windows come back, a week of five minutes), then over the windows here.
 * Windows that end before the service's first span, and windows overlapping an anomaly of the
 * signal (from its window start to its end), do not count: anomalies never train the band.
 */
async function computeBaseline(
  d: EvalDeps,
  resolve: Exclude<Resolution, { status: SignalStatus }>['fields'],
  obj: StoredObject<StoredSignal>,
  t: number,
  firstSeen: number,
): Promise<Baseline> {
  const signal = obj.body;
  const hours = signal.training_period_hours;
  const judged = judgedSeconds(signal);
  const end = t - judged;
  const start = end - hours * 3600;
  const n = (hours * 3600) / WINDOW_SECONDS;
  const anomalies = (await listAnomalies(d.store, obj))
    .map((a) => [a.body.window_start, a.body.ended_at ?? t] as const)
    .filter(([from, to]) => to > start && from < end);
  const excluded: number[] = [];
  for (let k = 0; k < n; k++) {
    const ws = start + k * WINDOW_SECONDS;
    const we = ws + WINDOW_SECONDS;
    if (we <= firstSeen || anomalies.some(([from, to]) => from < we && to > ws)) excluded.push(k);
  }
  const windows = n - excluded.length;
  const st = new Statement();
  const dialect = d.events.dialect;
  const spans = spansSql(dialect, st, resolve, signal.service_name, start * US, end * US);
  const float = (x: string) => dialect.cast(x, 'float');
  const k = dialect.intDiv(`(ts - ${Math.trunc(start * US)})`, String(WINDOW_SECONDS * US));
  // The excluded windows as a list of numbers ("-1" when none).
  const skip = excluded.length ? excluded.join(', ') : '-1';
  const sql =
    `SELECT k, ${float('sum(w)')} AS n, ${float('sum(CASE WHEN e THEN w ELSE 0 END)')} AS errs ` +
    `FROM (SELECT ${k} AS k, w, e FROM (${spans})) WHERE k NOT IN (${skip}) GROUP BY k`;
  const perWindow = (await d.events.analyse(sql, st.params, d.timeoutMs)).map((r) => ({ n: Number(r.n), errs: Number(r.errs) }));
  let stats: ErrorRateStats | PresenceStats;
  if (signal.kind === 'error_rate') {
    const rates = perWindow.filter((x) => x.n >= MIN_WINDOW_SPANS).map((x) => x.errs / x.n);
    const m = meanAndStddev(rates);
    stats = { kind: 'error_rate', windows, qualified: rates.length, mean: m?.mean ?? null, stddev: m?.stddev ?? null };
  } else {
    const total = perWindow.reduce((a, x) => a + x.n, 0);
    stats = { kind: 'presence', windows, present: perWindow.length, meanCount: windows > 0 ? total / windows : 0 };
  }
  return { computedAt: t, hours, windowSeconds: judged, stats };
}

// --- Evaluation

/** What the evaluation needs to find a signal's dataset and environment. */
interface Place {
  env: Environment;
  dataset: Dataset;
}

export const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

function summary(signal: StoredSignal, status: 'triggered' | 'resolved', a: StoredAnomaly, reason: EndedReason | null): string {
  const svc = signal.service_name;
  if (status === 'resolved' && reason !== 'recovered') {
    return `${signal.name}: the anomaly is closed because the signal ${reason === 'deleted' ? 'was deleted' : `is now ${reason}`}`;
  }
  if (signal.kind === 'error_rate') {
    return status === 'triggered'
      ? `Error rate of ${svc} is ${pct(a.observed)} over the last ${WINDOW_SECONDS / 60} minutes, above its normal band (up to ${pct(a.band.upper ?? 1)}, expected ${pct(a.band.expected)})`
      : `Error rate of ${svc} is back in its normal band: ${pct(a.last_observed)} (up to ${pct(a.band.upper ?? 1)}); it peaked at ${pct(a.peak)}`;
  }
  const minutes = Math.round((a.started_at - a.window_start) / 60);
  return status === 'triggered'
    ? `${svc} has sent no spans for ${minutes} minutes (about ${Math.round(a.band.expected)} expected)`
    : `${svc} is sending spans again (${a.last_observed} in the last ${minutes} minutes)`;
}

async function notify(
  d: EvalDeps,
  obj: StoredObject<StoredSignal>,
  place: Place,
  anomaly: StoredObject<StoredAnomaly>,
  status: 'triggered' | 'resolved',
  at: number,
): Promise<void> {
  const signal = obj.body;
  const recipients = await refreshNotificationRecipients(d.store, obj.teamId, signal.recipients);
  const a = anomaly.body;
  for (const recipient of recipients.filter(isDeliverable)) {
    const n: Notification = {
      id: `signal-${anomaly.id}-${status}-${recipient.id}`,
      source: 'signal',
      status,
      teamId: obj.teamId,
      environmentId: place.env.id,
      recipient,
      alert: {
        id: obj.id,
        name: signal.name,
        description: signal.description,
        dedupKey: `signal-${obj.id}-${anomaly.id}`,
        datasetSlug: place.dataset.slug,
      },
      result: {
        summary: summary(signal, status, a, a.ended_reason),
        value: status === 'triggered' ? a.observed : a.last_observed,
        threshold: signal.kind === 'error_rate' ? { op: '>', value: a.band.upper ?? 1 } : { op: '<', value: 1 },
      },
      timestamp: new Date(at * 1000).toISOString(),
    };
    d.notifier.enqueue(n);
  }
}

/** Closes the open anomaly of a signal and notifies its recipients (also used when a signal is deleted). */
export async function closeAnomaly(
  d: EvalDeps,
  obj: StoredObject<StoredSignal>,
  place: Place,
  anomaly: StoredObject<StoredAnomaly>,
  at: number,
  reason: EndedReason,
  last?: number,
): Promise<void> {
  const body: StoredAnomaly = { ...anomaly.body, ended_at: at, ended_reason: reason };
  if (last !== undefined) body.last_observed = last;
  const updated = await d.store.updateObject<StoredAnomaly>(ANOMALY_KIND, anomaly.id, { body });
  if (updated) await notify(d, obj, place, updated, 'resolved', at);
}

async function openAnomaly(d: EvalDeps, obj: StoredObject<StoredSignal>, place: Place, obs: Observation, band: Band): Promise<StoredObject<StoredAnomaly>> {
  const created = await d.store.createObject<StoredAnomaly>({
    id: shortId(),
    kind: ANOMALY_KIND,
    teamId: obj.teamId,
    environmentId: obj.environmentId,
    datasetId: obj.datasetId,
    scope: obj.id,
    uniqueKey: null,
    body: {
      signal_id: obj.id,
      kind: obj.body.kind,
      service_name: obj.body.service_name,
      started_at: obs.time,
      window_start: obs.time - obs.windowSeconds,
      ended_at: null,
      ended_reason: null,
      observed: obs.value,
      peak: obs.value,
      last_observed: obs.value,
      spans: obs.spans,
      band,
    },
  });
  const all = await listAnomalies(d.store, obj);
  for (const old of all.slice(0, Math.max(0, all.length - MAX_ANOMALIES_PER_SIGNAL))) await d.store.deleteObject(ANOMALY_KIND, old.id);
  await notify(d, obj, place, created, 'triggered', obs.time);
  return created;
}

/** Evaluates one signal at `t` (a minute boundary, Unix seconds). */
export async function evaluateSignal(d: EvalDeps, obj: StoredObject<StoredSignal>, place: Place, t: number): Promise<void> {
  const state = await getState(d.store, obj.id);
  if (!state) return; // deleted meanwhile
  if (state.lastEvaluatedAt !== null && state.lastEvaluatedAt >= t) return;
  const signal = obj.body;
  const next: SignalState = { ...state, lastEvaluatedAt: t };
  let open = state.openAnomalyId ? await d.store.getObject<StoredAnomaly>(ANOMALY_KIND, state.openAnomalyId) : undefined;
  if (open && open.body.ended_at !== null) open = undefined;
  let verdict: { status: SignalStatus; reason: string } | undefined;
  let active: { band: Band; obs: Observation; outside: boolean; judged: boolean } | undefined;

  if (!signal.enabled) {
    verdict = { status: 'off', reason: 'the signal is disabled' };
  } else {
    const res = await resolveFields(d.store, d.events, place.env, place.dataset, signal.kind);
    if ('status' in res) {
      verdict = res;
    } else {
      if (next.firstSeenAt === null) next.firstSeenAt = await firstSeen(d, res.fields, signal.service_name, t);
      const trainingEnd = next.firstSeenAt === null ? null : next.firstSeenAt + signal.training_period_hours * 3600;
      if (next.firstSeenAt === null || trainingEnd === null) {
        verdict = { status: 'onboarding', reason: `no span of the service "${signal.service_name}" has arrived yet` };
      } else if (t < trainingEnd) {
        verdict = { status: 'training', reason: `learning the baseline until ${new Date(trainingEnd * 1000).toISOString()}` };
      } else {
        // The band: frozen while an anomaly is open, else from a baseline refreshed every few minutes.
        let band: Band | undefined = open?.body.band;
        if (!band) {
          const stale =
            !next.baseline || next.baseline.hours !== signal.training_period_hours || next.baseline.stats.kind !== signal.kind ||
            next.baseline.windowSeconds !== judgedSeconds(signal) || t - next.baseline.computedAt >= BASELINE_REFRESH_SECONDS;
          if (stale) next.baseline = await computeBaseline(d, res.fields, obj, t, next.firstSeenAt);
          const b = bandOf(next.baseline!, signal.sensitivity);
          if ('reason' in b) verdict = { status: 'ineligible', reason: b.reason };
          else band = b.band;
        }
        if (band) {
          const seconds = judgedSeconds(signal);
          const { total, errors } = await observe(d, res.fields, signal.service_name, t, seconds);
          const obs: Observation =
            signal.kind === 'error_rate'
              ? { time: t, value: total > 0 ? errors / total : 0, spans: total, windowSeconds: seconds }
              : { time: t, value: total, spans: total, windowSeconds: seconds };
          const judged = signal.kind === 'presence' || total >= MIN_WINDOW_SPANS;
          const outside = signal.kind === 'error_rate' ? judged && obs.value > (band.upper ?? 1) : total === 0;
          next.lastObservation = obs;
          active = { band, obs, outside, judged };
          verdict = {
            status: 'active',
            reason: outside
              ? 'monitoring: anomalous'
              : judged
                ? 'monitoring'
                : `monitoring (fewer than ${MIN_WINDOW_SPANS} spans in the last window: not judged)`,
          };
        }
      }
    }
  }
  next.status = verdict!.status;
  next.reason = verdict!.reason;

  // The signal may have been deleted while its figures were computed.
  if (!(await d.store.getObject(SIGNAL_KIND, obj.id))) return;
  if (open && !active) {
    await closeAnomaly(d, obj, place, open, t, next.status as EndedReason);
    next.openAnomalyId = null;
  } else if (open && active) {
    const value = active.obs.value;
    if (active.judged && !active.outside) {
      await closeAnomaly(d, obj, place, open, t, 'recovered', value);
      next.openAnomalyId = null;
    } else if (active.judged) {
      const peak = signal.kind === 'error_rate' ? Math.max(open.body.peak, value) : Math.min(open.body.peak, value);
      await d.store.updateObject<StoredAnomaly>(ANOMALY_KIND, open.id, { body: { ...open.body, peak, last_observed: value } });
    }
  } else if (!open && active?.outside) {
    next.openAnomalyId = (await openAnomaly(d, obj, place, active.obs, active.band)).id;
  }
  await d.store.updateObject<SignalState>(SIGNAL_STATE_KIND, stateId(obj.id), { body: next });
}

/** Evaluates every signal of every environment at the minute boundary at or before `now`. */
export async function evaluateSignals(d: EvalDeps, now: Date): Promise<void> {
  const t = Math.floor(now.getTime() / 1000 / EVALUATION_INTERVAL_SECONDS) * EVALUATION_INTERVAL_SECONDS;
  const signals = await d.store.listObjects<StoredSignal>(SIGNAL_KIND, {});
  const envs = new Map<string, { env: Environment; datasets: Map<string, Dataset> } | undefined>();
  for (const obj of signals) {
    try {
      const envId = obj.environmentId;
      if (!envId || !obj.datasetId) continue;
      if (!envs.has(envId)) {
        const env = await d.store.getEnvironmentById(envId);
        envs.set(envId, env && { env, datasets: new Map((await d.store.listDatasets(env.id)).map((ds) => [ds.id, ds])) });
      }
      const e = envs.get(envId);
      const dataset = e?.datasets.get(obj.datasetId);
      if (!e || !dataset) continue;
      await evaluateSignal(d, obj, { env: e.env, dataset }, t);
    } catch (err) {
      d.onError?.(obj.id, err);
    }
  }
}

export function signalJob(d: EvalDeps): Job {
  return { name: 'signals', run: (now) => evaluateSignals(d, now) };
}
