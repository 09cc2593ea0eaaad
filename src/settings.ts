// Every setting of the server, read in one place. Flags (CLI) override environment variables,
// which override the defaults. The README's settings table lists the same names.
import type { RatePolicy } from './http/rate-limit.js';

export interface Settings {
  host: string;
  port: number;
  dataDir: string;
  /** `sqlite` or a `postgres://` URL. */
  configStore: string;
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
  /** Most columns a dataset may have; events that would add more are refused. */
  maxColumnsPerDataset: number;
  /** Events older than this many days are deleted in the background; 0 keeps them forever. */
  retentionDays: number;
  /** Per-key limit on creating query results (Honeycomb: 10 per minute). */
  queryResultRateLimit: RatePolicy | null;
  /** Longest a query result may run (ms); Honeycomb: 10 s. */
  queryTimeoutMs: number;
  /** How often the background evaluation (triggers, burn alerts, signals) looks for due work (ms); 0 = never (tests tick by hand). */
  evaluationTickMs: number;
  /** How often burn alerts are evaluated (seconds of the app clock; each run also refreshes the SLO rollups). */
  burnAlertIntervalSeconds: number;
}

export const DEFAULTS: Settings = {
  host: '127.0.0.1',
  port: 8080,
  dataDir: './data',
  configStore: 'sqlite',
  logLevel: 'info',
  apiRateLimit: { limit: 1000, windowSeconds: 60 },
  ingestRateLimit: { limit: 60000, windowSeconds: 60 },
  bodyLimit: 1_000_000,
  managementBodyLimit: 100_000,
  ingestBodyLimit: 5_000_000,
  ingestDecompressedLimit: 100_000_000,
  maxColumnsPerDataset: 10_000,
  retentionDays: 60,
  queryResultRateLimit: { limit: 10, windowSeconds: 60 },
  queryTimeoutMs: 10_000,
  evaluationTickMs: 10_000,
  burnAlertIntervalSeconds: 60,
};

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

export interface SettingOverrides {
  host?: string;
  port?: string;
  dataDir?: string;
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
  if (env.WAGGLE_LOG_LEVEL) s.logLevel = env.WAGGLE_LOG_LEVEL;
  if (env.WAGGLE_RATE_LIMIT) s.apiRateLimit = parseRate(env.WAGGLE_RATE_LIMIT, 'WAGGLE_RATE_LIMIT');
  if (env.WAGGLE_INGEST_RATE_LIMIT) s.ingestRateLimit = parseRate(env.WAGGLE_INGEST_RATE_LIMIT, 'WAGGLE_INGEST_RATE_LIMIT');
  if (env.WAGGLE_QUERY_RESULT_RATE_LIMIT) {
    s.queryResultRateLimit = parseRate(env.WAGGLE_QUERY_RESULT_RATE_LIMIT, 'WAGGLE_QUERY_RESULT_RATE_LIMIT');
  }
  if (env.WAGGLE_QUERY_TIMEOUT_MS) s.queryTimeoutMs = parseInteger(env.WAGGLE_QUERY_TIMEOUT_MS, 'WAGGLE_QUERY_TIMEOUT_MS', 100, 3_600_000);
  if (env.WAGGLE_EVALUATION_TICK_MS) s.evaluationTickMs = parseInteger(env.WAGGLE_EVALUATION_TICK_MS, 'WAGGLE_EVALUATION_TICK_MS', 0, 3_600_000);
  if (env.WAGGLE_BURN_ALERT_INTERVAL_SECONDS) {
    s.burnAlertIntervalSeconds = parseInteger(env.WAGGLE_BURN_ALERT_INTERVAL_SECONDS, 'WAGGLE_BURN_ALERT_INTERVAL_SECONDS', 1, 86_400);
  }
  if (env.WAGGLE_BODY_LIMIT) s.bodyLimit = parseInteger(env.WAGGLE_BODY_LIMIT, 'WAGGLE_BODY_LIMIT', 1024, 1 << 30);
  if (env.WAGGLE_INGEST_BODY_LIMIT) s.ingestBodyLimit = parseInteger(env.WAGGLE_INGEST_BODY_LIMIT, 'WAGGLE_INGEST_BODY_LIMIT', 1024, 1 << 30);
  if (env.WAGGLE_INGEST_DECOMPRESSED_LIMIT) {
    s.ingestDecompressedLimit = parseInteger(env.WAGGLE_INGEST_DECOMPRESSED_LIMIT, 'WAGGLE_INGEST_DECOMPRESSED_LIMIT', 1024, 1 << 30);
  }
  if (env.WAGGLE_MAX_COLUMNS) s.maxColumnsPerDataset = parseInteger(env.WAGGLE_MAX_COLUMNS, 'WAGGLE_MAX_COLUMNS', 1, 1_000_000);
  if (env.WAGGLE_RETENTION_DAYS) s.retentionDays = parseInteger(env.WAGGLE_RETENTION_DAYS, 'WAGGLE_RETENTION_DAYS', 0, 100_000);
  return s;
}
