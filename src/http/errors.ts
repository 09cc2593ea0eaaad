// Every error body the server sends comes out of this module, in one of three dialects (the
// errors themselves are src/errors.ts):
//   legacy   `{error}` as application/json                 (/1/: 401, 403, 404, 5xx, and ingest routes)
//   problem  RFC 7807 application/problem+json              (/1/: 400, 409, 413, 415, 422, 429, and
//            the 404 of a dataset a path names, see datasetNotFound)
//            with `type_detail` on 422; it always carries `error` too, so legacy readers work
//   jsonapi  `{errors:[…]}` as application/vnd.api+json     (everything under /2/)
// Clients branch on the Content-Type, so it always matches the body.

import { Writer } from '../ingest/otlp/wire.js';
import { ApiError, type Dialect } from '../errors.js';

const PROBLEMS: Record<number, { type: string; title: string; code: string }> = {
  400: { type: 'unparseable', title: 'The request body could not be parsed.', code: 'invalid' },
  401: { type: 'unauthorized', title: 'The request could not be authenticated.', code: 'unauthorized' },
  403: { type: 'forbidden', title: 'The key does not have permission for this action.', code: 'forbidden' },
  404: { type: 'not-found', title: 'The requested resource cannot be found.', code: 'not-found' },
  405: { type: 'method-not-allowed', title: 'The method is not allowed on this resource.', code: 'method-not-allowed' },
  409: {
    type: 'conflict',
    title: 'Request could not be completed due to a conflict with the current state of the target resource.',
    code: 'conflict',
  },
  413: { type: 'payload-too-large', title: 'Request body is too large.', code: 'payload-too-large' },
  414: { type: 'uri-too-long', title: 'The request URI is too long.', code: 'uri-too-long' },
  415: { type: 'unsupported-media-type', title: 'The request body has an unsupported Content-Type.', code: 'unsupported-media-type' },
  422: { type: 'validation-failed', title: 'The provided input is invalid.', code: 'invalid' },
  429: { type: 'rate-limited', title: 'You have exceeded your rate limit.', code: 'rate-limited/may-retry' },
  500: { type: 'internal', title: 'something went wrong!', code: 'internal' },
  503: { type: 'unavailable', title: 'The service is unavailable.', code: 'unavailable' },
};
/** Where Honeycomb's JSON:API errors word a title differently from the problem titles. */
const JSONAPI_TITLES: Record<number, string> = {
  400: 'request body could not be parsed',
  429: 'request rate limit exceeded',
};
const PROBLEM_STATUSES = new Set([400, 405, 409, 413, 415, 422, 429]);
const problemFor = (status: number) => PROBLEMS[status] ?? PROBLEMS[status >= 500 ? 500 : 400];

/** The JSON:API media type, exactly: Honeycomb's Go client reads errors only on an exact match. */
export const JSONAPI = 'application/vnd.api+json';
/** The `/2/` answer to a missing, malformed, unknown, disabled or expired management key. */
export const INVALID_KEY = 'invalid API key';

export function dialectFor(url: string, err: ApiError): Dialect {
  if (url.startsWith('/2/') || url === '/2') return 'jsonapi';
  if (err.extra.dialect) return err.extra.dialect;
  return PROBLEM_STATUSES.has(err.status) ? 'problem' : 'legacy';
}

export interface RenderedError {
  status: number;
  contentType: string;
  body: unknown;
  headers: Record<string, string>;
}

/**
 * `base` is the server's public base URL (problem `type`s are `<base>/problems/<slug>`); `now`
 * is the app clock: `Retry-After` is counted from it, like the rate limiter.
 */
export function renderError(err: ApiError, url: string, requestId: string, base: string, now: Date = new Date()): RenderedError {
  const dialect = dialectFor(url, err);
  const p = problemFor(err.status);
  const headers: Record<string, string> = {};
  if (err.extra.retryAfter !== undefined) {
    headers['retry-after'] = new Date(now.getTime() + err.extra.retryAfter * 1000).toUTCString();
  }
  if (dialect === 'legacy') {
    return { status: err.status, contentType: 'application/json; charset=utf-8', body: { error: err.message }, headers };
  }
  if (dialect === 'problem') {
    const body: Record<string, unknown> = {
      error: err.message,
      status: err.status,
      type: `${base}/problems/${p.type}`,
      title: p.title,
      detail: err.extra.detail ?? err.message,
      instance: requestId,
    };
    if (err.extra.typeDetail) body.type_detail = err.extra.typeDetail;
    return { status: err.status, contentType: 'application/problem+json; charset=utf-8', body, headers };
  }
  if (err.status === 401) {
    // Honeycomb's Go client recognises a bad management key by this code and header source.
    const detail = err.message === INVALID_KEY ? INVALID_KEY : `${INVALID_KEY}: ${err.message}`;
    const errors = [{ id: requestId, status: '401', code: 'unauthenticated/invalid-key', title: INVALID_KEY, detail, source: { header: 'Authorization' } }];
    return { status: 401, contentType: JSONAPI, body: { errors }, headers };
  }
  const errors = err.extra.typeDetail?.length
    ? err.extra.typeDetail.map((d, i) => ({
        id: `${requestId}-${i}`,
        status: String(err.status),
        code: d.code,
        title: p.title,
        detail: d.description,
        // Query parameters (`page[size]`) are named by `parameter`, body fields by a JSON pointer.
        source: /^\w+\[\w+\]$/.test(d.field) ? { parameter: d.field } : { pointer: `/${d.field.replace(/\./g, '/')}` },
      }))
    : [{ id: requestId, status: String(err.status), code: p.code, title: JSONAPI_TITLES[err.status] ?? p.title, detail: err.extra.detail ?? err.message }];
  return { status: err.status, contentType: JSONAPI, body: { errors }, headers };
}

// --- OTLP (OpenTelemetry) errors: a google.rpc.Status, over HTTP and gRPC alike.

/** gRPC status codes (google.rpc.Code) used by OTLP answers. */
export const GrpcCode = {
  OK: 0,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/**
 * The gRPC code of an error's HTTP status, as the OTLP specification pairs them: 400 (and 422,
 * an unusable dataset name) InvalidArgument, never retried; 429 ResourceExhausted and 503
 * Unavailable, retried (both carry RetryInfo); 413 ResourceExhausted without RetryInfo, which
 * clients do not retry.
 */
export function grpcCodeFor(status: number): number {
  switch (status) {
    case 400:
    case 422:
      return GrpcCode.INVALID_ARGUMENT;
    case 401:
      return GrpcCode.UNAUTHENTICATED;
    case 403:
      return GrpcCode.PERMISSION_DENIED;
    case 404:
      return GrpcCode.NOT_FOUND;
    case 413:
    case 429:
      return GrpcCode.RESOURCE_EXHAUSTED;
    case 415:
      return GrpcCode.UNIMPLEMENTED;
    case 503:
      return GrpcCode.UNAVAILABLE;
    default:
      return GrpcCode.INTERNAL;
  }
}

const RETRY_INFO_TYPE = 'type.googleapis.com/google.rpc.RetryInfo';

/**
 * google.rpc.Status { code = 1, message = 2, details = 3 (Any) } as protobuf, with a
 * google.rpc.RetryInfo { retry_delay = 1 (Duration { seconds = 1 }) } detail when the error
 * says when to retry.
 */
export function statusProto(code: number, message: string, retryAfter?: number): Buffer {
  const w = new Writer().uint(1, code).string(2, message);
  if (retryAfter !== undefined) {
    const delay = new Writer().uint(1, retryAfter).finish();
    const info = new Writer().bytes(1, delay).finish();
    w.bytes(3, new Writer().string(1, RETRY_INFO_TYPE).bytes(2, info).finish());
  }
  return w.finish();
}

/**
 * An OTLP error over HTTP: a google.rpc.Status in the request's encoding (JSON, or protobuf)
 * with the request's Content-Type; 429 and 503 carry Retry-After (seconds).
 */
export function renderOtlpError(err: ApiError, json: boolean, contentType: string): RenderedError {
  const code = grpcCodeFor(err.status);
  const headers: Record<string, string> = {};
  if (err.extra.retryAfter !== undefined) headers['retry-after'] = String(err.extra.retryAfter);
  const message = err.extra.detail && err.extra.detail !== err.message ? `${err.message}: ${err.extra.detail}` : err.message;
  const retry = err.extra.retryAfter;
  const details = retry === undefined ? {} : { details: [{ '@type': RETRY_INFO_TYPE, retryDelay: `${retry}s` }] };
  const body = json ? Buffer.from(JSON.stringify({ code, message, ...details })) : statusProto(code, message, retry);
  return { status: err.status, contentType, body, headers };
}
