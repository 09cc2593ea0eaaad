// Two traces lined up span by span (the trace comparison page). Both are laid out as waterfalls
// (trace.ts: spans under their parents, siblings in start order); then, from the top level down,
// the children of two matched spans are matched by service and name: the k-th child of a
// (service, name) in A with the k-th of that (service, name) in B, in start order. A span
// without a partner is only in its trace, and so is everything under it. Rows come in A's order,
// a span only in B after the matched span that comes before it in B (with none, before A's first
// matched span). A matched pair carries both durations and the difference A − B (ms, and % of B:
// A is the trace compared, B the baseline).
import type { TraceSpan } from './api/types.js';
import { buildWaterfall, serviceColors, serviceOf, type Waterfall, type WaterfallRow } from './trace.js';

export interface Side {
  span: TraceSpan;
  /** ms from its trace's start */
  offset: number;
  duration: number;
}

export interface CompareRow {
  depth: number;
  service: string;
  name: string;
  /** `both`: matched; `a` / `b`: only in that trace. */
  in: 'both' | 'a' | 'b';
  a?: Side;
  b?: Side;
  /** A − B in ms (matched rows only). */
  diffMs?: number;
  /** (A − B) / B in %; null when B took no time (matched rows only). */
  diffPct?: number | null;
}

export interface TraceComparison {
  rows: CompareRow[];
  /** Each trace's length, ms from its first start to its last end. */
  totalA: number;
  totalB: number;
  matched: number;
  onlyA: number;
  onlyB: number;
  /** Every service of either trace, with a colour (A's services first). */
  colors: Record<string, string>;
}

interface Node {
  row: WaterfallRow;
  children: Node[];
}

/** The waterfall's rows (pre-order with depths) as trees: its top-level spans, in start order. */
function forest(w: Waterfall): Node[] {
  const top: Node[] = [];
  const stack: Node[] = [];
  for (const row of w.rows) {
    const node: Node = { row, children: [] };
    while (stack.length > row.depth) stack.pop();
    (stack.length === 0 ? top : stack[stack.length - 1].children).push(node);
    stack.push(node);
  }
  return top;
}

export const spanName = (s: TraceSpan) => s.name ?? '(unnamed span)';
const keyOf = (s: TraceSpan) => `${serviceOf(s)}\u0000${spanName(s)}`;

/** Pairs of A's and B's spans matched by (service, name), k-th with k-th; the unmatched alone. Ordered as the header says. */
export function matchSiblings<T>(a: T[], b: T[], key: (x: T) => string): { a?: T; b?: T }[] {
  const bByKey = new Map<string, number[]>();
  b.forEach((x, j) => {
    const k = key(x);
    const list = bByKey.get(k) ?? [];
    list.push(j);
    bByKey.set(k, list);
  });
  const taken = new Map<string, number>();
  const partnerOfB = new Map<number, number>(); // B index → A index
  const out: { entry: { a?: T; b?: T }; at: number; tie: number }[] = a.map((x, i) => {
    const k = key(x);
    const n = taken.get(k) ?? 0;
    taken.set(k, n + 1);
    const j = bByKey.get(k)?.[n];
    if (j === undefined) return { entry: { a: x }, at: i, tie: 0 };
    partnerOfB.set(j, i);
    return { entry: { a: x, b: b[j] }, at: i, tie: 0 };
  });
  // Before the first matched span (after any span only in A before it) until B's next match.
  let lastA = (partnerOfB.size ? Math.min(...partnerOfB.values()) : a.length) - 1;
  b.forEach((x, j) => {
    const i = partnerOfB.get(j);
    if (i !== undefined) lastA = i;
    else out.push({ entry: { b: x }, at: lastA + 0.5, tie: j });
  });
  return out.sort((p, q) => p.at - q.at || p.tie - q.tie).map((p) => p.entry);
}

export function compareTraces(spansA: TraceSpan[], spansB: TraceSpan[]): TraceComparison {
  const wa = buildWaterfall(spansA);
  const wb = buildWaterfall(spansB);
  const rows: CompareRow[] = [];
  const side = (r: WaterfallRow): Side => ({ span: r.span, offset: r.offset, duration: r.duration });
  const alone = (n: Node, depth: number, which: 'a' | 'b') => {
    rows.push({ depth, service: serviceOf(n.row.span), name: spanName(n.row.span), in: which, [which]: side(n.row) });
    for (const c of n.children) alone(c, depth + 1, which);
  };
  const walk = (as: Node[], bs: Node[], depth: number) => {
    for (const p of matchSiblings(as, bs, (n) => keyOf(n.row.span))) {
      if (p.a && p.b) {
        const a = side(p.a.row);
        const b = side(p.b.row);
        const diffMs = a.duration - b.duration;
        rows.push({ depth, service: serviceOf(a.span), name: spanName(a.span), in: 'both', a, b, diffMs, diffPct: b.duration > 0 ? (diffMs / b.duration) * 100 : null });
        walk(p.a.children, p.b.children, depth + 1);
      } else if (p.a) alone(p.a, depth, 'a');
      else if (p.b) alone(p.b, depth, 'b');
    }
  };
  walk(forest(wa), forest(wb), 0);
  const colors = serviceColors([...wa.services, ...wb.services.filter((x) => !wa.services.includes(x))]);
  return {
    rows,
    totalA: wa.total,
    totalB: wb.total,
    matched: rows.filter((r) => r.in === 'both').length,
    onlyA: rows.filter((r) => r.in === 'a').length,
    onlyB: rows.filter((r) => r.in === 'b').length,
    colors,
  };
}

/** The difference as it is shown: "+1.85 s (+1233%)", "−12 ms (−8%)", "same". */
export function formatDiff(r: Pick<CompareRow, 'diffMs' | 'diffPct'>, fmt: (ms: number) => string): string {
  if (r.diffMs === undefined) return '';
  if (Math.abs(r.diffMs) < 0.0005) return 'same';
  const sign = r.diffMs > 0 ? '+' : '−';
  const pct = r.diffPct === null || r.diffPct === undefined ? '' : ` (${sign}${Math.abs(r.diffPct) >= 10 ? Math.round(Math.abs(r.diffPct)) : Math.abs(r.diffPct).toFixed(1)}%)`;
  return `${sign}${fmt(Math.abs(r.diffMs))}${pct}`;
}
