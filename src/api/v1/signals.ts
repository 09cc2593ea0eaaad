// /1/signals/{datasetSlug}: anomaly-detection signals (public beta). Honeycomb publishes no
// endpoints for them, so these are Waggle's own, in the style of the other /1/ resources:
//
//   GET    /1/signals/{datasetSlug}                         list (creation order)
//   POST   /1/signals/{datasetSlug}                         create → 201 + Location
//   GET    /1/signals/{datasetSlug}/{signalId}              one signal with its status
//   PUT    /1/signals/{datasetSlug}/{signalId}              full replacement → 200
//   DELETE /1/signals/{datasetSlug}/{signalId}              204
//   GET    /1/signals/{datasetSlug}/{signalId}/anomalies    its anomalies, newest first
//
// Every route needs the configuration-key permission Manage Signals (`manage_signals`), reads
// included, as the SPEC gives it for the whole area (like Recipients and Columns). A signal
// belongs to a real dataset (`__all__` → 404) of the key's environment; another dataset's or
// environment's signal → 404.
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
import { Type, type Static } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { ApiError, notFound } from '../../errors.js';
import { Problems } from '../../validation.js';
import { findDataset } from '../../domain/datasets.js';
import { shortId } from '../../domain/ids.js';
import {
  NotificationRecipientSchema,
  refreshNotificationRecipients,
  saveNotificationRecipients,
  validateNotificationRecipients,
} from '../../domain/recipients.js';
import { type ConfigStore, type Dataset, type Environment, type StoredObject } from '../../stores/config/types.js';
import { ENDED_REASONS, SENSITIVITIES, SIGNAL_KINDS, SIGNAL_STATUSES, TRAINING_HOURS_DEFAULT, TRAINING_HOURS_MAX, TRAINING_HOURS_MIN, WINDOW_SECONDS, bandOf, closeAnomaly, defaultSignalName, getState, initialState, listAnomalies, stateId, type Sensitivity, type SignalKind, type SignalState, type StoredAnomaly, type StoredSignal } from '../../jobs/signals.js';
import type { ApiContext, App } from '../context.js';
import { sendCreated, sendDeleted, findOwned, orConflict } from '../resource.js';
import { SlugParams, itemParams } from './schemas.js';
import { ANOMALY_KIND, SIGNAL_KIND, SIGNAL_STATE_KIND } from '../../domain/kinds.js';

const tags = ['Signals (beta)'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_signals' } as const;

export const SIGNAL_NAME_MAX = 120;
export const SIGNAL_DESCRIPTION_MAX = 1023;
export const SERVICE_NAME_MAX = 255;
export const SIGNAL_RECIPIENTS_MAX = 100;

const iso = (unixSeconds: number | null | undefined) => (unixSeconds === null || unixSeconds === undefined ? null : new Date(unixSeconds * 1000).toISOString());
const nullable = <T>(schema: Record<string, unknown>, type: string) => Type.Unsafe<T | null>({ ...schema, type: [type, 'null'] });
const stringEnum = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

// --- Schemas

const SignalInput = Type.Object({
  service_name: Type.String({ minLength: 1, maxLength: SERVICE_NAME_MAX, description: 'The service watched (a value of the dataset’s service_name field). Fixed at creation.' }),
  kind: stringEnum(SIGNAL_KINDS, '`error_rate` or `presence`. Fixed at creation.'),
  name: Type.Optional(nullable<string>({ minLength: 1, maxLength: SIGNAL_NAME_MAX, description: 'Default: "Error rate of <service>" / "Presence of <service>".' }, 'string')),
  description: Type.Optional(nullable<string>({ maxLength: SIGNAL_DESCRIPTION_MAX, description: 'Default "".' }, 'string')),
  enabled: Type.Optional(nullable<boolean>({ description: 'Default true; false turns the signal off.' }, 'boolean')),
  sensitivity: Type.Optional(
    Type.Unsafe<Sensitivity | null>({
      type: ['string', 'null'],
      enum: [...SENSITIVITIES, null],
      description: 'low | medium (default) | high: see docs/signals.md for the band widths and silences.',
    }),
  ),
  training_period_hours: Type.Optional(
    nullable<number>(
      {
        minimum: TRAINING_HOURS_MIN,
        maximum: TRAINING_HOURS_MAX,
        description: `Hours of history learned before the signal becomes active, and the length of the rolling baseline (default ${TRAINING_HOURS_DEFAULT}).`,
      },
      'integer',
    ),
  ),
  recipients: Type.Optional(
    Type.Unsafe<unknown[] | null>({ type: ['array', 'null'], maxItems: SIGNAL_RECIPIENTS_MAX, items: NotificationRecipientSchema, description: 'Recipients notified when an anomaly starts (triggered) and ends (resolved).' }),
  ),
});
type SignalInput = Static<typeof SignalInput>;

const Band = Type.Object({
  expected: Type.Number({ description: 'Error rate (0…1) or spans expected in the silence window' }),
  lower: Type.Number(),
  upper: Type.Union([Type.Number(), Type.Null()], { description: 'null for presence: only silence is anomalous' }),
});

const Signal = Type.Object({
  id: Type.String(),
  dataset_slug: Type.String(),
  name: Type.String(),
  description: Type.String(),
  service_name: Type.String(),
  kind: stringEnum(SIGNAL_KINDS),
  enabled: Type.Boolean(),
  sensitivity: stringEnum(SENSITIVITIES),
  training_period_hours: Type.Integer(),
  recipients: Type.Array(NotificationRecipientSchema),
  status: stringEnum(SIGNAL_STATUSES),
  status_reason: Type.String(),
  anomalous: Type.Boolean({ description: 'An anomaly is open' }),
  baseline: Type.Union([
    Type.Object({
      expected: Type.Number(),
      lower: Type.Number(),
      upper: Type.Union([Type.Number(), Type.Null()]),
      windows: Type.Integer({ description: 'Five-minute windows the baseline covers' }),
      computed_at: Type.String({ format: 'date-time' }),
    }),
    Type.Null(),
  ], { description: 'The band in force (frozen while an anomaly is open); null until the signal has been active' }),
  last_observation: Type.Union([
    Type.Object({
      time: Type.String({ format: 'date-time' }),
      value: Type.Number({ description: 'Error rate (0…1) or span count' }),
      spans: Type.Number(),
      window_seconds: Type.Integer(),
    }),
    Type.Null(),
  ]),
  first_seen_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Event time of the service’s first span' }),
  training_ends_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  last_evaluated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
type SignalResponse = Static<typeof Signal>;

const Anomaly = Type.Object({
  id: Type.String(),
  signal_id: Type.String(),
  kind: stringEnum(SIGNAL_KINDS),
  service_name: Type.String(),
  status: stringEnum(['open', 'resolved'] as const),
  started_at: Type.String({ format: 'date-time', description: 'The evaluation that first saw the service outside its band' }),
  window_start: Type.String({ format: 'date-time', description: 'Start of the window that evaluation looked at' }),
  ended_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  ended_reason: Type.Union([stringEnum(ENDED_REASONS), Type.Null()], { description: '`recovered`, or the status that closed it' }),
  observed: Type.Number({ description: 'Error rate (0…1) or span count when it started' }),
  peak: Type.Number({ description: 'Highest error rate (lowest count) while open' }),
  last_observed: Type.Number(),
  spans: Type.Number({ description: 'Spans in the window when it started' }),
  band: Band,
});
type AnomalyResponse = Static<typeof Anomaly>;

const ItemParams = itemParams('signalId');

const Conflict = Type.Object(
  { error: Type.String(), status: Type.Number(), type: Type.String(), title: Type.String(), detail: Type.Optional(Type.String()), instance: Type.Optional(Type.String()) },
  { description: 'A signal of this kind for this service already exists in the dataset' },
);
const conflictResponse = { description: 'Conflict', content: { 'application/problem+json': { schema: Conflict } } };

// --- Shapes

function signalResponse(o: StoredObject<StoredSignal>, dataset: Dataset, state: SignalState | undefined): SignalResponse {
  const b = o.body;
  const st = state ?? initialState(b.enabled);
  const status = !b.enabled ? 'off' : st.status === 'off' ? 'onboarding' : st.status;
  const reason = !b.enabled ? 'the signal is disabled' : st.status === 'off' ? 'waiting for the next evaluation' : st.reason;
  let baseline: SignalResponse['baseline'] = null;
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

/** While an anomaly is open the band shown is the anomaly's (frozen). */
async function withOpenBand(store: ConfigStore, r: SignalResponse, state: SignalState | undefined): Promise<SignalResponse> {
  if (!state?.openAnomalyId) return r;
  const open = await store.getObject<StoredAnomaly>(ANOMALY_KIND, state.openAnomalyId);
  if (!open) return r;
  return { ...r, baseline: { ...open.body.band, windows: state.baseline?.stats.windows ?? 0, computed_at: iso(state.baseline?.computedAt ?? open.body.started_at)! } };
}

function anomalyResponse(o: StoredObject<StoredAnomaly>): AnomalyResponse {
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

// --- Rules

const uniqueKey = (kind: SignalKind, service: string) => `${kind}:${service}`;

/**
 * The stored signal for a body (already type-checked by the schema): blank names, immutable
 * fields on update and the recipients, all reported together.
 */
async function parseSignal(store: ConfigStore, teamId: string, input: SignalInput, current?: StoredSignal): Promise<StoredSignal> {
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

const duplicate = () => new ApiError(409, 'A signal of this kind for this service already exists in the dataset.');

async function getSignal(store: ConfigStore, env: Environment, dataset: Dataset, id: string): Promise<StoredObject<StoredSignal>> {
  return findOwned<StoredSignal>(store, SIGNAL_KIND, id, 'signal', env, dataset);
}

async function respond(store: ConfigStore, o: StoredObject<StoredSignal>, dataset: Dataset): Promise<SignalResponse> {
  const state = await getState(store, o.id);
  const r = signalResponse({ ...o, body: { ...o.body, recipients: await refreshNotificationRecipients(store, o.teamId, o.body.recipients) } }, dataset, state);
  return withOpenBand(store, r, state);
}

export function registerSignals(app: App, ctx: ApiContext): void {
  const { store, events, notifier, now } = ctx;
  const engine = { store, events, notifier, timeoutMs: ctx.settings.queryTimeoutMs };

  app.get(
    '/1/signals/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        description: 'Lists the signals of the dataset, in creation order, with their status. Public beta.',
        response: { 200: Type.Array(Signal) },
      },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await findDataset(store, env, request.params.datasetSlug);
      const list = await store.listObjects<StoredSignal>(SIGNAL_KIND, { environmentId: env.id, datasetId: dataset.id });
      return Promise.all(list.map((o) => respond(store, o, dataset)));
    },
  );

  app.post(
    '/1/signals/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        body: SignalInput,
        description:
          'Creates a signal watching one service of the dataset for one kind of anomaly. `service_name` and `kind` are required; 409 when the dataset already has that pair. Public beta.',
        response: { 201: Signal, 409: conflictResponse },
      },
      config: { auth },
    },
    async (request, reply) => {
      const env = envOf(request);
      const dataset = await findDataset(store, env, request.params.datasetSlug);
      const body = await parseSignal(store, env.teamId, request.body as SignalInput);
      const id = shortId();
      const created = await orConflict(
        store.createObject<StoredSignal>({
          id,
          kind: SIGNAL_KIND,
          teamId: env.teamId,
          environmentId: env.id,
          datasetId: dataset.id,
          scope: dataset.id,
          uniqueKey: uniqueKey(body.kind, body.service_name),
          body,
        }),
        duplicate,
      );
      await store.createObject<SignalState>({
        id: stateId(id),
        kind: SIGNAL_STATE_KIND,
        teamId: env.teamId,
        environmentId: env.id,
        datasetId: dataset.id,
        scope: id,
        uniqueKey: null,
        body: initialState(body.enabled),
      });
      return sendCreated(reply, await respond(store, created, dataset), `/1/signals/${encodeURIComponent(dataset.slug)}/${id}`);
    },
  );

  app.get(
    '/1/signals/:datasetSlug/:signalId',
    {
      schema: { tags, security, params: ItemParams, description: 'One signal with its status and band. Public beta.', response: { 200: Signal } },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await findDataset(store, env, request.params.datasetSlug);
      return respond(store, await getSignal(store, env, dataset, request.params.signalId), dataset);
    },
  );

  app.put(
    '/1/signals/:datasetSlug/:signalId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        body: SignalInput,
        description:
          'Full replacement: omitted optional fields take their defaults again. `service_name` and `kind` must be those of the signal (422 otherwise). Public beta.',
        response: { 200: Signal },
      },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await findDataset(store, env, request.params.datasetSlug);
      const current = await getSignal(store, env, dataset, request.params.signalId);
      const body = await parseSignal(store, env.teamId, request.body as SignalInput, current.body);
      const updated = await store.updateObject<StoredSignal>(SIGNAL_KIND, current.id, { body });
      if (!updated) throw notFound('signal');
      return respond(store, updated, dataset);
    },
  );

  app.delete(
    '/1/signals/:datasetSlug/:signalId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        description: 'Deletes the signal and its anomalies; an open anomaly is closed first (recipients get `resolved`). Public beta.',
        response: { 204: Type.Null({ description: 'Deleted' }) },
      },
      config: { auth },
    },
    async (request, reply) => {
      const env = envOf(request);
      const dataset = await findDataset(store, env, request.params.datasetSlug);
      const current = await getSignal(store, env, dataset, request.params.signalId);
      const state = await getState(store, current.id);
      // The state goes first: an evaluation running now then writes nothing.
      await store.deleteObject(SIGNAL_STATE_KIND, stateId(current.id));
      if (!(await store.deleteObject(SIGNAL_KIND, current.id))) throw notFound('signal');
      const open = state?.openAnomalyId ? await store.getObject<StoredAnomaly>(ANOMALY_KIND, state.openAnomalyId) : undefined;
      if (open && open.body.ended_at === null) {
        const at = Math.floor(now().getTime() / 1000);
        await closeAnomaly(engine, current, { env, dataset }, open, at, 'deleted');
      }
      for (const a of await listAnomalies(store, current)) await store.deleteObject(ANOMALY_KIND, a.id);
      return sendDeleted(reply);
    },
  );

  app.get(
    '/1/signals/:datasetSlug/:signalId/anomalies',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        description: `The anomalies the signal recorded, newest first (open ones have \`ended_at: null\`). Error rates are taken over ${WINDOW_SECONDS / 60}-minute windows. Public beta.`,
        response: { 200: Type.Array(Anomaly) },
      },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await findDataset(store, env, request.params.datasetSlug);
      const signal = await getSignal(store, env, dataset, request.params.signalId);
      return (await listAnomalies(store, signal)).reverse().map(anomalyResponse);
    },
  );
}

