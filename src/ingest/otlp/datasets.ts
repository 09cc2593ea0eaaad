// Which dataset OTLP data goes to (docs/otlp.md, after Honeycomb's translator husky, github.com/honeycombio/husky). The name chosen
// here is then resolved, and created on first write, by the same function /1/batch uses
// (api/ingest-dataset.ts), with the same naming rules and key permissions.

export const UNKNOWN_SERVICE = 'unknown_service';
export const UNKNOWN_LOG_SOURCE = 'unknown_log_source';
export const UNKNOWN_METRICS = 'unknown_metrics';

/**
 * A Honeycomb Classic key: 32 lowercase hex characters, or 64 characters starting `hc?ic_`
 * (`?` a lowercase letter) followed by lowercase letters and digits. Classic keys name their
 * dataset in `x-honeycomb-dataset`; every other key (all of Waggle's) is an environment key.
 */
export function isClassicKey(key: string): boolean {
  if (key.length === 32) return /^[0-9a-f]{32}$/.test(key);
  if (key.length === 64) return /^hc[a-z]ic_[0-9a-z]{58}$/.test(key);
  return false;
}

/**
 * `service.name`, trimmed, when it is a non-blank string that does not start with
 * `unknown_service` (tested after trimming); undefined otherwise.
 */
function knownService(serviceName: unknown): string | undefined {
  if (typeof serviceName !== 'string') return undefined;
  const name = serviceName.trim();
  return name === '' || name.startsWith(UNKNOWN_SERVICE) ? undefined : name;
}

const blank = (s: string | undefined) => s === undefined || s.trim() === '';

/** Traces: a classic key's dataset header (as sent); else the resource's service name or `unknown_service`. */
export function tracesDataset(classic: boolean, header: string | undefined, serviceName: unknown): string {
  if (classic) return header ?? '';
  return knownService(serviceName) ?? UNKNOWN_SERVICE;
}

/** Logs, any key: the service name, else the dataset header (as sent) unless blank, else `unknown_log_source`. */
export function logsDataset(header: string | undefined, serviceName: unknown): string {
  return knownService(serviceName) ?? (blank(header) ? UNKNOWN_LOG_SOURCE : header!);
}

/** Metrics: the dataset header (as sent) unless blank, else `unknown_metrics`. */
export function metricsDataset(header: string | undefined): string {
  return blank(header) ? UNKNOWN_METRICS : header!;
}
