// What every API module receives from the composition root (src/app.ts): the server to add its
// routes to, and the parts they answer from. Routes register no background work; the root does.
import type { ConfigStore } from '../stores/config/types.js';
import type { EventStore } from '../stores/events/types.js';
import type { IngestWriter } from '../ingest/writer.js';
import type { Settings } from '../settings.js';
import type { SloEvaluator } from '../jobs/slo.js';
import type { Leadership } from '../cluster/leadership.js';
import type { Notifier } from '../notify/types.js';
import type { App, Authenticate } from '../http/fastify.js';
import type { Metrics } from '../ops/metrics.js';
import type { DiskGuard } from '../ops/disk.js';
import type { BucketCache } from '../query/bucket-cache.js';

export type { App };

export interface ApiContext {
  store: ConfigStore;
  events: EventStore;
  writer: IngestWriter;
  now: () => Date;
  settings: Settings;
  /** Where alerts send notifications. */
  notifier: Notifier;
  /** SLO figures, shared by the SLO, burn-alert and reporting routes and the burn-alert job. */
  slos: SloEvaluator;
  /** Prometheus metrics (src/ops/metrics.ts). */
  metrics: Metrics;
  /** Free space of the data directory: ingest and changes are refused while it is short (src/ops/disk.ts). */
  disk: DiskGuard;
  /** Whether this node is the leader, and claims on shared work (several nodes on one store). */
  leadership: Leadership;
  /**
   * Checks a key outside a route's onRequest hook (OTLP over gRPC): the same rules, key lookup
   * and rate limits as the hook. Throws ApiError.
   */
  authenticate: Authenticate;
  /** Kept bucket states of repeated queries (src/query/bucket-cache.ts); undefined when WAGGLE_QUERY_CACHE is off. */
  cache?: BucketCache;
}
