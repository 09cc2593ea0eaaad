// Query results (/1/query_results, src/api/v1/query-results.ts): what is stored per result, the
// window and limit a new result gets, which queries count as relational (rate limits) and what a
// failed run says.
//
// Decisions:
// - A result runs in the background as soon as it is created; it is stored (object kind
//   `query_result`) when done and never changes after, so a completed GET carries
//   `Cache-Control: private, max-age=86400` and `Last-Modified`. A result still pending after a
//   restart is run again on its next GET.
// - The window is the query's, truncated at creation (≤ 6 h → to the minute, ≤ 2 days → to
//   5 minutes, ≤ 7 days → to 30 minutes; the start rounds down and the end up, so every second asked
//   for stays inside); more than 7 days → 400.
//   Only events of the past 7 days are read (the start is raised to now − 7 days).
//   `compare_time_offset_seconds` adds `data.comparison`, the same query over the window shifted
//   back (a Waggle extension, src/query/compare.ts).
//   A completed result's anomaly bands are a route of their own (`…/bands`, a Waggle extension,
//   src/domain/anomaly-bands.ts); its answer stays Honeycomb's.
// - A run longer than WAGGLE_QUERY_TIMEOUT_MS (10 s) is interrupted; the result is then complete
//   with empty data and an `error` text, as is a run that fails.
// - Creation is limited per key (WAGGLE_QUERY_RESULT_RATE_LIMIT, 10/min; the web UI's session has a
//   bucket of its own, WAGGLE_UI_QUERY_RESULT_RATE_LIMIT, 120/min); a query using relational
//   fields (`root.`, `parent.`, `any.`, `none.` prefixes; also read by its inline calculated
//   fields) counts against a 1/min bucket. Their 429
//   has no Retry-After, as documented. Waggle reads relational names as ordinary column names.
// - Each result gets an unguessable image token at creation: `links.graph_image_url` is
//   `<query_url>/snapshot/<token>`, a PNG of its chart that needs no key or session
//   (docs/queries.md, "graph_image_url").
// - `limit` (≤ 10,000) is honoured only with `disable_series: true`; otherwise the query's own
//   `limit` (default 1000) caps the result groups. `disable_total_by_aggregate` and
//   `disable_other_by_aggregate` default to true.
import { timingSafeEqual } from 'node:crypto';
import { ApiError, invalidField } from '../errors.js';
import { parseExpression, references } from '../query/expr/index.js';
import { UnsupportedByEngine } from '../query/plan.js';
import type { ComparedData } from '../query/compare.js';
import type { StoredQuery } from '../query/spec.js';
import { QueryTimeout } from '../stores/events/types.js';
import type { ConfigStore, Environment, NewObject, StoredObject } from '../stores/config/types.js';
import { QUERY_RESULT_KIND } from './kinds.js';
import { resultWindow } from './queries.js';
import { IMAGE_TOKEN, newImageToken } from './ui-links.js';

const DEFAULT_LIMIT = 1000;
const RELATIONAL = /^(root|parent|any\d?|none)\./;

/** What is stored per result. */
export interface ResultBody {
  id: string;
  datasetSlug: string;
  query: StoredQuery;
  start: number;
  end: number;
  limit: number;
  disableSeries: boolean;
  disableTotalByAggregate: boolean;
  disableOtherByAggregate: boolean;
  complete: boolean;
  data?: ComparedData;
  error?: string;
  completedAt?: string;
  /**
   * The token of `links.graph_image_url` (src/domain/ui-links.ts): whoever holds the URL may see
   * the chart without a session. Absent from results stored before graph images existed (their
   * image URL answers 404).
   */
  imageToken?: string;
  /** The query history entry of this run, when the history keeps it (src/domain/query-history.ts). */
  historyId?: string;
  /** What made it when not a person: the trigger whose firing stored it (its title and threshold in the image). */
  trigger?: { id: string; name: string; threshold: { op: string; value: number } };
}

/** What a create body may set besides the query. */
export interface ResultOptions {
  disable_series?: boolean;
  disable_total_by_aggregate?: boolean;
  disable_other_by_aggregate?: boolean;
  limit?: number;
}

/** 422 on `limit` over the default unless the series are off. */
export function checkLimit(b: ResultOptions): void {
  if (!b.disable_series && b.limit !== undefined && b.limit > DEFAULT_LIMIT) {
    throw invalidField('limit', `may exceed ${DEFAULT_LIMIT} only with disable_series: true`);
  }
}

/** A new, pending result of `query` over its window at `nowSeconds`; 400 for a window over 7 days. */
export function newResult(id: string, datasetSlug: string, query: StoredQuery, b: ResultOptions, nowSeconds: number): ResultBody {
  const { start, end } = resultWindow(query, nowSeconds);
  const limit = b.disable_series && b.limit !== undefined ? b.limit : (query.limit ?? DEFAULT_LIMIT);
  return {
    id,
    datasetSlug,
    query: b.disable_series && b.limit !== undefined ? { ...query, limit } : query,
    start,
    end,
    limit,
    disableSeries: b.disable_series ?? false,
    disableTotalByAggregate: b.disable_total_by_aggregate ?? true,
    disableOtherByAggregate: b.disable_other_by_aggregate ?? true,
    complete: false,
    imageToken: newImageToken(),
  };
}

/** A new result (newResult) of the environment's query object as the store takes it: the query's dataset. */
export function newResultObject(env: Environment, queryDatasetId: string | null, body: ResultBody): NewObject<ResultBody> {
  return {
    id: body.id,
    kind: QUERY_RESULT_KIND,
    teamId: env.teamId,
    environmentId: env.id,
    datasetId: queryDatasetId,
    scope: env.id,
    uniqueKey: null,
    body,
  };
}

/**
 * A result as the API answers it; `queryUrl` is its `links.query_url` (the web UI's page of the
 * result), `imageUrl` its `links.graph_image_url` (a PNG of its chart).
 */
export function resultAnswer(body: ResultBody, queryUrl: string, imageUrl: string) {
  return {
    id: body.id,
    complete: body.complete,
    query: body.query,
    links: { query_url: queryUrl, graph_image_url: imageUrl },
    ...(body.complete && body.data ? { data: body.data } : {}),
    ...(body.error ? { error: body.error } : {}),
  };
}

/** The `error` of a result whose run failed or ran out of time. */
export function failureText(err: unknown, timeoutMs: number): string {
  if (err instanceof QueryTimeout) return `query exceeded the ${timeoutMs / 1000} s run time`;
  if (err instanceof UnsupportedByEngine) return err.message;
  if (/Out of Memory/i.test((err as Error)?.message ?? '')) {
    return `the query needs more memory than the event store may use (WAGGLE_EVENT_STORE_MEMORY) and could not spill to disk`;
  }
  return 'the query failed';
}

/**
 * Whether the query names a relational field: in a breakdown, calculation, filter or order
 * (havings name calculations), or as a `$name` its inline calculated fields read. Stored
 * calculated fields the query uses are not expanded.
 */
export function usesRelationalFields(q: StoredQuery): boolean {
  const names = [
    ...(q.breakdowns ?? []),
    ...(q.calculations ?? []).map((c) => c.column),
    ...(q.filters ?? []).map((f) => f.column),
    ...(q.orders ?? []).map((o) => o.column),
    ...(q.calculated_fields ?? []).flatMap((c) => {
      try {
        return references(parseExpression(c.expression));
      } catch {
        return []; // (validated when the query was saved)
      }
    }),
  ];
  return names.some((n) => typeof n === 'string' && RELATIONAL.test(n));
}

const sameToken = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * The result a graph image URL names, with its environment: the token is the authorisation, so
 * anything that does not match the stored result exactly (an unknown result, another team,
 * environment or dataset in the path, a wrong token, a result without one) is the same 404.
 */
export async function resultOfImage(
  store: ConfigStore,
  p: { team: string; env: string; dataset: string; resultId: string; token: string },
): Promise<{ obj: StoredObject<ResultBody>; env: Environment }> {
  const none = () => new ApiError(404, 'graph image not found');
  if (!IMAGE_TOKEN.test(p.token)) throw none();
  const obj = await store.getObject<ResultBody>(QUERY_RESULT_KIND, p.resultId);
  const token = obj?.body.imageToken;
  if (!obj || !token || !sameToken(token, p.token) || obj.body.datasetSlug !== p.dataset || !obj.environmentId) throw none();
  const env = await store.getEnvironmentById(obj.environmentId);
  const team = env ? await store.getTeam(env.teamId) : undefined;
  if (!env || !team || env.slug !== p.env || team.slug !== p.team || obj.teamId !== team.id) throw none();
  return { obj, env };
}
