// BubbleUp's request rules (POST /1/bubbleup/{datasetSlug|__all__}, src/api/v1/bubbleup.ts is the
// HTTP face; src/query/bubbleup.ts compares): what the body's schema cannot say. The query's own
// rules (checkQuerySpec); a selection that ends after it starts; value bounds only with a column,
// the upper not below the lower; then the selection against the query's window (they must
// overlap; the comparison uses the overlap) and its column, one of the dataset's (or the
// environment's) columns or calculated fields, or one of the query's own; a "past" baseline's
// offset (1 s … 26 weeks, the schema's) at least the selection's length (once clipped to the
// window), so the two time ranges never overlap: an event is on one side only. Every problem of a
// phase is answered together (422); a timed-out comparison is a 503.
import { ApiError } from '../errors.js';
import { bubbleUp, type BubbleUpAnswer } from '../query/bubbleup.js';
import { querySources } from '../query/sources.js';
import { checkQuerySpec, type QueryInput } from '../query/validate.js';
import { QueryTimeout, type EventStore } from '../stores/events/types.js';
import type { ConfigStore, Dataset, Environment } from '../stores/config/types.js';
import { Problems } from '../validation.js';
import { resultWindow } from './queries.js';

/** Columns answered when the body names no `limit`. */
export const DEFAULT_LIMIT = 50;
/** The longest "past" baseline offset: 26 weeks, the longest of the Queries API's compare_time_offset_seconds. */
export const MAX_BASELINE_OFFSET = 15_724_800;

/** A BubbleUp body as its schema admits it (types and ranges checked). */
export interface BubbleUpInput {
  query?: QueryInput | null;
  selection: { start_time: number; end_time: number; column?: string | null; lower?: number | null; upper?: number | null };
  limit?: number | null;
  /** Omitted or null: `{kind: 'rest'}`. */
  baseline?: { kind: 'rest' | 'past'; offset_seconds?: number | null } | null;
}

/**
 * Compares the selection of `input` with the rest of its query's events in the dataset (or, for
 * null, the environment) at `nowSeconds`; 422 for a body breaking the rules above, 503 past
 * `timeoutMs`.
 */
export async function runBubbleUp(
  store: ConfigStore,
  events: EventStore,
  env: Environment,
  dataset: Dataset | null,
  input: BubbleUpInput,
  nowSeconds: number,
  timeoutMs: number,
): Promise<BubbleUpAnswer> {
  const p = new Problems();
  const spec = input.query ? checkQuerySpec(p, input.query, (f) => `query.${f}`) : {};
  const sel = input.selection;
  const column = sel.column ?? undefined;
  if (sel.end_time <= sel.start_time) p.add('selection.end_time', 'invalid', 'must be after selection.start_time');
  const bound = (k: 'lower' | 'upper') => {
    const v = sel[k] ?? undefined;
    if (v !== undefined && column === undefined) return void p.add(`selection.${k}`, 'invalid', 'needs selection.column');
    return v;
  };
  const lower = bound('lower');
  const upper = bound('upper');
  if (lower !== undefined && upper !== undefined && upper < lower) p.add('selection.upper', 'invalid', 'must not be below selection.lower');
  const limit = input.limit ?? DEFAULT_LIMIT;
  p.throwIfAny();

  const window = resultWindow({ id: '', ...spec }, nowSeconds);
  const s = { start: sel.start_time, end: sel.end_time, column, lower, upper };
  const start = Math.max(s.start, window.start);
  const end = Math.min(s.end, window.end);
  if (end <= start) p.add('selection', 'invalid', "must overlap the query's time range");
  const sources = await querySources(store, env, dataset);
  if (s.column !== undefined) {
    const known =
      sources.some((src) => src.columns.some((c) => c.keyName === s.column) || src.calculated.some((c) => c.name === s.column)) ||
      (spec.calculated_fields ?? []).some((c) => c.name === s.column);
    if (!known) p.add('selection.column', 'invalid', `is not a column or calculated field of ${dataset ? `dataset ${dataset.slug}` : 'the environment'}`);
  }
  const baseline = input.baseline ?? { kind: 'rest' };
  let past: { start: number; end: number } | undefined;
  if (baseline.kind === 'rest' && baseline.offset_seconds != null) p.add('baseline.offset_seconds', 'invalid', 'must not be given with kind rest');
  if (baseline.kind === 'past' && end > start) {
    const n = baseline.offset_seconds ?? 0;
    if (n < end - start) p.add('baseline.offset_seconds', 'invalid', `must be at least the selection's length (${end - start} s), so the two do not overlap`);
    else past = { start: start - n, end: end - n };
  }
  p.throwIfAny();
  try {
    return await bubbleUp(events, sources, spec, { start: window.start, end: window.end, selection: { ...s, start, end }, past, limit, timeoutMs });
  } catch (err) {
    if (err instanceof QueryTimeout) throw new ApiError(503, `BubbleUp exceeded the ${timeoutMs / 1000} s run time; narrow the query's time range or filters`);
    throw err;
  }
}
