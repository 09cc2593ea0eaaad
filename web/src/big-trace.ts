// What keeps a trace of 100,000 spans usable (the trace page, docs/web-ui.md "Traces"): the
// rows a virtualised waterfall draws, the critical path, search over span names and fields,
// and which rows are hidden when subtrees or whole services are collapsed. Pure functions of a
// Waterfall (trace.ts), unit-tested in test/web-big-trace.test.ts.
import { serviceOf, type Waterfall, type WaterfallRow } from './trace.js';

/** Rows drawn from `first` to `last` (exclusive), with spacers of `top` and `bottom` px around them. */
export interface VirtualWindow {
  first: number;
  last: number;
  top: number;
  bottom: number;
}

/**
 * The rows of a list of `count` rows of `rowHeight` px that a viewport of `height` px scrolled
 * to `scrollTop` shows, with `overscan` more either side; never more than the viewport's rows
 * plus twice the overscan, however long the list.
 */
export function virtualWindow(scrollTop: number, height: number, rowHeight: number, count: number, overscan = 10): VirtualWindow {
  if (count <= 0 || rowHeight <= 0) return { first: 0, last: 0, top: 0, bottom: 0 };
  const top = Math.max(0, Math.min(scrollTop, count * rowHeight));
  const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
  const last = Math.min(count, Math.ceil((top + Math.max(0, height)) / rowHeight) + overscan);
  return { first, last: Math.max(first, last), top: first * rowHeight, bottom: (count - Math.max(first, last)) * rowHeight };
}

/** The scrollTop that brings row `index` into a viewport of `height` px, or the current one when it is in view. */
export function scrollToShow(index: number, scrollTop: number, height: number, rowHeight: number): number {
  const y = index * rowHeight;
  if (y < scrollTop) return y;
  if (y + rowHeight > scrollTop + height) return y + rowHeight - height;
  return scrollTop;
}

/** Each row's parent row (-1 for the top level), from the rows' depths in tree order. */
export function parentsOf(rows: WaterfallRow[]): Int32Array {
  const parent = new Int32Array(rows.length);
  const stack: number[] = [];
  rows.forEach((r, i) => {
    while (stack.length > r.depth) stack.pop();
    parent[i] = stack.length ? stack[stack.length - 1] : -1;
    stack.length = r.depth;
    stack.push(i);
  });
  return parent;
}

/**
 * The critical path of the trace, as Jaeger and Grafana compute it: from the root, the child
 * that ends last (its end capped at its parent's), then within that child the same; back in a
 * parent, the child that ends last before the returning child started, and so on. Answers the
 * rows on the path (the first top-level row's tree; spans of other top-level trees are not on it).
 */
export function criticalPath(w: Waterfall): Set<number> {
  const rows = w.rows;
  const out = new Set<number>();
  if (!rows.length) return out;
  const parent = parentsOf(rows);
  const end = (i: number) => rows[i].offset + rows[i].duration;
  const kids = new Map<number, number[]>();
  for (let i = 0; i < rows.length; i++) {
    const p = parent[i];
    if (p < 0) continue;
    const list = kids.get(p);
    if (list) list.push(i);
    else kids.set(p, [i]);
  }
  // Each parent's children by their end (capped at the parent's) latest first; the cursor only
  // moves on, since the time a parent is searched before only goes back.
  const capped = (c: number) => Math.min(end(c), end(parent[c]));
  for (const list of kids.values()) list.sort((a, b) => capped(b) - capped(a) || rows[b].offset - rows[a].offset);
  const cursor = new Map<number, number>();
  const lastBefore = (p: number, until: number): number => {
    const list = kids.get(p);
    if (!list) return -1;
    let k = cursor.get(p) ?? 0;
    while (k < list.length && !(capped(list[k]) <= until && rows[list[k]].offset < until)) k++;
    cursor.set(p, k + 1);
    return k < list.length ? list[k] : -1;
  };
  let i = 0;
  let until = end(0);
  for (let steps = 0; steps <= rows.length * 2; steps++) {
    out.add(i);
    const c = lastBefore(i, until);
    if (c >= 0) {
      i = c;
      until = capped(c);
      continue;
    }
    // Back up: the parent's next child must end before this one started.
    let found = false;
    while (parent[i] >= 0) {
      const p = parent[i];
      until = Math.min(until, rows[i].offset);
      const next = lastBefore(p, until);
      if (next >= 0) {
        i = next;
        until = capped(next);
        found = true;
        break;
      }
      i = p;
    }
    if (!found) break;
  }
  return out;
}

/**
 * Rows whose span matches `query` (case-insensitive): in its name, service, span id, or any
 * field's name or value; `field=value` matches that field's value containing `value`. Empty → none.
 */
export function searchRows(w: Waterfall, query: string): number[] {
  const q = query.trim().toLowerCase();
  if (!q) return [];
  const eq = /^([^=\s]+)\s*=\s*(.*)$/.exec(q);
  const out: number[] = [];
  w.rows.forEach((r, i) => {
    const s = r.span;
    if (eq) {
      const [, key, value] = eq;
      const named = key === 'name' ? s.name : key === 'service' || key === 'service.name' ? serviceOf(s) : undefined;
      if (named != null && named.toLowerCase().includes(value)) return void out.push(i);
      for (const k in s.data) if (k.toLowerCase() === key && String(s.data[k]).toLowerCase().includes(value)) return void out.push(i);
      return;
    }
    if ((s.name ?? '').toLowerCase().includes(q) || serviceOf(s).toLowerCase().includes(q) || (s.span_id ?? '').toLowerCase().includes(q)) return void out.push(i);
    for (const k in s.data) if (k.toLowerCase().includes(q) || String(s.data[k]).toLowerCase().includes(q)) return void out.push(i);
  });
  return out;
}

/**
 * The rows shown: not under a collapsed row, nor under the top span of a collapsed service (a
 * collapsed service shows only the roots of its subtrees, each standing for everything under it).
 */
export function shownRows(w: Waterfall, collapsed: Set<number>, services: Set<string> = new Set()): number[] {
  const out: number[] = [];
  let hideBelow = Infinity;
  const rows = w.rows;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    if (r.depth > hideBelow) continue;
    hideBelow = Infinity;
    out.push(i);
    if (collapsed.has(i) || (r.childCount > 0 && services.has(serviceOf(r.span)))) hideBelow = r.depth;
  }
  return out;
}

/** Whether row `i` is folded away: a collapsed row or service above it. */
export function isFolded(w: Waterfall, parent: Int32Array, i: number, collapsed: Set<number>, services: Set<string>): boolean {
  for (let p = parent[i]; p >= 0; p = parent[p]) if (collapsed.has(p) || services.has(serviceOf(w.rows[p].span))) return true;
  return false;
}

/** A time window of the trace (ms from its start), at least `min` ms wide, kept within [0, total]. */
export function clampWindow(from: number, to: number, total: number, min = 0.001): [number, number] {
  let a = Math.min(from, to);
  let b = Math.max(from, to);
  if (b - a < min) b = a + min;
  const width = Math.min(b - a, Math.max(total, min));
  if (a < 0) a = 0;
  if (a + width > Math.max(total, min)) a = Math.max(total, min) - width;
  return [a, a + width];
}
