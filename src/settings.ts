// Every setting of the server, read in one place. Flags (CLI) override environment variables,
// which override the defaults. The README's settings table lists the same names.
import { randomBytes } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { availableParallelism, hostname, totalmem } from 'node:os';
import { nativeColumnsAvailable } from './native-addon.js';

/** `limit` requests per `windowSeconds` (src/http/rate-limit.ts). */
export interface RatePolicy {
  limit: number;
  windowSeconds: number;
}

export interface Settings {
  host: string;
  port: number;
  dataDir: string;
  /** `sqlite` or a `postgres://` URL. */
  configStore: string;
  /** The event store: `duckdb` (the embedded default) or a ClickHouse URL (WAGGLE_EVENT_STORE). */
  eventStore: string;
  logLevel: string;
  /** Per-key limit on configuration and management routes. */
  apiRateLimit: RatePolicy | null;
  /** Per-key limit on ingest routes. */
  ingestRateLimit: RatePolicy | null;
  /** Largest accepted request body on /1/ configuration routes (bytes). */
  bodyLimit: number;
  /** Largest accepted request body on /2/ routes (bytes); Honeycomb documents 100,000. */
  managementBodyLimit: number;
  /** Largest accepted ingest body as sent, usually compressed (bytes). */
  ingestBodyLimit: number;
  /** Largest ingest body after decompression (bytes): the cap that defuses decompression bombs. */
  ingestDecompressedLimit: number;
  /** Worker threads that decompress, parse and normalise /1/batch bodies; 0: the JavaScript thread does. */
  ingestThreads: number;
  /** Read /1/batch JSON bodies and OTLP trace protobuf with the native readers (src/ingest/native-columns.ts); default: when built. */
  ingestNative: boolean;
  /**
   * Most events written and not yet committed (the writer's backlog); past it OTLP requests get
   * 503 (gRPC Unavailable) with a retry delay, so that memory stays bounded under overload.
   */
  ingestQueueLimit: number;
  /** Ingest requests (/1/ ingest routes and OTLP over HTTP) in progress at once, at most; past it 503 with Retry-After (bounds the bodies held). */
  ingestMaxInFlight: number;
  /**
   * Most bytes of ingest request bodies (as sent) held at once; past it 503 with Retry-After. A
   * request is admitted alone whatever its size, so the bound is the larger of this and one body.
   */
  ingestMaxInFlightBytes: number;
  /** Port of the OTLP/gRPC server (on `host`); 0: no gRPC server. */
  otlpGrpcPort: number;
  /** Most columns a dataset may have; events that would add more are refused. */
  maxColumnsPerDataset: number;
  /**
   * Fields of a dataset stored in typed table columns of their own, at most; the rest are
   * attributes (src/stores/events/placement.ts). Undefined: the event store's budget (DuckDB's
   * from its memory limit).
   */
  hotColumns?: number;
  /** Events older than this many days are deleted in the background; 0 keeps them forever. */
  retentionDays: number;
  /** Per-key limit on creating query results (Honeycomb: 10 per minute). */
  queryResultRateLimit: RatePolicy | null;
  /** Longest a query result may run (ms); Honeycomb: 10 s. */
  queryTimeoutMs: number;
  /** How long creating a service-map request waits for it to finish before answering 201 pending (ms). */
  serviceMapWaitMs: number;
  /** How often the background evaluation (triggers, burn alerts, signals) looks for due work (ms); 0 = never (tests tick by hand). */
  evaluationTickMs: number;
  /** How often burn alerts are evaluated (seconds of the app clock; each run also refreshes the SLO rollups). */
  burnAlertIntervalSeconds: number;
  /** Notification delivery (src/notify/): most unfinished deliveries; past that new ones are refused. */
  notifyQueueSize: number;
  /** Notification requests in flight at once (across recipients). */
  notifyConcurrency: number;
  /** Attempts per delivery, the first included. */
  notifyMaxAttempts: number;
  /** Backoff before the second attempt (ms); doubles per attempt, with jitter. */
  notifyRetryBaseMs: number;
  /** Longest backoff between attempts (ms). */
  notifyRetryMaxMs: number;
  /** Timeout of one delivery request (HTTP answer, SMTP connection/greeting/socket), ms. */
  notifyTimeoutMs: number;
  /** Newest deliveries kept in the delivery log. */
  deliveryLogSize: number;
  /** PagerDuty Events API base URL (`/v2/enqueue` is appended). */
  pagerdutyUrl: string;
  /** Slack incoming-webhook URL used for `slack` recipients when no token is set. */
  slackWebhookUrl?: string;
  /** Slack bot token: `slack` recipients are posted with chat.postMessage to their channel. */
  slackToken?: string;
  /** Slack Web API base URL (`/chat.postMessage` is appended). */
  slackApiUrl: string;
  /** SMTP server for `email` recipients; unset: email deliveries fail as not configured. */
  smtpHost?: string;
  /** Default 465 with smtpSecure, else 587. */
  smtpPort?: number;
  /** Implicit TLS (SMTPS). */
  smtpSecure: boolean;
  /** STARTTLS on a plain connection. */
  smtpStarttls: 'opportunistic' | 'required' | 'off';
  smtpUser?: string;
  smtpPassword?: string;
  /**
   * PEM file of the CA certificate(s) that sign the SMTP server's certificate (a private CA or a
   * self-signed certificate): trusted instead of the system CAs. Certificates are always verified.
   */
  smtpCaFile?: string;
  /** The From address of notification emails. */
  smtpFrom: string;
  /**
   * The server's public base URL (`https://waggle.example.com`, no trailing slash): problem
   * `type`s, `query_url`, `board_url`, `Location` headers and notification links start with it.
   * Unset: the scheme and Host of each request (background links: see `backgroundBaseUrl`).
   */
  publicUrl?: string;
  /**
   * Whom to believe about `X-Forwarded-Proto/Host/For` (Fastify's `trustProxy`): `false` (no one,
   * the default), `true` (any peer), a hop count, or a list of addresses/CIDRs.
   */
  trustProxy: boolean | number | string[];
  /**
   * The key that signs the web UI's session cookies. Unset: one random secret is made on first
   * start and kept in the configuration store (shared by every node using that store).
   */
  sessionSecret?: string;
  /** How long a web UI sign-in lasts (hours). */
  sessionTtlHours: number;
  /** Per-key limit on creating query results from the web UI (its own bucket; interactive use runs many). */
  uiQueryResultRateLimit: RatePolicy | null;
  /** Queries run in the web UI kept per environment (the team's query history); 0: none kept. */
  queryHistoryMax: number;
  /** The bucket-result cache (src/query/bucket-cache.ts): on, its memory bound (bytes), the age a bucket is kept from (seconds) and most kept values per query. */
  queryCache: { enabled: boolean; maxBytes: number; graceSeconds: number; maxValues: number };
  /** Port of a listener of its own for GET /metrics (on `metricsHost`); undefined: /metrics is on the main port. */
  metricsPort?: number;
  /** Address of the metrics listener (default: `host`). */
  metricsHost?: string;
  /** Bearer token that opens /metrics to any client; unset: loopback clients only. */
  metricsToken?: string;
  /** Queries (event-store reads) slower than this are logged at warn (ms). */
  slowQueryMs: number;
  /** Ingest group commits slower than this are logged at warn (ms). */
  slowCommitMs: number;
  /** The field whose change in a service's events makes a deploy marker (src/ingest/deploy-markers.ts); '' = off. */
  deployMarkerField: string;
  /** Memory the event store (DuckDB) may use, in bytes; past it, queries spill to its temp directory. */
  eventStoreMemory: number;
  /** WAL size at which the embedded event store checkpoints (bytes); unset: the store's default (64 MB). */
  eventStoreCheckpoint?: number;
  /** Ingest and configuration writes are refused (503) while the data directory's filesystem has less free space than this (bytes). */
  diskReserve: number;
  /** This node's name among several on one PostgreSQL store (logs, leases); '': host, pid and a random suffix. */
  nodeId: string;
  /** How long the leader's lease lasts without renewal (ms); 0: the evaluation tick (or 10 s when that is 0). */
  leaderLeaseMs: number;
}

/**
 * The event store's default memory: 256 MB, or a quarter of the machine's RAM if that is less.
 * DuckDB fills its limit with the table blocks it has written or read and keeps them until it
 * needs the room, so the limit is what the event store settles at, not a ceiling it rarely
 * meets; queries on 10M events cost the same at 256 MB as at 2 GB (docs/operations.md).
 */
export function defaultEventStoreMemory(total = totalmem()): number {
  return Math.min(Math.floor(total / 4), 256 * 1024 ** 2);
}

export const DEFAULTS: Settings = {
  host: '127.0.0.1',
  port: 8080,
  dataDir: './data',
  configStore: 'sqlite',
  eventStore: 'duckdb',
  logLevel: 'info',
  apiRateLimit: { limit: 1000, windowSeconds: 60 },
  ingestRateLimit: { limit: 60000, windowSeconds: 60 },
  bodyLimit: 1_000_000,
  managementBodyLimit: 100_000,
  ingestBodyLimit: 5_000_000,
  ingestDecompressedLimit: 100_000_000,
  ingestThreads: Math.max(1, Math.min(4, availableParallelism() - 1)),
  ingestNative: nativeColumnsAvailable,
  ingestQueueLimit: 250_000,
  ingestMaxInFlight: 1000,
  ingestMaxInFlightBytes: 64 * 1024 ** 2,
  otlpGrpcPort: 4317,
  maxColumnsPerDataset: 10_000,
  retentionDays: 60,
  queryResultRateLimit: { limit: 10, windowSeconds: 60 },
  queryTimeoutMs: 10_000,
  serviceMapWaitMs: 200,
  evaluationTickMs: 10_000,
  burnAlertIntervalSeconds: 60,
  notifyQueueSize: 1000,
  notifyConcurrency: 8,
  notifyMaxAttempts: 6,
  notifyRetryBaseMs: 1000,
  notifyRetryMaxMs: 60_000,
  notifyTimeoutMs: 10_000,
  deliveryLogSize: 10_000,
  pagerdutyUrl: 'https://events.pagerduty.com',
  slackApiUrl: 'https://slack.com/api',
  nodeId: '',
  leaderLeaseMs: 0,
  smtpSecure: false,
  smtpStarttls: 'opportunistic',
  smtpFrom: 'Waggle <waggle@localhost>',
  trustProxy: false,
  sessionTtlHours: 168,
  uiQueryResultRateLimit: { limit: 120, windowSeconds: 60 },
  queryHistoryMax: 1000,
  queryCache: { enabled: true, maxBytes: 128 * 1024 * 1024, graceSeconds: 60, maxValues: 1_000_000 },
  slowQueryMs: 2000,
  slowCommitMs: 1000,
  deployMarkerField: 'service.version',
  eventStoreMemory: defaultEventStoreMemory(),
  diskReserve: 256 * 1024 ** 2,
};

const UNITS: Record<string, number> = { '': 1, B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

/** A size: bytes, or a number with KB, MB, GB or TB (powers of 1024). */
export function parseBytes(text: string, name: string, min: number): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]?B?)$/i.exec(text.trim());
  const unit = m ? m[2].toUpperCase() : '';
  const factor = UNITS[unit.length === 1 && unit !== 'B' ? unit + 'B' : unit];
  const n = m && factor ? Math.floor(Number(m[1]) * factor) : NaN;
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a size of at least ${min} bytes, like 512MB or 2GB`);
  return n;
}

/** `N/S` = N requests per S seconds; `off` disables. */
export function parseRate(text: string, name: string): RatePolicy | null {
  if (text === 'off' || text === '0') return null;
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new Error(`${name} must look like 1000/60 (requests/seconds) or off`);
  return { limit: Number(m[1]), windowSeconds: Number(m[2]) };
}

function parseInteger(text: string, name: string, min: number, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}`);
  return n;
}

function parseBoolean(text: string, name: string): boolean {
  const v = text.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new Error(`${name} must be true or false`);
}

function readableFile(text: string, name: string): string {
  const path = text.trim();
  try {
    accessSync(path, constants.R_OK);
  } catch {
    throw new Error(`${name} must name a readable file (${path})`);
  }
  return path;
}

function parseTrustProxy(text: string): Settings['trustProxy'] {
  const v = text.trim();
  if (/^\d+$/.test(v)) return Number(v);
  if (['1', 'true', 'yes', 'on', '0', 'false', 'no', 'off'].includes(v.toLowerCase())) return parseBoolean(v, 'WAGGLE_TRUST_PROXY');
  const list = v.split(',').map((a) => a.trim()).filter(Boolean);
  if (list.length === 0 || list.some((a) => !/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(a) && !['loopback', 'linklocal', 'uniquelocal'].includes(a))) {
    throw new Error('WAGGLE_TRUST_PROXY must be true, false, a hop count, or a comma-separated list of addresses/CIDRs');
  }
  return list;
}

function parseUrl(text: string, name: string): string {
  try {
    const u = new URL(text.trim());
    if (u.protocol === 'http:' || u.protocol === 'https:') return text.trim();
  } catch {
    // reported below
  }
  throw new Error(`${name} must be an http or https URL`);
}

export interface SettingOverrides {
  host?: string;
  port?: string;
  dataDir?: string;
  otlpGrpcPort?: string;
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env, flags: SettingOverrides = {}): Settings {
  const pick = (flag: string | undefined, name: string) => flag ?? env[name];
  const s: Settings = { ...DEFAULTS };
  const host = pick(flags.host, 'WAGGLE_HOST');
  if (host) s.host = host;
  const port = pick(flags.port, 'WAGGLE_PORT');
  if (port) s.port = parseInteger(port, 'port', 0, 65535);
  const dataDir = pick(flags.dataDir, 'WAGGLE_DATA_DIR');
  if (dataDir) s.dataDir = dataDir;
  if (env.WAGGLE_CONFIG_STORE) s.configStore = env.WAGGLE_CONFIG_STORE;
  if (env.WAGGLE_EVENT_STORE) s.eventStore = env.WAGGLE_EVENT_STORE;
  if (env.WAGGLE_LOG_LEVEL) s.logLevel = env.WAGGLE_LOG_LEVEL;
  if (env.WAGGLE_RATE_LIMIT) s.apiRateLimit = parseRate(env.WAGGLE_RATE_LIMIT, 'WAGGLE_RATE_LIMIT');
  if (env.WAGGLE_INGEST_RATE_LIMIT) s.ingestRateLimit = parseRate(env.WAGGLE_INGEST_RATE_LIMIT, 'WAGGLE_INGEST_RATE_LIMIT');
  if (env.WAGGLE_QUERY_RESULT_RATE_LIMIT) {
    s.queryResultRateLimit = parseRate(env.WAGGLE_QUERY_RESULT_RATE_LIMIT, 'WAGGLE_QUERY_RESULT_RATE_LIMIT');
  }
  if (env.WAGGLE_QUERY_TIMEOUT_MS) s.queryTimeoutMs = parseInteger(env.WAGGLE_QUERY_TIMEOUT_MS, 'WAGGLE_QUERY_TIMEOUT_MS', 100, 3_600_000);
  if (env.WAGGLE_SERVICE_MAP_WAIT_MS) s.serviceMapWaitMs = parseInteger(env.WAGGLE_SERVICE_MAP_WAIT_MS, 'WAGGLE_SERVICE_MAP_WAIT_MS', 0, 60_000);
  if (env.WAGGLE_EVALUATION_TICK_MS) s.evaluationTickMs = parseInteger(env.WAGGLE_EVALUATION_TICK_MS, 'WAGGLE_EVALUATION_TICK_MS', 0, 3_600_000);
  if (env.WAGGLE_BURN_ALERT_INTERVAL_SECONDS) {
    s.burnAlertIntervalSeconds = parseInteger(env.WAGGLE_BURN_ALERT_INTERVAL_SECONDS, 'WAGGLE_BURN_ALERT_INTERVAL_SECONDS', 1, 86_400);
  }
  if (env.WAGGLE_BODY_LIMIT) s.bodyLimit = parseInteger(env.WAGGLE_BODY_LIMIT, 'WAGGLE_BODY_LIMIT', 1024, 1 << 30);
  if (env.WAGGLE_INGEST_BODY_LIMIT) s.ingestBodyLimit = parseInteger(env.WAGGLE_INGEST_BODY_LIMIT, 'WAGGLE_INGEST_BODY_LIMIT', 1024, 1 << 30);
  if (env.WAGGLE_INGEST_DECOMPRESSED_LIMIT) {
    s.ingestDecompressedLimit = parseInteger(env.WAGGLE_INGEST_DECOMPRESSED_LIMIT, 'WAGGLE_INGEST_DECOMPRESSED_LIMIT', 1024, 1 << 30);
  }
  if (env.WAGGLE_INGEST_THREADS) s.ingestThreads = parseInteger(env.WAGGLE_INGEST_THREADS, 'WAGGLE_INGEST_THREADS', 0, 64);
  if (env.WAGGLE_INGEST_NATIVE) {
    s.ingestNative = parseBoolean(env.WAGGLE_INGEST_NATIVE, 'WAGGLE_INGEST_NATIVE');
    if (s.ingestNative && !nativeColumnsAvailable) throw new Error('WAGGLE_INGEST_NATIVE is on, but the native readers are not built (npm install builds them with node-gyp)');
  }
  if (env.WAGGLE_INGEST_QUEUE_LIMIT) s.ingestQueueLimit = parseInteger(env.WAGGLE_INGEST_QUEUE_LIMIT, 'WAGGLE_INGEST_QUEUE_LIMIT', 1, 100_000_000);
  if (env.WAGGLE_INGEST_MAX_IN_FLIGHT) s.ingestMaxInFlight = parseInteger(env.WAGGLE_INGEST_MAX_IN_FLIGHT, 'WAGGLE_INGEST_MAX_IN_FLIGHT', 1, 100_000);
  if (env.WAGGLE_INGEST_MAX_IN_FLIGHT_BYTES) {
    s.ingestMaxInFlightBytes = parseBytes(env.WAGGLE_INGEST_MAX_IN_FLIGHT_BYTES, 'WAGGLE_INGEST_MAX_IN_FLIGHT_BYTES', 1024);
  }
  const grpcPort = pick(flags.otlpGrpcPort, 'WAGGLE_OTLP_GRPC_PORT');
  if (grpcPort) s.otlpGrpcPort = parseInteger(grpcPort, flags.otlpGrpcPort !== undefined ? '--otlp-grpc-port' : 'WAGGLE_OTLP_GRPC_PORT', 0, 65535);
  if (env.WAGGLE_MAX_COLUMNS) s.maxColumnsPerDataset = parseInteger(env.WAGGLE_MAX_COLUMNS, 'WAGGLE_MAX_COLUMNS', 1, 1_000_000);
  if (env.WAGGLE_HOT_COLUMNS) s.hotColumns = parseInteger(env.WAGGLE_HOT_COLUMNS, 'WAGGLE_HOT_COLUMNS', 0, 1000);
  const int = (name: string, min: number, max: number) => (env[name] ? parseInteger(env[name]!, name, min, max) : undefined);
  s.notifyQueueSize = int('WAGGLE_NOTIFY_QUEUE_SIZE', 1, 1_000_000) ?? s.notifyQueueSize;
  s.notifyConcurrency = int('WAGGLE_NOTIFY_CONCURRENCY', 1, 1000) ?? s.notifyConcurrency;
  s.notifyMaxAttempts = int('WAGGLE_NOTIFY_MAX_ATTEMPTS', 1, 100) ?? s.notifyMaxAttempts;
  s.notifyRetryBaseMs = int('WAGGLE_NOTIFY_RETRY_BASE_MS', 1, 3_600_000) ?? s.notifyRetryBaseMs;
  s.notifyRetryMaxMs = int('WAGGLE_NOTIFY_RETRY_MAX_MS', 1, 86_400_000) ?? s.notifyRetryMaxMs;
  s.notifyTimeoutMs = int('WAGGLE_NOTIFY_TIMEOUT_MS', 100, 600_000) ?? s.notifyTimeoutMs;
  s.deliveryLogSize = int('WAGGLE_DELIVERY_LOG_SIZE', 1, 10_000_000) ?? s.deliveryLogSize;
  if (env.WAGGLE_PAGERDUTY_URL) s.pagerdutyUrl = parseUrl(env.WAGGLE_PAGERDUTY_URL, 'WAGGLE_PAGERDUTY_URL');
  if (env.WAGGLE_SLACK_WEBHOOK_URL) s.slackWebhookUrl = parseUrl(env.WAGGLE_SLACK_WEBHOOK_URL, 'WAGGLE_SLACK_WEBHOOK_URL');
  if (env.WAGGLE_SLACK_TOKEN) s.slackToken = env.WAGGLE_SLACK_TOKEN;
  if (env.WAGGLE_SLACK_API_URL) s.slackApiUrl = parseUrl(env.WAGGLE_SLACK_API_URL, 'WAGGLE_SLACK_API_URL');
  if (env.WAGGLE_SMTP_HOST) s.smtpHost = env.WAGGLE_SMTP_HOST;
  s.smtpPort = int('WAGGLE_SMTP_PORT', 1, 65535) ?? s.smtpPort;
  if (env.WAGGLE_SMTP_SECURE) s.smtpSecure = parseBoolean(env.WAGGLE_SMTP_SECURE, 'WAGGLE_SMTP_SECURE');
  if (env.WAGGLE_SMTP_STARTTLS) {
    const v = env.WAGGLE_SMTP_STARTTLS.trim().toLowerCase();
    if (v !== 'opportunistic' && v !== 'required' && v !== 'off') throw new Error('WAGGLE_SMTP_STARTTLS must be opportunistic, required or off');
    s.smtpStarttls = v;
  }
  if (env.WAGGLE_SMTP_USER) s.smtpUser = env.WAGGLE_SMTP_USER;
  if (env.WAGGLE_SMTP_PASSWORD) s.smtpPassword = env.WAGGLE_SMTP_PASSWORD;
  if (env.WAGGLE_SMTP_FROM) s.smtpFrom = env.WAGGLE_SMTP_FROM;
  if (env.WAGGLE_SMTP_CA_FILE) s.smtpCaFile = readableFile(env.WAGGLE_SMTP_CA_FILE, 'WAGGLE_SMTP_CA_FILE');
  if (env.WAGGLE_PUBLIC_URL) s.publicUrl = parseUrl(env.WAGGLE_PUBLIC_URL, 'WAGGLE_PUBLIC_URL').replace(/\/+$/, '');
  if (env.WAGGLE_TRUST_PROXY) s.trustProxy = parseTrustProxy(env.WAGGLE_TRUST_PROXY);
  if (env.WAGGLE_SESSION_SECRET !== undefined) {
    if (env.WAGGLE_SESSION_SECRET.length < 32) throw new Error('WAGGLE_SESSION_SECRET must be at least 32 characters');
    s.sessionSecret = env.WAGGLE_SESSION_SECRET;
  }
  s.sessionTtlHours = int('WAGGLE_SESSION_TTL_HOURS', 1, 24 * 365) ?? s.sessionTtlHours;
  if (env.WAGGLE_UI_QUERY_RESULT_RATE_LIMIT) {
    s.uiQueryResultRateLimit = parseRate(env.WAGGLE_UI_QUERY_RESULT_RATE_LIMIT, 'WAGGLE_UI_QUERY_RESULT_RATE_LIMIT');
  }
  s.queryHistoryMax = int('WAGGLE_QUERY_HISTORY_MAX', 0, 100_000) ?? s.queryHistoryMax;
  s.queryCache = {
    enabled: env.WAGGLE_QUERY_CACHE ? parseBoolean(env.WAGGLE_QUERY_CACHE, 'WAGGLE_QUERY_CACHE') : s.queryCache.enabled,
    maxBytes: (int('WAGGLE_QUERY_CACHE_MB', 1, 1_000_000) ?? s.queryCache.maxBytes / 1024 / 1024) * 1024 * 1024,
    graceSeconds: int('WAGGLE_QUERY_CACHE_GRACE_SECONDS', 0, 86_400) ?? s.queryCache.graceSeconds,
    maxValues: int('WAGGLE_QUERY_CACHE_MAX_VALUES', 0, 100_000_000) ?? s.queryCache.maxValues,
  };
  s.metricsPort = int('WAGGLE_METRICS_PORT', 0, 65535) ?? s.metricsPort;
  if (env.WAGGLE_METRICS_HOST) s.metricsHost = env.WAGGLE_METRICS_HOST;
  if (env.WAGGLE_METRICS_TOKEN !== undefined) {
    if (env.WAGGLE_METRICS_TOKEN.length < 16) throw new Error('WAGGLE_METRICS_TOKEN must be at least 16 characters');
    s.metricsToken = env.WAGGLE_METRICS_TOKEN;
  }
  s.slowQueryMs = int('WAGGLE_SLOW_QUERY_MS', 0, 3_600_000) ?? s.slowQueryMs;
  s.slowCommitMs = int('WAGGLE_SLOW_COMMIT_MS', 0, 3_600_000) ?? s.slowCommitMs;
  if (env.WAGGLE_DEPLOY_MARKER_FIELD !== undefined) {
    const f = env.WAGGLE_DEPLOY_MARKER_FIELD.trim();
    if (f.length > 255) throw new Error('WAGGLE_DEPLOY_MARKER_FIELD must be a field name of at most 255 characters, or off');
    s.deployMarkerField = f === 'off' ? '' : f;
  }
  if (env.WAGGLE_EVENT_STORE_MEMORY) s.eventStoreMemory = parseBytes(env.WAGGLE_EVENT_STORE_MEMORY, 'WAGGLE_EVENT_STORE_MEMORY', 16 * 1024 ** 2);
  if (env.WAGGLE_EVENT_STORE_CHECKPOINT) {
    s.eventStoreCheckpoint = parseBytes(env.WAGGLE_EVENT_STORE_CHECKPOINT, 'WAGGLE_EVENT_STORE_CHECKPOINT', 64 * 1024);
    // Past DuckDB's own threshold (512 MB, the safety net) checkpoints would run inside commits again.
    if (s.eventStoreCheckpoint > 256 * 1024 ** 2) throw new Error('WAGGLE_EVENT_STORE_CHECKPOINT must be at most 256MB');
  }
  if (env.WAGGLE_DISK_RESERVE) s.diskReserve = parseBytes(env.WAGGLE_DISK_RESERVE, 'WAGGLE_DISK_RESERVE', 0);
  if (env.WAGGLE_NODE_ID) {
    if (!/^[A-Za-z0-9._-]{1,100}$/.test(env.WAGGLE_NODE_ID)) throw new Error('WAGGLE_NODE_ID must be 1-100 letters, digits, dots, dashes or underscores');
    s.nodeId = env.WAGGLE_NODE_ID;
  }
  s.leaderLeaseMs = int('WAGGLE_LEADER_LEASE_MS', 100, 3_600_000) ?? s.leaderLeaseMs;
  if (env.WAGGLE_RETENTION_DAYS) s.retentionDays = parseInteger(env.WAGGLE_RETENTION_DAYS, 'WAGGLE_RETENTION_DAYS', 0, 100_000);
  return s;
}

/**
 * The base of links made with no request at hand (notifications): `WAGGLE_PUBLIC_URL`, else
 * the address the server listens on (this machine's name for a wildcard address). Set
 * WAGGLE_PUBLIC_URL when people reach Waggle by another name.
 */
/** This node's name: `nodeId`, else host, process id and a random suffix (unique per app). */
export function nodeIdOf(settings: Pick<Settings, 'nodeId'>): string {
  return settings.nodeId || `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** The leader lease's ttl: `leaderLeaseMs`, else one evaluation tick (so failover takes under two ticks). */
export function leaderLeaseMsOf(settings: Pick<Settings, 'leaderLeaseMs' | 'evaluationTickMs'>): number {
  return settings.leaderLeaseMs || settings.evaluationTickMs || 10_000;
}

export function backgroundBaseUrl(settings: Pick<Settings, 'publicUrl' | 'host' | 'port'>): string {
  if (settings.publicUrl) return settings.publicUrl;
  const wildcard = settings.host === '0.0.0.0' || settings.host === '::' || settings.host === '';
  const host = wildcard ? hostname() : settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  return `http://${host}:${settings.port}`;
}
