// The composition root: builds everything a server runs from its two stores — the ingest writer,
// leadership, the scheduler with every background job, the notifier, metrics and the disk guard —
// and hands them to the routes as one ApiContext (src/api/context.ts) on the HTTP plumbing
// (src/http/fastify.ts). No module-level state, so tests build as many apps as they like, each
// with its own stores and clock.
import type { FastifyServerOptions } from 'fastify';
import type { ConfigStore } from './stores/config/types.js';
import type { EventStore } from './stores/events/types.js';
import { IngestWriter } from './ingest/writer.js';
import { DeployMarkers } from './ingest/deploy-markers.js';
import { batchThreads } from './ingest/batch-threads.js';
import { DEFAULTS, leaderLeaseMsOf, nodeIdOf, type Settings } from './settings.js';
import { createHttp, serveMetrics, type App } from './http/fastify.js';
import { IngestAdmission } from './http/ingest-admission.js';
import { registerV1 } from './api/v1/index.js';
import { registerV2 } from './api/v2/index.js';
import { registerUi } from './api/ui/index.js';
import { registerOtlp } from './api/otlp.js';
import { exportOtlp, type OtlpExport, type OtlpResult } from './api/otlp-export.js';
import type { ApiContext } from './api/context.js';
import { Scheduler } from './jobs/scheduler.js';
import { triggerJob } from './jobs/triggers.js';
import { signalJob } from './jobs/signals.js';
import { burnAlertJob } from './jobs/burn-alerts.js';
import { SloEvaluator } from './jobs/slo.js';
import { LeaseLeadership, SoloLeadership, type Leadership } from './cluster/leadership.js';
import { createNotifier } from './notify/index.js';
import type { Notification, Notifier } from './notify/types.js';
import { Metrics } from './ops/metrics.js';
import { ALL_DATASETS, BucketCache, LOG_MAX_AGE_MS } from './query/bucket-cache.js';
import { withSlowQueryLog } from './ops/observe.js';
import { DiskGuard } from './ops/disk.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Background evaluation and delivery, reachable from tests (tick the scheduler, read what was sent). */
    jobs: { scheduler: Scheduler; notifier: Notifier & { sent?: Notification[] }; leadership: Leadership };
    /** The ingest writer, reachable from tests (hold its lock to see a full ingest queue). */
    writer: IngestWriter;
    /** OTLP export for transports other than the HTTP routes (the gRPC server, http/grpc.ts). */
    otlp: { export(req: OtlpExport): Promise<OtlpResult>; maxMessageBytes: number };
    /** The app's Prometheus metrics (src/ops/metrics.ts); server.ts serves them on their own port when asked. */
    metrics: Metrics;
  }
}

export type { App };

export interface AppDeps {
  configStore: ConfigStore;
  /** An opened event store; the app does not close it. */
  eventStore: EventStore;
  settings?: Partial<Settings>;
  /** The clock every time-dependent rule reads; tests pass a controllable one. */
  now?: () => Date;
  /** Pino options or `false`; defaults to JSON logs at `settings.logLevel`. */
  logger?: FastifyServerOptions['logger'];
  /** Who runs background work; default: a lease on a PostgreSQL store, always this node on SQLite. */
  leadership?: Leadership;
}

export async function createApp(deps: AppDeps): Promise<App> {
  const settings: Settings = { ...DEFAULTS, ...deps.settings };
  const now = deps.now ?? (() => new Date());
  const store = deps.configStore;
  const admission = new IngestAdmission(settings.ingestMaxInFlight, settings.ingestMaxInFlightBytes);
  const disk = new DiskGuard(settings.dataDir, settings.diskReserve, (full, freeBytes) => {
    const figures = { dataDir: settings.dataDir, freeBytes, reserveBytes: settings.diskReserve };
    if (full) app.log.error(figures, 'the data directory is out of disk space: ingest and changes are refused until space is freed');
    else app.log.info(figures, 'disk space is back: ingest and changes are accepted again');
  });
  const { app, authenticate } = await createHttp({
    store,
    settings,
    now,
    logger: deps.logger,
    liveNodes: () => leadership.liveNodes(),
    admission,
    disk,
    ingestBacklog: () => writer.backlog,
  });

  // Several nodes on one PostgreSQL store elect one leader for background work (cluster/leadership.ts).
  const leadership =
    deps.leadership ??
    (store.kind === 'postgres'
      ? new LeaseLeadership(store, { nodeId: nodeIdOf(settings), ttlMs: leaderLeaseMsOf(settings), log: app.log })
      : new SoloLeadership());
  const metrics = new Metrics({
    queueDepth: () => writer.backlog,
    ingestInFlight: () => admission,
    ingestThreadsHeap: () => {
      const threads = batchThreads(settings.ingestThreads);
      return { committed: threads.heapBytes(), limit: threads.heapLimitBytes() };
    },
    connections: () => new Promise((resolve) => app.server.getConnections((err: Error | null, n: number) => resolve(err ? 0 : n))),
    dataDir: settings.dataDir,
    eventStoreMemory: deps.eventStore.memory ? () => deps.eventStore.memory!() : undefined,
    leadership,
  });
  app.decorate('metrics', metrics);
  serveMetrics(app, metrics, settings);

  const events = withSlowQueryLog(deps.eventStore, settings.slowQueryMs, app.log);
  const deployMarkers = settings.deployMarkerField ? new DeployMarkers({ store, versionField: settings.deployMarkerField, now, log: app.log }) : undefined;
  // Kept bucket states of repeated queries; with several nodes their invalidations go through the config store.
  const cache = settings.queryCache.enabled
    ? new BucketCache({ ...settings.queryCache, now: () => now().getTime(), log: store.kind === 'postgres' ? store : undefined })
    : undefined;
  const writer = new IngestWriter(store, events, {
    late: cache && {
      lateBefore: () => cache.lateBefore(),
      onLate: (datasetId, fromUs, toUs) => cache.changed(datasetId, fromUs, toUs).catch((err: unknown) => app.log.error({ err, datasetId }, 'query cache invalidation failed')),
    },
    afterCommit: deployMarkers ? (dataset, batch) => deployMarkers.watch(dataset, batch) : undefined,
    maxColumnsPerDataset: settings.maxColumnsPerDataset,
    hotColumns: settings.hotColumns,
    now,
    log: app.log,
    shared: leadership.shared ? leadership : undefined,
    onWritten: (results) => metrics.countWritten(results),
    onCommit: (count, seconds) => {
      metrics.commitSeconds.observe(seconds);
      if (seconds * 1000 >= settings.slowCommitMs) {
        app.log.warn({ events: count, ms: Math.round(seconds * 1000), queued: writer.backlog }, 'slow commit');
      }
    },
  });
  app.decorate('writer', writer);
  const notifier = createNotifier({
    store,
    settings,
    log: app.log,
    onOutcome: (recipientType, outcome) => metrics.notifications.inc({ recipient_type: recipientType, outcome }),
    claims: leadership,
  });
  const slos = new SloEvaluator(store, events, leadership.shared ? leadership : undefined);
  const scheduler = new Scheduler(
    now,
    (job, err) => app.log.error({ err, job }, 'evaluation failed'),
    (job, seconds, failed) => metrics.evaluations.observe({ job, status: failed ? 'error' : 'ok' }, seconds),
    leadership,
  );
  // Every background job, in the order they run on each tick.
  if (leadership.shared) scheduler.register(deliveryTakeover(notifier, leadership, settings));
  scheduler.register(triggerJob({ store, events, notifier, settings, cache }));
  scheduler.register(
    signalJob({ store, events, notifier, timeoutMs: settings.queryTimeoutMs, onError: (signalId, err) => app.log.error({ err, signalId }, 'signal evaluation failed') }),
  );
  scheduler.register(burnAlertJob({ store, evaluator: slos, notifier, intervalSeconds: settings.burnAlertIntervalSeconds }));
  app.decorate('jobs', { scheduler, notifier, leadership });

  if (cache) metrics.watchQueryCache(() => cache.stats());
  const ctx: ApiContext = { store, events, writer, metrics, disk, now, settings, notifier, slos, leadership, authenticate, cache };
  await app.register(async (v1) => registerV1(v1 as App, ctx));
  await app.register(async (v2) => registerV2(v2 as App, ctx));
  await app.register(async (otlp) => registerOtlp(otlp as App, ctx));
  app.decorate('otlp', { export: (req: OtlpExport) => exportOtlp(ctx, req), maxMessageBytes: settings.ingestDecompressedLimit });
  await app.register(async (ui) => registerUi(ui as App, ctx));
  startBackground(app, { ...ctx, scheduler });
  return app;
}

/**
 * Background upkeep: ingest bookkeeping (`last_written`) every few seconds, and retention
 * (events older than `retentionDays`) every hour. Stopped, and flushed, when the app closes.
 */
function startBackground(app: App, ctx: ApiContext & { scheduler: Scheduler }) {
  const log = (what: string) => (err: unknown) => app.log.error({ err }, `${what} failed`);
  // Close waits for the jobs still running before the stores go.
  const running = new Set<Promise<unknown>>();
  const job = (what: string, fn: () => Promise<unknown>) => () => {
    const p = fn().catch(log(what)).finally(() => running.delete(p));
    running.add(p);
  };
  const bookkeeping = setInterval(job('ingest bookkeeping', () => ctx.writer.flushBookkeeping()), 2000);
  const retain = job('retention', async () => {
    // (the leader's work: with several nodes on one store, one of them deletes)
    if (ctx.settings.retentionDays <= 0 || !ctx.leadership.isLeader()) return;
    const cutoffUs = (ctx.now().getTime() - ctx.settings.retentionDays * 86_400_000) * 1000;
    const n = await ctx.events.deleteBefore(cutoffUs);
    if (n > 0) app.log.info({ deleted: n, retentionDays: ctx.settings.retentionDays }, 'retention');
    if (n > 0) await ctx.cache?.changed(ALL_DATASETS, -Infinity, cutoffUs);
    if (ctx.store.kind === 'postgres') await ctx.store.pruneCacheInvalidations(LOG_MAX_AGE_MS);
  });
  const retention = setInterval(retain, 3_600_000);
  bookkeeping.unref();
  retention.unref();
  app.addHook('onReady', async () => {
    // Before any request or evaluation: the two stores' columns agree (ingest/column-registry.ts, reconcile.ts).
    await ctx.writer.reconcileAll();
    ctx.leadership.start();
    await ctx.leadership.ready();
    retain();
    if (ctx.settings.evaluationTickMs > 0) {
      // A node that becomes leader (at start or on failover) evaluates at once.
      ctx.leadership.onLead(() => void ctx.scheduler.tick());
      ctx.scheduler.start(ctx.settings.evaluationTickMs);
    }
  });
  app.addHook('onClose', async () => {
    clearInterval(bookkeeping);
    clearInterval(retention);
    await ctx.scheduler.stop();
    await ctx.notifier.close?.();
    await Promise.all(running);
    await ctx.leadership.stop(true); // a clean stop hands the lease on at once
    await ctx.writer.close();
  });
}

/**
 * The leader's share of delivery (several nodes on one store): takes over unfinished deliveries
 * whose claim lapsed — at once when this node becomes leader, then every claim period.
 */
function deliveryTakeover(notifier: { resumeUnfinished?: () => Promise<number> }, leadership: Leadership, settings: Settings) {
  let term = 0;
  let last = 0;
  return {
    name: 'notification delivery takeover',
    async run() {
      if (leadership.term === term && Date.now() - last < settings.notifyTimeoutMs + 5000) return;
      term = leadership.term;
      last = Date.now();
      await notifier.resumeUnfinished?.();
    },
  };
}
