// The HTTP plumbing: a Fastify server with Waggle's body parsing, OpenAPI document, key checks,
// ingest admission and error dialects, serving only /healthz and /openapi.json (and /metrics when
// asked). What else it serves, and everything behind it, the composition root decides (src/app.ts).
// No module-level state, so tests build as many servers as they like.
import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { UnsupportedByEngine } from '../stores/events/engine.js';
import type { ConfigStore } from '../stores/config/types.js';
import { EventStoreUnavailable } from '../stores/events/types.js';
import type { Settings } from '../settings.js';
import { authHook, authenticate, type AuthContext, type AuthDeps, type AuthRule, type HeaderSink } from './auth.js';
import { errorResponses } from './error-schemas.js';
import { ApiError, payloadTooLarge, validationError, type TypeDetail } from '../errors.js';
import { JSONAPI, renderError } from './errors.js';
import { decodeContentEncoding } from './content-encoding.js';
import type { IngestAdmission } from './ingest-admission.js';
import { addListLimits } from './list-limits.js';
import { repairPercentEncoding } from './path-encoding.js';
import { discardUnreadBody } from './unread-body.js';
import { requestBaseUrl } from './public-url.js';
import { BLANK, NOT_BLANK, unparseable } from '../validation.js';
import { RateLimiter } from './rate-limit.js';
import { sessionSigningSecret } from '../domain/sessions.js';
import { metricsAllowed, metricsRefusal, type Metrics } from '../ops/metrics.js';
import { RequestLogController, requestObserver } from '../ops/observe.js';
import { ingestDiskFull, isDiskFull, type DiskGuard } from '../ops/disk.js';

/** /1/ ingest routes: refused with 503 and Retry-After while the disk is full or the ingest queue is (OTLP checks both in its export). */
const INGEST_ROUTE = /^\/1\/(batch|events|kinesis_events)\//;
/** Writes that only read events, and signing in: they go on while the disk is full (the space kept back takes their small writes). */
const READ_LIKE_ROUTE = /^\/1\/(queries|query_results|bubbleup|raw_events|maps\/dependencies\/requests|ui\/session)(\/|$)/;
const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** OTLP over HTTP: its export checks the queue and the disk (for gRPC too); here only the requests in progress. */
const OTLP_ROUTE = /^\/v1\/(traces|logs|metrics)$/;

declare module 'fastify' {
  interface FastifyRequest {
    /** The server's public base URL as this request sees it (src/http/public-url.ts). */
    readonly publicBase: string;
  }
}
export interface HttpDeps {
  /** The configuration store: keys, and the web UI's session secret. */
  store: ConfigStore;
  settings: Settings;
  /** The clock every time-dependent rule reads; tests pass a controllable one. */
  now: () => Date;
  /** Pino options or `false`; defaults to JSON logs at `settings.logLevel`. */
  logger?: FastifyServerOptions['logger'];
  /** How many nodes share the store (the rate limits are shared among them). */
  liveNodes: () => number;
  /** Ingest requests in progress and their bytes (src/http/ingest-admission.ts). */
  admission: IngestAdmission;
  /** Free space of the data directory: ingest and changes are refused while it is short. */
  disk: DiskGuard;
  /** Events waiting for the ingest writer: ingest is refused at `settings.ingestQueueLimit`. */
  ingestBacklog: () => number;
}

/** Checks a key outside a route's onRequest hook (OTLP over gRPC), with the hook's rules and limits. */
export type Authenticate = (rule: Exclude<AuthRule, { kind: 'none' }>, credential: string | undefined, header?: HeaderSink) => Promise<AuthContext>;

export type App = FastifyInstance<any, any, any, any, TypeBoxTypeProvider>;

/** Header values that carry secrets never reach the logs. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-honeycomb-team"]',
  'req.headers["x-service-team"]',
  'req.headers["x-amz-firehose-access-key"]',
  'req.headers.cookie',
];

export async function createHttp(deps: HttpDeps): Promise<{ app: App; authenticate: Authenticate }> {
  const { settings, now, disk, admission } = deps;
  const app = Fastify({
    logger: deps.logger ?? { level: settings.logLevel, redact: REDACTED_PATHS },
    genReqId: () => randomUUID(),
    // One line per request, written when it is answered (src/ops/observe.ts), instead of Fastify's two.
    logController: new RequestLogController(),
    requestIdHeader: false,
    bodyLimit: settings.bodyLimit,
    ajv: {
      // Wrong types are errors, never silently converted; unknown fields are not stripped.
      customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true, useDefaults: true, allowUnionTypes: true },
    },
    return503OnClosing: true,
    // No bound on start: reconciling the stores (onReady, src/app.ts) may rewrite a table past
    // its column budget, which on a large table outlasts Fastify's 10 s; timing out there would
    // fail every start alike.
    pluginTimeout: 0,
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
  await app.register(cookie, { secret: await sessionSigningSecret(deps.store, settings.sessionSecret), hook: 'onRequest' });

  app.decorateRequest('auth', null);
  app.decorateRequest('publicBase', {
    getter(this: { protocol: string; host: string }) {
      return requestBaseUrl(this, settings);
    },
  });
  const authDeps: AuthDeps = {
    store: deps.store,
    limiter: new RateLimiter(() => now().getTime(), deps.liveNodes),
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

  app.get('/healthz', { schema: { hide: true }, config: { auth: { kind: 'none' } } }, async () => ({ status: 'ok' }));
  app.get('/openapi.json', { schema: { hide: true }, config: { auth: { kind: 'none' } } }, async () => app.swagger());

  const diskFullError = () => new ApiError(503, 'the data directory is out of disk space: changes are refused until space is freed (queries still work)');
  // Admission, before a body is read (after the key is checked): ingest requests in progress and
  // the bytes of their bodies are bounded, and refused while the queue or the disk is full.
  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url ?? '';
    const otlp = OTLP_ROUTE.test(route);
    if (INGEST_ROUTE.test(route) || otlp) {
      if (!otlp) {
        disk.refuseIngest();
        if (deps.ingestBacklog() >= settings.ingestQueueLimit) throw new ApiError(503, 'the ingest queue is full; retry later', { retryAfter: 1 });
      }
      admission.admit(request, reply);
    } else if (CHANGES.has(request.method) && /^\/[12]\//.test(route) && !READ_LIKE_ROUTE.test(route) && disk.isFull()) {
      throw diskFullError();
    }
  });
  app.addHook('preParsing', async (request, _reply, payload) => admission.countChunked(request, payload) ?? payload);
  return { app, authenticate: (rule, credential, header) => authenticate(authDeps, rule, credential, header) };
}

/** The app's Prometheus metrics: counted per request, and served on /metrics unless they have their own port. */
export function serveMetrics(app: App, metrics: Metrics, settings: Settings): void {
  app.addHook('onResponse', requestObserver(metrics));
  if (settings.metricsPort === undefined) {
    app.get('/metrics', { schema: { hide: true }, config: { auth: { kind: 'none' } } }, async (request, reply) => {
      if (!metricsAllowed(request.raw, settings.metricsToken)) return reply.code(403).type('text/plain').send(metricsRefusal(settings.metricsToken));
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  }
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
    // A value of the wrong type is one problem, its type: the value's other keywords (an enum, a
    // multipleOf, an `if`'s `then` typing it again) would only say it again.
    const mistyped = new Set(fe.validation.filter((v) => v.keyword === 'type').map((v) => v.instancePath));
    const typed = new Set<string>();
    const errors = fe.validation.filter((v) => {
      if (!mistyped.has(v.instancePath)) return true;
      if (v.keyword !== 'type' || typed.has(v.instancePath)) return false;
      typed.add(v.instancePath);
      return true;
    });
    // An `if` that failed says only "must match then": its `then`'s own problems are reported too.
    const details: TypeDetail[] = errors.filter((v) => v.keyword !== 'if').map((v) => {
      const path = v.instancePath.replace(/^\//, '').replace(/\//g, '.');
      // The field of a missing or unknown property is that property, not its parent object.
      const missing = v.keyword === 'required' ? String((v.params as { missingProperty?: string }).missingProperty)
        : v.keyword === 'additionalProperties' ? String((v.params as { additionalProperty?: string }).additionalProperty) : '';
      const field = where + [path, missing].filter(Boolean).join('.') || fe.validationContext || 'body';
      // minLength 1 fails only for "", NOT_BLANK only for spaces: a blank required field, as Honeycomb words it.
      const blank = v.keyword === 'required' || (v.keyword === 'minLength' && (v.params as { limit?: number }).limit === 1)
        || (v.keyword === 'pattern' && (v.params as { pattern?: string }).pattern === NOT_BLANK);
      const code = blank ? 'missing' : v.keyword === 'type' ? 'incorrect_type' : 'invalid';
      // maxLength worded as the hand-written checks word it (Problems.string, datasetNameProblem).
      const message = blank ? BLANK : v.keyword === 'additionalProperties'
        ? 'is not a known field'
        : v.keyword === 'maxLength' ? `must be at most ${(v.params as { limit: number }).limit} characters`
        // A `false` schema: a field that must not be there (e.g. a board view filter's value on `exists`);
        // a `not` one: a field that may only be absent or null (e.g. a value on a query filter's `exists`).
        : v.keyword === 'false schema' || v.keyword === 'not' ? 'must not be given here'
        : v.keyword === 'const' ? `must be ${JSON.stringify((v.params as { allowedValue: unknown }).allowedValue)}`
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
