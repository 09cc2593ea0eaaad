// Prometheus metrics (prom-client): one registry per app (no module-level state, so tests build
// many apps), served at GET /metrics on the app's port or on a port of its own
// (WAGGLE_METRICS_PORT), to loopback clients only unless WAGGLE_METRICS_TOKEN is set, then to
// whoever sends it as a bearer token. The names and labels are listed in docs/operations.md.
import { timingSafeEqual, createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { StoreMemory } from '../stores/events/types.js';
import type { CacheStats } from '../query/bucket-cache.js';

/** Latency buckets (seconds) for requests, commits, queries and evaluation runs. */
const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface MetricsSources {
  /** Events written and not yet committed (the ingest writer's backlog). */
  queueDepth(): number;
  /** Ingest requests in progress and the bytes of their bodies held (WAGGLE_INGEST_MAX_IN_FLIGHT, _BYTES). */
  ingestInFlight?: () => { requests: number; bytes: number };
  /** The ingest threads' V8 heaps: committed bytes, and what they may grow to. */
  ingestThreadsHeap?: () => { committed: number; limit: number };
  /** Open client connections of the HTTP server. */
  connections(): Promise<number>;
  /** The data directory (event store size on disk); undefined: not reported. */
  dataDir?: string;
  /** The event store's memory: in use, its limit, and what it has spilled to disk (bytes). */
  eventStoreMemory?: () => Promise<StoreMemory>;
  /** Whether this node runs the background work, and how many nodes share the store (docs/several-nodes.md). */
  leadership?: { isLeader(): boolean; liveNodes(): number };
}

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'waggle_http_requests_total',
    help: 'HTTP requests answered, by route (the route pattern, "unmatched" when none), method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly requestSeconds = new Histogram({
    name: 'waggle_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer being sent, by route and method',
    labelNames: ['route', 'method'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  readonly ingestEvents = new Counter({
    name: 'waggle_ingest_events_total',
    help: 'Events stored (acknowledged as durable), every transport',
    registers: [this.registry],
  });
  readonly ingestBytes = new Counter({
    name: 'waggle_ingest_bytes_total',
    help: 'Bytes of ingest request bodies as received (usually compressed), every transport',
    registers: [this.registry],
  });
  readonly rejectedEvents = new Counter({
    name: 'waggle_ingest_rejected_events_total',
    help: 'Events of accepted requests that were not stored, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly refusedRequests = new Counter({
    name: 'waggle_ingest_refused_requests_total',
    help: 'Ingest requests refused as a whole, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly commitSeconds = new Histogram({
    name: 'waggle_ingest_commit_duration_seconds',
    help: 'Time of one group commit of the ingest writer, from staging to durable',
    buckets: SECONDS,
    registers: [this.registry],
  });
  readonly queries = new Histogram({
    name: 'waggle_query_duration_seconds',
    help: 'Run time of query results, by outcome (ok, timeout, error); its _count is the number of queries',
    labelNames: ['status'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  readonly evaluations = new Histogram({
    name: 'waggle_evaluation_duration_seconds',
    help: 'Run time of one background evaluation pass of a job (triggers, burn alerts, signals), by job and outcome; its _count is the number of runs',
    labelNames: ['job', 'status'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  readonly notifications = new Counter({
    name: 'waggle_notifications_total',
    help: 'Notifications finished, by recipient type and outcome (delivered, failed, refused)',
    labelNames: ['recipient_type', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor(sources: MetricsSources) {
    collectDefaultMetrics({ register: this.registry });
    valueGauge(this.registry, 'waggle_ingest_queue_events', 'Events written and not yet committed (the ingest writer backlog)', () => sources.queueDepth());
    const inFlight = sources.ingestInFlight;
    if (inFlight) {
      valueGauge(this.registry, 'waggle_ingest_requests_in_flight', 'Ingest requests in progress (admitted, not yet answered)', () => inFlight().requests);
      valueGauge(this.registry, 'waggle_ingest_in_flight_bytes', 'Bytes of the bodies of ingest requests in progress, as sent (reserved from Content-Length, or received so far)', () => inFlight().bytes);
    }
    const threadsHeap = sources.ingestThreadsHeap;
    if (threadsHeap) {
      valueGauge(this.registry, 'waggle_ingest_threads_heap_bytes', "The ingest threads' V8 heaps, committed (not in nodejs_heap_size_total_bytes, which is the main thread's)", () => threadsHeap().committed);
      valueGauge(this.registry, 'waggle_ingest_threads_heap_limit_bytes', "What the ingest threads' V8 heaps may grow to: their old generations' limits and young generations' maxima", () => threadsHeap().limit);
    }
    valueGauge(this.registry, 'waggle_http_open_connections', 'Open client connections of the HTTP server', () => sources.connections());
    const memory = sources.eventStoreMemory;
    if (memory) {
      // One read of the store per scrape, shared by its four gauges (so the tags add up to the
      // total): a reading serves the collections that start within a second of it. (Shared only
      // until the next macrotask, it was read twice in one scrape whenever another gauge's
      // collection waited on I/O in between.)
      let reading: Promise<StoreMemory | undefined> | undefined;
      let readAt = 0;
      const read = () => {
        if (reading === undefined || Date.now() - readAt > 1000) {
          readAt = Date.now();
          reading = memory().catch(() => undefined);
        }
        return reading;
      };
      const gauge = (name: string, help: string, pick: (m: StoreMemory) => number) =>
        new Gauge({
          name,
          help,
          registers: [this.registry],
          async collect() {
            const m = await read();
            if (m) this.set(pick(m));
          },
        });
      gauge('waggle_event_store_memory_bytes', 'Memory the event store (DuckDB) holds now', (m) => m.used);
      gauge('waggle_event_store_memory_limit_bytes', "The event store's memory limit (WAGGLE_EVENT_STORE_MEMORY) as DuckDB applies it", (m) => m.limit);
      new Gauge({
        name: 'waggle_event_store_memory_tag_bytes',
        help: 'Memory the event store holds now, by what holds it (its own tags: BASE_TABLE, HASH_TABLE, …; those above 0)',
        labelNames: ['tag'] as const,
        registers: [this.registry],
        async collect() {
          const m = await read();
          this.reset();
          for (const [tag, bytes] of Object.entries(m?.byTag ?? {})) this.set({ tag }, bytes);
        },
      });
      gauge('waggle_event_store_spilled_bytes', 'What the event store has spilled to its temp directory now', (m) => m.spilled);
    }
    const leadership = sources.leadership;
    if (leadership !== undefined) {
      valueGauge(this.registry, 'waggle_leader', '1 while this node is the leader (runs triggers, burn alerts, signals, retention, delivery takeover), else 0', () => leadership.isLeader() ? 1 : 0);
      valueGauge(this.registry, 'waggle_live_nodes', 'Nodes sharing the configuration store, this one included (heartbeat leases)', () => leadership.liveNodes());
    }
    const dataDir = sources.dataDir;
    if (dataDir !== undefined) {
      valueGauge(this.registry, 'waggle_event_store_size_bytes', 'Size on disk of the embedded event store (its file and write-ahead log)', () => eventStoreBytes(dataDir));
    }
  }

  /** Counts a writer's per-event results: null = stored, else the reason it was refused. */
  countWritten(results: readonly (string | null)[]): void {
    let stored = 0;
    for (const r of results) {
      if (r === null) stored++;
      else this.rejectedEvents.inc({ reason: rejectionReason(r) });
    }
    if (stored > 0) this.ingestEvents.inc(stored);
  }

  /** The bucket-result cache's size and counts, read at every scrape. */
  watchQueryCache(stats: () => CacheStats): void {
    const r = this.registry;
    valueGauge(r, 'waggle_query_cache_bytes', 'Memory the kept query bucket states take (bounded by WAGGLE_QUERY_CACHE_MB)', () => stats().bytes);
    valueGauge(r, 'waggle_query_cache_entries', 'Queries with kept bucket states', () => stats().entries);
    valueGauge(r, 'waggle_query_cache_buckets', 'Time buckets kept, over every query', () => stats().buckets);
    totalCounter(r, 'waggle_query_cache_buckets_read_total', 'Time buckets of query windows, by where their states came from (kept, or read from the event store)', () => {
      const s = stats();
      return { kept: s.hits, read: s.misses };
    }, ['source']);
    totalCounter(r, 'waggle_query_cache_uncached_total', 'Queries run without the cache (their states would hold more than WAGGLE_QUERY_CACHE_MAX_VALUES values, or nearly a row per event)', () => ({ '': stats().uncached }));
    totalCounter(r, 'waggle_query_cache_invalidated_buckets_total', 'Kept buckets dropped because their events changed (late events, retention, a deleted dataset)', () => ({ '': stats().invalidated }));
    totalCounter(r, 'waggle_query_cache_evicted_total', 'Queries whose kept states were dropped to stay within WAGGLE_QUERY_CACHE_MB', () => ({ '': stats().evicted }));
  }
}

/** A counter whose total is read at every scrape. */
function totalCounter(registry: Registry, name: string, help: string, read: () => Record<string, number>, labelNames: string[] = []): void {
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const [label, v] of Object.entries(read())) {
        if (labelNames.length) this.inc({ [labelNames[0]]: label }, v);
        else this.inc(v);
      }
    },
  });
}

/** A gauge whose value is read at every scrape. */
function valueGauge(registry: Registry, name: string, help: string, read: () => number | Promise<number>): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      this.set(await read());
    },
  });
}

/** A short label for a refusal text (the label set stays small). */
export function rejectionReason(text: string): string {
  if (/too many columns/i.test(text)) return 'too_many_columns';
  if (/well-formed/i.test(text)) return 'invalid_field_name';
  if (/^time /.test(text)) return 'invalid_time';
  if (/^samplerate /.test(text)) return 'invalid_samplerate';
  if (/larger than|longer than/.test(text)) return 'too_large';
  return 'invalid_event';
}

/** The reason label of a whole ingest request refused with this HTTP status. */
export function refusalReason(status: number): string {
  switch (status) {
    case 401:
    case 403:
      return 'unauthorized';
    case 404:
      return 'dataset_not_found';
    case 413:
      return 'too_large';
    case 429:
      return 'rate_limited';
    case 503:
      return 'unavailable';
    default:
      return status >= 500 ? 'error' : 'malformed';
  }
}

/** Bytes of the event store's files in the data directory (0 for those that are missing). */
export function eventStoreBytes(dataDir: string): number {
  let total = 0;
  for (const f of ['events.duckdb', 'events.duckdb.wal']) {
    try {
      total += statSync(join(dataDir, f)).size;
    } catch {
      // not there (yet)
    }
  }
  return total;
}

const sha = (s: string) => createHash('sha256').update(s).digest();

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || /^(::ffff:)?127\./.test(address);
}

/**
 * Who may read the metrics: with a token, whoever sends `Authorization: Bearer <token>`;
 * without one, loopback clients only (the address of the connection itself, never a forwarded one).
 */
export function metricsAllowed(req: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return isLoopback(req.socket.remoteAddress);
  const m = /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization ?? ''));
  return m !== null && timingSafeEqual(sha(m[1].trim()), sha(token));
}

/** The metrics on a port of their own (GET /metrics; anything else 404). */
export async function startMetricsServer(metrics: Metrics, host: string, port: number, token: string | undefined): Promise<{ port: number; server: Server }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at GET /metrics\n');
      return;
    }
    if (!metricsAllowed(req, token)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(metricsRefusal(token));
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${err.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return { port: typeof address === 'object' && address ? address.port : port, server };
}

export function metricsRefusal(token: string | undefined): string {
  return token === undefined
    ? 'metrics are served to loopback clients only; set WAGGLE_METRICS_TOKEN to allow others with a bearer token\n'
    : 'metrics need the bearer token of WAGGLE_METRICS_TOKEN\n';
}
