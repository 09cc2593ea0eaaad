// The web UI's pure logic, without a browser: the query in the URL, routes, time ranges, the
// shaping of results and heatmaps, the trace waterfall, Markdown, and the builder's rules.
import { describe, expect, it } from 'vitest';
import { normaliseSpec, sameSpec, searchToSpec, specToSearch } from '../web/src/query-url.js';
import { parseRoute, pathOf, type Route } from '../web/src/routes.js';
import { resultPagePath, sloPagePath, triggerPagePath } from '../src/domain/ui-links.js';
import { describeRange, fromLocalInput, spanText, toLocalInput, windowOf, withAbsolute, withPreset } from '../web/src/time.js';
import { bucketTimes, groupOf, parseCells, shapeResult, sortRows } from '../web/src/results.js';
import { buildGrid, intensity, selectionOf } from '../web/src/heatmap.js';
import { buildWaterfall } from '../web/src/trace.js';
import { parseInline, parseMarkdown, safeHref } from '../web/src/markdown.js';
import { cleanSpec, clauseOf, filterValue } from '../web/src/spec-edit.js';
import { ago, formatDuration, formatNumber } from '../web/src/format.js';
import type { QueryData, QuerySpec, ResultValue, TraceSpan } from '../web/src/api/types.js';

describe('query spec ⇄ URL', () => {
  const spec: QuerySpec = {
    time_range: 3600,
    calculations: [{ op: 'COUNT' }, { op: 'P99', column: 'duration_ms' }],
    filters: [{ column: 'status', op: '>=', value: 500 }, { column: 'region', op: 'in', value: ['eu', 'us'] }],
    filter_combination: 'OR',
    breakdowns: ['service.name'],
    orders: [{ op: 'COUNT', order: 'descending' }],
    havings: [{ calculate_op: 'COUNT', op: '>', value: 10 }],
    limit: 50,
    granularity: 60,
    calculated_fields: [{ name: 'slow', expression: 'GT($duration_ms, 500)' }],
  };

  it('round-trips every field of a spec', () => {
    const search = specToSearch(spec);
    expect(search.startsWith('?query=')).toBe(true);
    expect(searchToSpec(new URLSearchParams(search.slice(1)))).toEqual(normaliseSpec(spec));
    expect(searchToSpec(new URLSearchParams(search.slice(1)))).toEqual(spec);
  });

  it('gives the same URL for the same spec whatever its key order, empty lists or default combination', () => {
    const shuffled = { limit: 50, ...spec, havings: spec.havings, orders: spec.orders, breakdowns: spec.breakdowns } as QuerySpec;
    expect(specToSearch(shuffled)).toBe(specToSearch(spec));
    expect(specToSearch({ calculations: [{ op: 'COUNT' }], filters: [], breakdowns: [], filter_combination: 'AND' })).toBe(
      specToSearch({ calculations: [{ op: 'COUNT' }] }),
    );
    expect(sameSpec({ time_range: 60, filters: [] }, { time_range: 60 })).toBe(true);
    expect(sameSpec({ time_range: 60 }, { time_range: 120 })).toBe(false);
  });

  it('drops unknown keys, and says when the URL holds no usable query', () => {
    expect(searchToSpec(new URLSearchParams('query=%7B%22time_range%22%3A60%2C%22evil%22%3A1%7D'))).toEqual({ time_range: 60 });
    expect(searchToSpec(new URLSearchParams(''))).toBeUndefined();
    expect(searchToSpec(new URLSearchParams('query=%7Bnot%20json'))).toEqual({ error: expect.stringMatching(/not valid JSON/) });
    expect(searchToSpec(new URLSearchParams('query=%5B1%5D'))).toEqual({ error: expect.stringMatching(/not a JSON object/) });
  });
});

describe('routes', () => {
  it('parses the addresses Waggle hands out (query_url, board_url) and builds them back', () => {
    const cases: [string, Route][] = [
      ['/', { page: 'root' }],
      ['/login', { page: 'login' }],
      ['/my-team/environments/prod', { page: 'home', team: 'my-team', env: 'prod' }],
      ['/my-team/environments/prod/datasets/checkout', { page: 'query', team: 'my-team', env: 'prod', dataset: 'checkout' }],
      ['/my-team/environments/prod/datasets/checkout/result/abc123', { page: 'query', team: 'my-team', env: 'prod', dataset: 'checkout', resultId: 'abc123' }],
      ['/my-team/environments/prod/board/b1', { page: 'board', team: 'my-team', env: 'prod', boardId: 'b1' }],
      ['/my-team/environments/prod/datasets/__all__/trace/t%2F1', { page: 'trace', team: 'my-team', env: 'prod', dataset: '__all__', traceId: 't/1' }],
      ['/my-team/environments/prod/datasets/ds/slo/s1', { page: 'slo', team: 'my-team', env: 'prod', dataset: 'ds', sloId: 's1' }],
      ['/my-team/environments/prod/datasets/ds/events', { page: 'events', team: 'my-team', env: 'prod', dataset: 'ds' }],
      ['/my-team/environments/prod/boards', { page: 'boards', team: 'my-team', env: 'prod' }],
      ['/my-team/environments/prod/slos', { page: 'slos', team: 'my-team', env: 'prod' }],
      ['/my-team/environments/prod/triggers', { page: 'triggers', team: 'my-team', env: 'prod' }],
      ['/my-team/environments/prod/recipients', { page: 'recipients', team: 'my-team', env: 'prod' }],
      ['/my-team/environments/prod/datasets/__all__/triggers/T1', { page: 'trigger', team: 'my-team', env: 'prod', dataset: '__all__', triggerId: 'T1' }],
    ];
    for (const [path, route] of cases) {
      expect(parseRoute(path), path).toEqual(route);
      if (route.page !== 'root') expect(pathOf(route), path).toBe(path);
    }
    for (const bad of ['/x', '/a/b/c', '/t/environments/e/datasets/d/result', '/t/environments/e/nope', '/t/environments/e/datasets/d/trace/x/y']) {
      expect(parseRoute(bad), bad).toEqual({ page: 'notfound' });
    }
  });

  it('opens the pages the server links to (query_url, notifications’ trigger_url, result_url and SLO links)', () => {
    const scope = { team: 'my team', env: 'prod' };
    expect(parseRoute(resultPagePath('my team', 'prod', 'ds', 'R1'))).toEqual({ page: 'query', ...scope, dataset: 'ds', resultId: 'R1' });
    expect(parseRoute(triggerPagePath('my team', 'prod', '__all__', 'T1'))).toEqual({ page: 'trigger', ...scope, dataset: '__all__', triggerId: 'T1' });
    expect(parseRoute(sloPagePath('my team', 'prod', 'ds', 'S1'))).toEqual({ page: 'slo', ...scope, dataset: 'ds', sloId: 'S1' });
  });
});

describe('time ranges', () => {
  it('resolves a spec’s window as the server does', () => {
    expect(windowOf({}, 10_000)).toEqual({ start: 2800, end: 10_000 });
    expect(windowOf({ time_range: 600 }, 10_000)).toEqual({ start: 9400, end: 10_000 });
    expect(windowOf({ start_time: 100, end_time: 200 }, 10_000)).toEqual({ start: 100, end: 200 });
    expect(windowOf({ start_time: 100, time_range: 50 }, 10_000)).toEqual({ start: 100, end: 150 });
    expect(windowOf({ end_time: 500, time_range: 50 }, 10_000)).toEqual({ start: 450, end: 500 });
  });

  it('switches between presets and absolute ranges, and reads them', () => {
    const abs = withAbsolute({ time_range: 600, breakdowns: ['a'] }, 100.4, 199.2);
    expect(abs).toEqual({ breakdowns: ['a'], start_time: 100, end_time: 200 });
    expect(withPreset(abs, 3600)).toEqual({ breakdowns: ['a'], time_range: 3600 });
    expect(describeRange({ time_range: 3600 })).toBe('Last hour');
    expect(describeRange({})).toBe('Last 2 hours');
    expect(describeRange({ time_range: 5400 })).toBe('Last 90 minutes');
    expect(spanText(172800)).toBe('2 days');
    expect(describeRange({ start_time: 0, end_time: 60 })).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d – \d{4}-\d\d-\d\d \d\d:\d\d$/);
  });

  it('reads and writes datetime-local inputs in local time', () => {
    const t = Math.floor(new Date(2024, 4, 17, 9, 5).getTime() / 1000);
    expect(toLocalInput(t)).toBe('2024-05-17T09:05');
    expect(fromLocalInput('2024-05-17T09:05')).toBe(t);
    expect(fromLocalInput('2024-05-17T09:05:30')).toBe(t + 30);
    expect(fromLocalInput('')).toBeUndefined();
    expect(fromLocalInput('yesterday')).toBeUndefined();
  });
});

describe('results', () => {
  const spec: QuerySpec = { calculations: [{ op: 'COUNT' }, { op: 'AVG', column: 'd' }], breakdowns: ['svc'] };
  const data: QueryData = {
    results: [{ data: { svc: 'a', COUNT: 5, 'AVG(d)': 2 } }, { data: { COUNT: 3, 'AVG(d)': 1 } }],
    series: [
      { time: '2024-01-01T00:01:00Z', data: { svc: 'a', COUNT: 4, 'AVG(d)': 2 } },
      { time: '2024-01-01T00:00:00Z', data: { svc: 'a', COUNT: 1, 'AVG(d)': 2 } },
      { time: '2024-01-01T00:00:00Z', data: { COUNT: 3, 'AVG(d)': 1 } },
      { time: '2024-01-01T00:02:00Z', data: { svc: 'zzz-not-a-group', COUNT: 9 } },
    ],
    other_by_aggregate: { data: { COUNT: 7 } },
  };

  it('aligns every group’s series on the buckets: COUNT 0 and AVG no value where a group had no events', () => {
    const r = shapeResult(spec, data);
    expect(r.times).toEqual([1704067200, 1704067260, 1704067320]);
    expect(r.groups.map((g) => g.label)).toEqual(['a', '(none)']);
    expect(r.series.map((s) => s.key)).toEqual(['COUNT', 'AVG(d)']);
    expect(r.series[0].lines).toEqual([[1, 4, 0], [3, 0, 0]]);
    expect(r.series[1].lines).toEqual([[2, 2, null], [1, null, null]]);
    expect(r.other).toEqual({ COUNT: 7 });
    expect(r.rows).toHaveLength(2);
  });

  it('keys groups by their values, and a query without breakdowns has one group', () => {
    expect(groupOf(['a', 'b'], { a: 1, b: 'x' })).toEqual({ key: '[1,"x"]', label: '1, x', values: { a: 1, b: 'x' } });
    expect(groupOf([], { COUNT: 1 }).label).toBe('all events');
    const none = shapeResult({}, { results: [{ data: { COUNT: 2 } }], series: [{ time: '2024-01-01T00:00:00Z', data: { COUNT: 2 } }] });
    expect(none.calcKeys).toEqual(['COUNT']);
    expect(none.series[0].lines).toEqual([[2]]);
    expect(none.other).toBeUndefined();
  });

  it('sums HEATMAP cells over the groups', () => {
    const cell = (lower: number, count: number) => ({ lower, upper: lower + 10, count });
    const r = shapeResult(
      { calculations: [{ op: 'HEATMAP', column: 'd' }], breakdowns: ['svc'] },
      {
        results: [{ data: { svc: 'a' } }, { data: { svc: 'b' } }],
        series: [
          { time: '2024-01-01T00:00:00Z', data: { svc: 'a', 'HEATMAP(d)': JSON.stringify([cell(0, 2), cell(10, 1)]) } },
          { time: '2024-01-01T00:00:00Z', data: { svc: 'b', 'HEATMAP(d)': JSON.stringify([cell(10, 5)]) } },
        ],
      },
    );
    expect(r.series).toEqual([]);
    expect(r.heatmap?.rows).toEqual([{ time: 1704067200, cells: [cell(0, 2), cell(10, 6)] }]);
    expect(parseCells('not json')).toEqual([]);
    expect(parseCells(3)).toEqual([]);
  });

  it('sorts rows numerically or as text, missing values last', () => {
    const rows: Record<string, ResultValue>[] = [{ a: 10, b: 'x2' }, { a: 9, b: 'x10' }, { b: 'x1' }, { a: 100, b: 'x3' }];
    expect(sortRows(rows, 'a', true).map((r) => r.a)).toEqual([100, 10, 9, undefined]);
    expect(sortRows(rows, 'a', false).map((r) => r.a)).toEqual([9, 10, 100, undefined]);
    expect(sortRows(rows, 'b', false).map((r) => r.b)).toEqual(['x1', 'x2', 'x3', 'x10']);
  });
});

describe('heatmap grid', () => {
  const rows = [
    { time: 0, cells: [{ lower: 0, upper: 2, count: 1 }, { lower: 8, upper: 10, count: 100 }] },
    { time: 60, cells: [] },
    { time: 120, cells: [{ lower: 2, upper: 4, count: 10 }] },
  ];

  it('puts each cell in its value bucket, from the smallest lower bound up', () => {
    const g = buildGrid(rows)!;
    expect(g).toMatchObject({ times: [0, 60, 120], step: 60, lo: 0, width: 2, buckets: 5, max: 100 });
    expect([...g.counts]).toEqual([1, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0]);
    expect(buildGrid([])).toBeUndefined();
    expect(buildGrid([{ time: 0, cells: [] }])).toBeUndefined();
  });

  it('colours on a log scale', () => {
    expect(intensity(0, 100)).toBe(0);
    expect(intensity(100, 100)).toBe(1);
    expect(intensity(1, 100)).toBeCloseTo(0.3, 10);
    expect(intensity(10, 100)).toBeCloseTo(0.3 + 0.7 / 2, 10);
    expect(intensity(1, 1)).toBe(1);
  });

  it('turns a rectangle of cells into a BubbleUp selection, whichever way it was drawn', () => {
    const g = buildGrid(rows)!;
    expect(selectionOf(g, 2, 1, 4, 1)).toEqual({ start_time: 60, end_time: 180, lower: 2, upper: 10 });
    expect(selectionOf(g, -5, 99, -1, 99)).toEqual({ start_time: 0, end_time: 180, lower: 0, upper: 10 });
  });
});

describe('trace waterfall', () => {
  const span = (id: string | null, parent: string | null, ms: number, dur: number | null, extra: Partial<TraceSpan> = {}): TraceSpan => ({
    dataset: 'd', time: new Date(Date.UTC(2024, 0, 1) + ms).toISOString().replace('Z', '000Z'), span_id: id, parent_id: parent,
    name: id, service_name: 'svc', duration_ms: dur, error: false, kind: 'span', data: {}, ...extra,
  });

  it('nests spans under their parents, siblings by start, with offsets and durations from the trace start', () => {
    const w = buildWaterfall([
      span('c2', 'root', 50, 10),
      span('root', null, 0, 100),
      span('c1', 'root', 10, 30),
      span('g1', 'c1', 15, 5, { error: true }),
      span(null, 'c1', 20, null, { kind: 'span_event', name: 'retry' }),
      span(null, 'c2', 50, null, { kind: 'link', link: { trace_id: 'x', span_id: 'y' } }),
    ]);
    expect(w.rows.map((r) => [r.span.span_id, r.depth, r.offset, r.duration])).toEqual([
      ['root', 0, 0, 100],
      ['c1', 1, 10, 30],
      ['g1', 2, 15, 5],
      ['c2', 1, 50, 10],
    ]);
    expect(w.total).toBe(100);
    expect(w.errors).toBe(1);
    expect(w.rows[1].events.map((e) => e.name)).toEqual(['retry']);
    expect(w.rows[3].links).toHaveLength(1);
    expect(w.rows[0].childCount).toBe(2);
  });

  it('keeps spans with a missing parent as top-level orphans in time order, and survives cycles', () => {
    const w = buildWaterfall([span('b', 'missing', 5, 1), span('a', null, 0, 2), span('x', 'y', 9, 1), span('y', 'x', 8, 1)]);
    // (x and y name each other as parents: shown from the earlier one, nothing is dropped)
    expect(w.rows.map((r) => [r.span.span_id, r.depth, r.orphan])).toEqual([
      ['a', 0, false],
      ['b', 0, true],
      ['y', 0, false],
      ['x', 1, false],
    ]);
    // microsecond precision
    const m = buildWaterfall([span('r', null, 0, 1), { ...span('s', 'r', 0, 0.5), time: '2024-01-01T00:00:00.000250Z' }]);
    expect(m.rows[1].offset).toBeCloseTo(0.25, 9);
  });
});

describe('Markdown of text panels', () => {
  it('never interprets HTML and keeps only web and mail links', () => {
    const blocks = parseMarkdown('# Title\n\n<script>alert(1)</script> **bold** and [x](javascript:alert) and [ok](https://example.com)');
    expect(blocks[0]).toEqual({ t: 'heading', level: 1, children: [{ t: 'text', text: 'Title' }] });
    expect(blocks[1]).toEqual({
      t: 'paragraph',
      children: [
        { t: 'text', text: '<script>alert(1)</script> ' },
        { t: 'strong', children: [{ t: 'text', text: 'bold' }] },
        { t: 'text', text: ' and ' },
        { t: 'text', text: 'x' },
        { t: 'text', text: ' and ' },
        { t: 'link', href: 'https://example.com', children: [{ t: 'text', text: 'ok' }] },
      ],
    });
    expect(safeHref('mailto:a@b.c')).toBe('mailto:a@b.c');
    expect(safeHref('data:text/html,x')).toBeUndefined();
    expect(safeHref(' JAVASCRIPT:x')).toBeUndefined();
  });

  it('parses lists, quotes, code, rules and inline code', () => {
    const b = parseMarkdown('- a\n- *b*\n\n1. one\n2. two\n\n> quoted\n\n```\ncode <b>\n```\n\n---\n\nuse `x < y`');
    expect(b.map((x) => x.t)).toEqual(['list', 'list', 'quote', 'codeblock', 'rule', 'paragraph']);
    expect(b[0]).toEqual({ t: 'list', ordered: false, items: [[{ t: 'text', text: 'a' }], [{ t: 'em', children: [{ t: 'text', text: 'b' }] }]] });
    expect((b[1] as { ordered: boolean }).ordered).toBe(true);
    expect(b[3]).toEqual({ t: 'codeblock', text: 'code <b>' });
    expect(parseInline('use `x < y`')).toEqual([{ t: 'text', text: 'use ' }, { t: 'code', text: 'x < y' }]);
    expect(parseInline('see https://example.com/a.')).toEqual([
      { t: 'text', text: 'see ' },
      { t: 'link', href: 'https://example.com/a', children: [{ t: 'text', text: 'https://example.com/a' }] },
      { t: 'text', text: '.' },
    ]);
  });
});

describe('builder rules and formatting', () => {
  it('puts each API problem in its clause', () => {
    expect(clauseOf('calculations[1].column')).toBe('visualize');
    expect(clauseOf('query.filters[0].op')).toBe('where');
    expect(clauseOf('filter_combination')).toBe('where');
    expect(clauseOf('breakdowns[0]')).toBe('group');
    expect(clauseOf('orders[0]')).toBe('order');
    expect(clauseOf('havings[0].value')).toBe('having');
    expect(clauseOf('calculated_fields[0].expression')).toBe('calculated');
    expect(clauseOf('time_range')).toBe('time');
    expect(clauseOf('body')).toBe('other');
  });

  it('types filter values by the column', () => {
    expect(filterValue('=', '500', 'integer')).toBe(500);
    expect(filterValue('=', '500', 'string')).toBe('500');
    expect(filterValue('=', 'abc', 'float')).toBe('abc');
    expect(filterValue('=', 'true', 'boolean')).toBe(true);
    expect(filterValue('in', 'a, b,,c ', 'string')).toEqual(['a', 'b', 'c']);
    expect(filterValue('exists', 'x', 'string')).toBeUndefined();
  });

  it('drops rows left blank', () => {
    expect(
      cleanSpec({
        calculations: [{ op: 'COUNT' }, { op: 'AVG', column: '' }, { op: 'MAX', column: 'd' }],
        filters: [{ column: '', op: '=', value: 'x' }, { column: 'a', op: 'exists' }],
        breakdowns: [' svc ', ''],
        calculated_fields: [{ name: '', expression: '' }],
      }),
    ).toEqual({ calculations: [{ op: 'COUNT' }, { op: 'MAX', column: 'd' }], filters: [{ column: 'a', op: 'exists' }], breakdowns: ['svc'], calculated_fields: [] });
  });

  it('formats numbers, durations and ages', () => {
    expect(formatNumber(1234567)).toBe('1.235M');
    expect(formatNumber(12345)).toBe('12,345');
    expect(formatNumber(0.123456)).toBe('0.1235');
    expect(formatNumber(null)).toBe('–');
    expect(formatDuration(0)).toBe('0 ms');
    expect(formatDuration(0.25)).toBe('250 µs');
    expect(formatDuration(1500)).toBe('1.5 s');
    expect(ago(new Date(Date.now() - 3 * 3600_000).toISOString())).toBe('3 hours ago');
    expect(ago(null)).toBe('never');
  });
});

describe('buckets of a window', () => {
  it('fills the window with the server’s buckets, so quiet ones show', () => {
    const data: QueryData = { results: [{ data: { COUNT: 2 } }], series: [{ time: new Date(7200 * 1000).toISOString(), data: { COUNT: 2 } }] };
    // 7 days: hourly buckets (at most 120 → 7200 s); the window's start rounds down to a bucket.
    const r = shapeResult({ time_range: 604800 }, data, { start: 1000, end: 1000 + 604800 });
    expect(r.times[0]).toBe(0);
    expect(r.times[1] - r.times[0]).toBe(7200);
    expect(r.times).toHaveLength(85);
    expect(r.series[0].lines[0].filter((v) => v !== 0)).toEqual([2]);
    expect(bucketTimes({ granularity: 1 }, { start: 0, end: 86400 })).toBeUndefined();
  });
});

describe('the window a result reads', () => {
  it('is the server’s (truncated to the minute for 2 hours), so the UI cuts the same buckets', async () => {
    const { truncatedWindow } = await import('../web/src/time.js');
    // 2 hours ending mid-minute spans 121 minutes once truncated: the server's buckets are 2 minutes.
    const w = truncatedWindow({ time_range: 7200 }, 100_030);
    expect(w).toEqual({ start: 92_820, end: 100_080 });
    const times = bucketTimes({ time_range: 7200 }, w)!;
    expect(times[1] - times[0]).toBe(120);
    // On a whole minute it stays 120 minutes: 1-minute buckets.
    const exact = truncatedWindow({ time_range: 7200 }, 100_020);
    expect(exact).toEqual({ start: 92_820, end: 100_020 });
    const t2 = bucketTimes({ time_range: 7200 }, exact)!;
    expect([t2.length, t2[1] - t2[0]]).toEqual([120, 60]);
  });
});
