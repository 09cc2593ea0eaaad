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
// environment's signal → 404. The rules of a signal (the decisions) are src/domain/signals.ts's;
// the request and answer shapes are shapes/signals.ts.
import { Type } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { notFound } from '../../errors.js';
import { findDataset } from '../../domain/datasets.js';
import { type ConfigStore, type Dataset, type Environment } from '../../stores/config/types.js';
import { closeAnomaly } from '../../jobs/signals.js';
import { WINDOW_SECONDS, getState, listAnomalies, listSignals, newSignal, newSignalState, stateId, type StoredAnomaly, type StoredSignal, type SignalInput, anomalyResponse, duplicate, parseSignal, signalAnswer } from '../../domain/signals.js';
import type { ApiContext, App } from '../context.js';
import { sendCreated, sendDeleted, findOwned, orConflict } from '../resource.js';
import { SlugParams, itemParams } from './schemas.js';
import { Anomaly, Signal, SignalRequest, conflictResponse } from './shapes/signals.js';
import { ANOMALY_KIND, SIGNAL_KIND, SIGNAL_STATE_KIND } from '../../domain/kinds.js';

const tags = ['Signals (beta)'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_signals' } as const;


const ItemParams = itemParams('signalId');


const getSignal = (store: ConfigStore, env: Environment, dataset: Dataset, id: string) => findOwned<StoredSignal>(store, SIGNAL_KIND, id, 'signal', env, dataset);

export function registerSignals(app: App, ctx: ApiContext): void {
  const { store, events, notifier, now } = ctx;
  const evalDeps = { store, events, notifier, timeoutMs: ctx.settings.queryTimeoutMs };

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
      const list = await listSignals(store, env, dataset);
      return Promise.all(list.map((o) => signalAnswer(store, o, dataset)));
    },
  );

  app.post(
    '/1/signals/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        body: SignalRequest,
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
      const created = await orConflict(store.createObject(newSignal(env, dataset, body)), duplicate);
      await store.createObject(newSignalState(created));
      return sendCreated(reply, await signalAnswer(store, created, dataset), `/1/signals/${encodeURIComponent(dataset.slug)}/${created.id}`);
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
      return signalAnswer(store, await getSignal(store, env, dataset, request.params.signalId), dataset);
    },
  );

  app.put(
    '/1/signals/:datasetSlug/:signalId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        body: SignalRequest,
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
      return signalAnswer(store, updated, dataset);
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
        await closeAnomaly(evalDeps, current, { env, dataset }, open, at, 'deleted');
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

