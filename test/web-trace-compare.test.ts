// The trace comparison's matching (web/src/trace-compare.ts): spans matched by service and name
// along the tree, the k-th with the k-th in start order; spans (and their subtrees) only in one
// trace; each matched pair's durations and difference.
import { describe, expect, it } from 'vitest';
import type { TraceSpan } from '../web/src/api/types.js';
import { compareTraces, formatDiff, matchSiblings } from '../web/src/trace-compare.js';
import { parseRoute, pathOf } from '../web/src/routes.js';

const T0 = Date.parse('2024-05-01T12:00:00Z');
function span(id: string, parent: string | null, service: string, name: string, startMs: number, durationMs: number): TraceSpan {
  return { dataset: 'shop', time: new Date(T0 + startMs).toISOString().replace('Z', '000Z'), span_id: id, parent_id: parent, name, service_name: service, duration_ms: durationMs, error: false, kind: 'span', data: {} };
}
const fmt = (ms: number) => `${ms} ms`;

describe('matchSiblings', () => {
  const key = (s: string) => s.split('#')[0];
  it('matches the k-th of a key in A with the k-th in B, the rest alone, B-only after their predecessor in B', () => {
    expect(matchSiblings(['x#1', 'y#1', 'x#2', 'x#3'], ['x#a', 'z#a', 'x#b', 'y#a'], key)).toEqual([
      { a: 'x#1', b: 'x#a' },
      { b: 'z#a' },
      { a: 'y#1', b: 'y#a' },
      { a: 'x#2', b: 'x#b' },
      { a: 'x#3' },
    ]);
  });
  it('puts spans only in B with no match before them in B before the first match, after spans only in A', () => {
    expect(matchSiblings(['x#1'], ['w#a', 'x#a'], key)).toEqual([{ b: 'w#a' }, { a: 'x#1', b: 'x#a' }]);
    expect(matchSiblings(['v#1', 'x#1'], ['w#a', 'x#a'], key)).toEqual([{ a: 'v#1' }, { b: 'w#a' }, { a: 'x#1', b: 'x#a' }]);
    expect(matchSiblings(['v#1'], ['w#a'], key)).toEqual([{ a: 'v#1' }, { b: 'w#a' }]);
    expect(matchSiblings([], ['w#a'], key)).toEqual([{ b: 'w#a' }]);
  });
});

describe('compareTraces', () => {
  // A: a slow checkout, three DB queries (one more than B), a retry of payment; B: typical.
  const a = [
    span('r', null, 'frontend', 'GET /checkout', 0, 900),
    span('c', 'r', 'cart', 'cart.load', 10, 100),
    span('q1', 'c', 'db', 'SELECT', 20, 30),
    span('q2', 'c', 'db', 'SELECT', 55, 40),
    span('q3', 'c', 'db', 'SELECT', 60, 20),
    span('p', 'r', 'payments', 'charge', 120, 700),
    span('p2', 'p', 'payments', 'retry', 500, 300),
  ];
  const b = [
    span('R', null, 'frontend', 'GET /checkout', 0, 200),
    span('C', 'R', 'cart', 'cart.load', 5, 110),
    span('Q1', 'C', 'db', 'SELECT', 10, 30),
    span('Q2', 'C', 'db', 'SELECT', 45, 20),
    span('P', 'R', 'payments', 'charge', 120, 70),
    span('F', 'R', 'fraud', 'score', 125, 10),
  ];
  const c = compareTraces(a, b);
  const rows = c.rows.map((r) => [r.depth, r.service, r.name, r.in, r.a?.span.span_id ?? null, r.b?.span.span_id ?? null]);

  it('lines both trees up along matched parents, in start order', () => {
    expect(rows).toEqual([
      [0, 'frontend', 'GET /checkout', 'both', 'r', 'R'],
      [1, 'cart', 'cart.load', 'both', 'c', 'C'],
      [2, 'db', 'SELECT', 'both', 'q1', 'Q1'],
      [2, 'db', 'SELECT', 'both', 'q2', 'Q2'],
      [2, 'db', 'SELECT', 'a', 'q3', null],
      [1, 'payments', 'charge', 'both', 'p', 'P'],
      [2, 'payments', 'retry', 'a', 'p2', null],
      [1, 'fraud', 'score', 'b', null, 'F'],
    ]);
    expect([c.matched, c.onlyA, c.onlyB]).toEqual([5, 2, 1]);
    expect([c.totalA, c.totalB]).toEqual([900, 200]);
  });

  it('gives each matched pair both durations and A − B in ms and in % of B', () => {
    const root = c.rows[0];
    expect([root.a!.duration, root.b!.duration, root.diffMs, root.diffPct]).toEqual([900, 200, 700, 350]);
    const cart = c.rows[1];
    expect(cart.diffMs).toBe(-10);
    expect(cart.diffPct).toBeCloseTo(-9.0909, 3);
    expect(c.rows[3].diffPct).toBe(100);
    expect(c.rows[4].diffMs).toBeUndefined();
    expect(formatDiff(root, fmt)).toBe('+700 ms (+350%)');
    expect(formatDiff(cart, fmt)).toBe('−10 ms (−9.1%)');
    expect(formatDiff({ diffMs: 0, diffPct: 0 }, fmt)).toBe('same');
    expect(formatDiff({ diffMs: 5, diffPct: null }, fmt)).toBe('+5 ms');
  });

  it('does not match across different parents: a span under an unmatched parent is only in its trace, with its subtree', () => {
    const x = [span('r', null, 'fe', 'root', 0, 10), span('m', 'r', 'svc', 'middle', 1, 5), span('l', 'm', 'db', 'leaf', 2, 1)];
    const y = [span('R', null, 'fe', 'root', 0, 10), span('M', 'R', 'svc', 'other', 1, 5), span('L', 'M', 'db', 'leaf', 2, 1)];
    expect(compareTraces(x, y).rows.map((r) => [r.depth, r.name, r.in])).toEqual([
      [0, 'root', 'both'],
      [1, 'middle', 'a'],
      [2, 'leaf', 'a'],
      [1, 'other', 'b'],
      [2, 'leaf', 'b'],
    ]);
  });

  it('gives every service of either trace a colour, distinct ones for distinct services', () => {
    expect(Object.keys(c.colors).sort()).toEqual(['cart', 'db', 'fraud', 'frontend', 'payments']);
    expect(new Set(Object.values(c.colors)).size).toBe(5);
  });

  it('compares roots without a partner (different root names) as only in one trace', () => {
    const r = compareTraces([span('a', null, 'fe', 'GET /a', 0, 1)], [span('b', null, 'fe', 'GET /b', 0, 1)]);
    expect(r.rows.map((x) => x.in)).toEqual(['a', 'b']);
  });
});

describe('the comparison page route', () => {
  it('is …/datasets/<ds>/trace/<a>/compare/<b>, both ids encoded', () => {
    const path = '/t/environments/prod/datasets/__all__/trace/a%2F1/compare/b%201';
    const route = { page: 'trace-compare' as const, team: 't', env: 'prod', dataset: '__all__', traceId: 'a/1', otherId: 'b 1' };
    expect(parseRoute(path)).toEqual(route);
    expect(pathOf(route)).toBe(path);
    expect(parseRoute('/t/environments/prod/datasets/shop/trace/a/other/b').page).toBe('notfound');
  });
});
