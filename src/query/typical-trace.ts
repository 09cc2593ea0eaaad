// A typical trace to compare a trace with (the web UI's trace comparison; docs/web-ui.md): one
// whose root span has the same service and name as the trace's, with a duration nearest the
// median of such roots. The trace's root is its earliest span without a parent (else its
// earliest span whose parent is not in the trace). Candidates are the root spans (no parent id,
// or an empty one) of that service and name with a duration, in the root's dataset, that started
// within TYPICAL_WINDOW_S either side of the trace's root (inside the window asked); the median
// is the lower middle value, unweighted. Each engine writes the statement its own way
// (events.dialect.traces, src/stores/events/statements.ts).
import { DEFINITION_DEFAULTS } from './definitions.js';
import type { EventStore } from '../stores/events/types.js';
import { numeric, planScan, type Source } from './plan.js';
import type { QuerySpec } from './spec.js';
import { traceSpans, type TraceSpan } from './events.js';
import { withTables } from './run.js';

/** Candidates start at most this long before or after the trace's root: 12 hours each way. */
export const TYPICAL_WINDOW_S = 12 * 3600;

export interface TypicalTrace {
  trace_id: string;
  duration_ms: number;
  /** The root span compared: its dataset, service, name and duration. */
  root: { dataset: string; service_name: string | null; name: string; duration_ms: number | null };
  /** The median duration of the candidates' roots and how many there were (the trace's own included). */
  median_ms: number;
  roots: number;
  /** The window searched, Unix seconds [start, end). */
  start_time: number;
  end_time: number;
}

/** Why there is no typical trace (the API answers 404 with it). */
export class NoTypicalTrace extends Error {}

interface Options {
  /** Unix seconds, [start, end): where the trace itself is looked for, and the candidates' bounds. */
  start: number;
  end: number;
  timeoutMs: number;
  /** Most events of the trace read to find its root. */
  limit: number;
}

/** The root span of a trace's spans (see the header), if it has any. */
export function rootOf(spans: TraceSpan[]): TraceSpan | undefined {
  const real = spans.filter((s) => s.kind === 'span');
  const ids = new Set(real.map((s) => s.span_id).filter((id) => id !== null));
  return real.find((s) => s.parent_id === null) ?? real.find((s) => !ids.has(s.parent_id ?? ''));
}

export async function typicalTrace(events: EventStore, allSources: Source[], traceId: string, opts: Options): Promise<TypicalTrace> {
  const deadline = Date.now() + opts.timeoutMs;
  const { spans } = await traceSpans(events, allSources, traceId, { start: opts.start, end: opts.end, limit: opts.limit, timeoutMs: opts.timeoutMs });
  if (spans.length === 0) throw new NoTypicalTrace(`no events of trace ${traceId}`);
  const root = rootOf(spans);
  if (!root) throw new NoTypicalTrace(`trace ${traceId} has no spans`);
  if (root.name === null) throw new NoTypicalTrace(`the root span of trace ${traceId} has no name`);
  const sources = (await withTables(events, allSources)).filter((s) => s.dataset.slug === root.dataset);
  if (sources.length === 0) throw new NoTypicalTrace(`no dataset ${root.dataset}`);
  const d = { ...DEFINITION_DEFAULTS, ...sources[0].dataset.definitions };
  const t = Math.floor(Date.parse(root.time) / 1000);
  const start = Math.max(opts.start, t - TYPICAL_WINDOW_S);
  const end = Math.min(opts.end, t + TYPICAL_WINDOW_S + 1);
  const spec: QuerySpec = {
    filters: [
      { column: d.name, op: '=', value: root.name },
      root.service_name === null ? { column: d.service_name, op: 'does-not-exist' } : { column: d.service_name, op: '=', value: root.service_name },
    ],
  };
  const scan = planScan({ dialect: events.dialect, sources, spec, start, end }, [d.trace_id, d.parent_id, d.duration_ms]);
  const field = (name: string) => scan.fields.find((f) => f.name === name)!;
  const dialect = scan.dialect;
  const trace = dialect.expr.text(field(d.trace_id).alias, field(d.trace_id).type);
  const parent = dialect.expr.text(field(d.parent_id).alias, field(d.parent_id).type);
  const duration = numeric(dialect, field(d.duration_ms));
  const params = [...scan.params, traceId];
  const sql = dialect.traces.typical(scan, {
    trace,
    duration,
    where: `(${parent} IS NULL OR ${parent} = '') AND ${trace} IS NOT NULL AND ${duration} IS NOT NULL`,
    exclude: `$${params.length}`,
  });
  const rows = await events.analyse(sql, params, Math.max(1, deadline - Date.now()));
  const row = rows[0];
  if (!row) throw new NoTypicalTrace(`no other trace with a root span ${root.service_name ?? '(no service)'} ${root.name} within 12 hours`);
  return {
    trace_id: String(row.trace_id),
    duration_ms: Number(row.duration_ms),
    root: { dataset: root.dataset, service_name: root.service_name, name: root.name, duration_ms: root.duration_ms },
    median_ms: Number(row.median_ms),
    roots: Number(row.roots),
    start_time: start,
    end_time: end,
  };
}
