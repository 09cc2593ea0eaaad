// A trace's events as a waterfall: spans nested under their parents, siblings in start order,
// each placed by its start and duration from the trace's start. Span events and links hang on
// the span they belong to. Spans whose parent is missing (not sent, sampled away, or past the
// answer's limit) start their own subtree at the top level, in time order.
import type { TraceSpan } from './api/types.js';
import { SERIES_COLORS } from './charts/palette.js';

export interface WaterfallRow {
  span: TraceSpan;
  depth: number;
  /** ms from the trace's start */
  offset: number;
  duration: number;
  events: TraceSpan[];
  links: TraceSpan[];
  /** Whether this span has a parent id that is not in the trace. */
  orphan: boolean;
  childCount: number;
}

export interface Waterfall {
  rows: WaterfallRow[];
  start: number;
  /** ms from the first start to the last end */
  total: number;
  /** In the order they first appear in the waterfall. */
  services: string[];
  /** A colour per service: the palette's, in that order (distinct for up to 16 services). */
  colors: Record<string, string>;
  errors: number;
}

const ms = (iso: string) => {
  // Microseconds matter for short spans: Date.parse keeps only milliseconds.
  const m = /\.(\d+)Z$/.exec(iso);
  const base = Date.parse(iso.replace(/\.\d+Z$/, 'Z'));
  return m ? base + Number(`0.${m[1]}`) * 1000 : base;
};

export function buildWaterfall(spans: TraceSpan[]): Waterfall {
  // Built for 100,000 spans: each time parsed once, no spread of every span into Math.min, and
  // the tree walked with a stack of its own (a deep chain of spans would overflow a recursion).
  const at = new Map<TraceSpan, number>();
  for (const s of spans) at.set(s, ms(s.time));
  const t = (s: TraceSpan) => at.get(s)!;
  const real = spans.filter((s) => s.kind === 'span');
  const byId = new Map<string, TraceSpan>();
  for (const s of real) if (s.span_id && !byId.has(s.span_id)) byId.set(s.span_id, s);
  const children = new Map<string, TraceSpan[]>();
  const roots: TraceSpan[] = [];
  for (const s of real) {
    const parent = s.parent_id && s.parent_id !== s.span_id ? byId.get(s.parent_id) : undefined;
    if (parent) {
      const key = parent.span_id!;
      const list = children.get(key);
      if (list) list.push(s);
      else children.set(key, [s]);
    } else roots.push(s);
  }
  const attached = new Map<string, { events: TraceSpan[]; links: TraceSpan[] }>();
  for (const s of spans) {
    if (s.kind === 'span' || !s.parent_id) continue;
    const a = attached.get(s.parent_id) ?? { events: [], links: [] };
    (s.kind === 'link' ? a.links : a.events).push(s);
    attached.set(s.parent_id, a);
  }
  let start = spans.length ? Infinity : 0;
  for (const s of spans) start = Math.min(start, t(s));
  let end = start;
  const byStart = (a: TraceSpan, b: TraceSpan) => t(a) - t(b) || (b.duration_ms ?? 0) - (a.duration_ms ?? 0);
  const rows: WaterfallRow[] = [];
  const seen = new Set<TraceSpan>();
  const none = { events: [] as TraceSpan[], links: [] as TraceSpan[] };
  const visit = (top: TraceSpan) => {
    const stack: [TraceSpan, number][] = [[top, 0]];
    while (stack.length) {
      const [s, depth] = stack.pop()!;
      if (seen.has(s)) continue; // a cycle of parent ids
      seen.add(s);
      const offset = t(s) - start;
      const duration = Math.max(0, s.duration_ms ?? 0);
      end = Math.max(end, start + offset + duration);
      const kids = (s.span_id && children.get(s.span_id)) || [];
      const a = (s.span_id && attached.get(s.span_id)) || none;
      rows.push({
        span: s,
        depth,
        offset,
        duration,
        events: a.events,
        links: a.links,
        orphan: !!s.parent_id && !byId.has(s.parent_id),
        childCount: kids.length,
      });
      const sorted = [...kids].sort(byStart);
      for (let i = sorted.length - 1; i >= 0; i--) stack.push([sorted[i], depth + 1]);
    }
  };
  for (const r of roots.sort(byStart)) visit(r);
  // Spans only reachable through a cycle of parent ids: shown from the earliest, never dropped.
  for (const s of [...real].sort(byStart)) if (!seen.has(s)) visit(s);
  for (const s of spans) if (s.kind !== 'span') end = Math.max(end, t(s));
  const services = [...new Set(rows.map((r) => serviceOf(r.span)))];
  return { rows, start, total: end - start, services, colors: serviceColors(services), errors: real.filter((s) => s.error).length };
}

/** The service a span is drawn as: its service name, else its dataset. */
export const serviceOf = (s: TraceSpan) => s.service_name ?? s.dataset;

/**
 * A colour per service of one trace: the series palette in order of appearance, so that two
 * services never share a colour (a hue from the name made `frontend` and `api-gateway` alike),
 * up to the palette's 16; past that they repeat.
 */
export function serviceColors(services: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  services.forEach((s, i) => (out[s] = SERIES_COLORS[i % SERIES_COLORS.length]));
  return out;
}

/** ms of an event from the trace start. */
export const offsetOf = (w: Waterfall, s: TraceSpan) => ms(s.time) - w.start;
