// The app factory: builds a Fastify server from its parts. No module-level state, so tests
// build as many apps as they like, each with its own stores and clock.
import { UnsupportedByEngine } from '../stores/events/engine.js';
import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ConfigStore } from '../stores/config/types.js';
import { EventStoreUnavailable, type EventStore } from '../stores/events/types.js';
import { IngestWriter } from '../ingest/writer.js';
import { DEFAULTS, leaderLeaseMsOf, nodeIdOf, type Settings } from '../settings.js';
import { authHook, authenticate, type AuthDeps } from './auth.js';
import { errorResponses } from './error-schemas.js';
import { JSONAPI, renderError } from './errors.js';
import { ApiError, payloadTooLarge, validationError, type TypeDetail } from '../errors.js';
import { decodeContentEncoding } from './content-encoding.js';
import { IngestAdmission } from './ingest-admission.js';
import { batchThreads } from '../ingest/batch-threads.js';
import { addListLimits } from './list-limits.js';
import { repairPercentEncoding } from './path-encoding.js';
import { discardUnreadBody } from './unread-body.js';
import { requestBaseUrl } from './public-url.js';
import { BLANK, unparseable } from '../validation.js';
import { RateLimiter } from './rate-limit.js';
import { registerV1 } from '../api/v1/index.js';
import { registerUi } from '../api/ui/index.js';
import { sessionSigningSecret } from '../domain/sessions.js';
import type { ApiContext } from '../api/context.js';
import { Scheduler } from '../jobs/scheduler.js';
import { LeaseLeadership, SoloLeadership, type Leadership } from '../cluster/leadership.js';
import { createNotifier } from '../notify/index.js';
import type { Notification, Notifier } from '../notify/types.js';
import { Metrics, metricsAllowed, metricsRefusal } from '../ops/metrics.js';
import { RequestLogController, requestObserver, withSlowQueryLog } from '../ops/observe.js';
import { DiskGuard, ingestDiskFull, isDiskFull } from '../ops/disk.js';

/** /1/ ingest routes: refused with 503 and Retry-After while the disk is full or the ingest queue is (OTLP checks both in its export). */
const INGEST_ROUTE = /^\/1\/(batch|events|kinesis_events)\//;
/** Writes that only read events, and signing in: they go on while the disk is full (the space kept back takes their small writes). */
const READ_LIKE_ROUTE = /^\/1\/(queries|query_results|bubbleup|raw_events|maps\/dependencies\/requests|ui\/session)(\/|$)/;
const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** OTLP over HTTP: its export checks the queue and the disk (for gRPC too); here only the requests in progress. */
const OTLP_ROUTE = /^\/v1\/(traces|logs|metrics)$/;

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
  interface FastifyRequest {
    /** The server's public base URL as this request sees it (src/http/public-url.ts). */
    readonly publicBase: string;
  }
}
import { registerV2 } from '../api/v2/index.js';
import { registerOtlp } from '../api/otlp.js';
import { exportOtlp, type OtlpExport, type OtlpResult } from '../api/otlp-export.js';

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

export type App = FastifyInstance<any, any, any, any, TypeBoxTypeProvider>;

/** Header values that carry secrets never reach the logs. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-honeycomb-team"]',
  'req.headers["x-service-team"]',
  'req.headers["x-amz-firehose-access-key"]',
  'req.headers.cookie',
];

export async function createApp(deps: AppDeps): Promise<App> {
  const settings: Settings = { ...DEFAULTS, ...deps.settings };
  const now = deps.now ?? (() => new Date());
  const app = Fastify({
    logger: deps.logger ?? { level: settings.logLevel, redact: REDACTED_PATHS },
    genReqId: () => randomUUID(),
    // One line per request, written when it is answered (src/ops/observe.ts), instead of Fastify's two.
    logController: new RequestLogController(),
    requestIdHeader: false,
    bodyLimit: settings.bodyLimit,
    ajv: {
      // Wrong types are errors, never silently converted; unknown fields are not stripped.
      customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true, useDefaults: true },
    },
    return503OnClosing: true,
    // Fastify takes a hop count too; its types leave the number out.
    trustProxy: settings.trustProxy as boolean | string | string[],
    routerOptions: {
      // `POST /1/boards/` is `POST /1/boards` (Honeycomb's clients send both).
      ignoreTrailingSlash: true,
      // Dataset names (path segments) may have 255 characters; 100 by default.
      maxParamLength: 1000,
    },
    // Undecodable percent-encoding reaches its route (src/http/path-encoding.ts).
    rewriteUrl: (req) => repairPercentEncoding(req.url ?? '/'),
    // What the router still refuses before any route runs (a path segment past maxParamLength)
    // answers in the prefix's dialect. No hook runs for it, so it is written as it is.
    frameworkErrors: (err, request, reply) => {
      const message = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path segment is longer than 1000 characters' : err.message;
      const out = renderError(new ApiError(err.statusCode ?? 400, message, { dialect: 'legacy' }), request.url, String(request.id), request.publicBase, now());
      const body = JSON.stringify(out.body);
      (reply as FastifyReply).hijack();
      reply.raw.writeHead(out.status, { ...out.headers, 'x-request-id': String(request.id), 'content-type': out.contentType, 'content-length': Buffer.byteLength(body) });
      reply.raw.end(body);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Response schemas document the API (OpenAPI); bodies are serialised as they are.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  // /1/ reads every body as JSON whatever its Content-Type (curl -d sends a form type);
  // /2/ is JSON:API and takes application/vnd.api+json only. Content-Encoding is undone first
  // (src/http/content-encoding.ts), bounded by the route's body limit.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // text/plain too: Fastify's built-in text parser would hand /2/ a string (422, not 415) and /1/ a string.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    const type = String(request.headers['content-type'] ?? '');
    if (request.url.startsWith('/2/') && !/^application\/vnd\.api\+json\s*(;|$)/i.test(type)) {
      return done(new ApiError(415, `Content-Type must be application/vnd.api+json, not ${type || 'empty'}`), undefined);
    }
    const raw = body as Buffer;
    if (raw.length === 0) return done(null, undefined);
    decodeContentEncoding(raw, request.headers['content-encoding'], request.routeOptions.bodyLimit ?? settings.bodyLimit).then(
      (decoded) => (decoded.length === 0 ? done(null, undefined) : parseJson(request, decoded.toString('utf8'), done)),
      (err: unknown) => done(err as Error, undefined),
    );
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Waggle API',
        version: '1.0.0',
        description: 'Configuration and Event Ingestion API, wire-compatible with the Honeycomb API.',
      },
      components: {
        securitySchemes: {
          configuration_key: { type: 'apiKey', in: 'header', name: 'X-Honeycomb-Team' },
          ingest_key: { type: 'apiKey', in: 'header', name: 'X-Honeycomb-Team' },
          bearerAuth: { type: 'http', scheme: 'bearer' },
          firehose_access_key: { type: 'apiKey', in: 'header', name: 'X-Amz-Firehose-Access-Key' },
        },
      },
    },
  });

  // Document the error responses of every API route in the OpenAPI document.
  app.addHook('onRoute', (route) => {
    if (route.schema && !route.schema.hide && route.url.match(/^\/[12]\//)) {
      const legacyErrors = (route.config as { auth?: { legacyErrors?: boolean } } | undefined)?.auth?.legacyErrors === true;
      route.schema = { ...route.schema, response: { ...errorResponses(route.url, legacyErrors), ...(route.schema.response as object) } };
    }
  });
  // Schema-validated routes refuse over-long lists before ajv reads their items (list-limits.ts).
  app.addHook('onRoute', addListLimits);

  // The web UI's session cookie (src/http/session.ts), parsed before the auth hook reads it.
  await app.register(cookie, { secret: await sessionSigningSecret(deps.configStore, settings.sessionSecret), hook: 'onRequest' });

  app.decorateRequest('auth', null);
  app.decorateRequest('publicBase', {
    getter(this: { protocol: string; host: string }) {
      return requestBaseUrl(this, settings);
    },
  });
  // Several nodes on one PostgreSQL store elect one leader for background work (cluster/leadership.ts).
  const leadership =
    deps.leadership ??
    (deps.configStore.kind === 'postgres'
      ? new LeaseLeadership(deps.configStore, { nodeId: nodeIdOf(settings), ttlMs: leaderLeaseMsOf(settings), log: app.log })
      : new SoloLeadership());
  const authDeps: AuthDeps = {
    store: deps.configStore,
    limiter: new RateLimiter(() => now().getTime(), () => leadership.liveNodes()),
    now,
    apiRate: settings.apiRateLimit,
    ingestRate: settings.ingestRateLimit,
  };
  app.addHook('onRequest', authHook(authDeps));
  // An error answered before the body was read (a 413 decided from Content-Length, a 401)
  // reaches a client that is still sending (src/http/unread-body.ts).
  app.addHook('onError', async (request, reply) => {
    if (!(await discardUnreadBody(request.raw))) reply.header('connection', 'close');
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Fastify appends `; charset=utf-8` when it serialises; JSON:API clients (Honeycomb's Go
    // client) read `/2/` bodies only on the exact media type.
    if (String(reply.getHeader('content-type') ?? '').startsWith(JSONAPI)) reply.header('content-type', JSONAPI);
  });

  // An unknown route is a 404 whatever its body: Fastify reads the body (its Content-Type, its
  // JSON) before the not-found handler runs, and a bad one would otherwise answer 400 or 415.
  const noSuchRoute = (request: FastifyRequest) => new ApiError(404, `no such route: ${request.method} ${request.url.split('?')[0]}`);
  app.setErrorHandler((err: FastifyError | ApiError, request, reply) => {
    let apiError = request.is404 ? noSuchRoute(request) : toApiError(err, request, settings);
    if (isDiskFull(err)) {
      disk.noteFull();
      apiError = INGEST_ROUTE.test(request.routeOptions.url ?? '') ? ingestDiskFull() : diskFullError();
    }
    const rule = request.routeOptions.config?.auth;
    if (rule?.kind === 'team' && rule.legacyErrors) apiError = asIngestError(apiError);
    if (apiError.status >= 500) request.log.error({ err }, 'request failed');
    const out = renderError(apiError, request.url, String(request.id), request.publicBase, now());
    return reply.code(out.status).headers(out.headers).type(out.contentType).send(out.body);
  });
  app.setNotFoundHandler((request, reply) => {
    const out = renderError(noSuchRoute(request), request.url, String(request.id), request.publicBase, now());
    return reply.code(404).type(out.contentType).send(out.body);
  });

  const admission = new IngestAdmission(settings.ingestMaxInFlight, settings.ingestMaxInFlightBytes);
  const metrics = new Metrics({
    queueDepth: () => writer.backlog,
    ingestInFlight: () => admission,
    ingestThreadsHeap: () => {
      const threads = batchThreads(settings.ingestThreads);
      return { committed: threads.heapBytes(), limit: threads.heapLimitBytes() };
    },
    connections: () => new Promise((resolve) => app.server.getConnections((err, n) => resolve(err ? 0 : n))),
    dataDir: settings.dataDir,
    eventStoreMemory: deps.eventStore.memory ? () => deps.eventStore.memory!() : undefined,
    leadership,
  });
  app.decorate('metrics', metrics);
  app.addHook('onResponse', requestObserver(metrics));
  if (settings.metricsPort === undefined) {
    app.get('/metrics', { schema: { hide: true }, config: { auth: { kind: 'none' } } }, async (request, reply) => {
      if (!metricsAllowed(request.raw, settings.metricsToken)) return reply.code(403).type('text/plain').send(metricsRefusal(settings.metricsToken));
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  }

  app.get('/healthz', { schema: { hide: true }, config: { auth: { kind: 'none' } } }, async () => ({ status: 'ok' }));
  app.get('/openapi.json', { schema: { hide: true }, config: { auth: { kind: 'none' } } }, async () => app.swagger());

  const disk = new DiskGuard(settings.dataDir, settings.diskReserve, (full, freeBytes) => {
    const figures = { dataDir: settings.dataDir, freeBytes, reserveBytes: settings.diskReserve };
    if (full) app.log.error(figures, 'the data directory is out of disk space: ingest and changes are refused until space is freed');
    else app.log.info(figures, 'disk space is back: ingest and changes are accepted again');
  });
  const diskFullError = () => new ApiError(503, 'the data directory is out of disk space: changes are refused until space is freed (queries still work)');
  // Admission, before a body is read (after the key is checked): ingest requests in progress and
  // the bytes of their bodies are bounded, and refused while the queue or the disk is full.
  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url ?? '';
    const otlp = OTLP_ROUTE.test(route);
    if (INGEST_ROUTE.test(route) || otlp) {
      if (!otlp) {
        disk.refuseIngest();
        if (writer.backlog >= settings.ingestQueueLimit) throw new ApiError(503, 'the ingest queue is full; retry later', { retryAfter: 1 });
      }
      admission.admit(request, reply);
    } else if (CHANGES.has(request.method) && /^\/[12]\//.test(route) && !READ_LIKE_ROUTE.test(route) && disk.isFull()) {
      throw diskFullError();
    }
  });
  app.addHook('preParsing', async (request, _reply, payload) => admission.countChunked(request, payload) ?? payload);
  const events = withSlowQueryLog(deps.eventStore, settings.slowQueryMs, app.log);
  const writer = new IngestWriter(deps.configStore, events, {
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
  const scheduler = new Scheduler(
    now,
    (job, err) => app.log.error({ err, job }, 'evaluation failed'),
    (job, seconds, failed) => metrics.evaluations.observe({ job, status: failed ? 'error' : 'ok' }, seconds),
    leadership,
  );
  const notifier = createNotifier({
    store: deps.configStore,
    settings,
    log: app.log,
    onOutcome: (recipientType, outcome) => metrics.notifications.inc({ recipient_type: recipientType, outcome }),
    claims: leadership,
  });
  app.decorate('jobs', { scheduler, notifier, leadership });
  if (leadership.shared) scheduler.register(deliveryTakeover(notifier, leadership, settings));
  app.decorate('writer', writer);
  const ctx: ApiContext = {
    store: deps.configStore,
    events,
    writer,
    metrics,
    disk,
    now,
    settings,
    scheduler,
    notifier,
    leadership,
    authenticate: (rule, credential, header) => authenticate(authDeps, rule, credential, header),
  };
  await app.register(async (v1) => registerV1(v1 as App, ctx));
  await app.register(async (v2) => registerV2(v2 as App, ctx));
  await app.register(async (otlp) => registerOtlp(otlp as App, ctx));
  app.decorate('otlp', { export: (req: OtlpExport) => exportOtlp(ctx, req), maxMessageBytes: settings.ingestDecompressedLimit });
  await app.register(async (ui) => registerUi(ui as App, ctx));
  startBackground(app, ctx);
  return app;
}

/**
 * Background upkeep: ingest bookkeeping (`last_written`) every few seconds, and retention
 * (events older than `retentionDays`) every hour. Stopped, and flushed, when the app closes.
 */
function startBackground(app: App, ctx: ApiContext) {
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
  });
  const retention = setInterval(retain, 3_600_000);
  bookkeeping.unref();
  retention.unref();
  app.addHook('onReady', async () => {
    // Before any request or evaluation: the two stores' columns agree (ingest/writer.ts).
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

/** Ingest routes answer in the legacy dialect with Honeycomb's ingest texts. */
function asIngestError(e: ApiError): ApiError {
  const message = e.status === 413 ? 'Request body is too large.' : e.message;
  return new ApiError(e.status === 413 ? 400 : e.status, message, { ...e.extra, dialect: 'legacy' });
}

/** Maps what Fastify and our code throw to one ApiError. */
function toApiError(err: FastifyError | ApiError, request: FastifyRequest, settings: Settings): ApiError {
  if (err instanceof ApiError) return err;
  // A feature the configured event engine does not offer yet (SLOs, BubbleUp on ClickHouse).
  if (err instanceof UnsupportedByEngine) return new ApiError(501, err.message);
  // A write the event store could not do now (nothing of it stored): the client tries again.
  if (err instanceof EventStoreUnavailable) return new ApiError(503, err.message, { retryAfter: err.retryAfterSeconds });
  const fe = err as FastifyError;
  if (fe.validation && fe.validationContext === 'body' && request.body === undefined) return unparseable();
  if (fe.validation) {
    const where = fe.validationContext === 'body' ? '' : `${fe.validationContext}.`;
    const details: TypeDetail[] = fe.validation.map((v) => {
      const path = v.instancePath.replace(/^\//, '').replace(/\//g, '.');
      // The field of a missing or unknown property is that property, not its parent object.
      const missing = v.keyword === 'required' ? String((v.params as { missingProperty?: string }).missingProperty)
        : v.keyword === 'additionalProperties' ? String((v.params as { additionalProperty?: string }).additionalProperty) : '';
      const field = where + [path, missing].filter(Boolean).join('.') || fe.validationContext || 'body';
      // minLength 1 fails only for "": a blank required field, as Honeycomb words it.
      const blank = v.keyword === 'required' || (v.keyword === 'minLength' && (v.params as { limit?: number }).limit === 1);
      const code = blank ? 'missing' : v.keyword === 'type' ? 'incorrect_type' : 'invalid';
      // maxLength worded as the hand-written checks word it (Problems.string, datasetNameProblem).
      const message = blank ? BLANK : v.keyword === 'additionalProperties'
        ? 'is not a known field'
        : v.keyword === 'maxLength' ? `must be at most ${(v.params as { limit: number }).limit} characters`
        : v.message ?? 'is invalid';
      return { field, code, description: message };
    });
    return validationError(details);
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return payloadTooLarge(request.routeOptions.bodyLimit ?? settings.bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(415, 'unsupported Content-Type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return unparseable();
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'request body length does not match Content-Length');
  }
  if (err instanceof SyntaxError || fe.statusCode === 400) {
    return unparseable(fe.message.replace(/ but content-type is set to .*$/, ''));
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) return new ApiError(fe.statusCode, fe.message);
  return new ApiError(500, 'something went wrong!');
}
