// Reading events themselves rather than aggregates: the newest events of a query (the web UI's
// event browser) and every event of one trace (its trace view). Both read through the planner's
// scan (plan.ts), so filters, calculated fields and column types work as in queries.
import { DEFINITION_DEFAULTS } from './definitions.js';
import type { EventStore } from '../stores/events/types.js';
import { planScan, type Scan, type Source } from './plan.js';
import { withTables } from './run.js';
import type { QuerySpec } from './spec.js';

/** Most columns an event browser row carries (the most recently written). */
export const MAX_EVENT_COLUMNS = 500;
/**
 * Most events of one trace answered (spans, span events and links): 100,000, past Honeycomb's
 * 32,000-span cap, for the web UI's virtualised waterfall (docs/web-ui.md). Past it the answer
 * has the oldest 100,000 and `truncated: true`.
 */
export const MAX_TRACE_SPANS = 100_000;

export type FieldValue = string | number | boolean;

export interface RawEvent {
  /** RFC 3339 with microseconds. */
  time: string;
  data: Record<string, FieldValue>;
}

interface ReadOptions {
  /** Unix seconds, [start, end). */
  start: number;
  end: number;
  limit: number;
  timeoutMs: number;
}

/** Column names of the sources (visible ones by default), the most recently written first, at most `max`. */
export function columnNames(sources: Source[], max: number, include: (hidden: boolean) => boolean = (h) => !h): string[] {
  const latest = new Map<string, string>();
  for (const s of sources) {
    for (const c of s.columns) {
      if (!include(c.hidden)) continue;
      const at = c.lastWritten ?? '';
      const seen = latest.get(c.keyName);
      if (seen === undefined || at > seen) latest.set(c.keyName, at);
    }
  }
  return [...latest.entries()]
    .sort((a, b) => (a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : a[0].localeCompare(b[0])))
    .slice(0, max)
    .map(([n]) => n);
}

/** Runs `SELECT … FROM f` of a scan, newest or oldest first, and shapes each row as an event. */
async function readScan(events: EventStore, scan: Scan, order: 'ASC' | 'DESC', limit: number, timeoutMs: number): Promise<RawEvent[]> {
  const cols = [`${scan.dialect.epochUs('__t')} AS __us`, ...scan.fields.map((f) => f.alias)];
  const sql = `${scan.prelude}\nSELECT ${cols.join(', ')} FROM ${scan.f} ORDER BY __t ${order} LIMIT ${Math.trunc(limit)}`;
  const rows = await events.analyse(sql, scan.params, timeoutMs);
  return rows.map((r) => {
    const data: Record<string, FieldValue> = {};
    for (const f of scan.fields) {
      // (An engine without a boolean type answers booleans as 1 and 0.)
      const v = f.type === 'boolean' && typeof r[f.alias] === 'number' ? r[f.alias] !== 0 : fieldValue(r[f.alias]);
      if (v !== undefined) data[f.name] = v;
    }
    return { time: isoMicros(Number(r.__us)), data };
  });
}

/** The newest events of the query's window that pass its filters, every column of each. */
export async function latestEvents(events: EventStore, allSources: Source[], spec: QuerySpec, opts: ReadOptions): Promise<RawEvent[]> {
  const sources = await withTables(events, allSources);
  if (sources.length === 0) return [];
  const names = columnNames(sources, MAX_EVENT_COLUMNS);
  const scan = planScan({ dialect: events.dialect, sources, spec: scanSpec(spec), start: opts.start, end: opts.end }, names);
  return readScan(events, scan, 'DESC', opts.limit, opts.timeoutMs);
}

export type SpanKind = 'span' | 'span_event' | 'link';

export interface TraceSpan {
  dataset: string;
  time: string;
  span_id: string | null;
  parent_id: string | null;
  name: string | null;
  service_name: string | null;
  duration_ms: number | null;
  error: boolean;
  kind: SpanKind;
  link?: { trace_id: string | null; span_id: string | null };
  data: Record<string, FieldValue>;
}

/**
 * Every event of a trace in the sources (each read with its dataset's definitions of trace id,
 * span id, parent id, name, service, duration, error and annotation type), oldest first, at most
 * `limit`; `truncated` when there were more.
 */
export async function traceSpans(
  events: EventStore,
  allSources: Source[],
  traceId: string,
  opts: ReadOptions,
): Promise<{ spans: TraceSpan[]; truncated: boolean }> {
  const sources = await withTables(events, allSources);
  const perSource = await Promise.all(
    sources.map(async (source) => {
      const d = { ...DEFINITION_DEFAULTS, ...source.dataset.definitions };
      const names = new Set(columnNames([source], MAX_EVENT_COLUMNS, () => true));
      const defined = ['trace_id', 'span_id', 'parent_id', 'name', 'service_name', 'duration_ms', 'error', 'annotation_type', 'link_trace_id', 'link_span_id'];
      for (const k of defined) if (d[k]) names.add(d[k]);
      if (!source.columns.some((c) => c.keyName === d.trace_id) && !source.calculated.some((c) => c.name === d.trace_id)) return [];
      const spec: QuerySpec = { filters: [{ column: d.trace_id, op: '=', value: traceId }] };
      const scan = planScan({ dialect: events.dialect, sources: [source], spec, start: opts.start, end: opts.end }, [...names]);
      const rows = await readScan(events, scan, 'ASC', opts.limit + 1, opts.timeoutMs);
      return rows.map((e) => toSpan(source.dataset.slug, d, e));
    }),
  );
  // Oldest first; at one instant a span before its events and links (OTLP gives a link its span's time).
  const rank: Record<SpanKind, number> = { span: 0, span_event: 1, link: 2 };
  const all = perSource.flat().sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : rank[a.kind] - rank[b.kind]));
  return { spans: all.slice(0, opts.limit), truncated: all.length > opts.limit };
}

function toSpan(dataset: string, d: Record<string, string>, e: RawEvent): TraceSpan {
  const text = (k: string) => {
    const v = e.data[d[k]];
    return v === undefined || v === '' ? null : String(v);
  };
  const annotation = text('annotation_type');
  const kind: SpanKind = annotation === 'span_event' ? 'span_event' : annotation === 'link' ? 'link' : 'span';
  const duration = e.data[d.duration_ms];
  const span: TraceSpan = {
    dataset,
    time: e.time,
    span_id: text('span_id'),
    parent_id: text('parent_id'),
    name: text('name'),
    service_name: text('service_name'),
    duration_ms: typeof duration === 'number' && Number.isFinite(duration) ? duration : null,
    error: isError(e.data[d.error]),
    kind,
    data: e.data,
  };
  if (kind === 'link') span.link = { trace_id: text('link_trace_id'), span_id: text('link_span_id') };
  return span;
}

/** An error field: true, a non-zero number, or a message (any text but "false", "0" or ""). */
export function isError(v: FieldValue | undefined): boolean {
  if (v === undefined) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  const t = v.trim().toLowerCase();
  return t !== '' && t !== 'false' && t !== '0';
}

/** Only what selects events: a scan needs no calculations, groups or orders. */
function scanSpec(spec: QuerySpec): QuerySpec {
  return { filters: spec.filters, filter_combination: spec.filter_combination, calculated_fields: spec.calculated_fields };
}

function fieldValue(v: unknown): FieldValue | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  return String(v);
}

/** `2024-05-01T12:00:00.123456Z` from microseconds since the epoch. */
export function isoMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  const micro = String(((us % 1000) + 1000) % 1000).padStart(3, '0');
  return new Date(ms).toISOString().replace(/Z$/, `${micro}Z`);
}
