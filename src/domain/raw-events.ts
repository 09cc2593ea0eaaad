// The event browser's read (POST /1/raw_events/{datasetSlug|__all__}, src/api/v1/raw-events.ts is
// the HTTP face; src/query/events.ts reads): the query's own rules (checkQuerySpec, 422), its window
// truncated as query results truncate theirs, and a 503 past the query timeout.
import { ApiError } from '../errors.js';
import { latestEvents } from '../query/events.js';
import { querySources } from '../query/sources.js';
import { checkQuerySpec, type QueryInput } from '../query/validate.js';
import type { ConfigStore, Dataset, Environment } from '../stores/config/types.js';
import { QueryTimeout, type EventStore } from '../stores/events/types.js';
import { Problems } from '../validation.js';
import { resultWindow } from './queries.js';

/** Events answered when the body names no `limit`. */
export const DEFAULT_LIMIT = 100;

/** A raw-events body as its schema admits it. */
export interface RawEventsInput {
  query?: QueryInput | null;
  limit?: number | null;
}

/** The newest events of the body's query window in the dataset (or, for null, the environment) at `nowSeconds`. */
export async function readRawEvents(
  store: ConfigStore,
  events: EventStore,
  env: Environment,
  dataset: Dataset | null,
  input: RawEventsInput,
  nowSeconds: number,
  timeoutMs: number,
) {
  const p = new Problems();
  const spec = input.query ? checkQuerySpec(p, input.query, (f) => `query.${f}`) : {};
  const limit = input.limit ?? DEFAULT_LIMIT;
  p.throwIfAny();
  const window = resultWindow({ id: '', ...spec }, nowSeconds);
  const sources = await querySources(store, env, dataset);
  try {
    return { events: await latestEvents(events, sources, spec, { ...window, limit, timeoutMs }) };
  } catch (err) {
    if (err instanceof QueryTimeout) throw new ApiError(503, `reading events exceeded the ${timeoutMs / 1000} s run time`);
    throw err;
  }
}
