// What an operator sees of the app at work: one log line per request (and its metrics), slow
// event-store reads logged at warn. Wired in by the composition root (src/app.ts).
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { EventStore } from '../stores/events/types.js';
import { refusalReason, type Metrics } from './metrics.js';

export interface OpsLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Ingest routes whose bodies count as ingest bytes here (OTLP counts its own, every transport: api/otlp-export.ts). */
const INGEST_ROUTE = /^\/1\/(batch|events|kinesis_events)\//;
const OTLP_ROUTE = /^\/v1\/(traces|logs|metrics)$/;

/**
 * Fastify's own lines per request: its "incoming request" at debug (where a request's arrival is
 * worth a line), none at completion (requestObserver writes that line).
 */
export class RequestLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }
  override requestCompleted(): void {}
}

/**
 * The onResponse hook: one info line per request (route, status, latency, key id — never the
 * secret — and dataset), and the request metrics.
 */
export function requestObserver(metrics: Metrics) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const seconds = reply.elapsedTime / 1000;
    metrics.requests.inc({ route, method: request.method, status });
    metrics.requestSeconds.observe({ route, method: request.method }, seconds);
    const ingest = INGEST_ROUTE.test(route);
    if (ingest) {
      const body = request.body;
      metrics.ingestBytes.inc(Buffer.isBuffer(body) ? body.length : Number(request.headers['content-length'] ?? 0) || 0);
    }
    if ((ingest || OTLP_ROUTE.test(route)) && status >= 400) metrics.refusedRequests.inc({ reason: refusalReason(status) });
    const params = request.params as { datasetSlug?: string } | undefined;
    request.log.info(
      {
        method: request.method,
        route,
        path: request.url.split('?')[0],
        status,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        keyId: request.auth?.key.id,
        dataset: params?.datasetSlug,
      },
      'request',
    );
  };
}

/**
 * The event store with its reads (`analyse`: queries, triggers, SLOs, BubbleUp, …) timed: those
 * slower than `slowMs` are logged at warn with their figures. Everything else is the store itself.
 */
export function withSlowQueryLog(events: EventStore, slowMs: number, log: OpsLogger): EventStore {
  return new Proxy(events, {
    get(target, prop, receiver) {
      if (prop === 'analyse') {
        return async (sql: string, params: unknown[], timeoutMs: number) => {
          const started = performance.now();
          let rows: number | undefined;
          try {
            const result = await target.analyse(sql, params, timeoutMs);
            rows = result.length;
            return result;
          } finally {
            const ms = performance.now() - started;
            if (ms >= slowMs) {
              log.warn(
                { ms: Math.round(ms), rows, failed: rows === undefined, timeoutMs, sql: sql.length > 400 ? `${sql.slice(0, 400)}…` : sql },
                'slow query',
              );
            }
          }
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}
