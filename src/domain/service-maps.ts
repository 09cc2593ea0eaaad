// Service map dependency requests (/1/maps/dependencies/requests, src/api/v1/service-maps.ts):
// what is stored per request, the window, limit and page rules. src/jobs/service-map.ts computes
// the dependencies.
//
// Decisions (docs/service-maps.md):
// - A request runs in the background as soon as it is created and is stored (object kind
//   `map_dependency_request`) when done; it never changes after. POST waits up to 200 ms for it:
//   done by then → 200 with `status` ready (or error), otherwise 201 with `status: pending`.
//   GET answers 200 in every state; `dependencies` is null until ready (and on error).
//   A request still pending after a restart runs again on its next GET.
// - `Location` (absolute URL of the request) on POST; `Last-Modified` on both (creation time
//   while pending, completion time after); `Cache-Control: private, max-age=86400` on ready
//   GETs, `no-store` otherwise.
// - Window: `start_time`, `end_time`, `time_range` (default 7200) combine as in queries: all
//   three → 422, start_time must be before end_time, integers from 1 to 253402300799
//   (9999-12-31T23:59:59Z, the last second an event can have), and start_time + time_range
//   no later than that either; anything else (2^63, say) → 422. Resolved against the clock at
//   creation. No maximum span; the run-time limit (WAGGLE_QUERY_TIMEOUT_MS) applies, and a run
//   that exceeds it or fails ends in `status: error` with an `error` text.
// - `limit` (query, 1..64000, default 10000) caps the edges kept, after ordering by call count
//   (descending), then parent and child service name (ascending, by byte). Out of range → 422.
// - `filters`: service nodes (`type` "service", the default); an edge is kept when its parent
//   or its child is one of them. A top-level null field means "not set"; unknown fields are
//   ignored, as everywhere on /1/.
// - Pages: `page[size]` 1..100 (default 20), as the contract's PaginationSize documents;
//   `page[after]` is the opaque cursor from `links.next`, bound to its request; a cursor
//   that is malformed, of another request or past the end → 422. `links.next` is a path
//   (`/1/maps/dependencies/requests/{id}?page[after]=…&page[size]=…`), null on the last page.
// - Another environment's request id answers 404, exactly like an unknown one.
import { invalidField } from '../errors.js';
import type { Environment, NewObject, StoredObject } from '../stores/config/types.js';
import { shortId } from './ids.js';
import { MAP_REQUEST_KIND } from './kinds.js';

export const DEFAULT_LIMIT = 10_000;
export const MAX_LIMIT = 64_000;
export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;
/** Most services in `filters` (Waggle's limit; Honeycomb documents none). */
export const MAX_MAP_FILTERS = 100;
/** 9999-12-31T23:59:59Z in Unix seconds: no event is later, so neither is a window. */
export const MAX_SECONDS = 253_402_300_799;

/** What is stored per request. Edges are [parent, child, call count], in answer order. */
export interface RequestBody {
  id: string;
  start: number;
  end: number;
  limit: number;
  services: string[];
  status: 'pending' | 'ready' | 'error';
  /** [parent, child, calls, errors]; requests stored before error counts have three. */
  edges?: [string, string, number, number?][];
  error?: string;
  completedAt?: string;
}

/** `limit` from the query string: an integer 1..64000, default 10000. */
export function readLimit(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_LIMIT;
  const n = /^\d{1,6}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= MAX_LIMIT)) throw invalidField('limit', `must be an integer from 1 to ${MAX_LIMIT}`);
  return n;
}

/** `page[size]` (1..100, default 20) and `page[after]` (a cursor of this request). */
export function readPage(query: { 'page[size]'?: string; 'page[after]'?: string }, requestId: string): { size: number; offset: number } {
  const rawSize = query['page[size]'];
  const size = rawSize === undefined || rawSize === '' ? DEFAULT_PAGE : /^\d{1,3}$/.test(rawSize) ? Number(rawSize) : NaN;
  if (!(size >= 1 && size <= MAX_PAGE)) throw invalidField('page[size]', `must be an integer from 1 to ${MAX_PAGE}`);
  const rawAfter = query['page[after]'];
  if (rawAfter === undefined || rawAfter === '') return { size, offset: 0 };
  const m = /^([A-Za-z0-9]+):(\d{1,6})$/.exec(Buffer.from(rawAfter, 'base64url').toString('utf8'));
  if (!m || m[1] !== requestId) throw invalidField('page[after]', 'is not a cursor of this request');
  return { size, offset: Number(m[2]) };
}

export const cursor = (requestId: string, offset: number) => Buffer.from(`${requestId}:${offset}`).toString('base64url');

/** The time-field combination rules of queries. */
export function checkWindow(b: { start_time?: number; end_time?: number; time_range?: number }): void {
  if (b.time_range !== undefined && b.start_time !== undefined && b.end_time !== undefined) {
    throw invalidField('time_range', 'cannot be combined with both start_time and end_time; send at most two of the three');
  }
  if (b.start_time !== undefined && b.end_time !== undefined && b.start_time >= b.end_time) {
    throw invalidField('start_time', 'must be before end_time');
  }
  if (b.start_time !== undefined && b.end_time === undefined && b.start_time + (b.time_range ?? 7200) > MAX_SECONDS) {
    throw invalidField('time_range', `start_time + time_range must be at most ${MAX_SECONDS} (9999-12-31T23:59:59Z)`);
  }
}

/** A new, pending request of the environment as the store takes it: its window, limit and the services of its filters (each once). */
export function newMapRequest(
  env: Environment,
  window: { start: number; end: number },
  limit: number,
  filters: { name: string }[] | undefined,
): NewObject<RequestBody> {
  const id = shortId();
  const body: RequestBody = {
    id,
    start: window.start,
    end: window.end,
    limit,
    services: [...new Set((filters ?? []).map((f) => f.name))],
    status: 'pending',
  };
  return { id, kind: MAP_REQUEST_KIND, teamId: env.teamId, environmentId: env.id, datasetId: null, scope: env.id, uniqueKey: null, body };
}

/**
 * A request's answer for one page (readPage) of its edges; `basePath` is where requests live
 * (their `links.next` paths). `dependencies` is null until the request is ready; a page past
 * the end → 422.
 */
export function mapRequestAnswer(obj: StoredObject<RequestBody>, page: { size: number; offset: number }, basePath: string) {
  const body = obj.body;
  let dependencies: { parent_node: MapNode; child_node: MapNode; call_count: number; error_count?: number }[] | null = null;
  let next: string | null = null;
  if (body.status === 'ready') {
    const edges = body.edges ?? [];
    if (page.offset > edges.length) throw invalidField('page[after]', 'is past the end of the results');
    const end = Math.min(edges.length, page.offset + page.size);
    dependencies = edges.slice(page.offset, end).map(([parent, child, calls, errors]) => ({
      parent_node: { name: parent, type: 'service' as const },
      child_node: { name: child, type: 'service' as const },
      call_count: calls,
      // (requests computed before error counts have none)
      ...(errors !== undefined ? { error_count: errors } : {}),
    }));
    if (end < edges.length) next = `${basePath}/${obj.id}?page[after]=${cursor(obj.id, end)}&page[size]=${page.size}`;
  }
  return {
    request_id: obj.id,
    status: body.status,
    dependencies,
    links: { next },
    ...(body.error ? { error: body.error } : {}),
  };
}

interface MapNode {
  name: string;
  type: 'service';
}
