// Traces of any size (web/src/big-trace.ts): the virtual window of the waterfall's rows, the
// critical path (Jaeger's), search over span names and fields, collapsing subtrees and
// services; and buildWaterfall (web/src/trace.ts) on 100,000 spans, deep and wide.
import { describe, expect, it } from 'vitest';
import type { TraceSpan } from '../web/src/api/types.js';
import { clampWindow, criticalPath, isFolded, parentsOf, scrollToShow, searchRows, shownRows, virtualWindow } from '../web/src/big-trace.js';
import { buildWaterfall } from '../web/src/trace.js';

const T0 = Date.parse('2024-05-01T12:00:00Z');
function span(id: string, parent: string | null, service: string, startMs: number, durationMs: number, data: TraceSpan['data'] = {}): TraceSpan {
  return { dataset: 'shop', time: new Date(T0 + startMs).toISOString().replace('Z', '000Z'), span_id: id, parent_id: parent, name: id, service_name: service, duration_ms: durationMs, error: false, kind: 'span', data };
}
const ids = (w: ReturnType<typeof buildWaterfall>, rows: Iterable<number>) => [...rows].map((i) => w.rows[i].span.span_id).sort();

describe('virtual window', () => {
  it('draws the rows in view and the overscan, with spacers for the rest', () => {
    expect(virtualWindow(0, 280, 28, 100_000, 5)).toEqual({ first: 0, last: 15, top: 0, bottom: (100_000 - 15) * 28 });
    const mid = virtualWindow(28 * 50_000 + 14, 280, 28, 100_000, 5);
    expect(mid).toEqual({ first: 49_995, last: 50_016, top: 49_995 * 28, bottom: (100_000 - 50_016) * 28 });
    expect(mid.top + (mid.last - mid.first) * 28 + mid.bottom).toBe(100_000 * 28);
  });
  it('is bounded however far it is scrolled, and empty for no rows', () => {
    const end = virtualWindow(28 * 200_000, 280, 28, 100_000, 5);
    expect(end.last).toBe(100_000);
    expect(end.last - end.first).toBeLessThanOrEqual(10 + 5);
    expect(virtualWindow(-50, 280, 28, 3, 5)).toEqual({ first: 0, last: 3, top: 0, bottom: 0 });
    expect(virtualWindow(0, 280, 28, 0)).toEqual({ first: 0, last: 0, top: 0, bottom: 0 });
  });
  it('scrolls a row into view only when it is out of it', () => {
    expect(scrollToShow(5, 0, 280, 28)).toBe(0);
    expect(scrollToShow(20, 0, 280, 28)).toBe(21 * 28 - 280);
    expect(scrollToShow(2, 28 * 10, 280, 28)).toBe(56);
  });
  it('keeps a time window within the trace', () => {
    expect(clampWindow(80, 20, 100)).toEqual([20, 80]);
    expect(clampWindow(-10, 30, 100)).toEqual([0, 40]);
    expect(clampWindow(90, 130, 100)).toEqual([60, 100]);
  });
});

describe('critical path', () => {
  it('follows the child that ends last, then the one that ends before it started', () => {
    // root 0–100: a 0–30, b 20–90 (c 50–90 under b), d 0–15. b ends last; a overlaps b's start,
    // so not a; d ends (15) before b starts (20): on the path.
    const w = buildWaterfall([span('root', null, 'fe', 0, 100), span('a', 'root', 'api', 0, 30), span('b', 'root', 'api', 20, 70), span('c', 'b', 'db', 50, 40), span('d', 'root', 'api', 0, 15)]);
    expect(ids(w, criticalPath(w))).toEqual(['b', 'c', 'd', 'root']);
  });
  it('caps a child that outlives its parent, and goes back up through several levels', () => {
    const w = buildWaterfall([
      span('root', null, 'fe', 0, 100),
      span('late', 'root', 'q', 40, 500), // ends after the root: counted as ending at 100
      span('early', 'root', 'api', 0, 35),
      span('deep', 'early', 'db', 5, 20),
      span('deeper', 'deep', 'db', 10, 12),
      span('side', 'early', 'db', 0, 3),
    ]);
    expect(ids(w, criticalPath(w))).toEqual(['deep', 'deeper', 'early', 'late', 'root', 'side'].sort());
  });
  it('is the root alone for a lone span, empty for none, and linear on 100,000 spans', () => {
    const one = buildWaterfall([span('r', null, 'fe', 0, 5)]);
    expect(ids(one, criticalPath(one))).toEqual(['r']);
    expect(criticalPath(buildWaterfall([])).size).toBe(0);
    // A root with 100,000 children one after another: every one is on the path.
    const many = [span('r', null, 'fe', 0, 100_000)];
    for (let i = 0; i < 99_999; i++) many.push(span(`s${i}`, 'r', 'api', i, 1));
    const w = buildWaterfall(many);
    const t0 = performance.now();
    expect(criticalPath(w).size).toBe(100_000);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});

describe('search', () => {
  const w = buildWaterfall([
    span('root', null, 'frontend', 0, 100, { 'http.route': '/checkout' }),
    span('charge', 'root', 'payments', 10, 50, { 'card.brand': 'visa', amount: 42 }),
    span('SELECT carts', 'root', 'db', 5, 5, { 'db.statement': 'SELECT * FROM carts' }),
  ]);
  it('matches names, services and fields, case-insensitively, in row order', () => {
    expect(ids(w, searchRows(w, 'CHECKOUT'))).toEqual(['root']);
    expect(ids(w, searchRows(w, 'pay'))).toEqual(['charge']);
    expect(ids(w, searchRows(w, 'carts'))).toEqual(['SELECT carts']);
    expect(ids(w, searchRows(w, 'card.brand'))).toEqual(['charge']);
    expect(searchRows(w, '  ')).toEqual([]);
    expect(searchRows(w, 'nothing-like-it')).toEqual([]);
  });
  it('field=value matches that field only', () => {
    expect(ids(w, searchRows(w, 'amount=42'))).toEqual(['charge']);
    expect(ids(w, searchRows(w, 'service=db'))).toEqual(['SELECT carts']);
    expect(searchRows(w, 'card.brand=amex')).toEqual([]);
  });
});

describe('collapsing', () => {
  const w = buildWaterfall([
    span('root', null, 'frontend', 0, 100),
    span('api1', 'root', 'api', 1, 40),
    span('db1', 'api1', 'db', 2, 5),
    span('api1b', 'api1', 'api', 10, 5),
    span('api2', 'root', 'api', 50, 40),
    span('db2', 'api2', 'db', 55, 5),
  ]);
  it('hides a collapsed row’s subtree', () => {
    const api1 = w.rows.findIndex((r) => r.span.span_id === 'api1');
    expect(ids(w, shownRows(w, new Set([api1]))).sort()).toEqual(['api1', 'api2', 'db2', 'root']);
  });
  it('collapses a service into the roots of its subtrees', () => {
    expect(ids(w, shownRows(w, new Set(), new Set(['api'])))).toEqual(['api1', 'api2', 'root']);
    expect(ids(w, shownRows(w, new Set(), new Set(['db'])))).toHaveLength(6); // leaves: nothing to fold
    const parent = parentsOf(w.rows);
    const db2 = w.rows.findIndex((r) => r.span.span_id === 'db2');
    expect(isFolded(w, parent, db2, new Set(), new Set(['api']))).toBe(true);
    expect(isFolded(w, parent, db2, new Set(), new Set(['db']))).toBe(false);
    expect([...parent]).toEqual([-1, 0, 1, 1, 0, 4]);
  });
});

describe('buildWaterfall at 100,000 spans', () => {
  it('lays out a chain 100,000 deep without overflowing the stack, quickly', () => {
    const spans = [span('s0', null, 'a', 0, 100_000)];
    for (let i = 1; i < 100_000; i++) spans.push(span(`s${i}`, `s${i - 1}`, i % 2 ? 'a' : 'b', i, 100_000 - i));
    const t0 = performance.now();
    const w = buildWaterfall(spans);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(w.rows).toHaveLength(100_000);
    expect(w.rows[99_999].depth).toBe(99_999);
    expect(w.total).toBe(100_000);
    expect(criticalPath(w).size).toBe(100_000);
  });
});
