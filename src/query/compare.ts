// Time comparison (a Waggle extension of Honeycomb's query results): a query whose spec has
// `compare_time_offset_seconds` is run a second time over the same window shifted back by that
// offset, with the same plan (so every op, breakdown, filter, having, order and limit behaves as
// in the main answer, on every event engine), and that answer is added to the result's data as
// `comparison` (docs/queries.md, "Time comparison").
//
// Decisions:
// - `comparison` is shaped like `data` (`series`, `results`, and the totals and "other" asked
//   for) plus `offset_seconds`, `start_time` and `end_time` (the shifted window, Unix seconds).
//   Its series rows carry the times of the past buckets: adding `offset_seconds` lines them up
//   with the main series. Honeycomb's contract leaves `data` open to further properties, so a
//   client that does not know the extension reads the rest of the answer unchanged.
// - The comparison's groups are the past window's own (the same ordering and limit): a group of
//   the main answer absent from them had no events then (or fell past the limit).
// - Both windows run at once, each within the query run time.
// - The past window is not raised to "now − 7 days" as the main one is: comparing with 4 or
//   26 weeks ago reads events that old when they are still kept.
import { runQuery, type QueryData, type RunOptions } from './run.js';
import type { Source } from './plan.js';
import type { QuerySpec } from './spec.js';
import type { EventStore } from '../stores/events/types.js';

export interface Comparison extends QueryData {
  offset_seconds: number;
  start_time: number;
  end_time: number;
}
export interface ComparedData extends QueryData {
  comparison?: Comparison;
}

/** The query's answer over its window, with the comparison when the spec asks for one. */
export async function runCompared(events: EventStore, sources: Source[], spec: QuerySpec, opts: RunOptions): Promise<ComparedData> {
  const offset = spec.compare_time_offset_seconds;
  if (!offset) return runQuery(events, sources, spec, opts);
  const start = opts.start - offset;
  const end = opts.end - offset;
  const [data, past] = await Promise.all([runQuery(events, sources, spec, opts), runQuery(events, sources, spec, { ...opts, start, end })]);
  return { ...data, comparison: { offset_seconds: offset, start_time: start, end_time: end, ...past } };
}
