// A team's query history (GET /1/query_history, src/api/v1/query-history.ts; a Waggle extension,
// docs/queries.md "Query history"): every query a person runs in the web UI, kept on the server
// for everyone in the environment, searchable, and grouped into the most-run ones.
//
// Decisions:
// - An entry is recorded when a query result is created through the web UI's session (POST
//   /1/query_results with the cookie), not by a header-key API client: the history is what people
//   ran in the UI, not what scripts, Terraform or alerting poll. The UI's own background runs (a
//   board's panels, a trigger page's graph) send `X-Waggle-Query-History: skip` and are not kept
//   either: a board viewed often would otherwise be the "most-run" query.
// - An entry holds who ran it (the key's id and its name then: a session carries its key), when,
//   the dataset (slug, or `__all__`), the spec, the saved query's and the result's ids, and, once
//   the result is complete, how long the run took (ms) and its error if it failed.
// - Entries are configuration objects (kind `query_history`) of the environment; the newest
//   `WAGGLE_QUERY_HISTORY_MAX` (1,000; 0 keeps none) per environment are kept, older ones are
//   deleted as new ones arrive. Ids sort by creation, so "newest" is the id order.
// - Search: `dataset` (exact slug), `column` (a column the query names in a calculation, filter,
//   breakdown, order or having, or an inline calculated field's name; case-insensitive), `q` (words
//   that must all appear, case-insensitive, in the spec's JSON, the dataset or the key's name).
//   `sort=most_run` groups identical specs of a dataset (same fields and values, whatever their
//   key order) and answers each group's newest run with `count`, most runs first.
import { randomString } from './ids.js';
import type { QuerySpec, StoredQuery } from '../query/spec.js';
import type { ApiKey, ConfigStore, Environment, StoredObject } from '../stores/config/types.js';
import { QUERY_HISTORY_KIND } from './kinds.js';

/** The request header with which the UI asks that a run not be kept (its value `skip`). */
export const SKIP_HEADER = 'x-waggle-query-history';
export const MAX_HISTORY_LIMIT = 1000;
export const DEFAULT_HISTORY_LIMIT = 100;

/** What is stored per run. */
export interface HistoryBody {
  at: string;
  dataset: string;
  query: QuerySpec;
  queryId: string;
  resultId: string;
  by: { keyId: string; keyName: string };
  durationMs?: number;
  error?: string;
}

export interface HistorySearch {
  dataset?: string;
  column?: string;
  q?: string;
  sort?: 'recent' | 'most_run';
  limit: number;
}

let sequence = 0;
/** Ids that sort by creation: milliseconds, a per-process sequence, then randomness (several nodes). */
function historyId(): string {
  sequence = (sequence + 1) % 36 ** 4;
  return `qh${Date.now().toString(36).padStart(9, '0')}${sequence.toString(36).padStart(4, '0')}${randomString(6)}`;
}

/** Whether a result created by this request is kept: through the UI's session, not asked to skip. */
export function isRecorded(viaSession: boolean, skipHeader: string | string[] | undefined, max: number): boolean {
  return viaSession && max > 0 && skipHeader !== 'skip';
}

/**
 * Records a run (a new result of `query` in `dataset`) and deletes the environment's entries past
 * the newest `max`; answers the entry's id (the result keeps it, to add the duration when done).
 */
export async function recordRun(
  store: ConfigStore,
  env: Environment,
  run: { dataset: string; datasetId: string | null; query: StoredQuery; resultId: string; key: ApiKey; at: Date },
  max: number,
): Promise<string> {
  const { id: queryId, ...query } = run.query;
  const id = historyId();
  await store.createObject<HistoryBody>({
    id,
    kind: QUERY_HISTORY_KIND,
    teamId: env.teamId,
    environmentId: env.id,
    datasetId: run.datasetId,
    scope: env.id,
    uniqueKey: null,
    body: { at: run.at.toISOString(), dataset: run.dataset, query, queryId, resultId: run.resultId, by: { keyId: run.key.id, keyName: run.key.name } },
  });
  const all = await listNewestFirst(store, env);
  for (const old of all.slice(max)) await store.deleteObject(QUERY_HISTORY_KIND, old.id);
  return id;
}

/** Adds how long the run took (and its failure) to its entry, if the entry is still kept. */
export async function completeRun(store: ConfigStore, id: string, durationMs: number, error?: string): Promise<void> {
  const obj = await store.getObject<HistoryBody>(QUERY_HISTORY_KIND, id);
  if (!obj) return;
  const body: HistoryBody = { ...obj.body, durationMs: Math.round(durationMs * 10) / 10, ...(error ? { error } : {}) };
  await store.updateObject<HistoryBody>(QUERY_HISTORY_KIND, id, { body });
}

async function listNewestFirst(store: ConfigStore, env: Environment): Promise<StoredObject<HistoryBody>[]> {
  const all = await store.listObjects<HistoryBody>(QUERY_HISTORY_KIND, { teamId: env.teamId, environmentId: env.id });
  return all.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** Every column a spec names: calculations, filters, breakdowns, orders, havings, inline calculated fields. */
export function columnsOf(q: QuerySpec): string[] {
  const names = [
    ...(q.calculations ?? []).map((c) => c.column),
    ...(q.filters ?? []).map((f) => f.column),
    ...(q.breakdowns ?? []),
    ...(q.orders ?? []).map((o) => o.column),
    ...(q.havings ?? []).map((h) => h.column),
    ...(q.calculated_fields ?? []).map((c) => c.name),
  ];
  return [...new Set(names.filter((n): n is string => typeof n === 'string' && n !== ''))];
}

/** The spec as text that is the same for the same fields and values, whatever their key order. */
export function canonicalSpec(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalSpec).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalSpec(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

function matches(b: HistoryBody, s: HistorySearch): boolean {
  if (s.dataset !== undefined && b.dataset !== s.dataset) return false;
  if (s.column !== undefined) {
    const want = s.column.toLowerCase();
    if (!columnsOf(b.query).some((c) => c.toLowerCase() === want)) return false;
  }
  const words = (s.q ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length > 0) {
    const text = `${JSON.stringify(b.query)} ${b.dataset} ${b.by.keyName}`.toLowerCase();
    if (!words.every((w) => text.includes(w))) return false;
  }
  return true;
}

/** The environment's entries a search asks for, newest first, or grouped by spec with their counts (see the header). */
export async function searchHistory(store: ConfigStore, env: Environment, s: HistorySearch): Promise<{ entry: StoredObject<HistoryBody>; count?: number }[]> {
  const found = (await listNewestFirst(store, env)).filter((o) => matches(o.body, s));
  if (s.sort !== 'most_run') return found.slice(0, s.limit).map((entry) => ({ entry }));
  const groups = new Map<string, { entry: StoredObject<HistoryBody>; count: number }>();
  for (const o of found) {
    const key = `${o.body.dataset}\n${canonicalSpec(o.body.query)}`;
    const g = groups.get(key);
    if (g) g.count++;
    else groups.set(key, { entry: o, count: 1 }); // (newest first: the first seen is the newest run)
  }
  // (stable: equal counts stay newest first)
  return [...groups.values()].sort((a, b) => b.count - a.count).slice(0, s.limit);
}

/** An entry as the API answers it; `resultUrl` is the result's page in the web UI. */
export function historyAnswer(entry: StoredObject<HistoryBody>, resultUrl: string, count?: number) {
  const b = entry.body;
  return {
    id: entry.id,
    run_at: b.at,
    dataset: b.dataset,
    query: b.query,
    query_id: b.queryId,
    result_id: b.resultId,
    result_url: resultUrl,
    run_by: { key_id: b.by.keyId, key_name: b.by.keyName },
    ...(b.durationMs !== undefined ? { duration_ms: b.durationMs } : {}),
    ...(b.error ? { error: b.error } : {}),
    ...(count !== undefined ? { count } : {}),
  };
}
