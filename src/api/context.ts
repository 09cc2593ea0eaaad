// What every API module receives from the app factory.
import type { ConfigStore } from '../stores/config/types.js';
import type { EventStore } from '../stores/events/types.js';
import type { IngestWriter } from '../ingest/writer.js';
import type { Settings } from '../settings.js';
import type { Scheduler } from '../jobs/scheduler.js';
import type { Leadership } from '../cluster/leadership.js';
import type { Notifier } from '../notify/types.js';
import type { AuthContext, AuthRule, HeaderSink } from '../http/auth.js';
import type { Metrics } from '../ops/metrics.js';
import type { DiskGuard } from '../ops/disk.js';

export interface ApiContext {
  store: ConfigStore;
  events: EventStore;
  writer: IngestWriter;
  now: () => Date;
  settings: Settings;
  /** Background evaluation: triggers, burn alerts and signals register their jobs here. */
  scheduler: Scheduler;
  /** Where alerts send notifications. */
  notifier: Notifier;
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
  authenticate(rule: Exclude<AuthRule, { kind: 'none' }>, credential: string | undefined, header?: HeaderSink): Promise<AuthContext>;
}
