// Regression tests of issue 37's defects ("Web UI, round two") in the web UI's pure logic: each
// `describe` names the defect it keeps fixed. The browser side is test/ui-defects.test.ts.
import { describe, expect, it } from 'vitest';
import { shapeResult, stepOf } from '../web/src/results.js';
import { cumulative, stackBands } from '../web/src/charts/stack.js';
import { intensity, niceTicks, timeTicks, unitOf } from '../web/src/heatmap.js';
import { formatClock, formatTooltipTime, spanText } from '../web/src/time.js';
import { buildWaterfall, serviceColors } from '../web/src/trace.js';
import { burnDownSeries } from '../web/src/burn-down.js';
import type { QueryData, TraceSpan } from '../web/src/api/types.js';

const at = (s: number) => new Date(s * 1000).toISOString();

describe('5: a stored result’s time axis', () => {
  it('spans the window the server names, even for a single bucket (not a range around one point)', () => {
    const data: QueryData = { results: [{ data: { COUNT: 3 } }], series: [{ time: at(6000), data: { COUNT: 3 } }] };
    const r = shapeResult({ time_range: 60, granularity: 60 }, data, { start: 6000, end: 6060 });
    expect(r.times).toEqual([6000]);
    expect(r.span).toEqual([6000, 6060]);
  });

  it('without the window: fills the quiet buckets between those with events, and spans to the last one’s end', () => {
    const data: QueryData = {
      results: [{ data: { COUNT: 6 } }],
      series: [at(600), at(780), at(840), at(1200)].map((time) => ({ time, data: { COUNT: 1 } })),
    };
    const r = shapeResult({ time_range: 3600 }, data);
    expect(r.step).toBe(60);
    expect(r.times).toHaveLength(11);
    expect(r.series[0].lines[0]).toEqual([1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1]);
    expect(r.span).toEqual([600, 1260]);
  });

  it('reads the buckets’ width from how far apart they are (a 121-minute window has 2-minute buckets)', () => {
    expect(stepOf({ time_range: 7200 }, [0, 240, 600])).toBe(120);
    expect(stepOf({ time_range: 7200 }, [600])).toBe(60);
    expect(stepOf({ time_range: 7200, granularity: 300 }, [600])).toBe(300);
  });
});

describe('3: stacked charts stack', () => {
  it('draws running sums (a missing value adds nothing) and fills each band down to the one below, not to zero', () => {
    expect(cumulative([[1, 2, null], [3, null, 1], [0, 5, 2]])).toEqual([[1, 2, 0], [4, 2, 1], [4, 7, 3]]);
    // uPlot series 1 … 3: series 2 fills down to 1, 3 down to 2; series 1 down to zero.
    expect(stackBands(3)).toEqual([{ series: [2, 1] }, { series: [3, 2] }]);
    expect(stackBands(1)).toEqual([]);
  });
});

describe('7: the heatmap’s axes and colours', () => {
  it('ticks values at round steps, not at the largest value ÷ 4', () => {
    expect(niceTicks(0.054, 3654.4, 5)).toEqual([1000, 2000, 3000]);
    expect(niceTicks(15, 998.1, 5)).toEqual([200, 400, 600, 800]);
    expect(niceTicks(0, 1, 5)).toEqual([0, 0.25, 0.5, 0.75, 1]);
  });

  it('reads the unit from the column’s name', () => {
    expect(unitOf('duration_ms')).toBe('ms');
    expect(unitOf('db.duration.ms')).toBe('ms');
    expect(unitOf('elapsed_seconds')).toBe('s');
    expect(unitOf('status')).toBeUndefined();
    expect(unitOf('items')).toBeUndefined();
  });

  it('ticks times at a round local step, evenly, in the line charts’ 12-hour form', () => {
    // UTC here (offset 0): 2 hours from 18:07 → every 15 minutes from 18:15.
    const start = Date.UTC(2024, 0, 1, 18, 7) / 1000;
    const { step, ticks } = timeTicks(start, start + 7200, 10, 0);
    expect(step).toBe(900);
    expect(ticks[0]).toBe(Date.UTC(2024, 0, 1, 18, 15) / 1000);
    expect(new Set(ticks.slice(1).map((t, i) => t - ticks[i]))).toEqual(new Set([900]));
    const local = new Date(2024, 0, 1, 18, 20).getTime() / 1000;
    expect(formatClock(local)).toBe('6:20pm');
    expect(formatClock(new Date(2024, 0, 1, 0, 5).getTime() / 1000)).toBe('12:05am');
    expect(formatTooltipTime(local)).toBe('1/1 6:20pm');
  });

  it('shows a cell of one event plainly (not faint)', () => {
    expect(intensity(1, 5000)).toBeGreaterThanOrEqual(0.3);
  });
});

describe('1: a trace’s services have distinct colours', () => {
  it('gives each service of a trace its own palette colour, in order of appearance (frontend and api-gateway differ)', () => {
    const c = serviceColors(['frontend', 'api-gateway', 'cart']);
    expect(new Set(Object.values(c)).size).toBe(3);
    expect(c.frontend).not.toBe(c['api-gateway']);
    const span = (id: string, parent: string | null, service: string, at: number): TraceSpan =>
      ({ dataset: 'd', time: new Date(at).toISOString(), span_id: id, parent_id: parent, name: id, service_name: service, duration_ms: 5, error: false, kind: 'span', data: {} }) as TraceSpan;
    const w = buildWaterfall([span('b', 'a', 'api-gateway', 2), span('a', null, 'frontend', 1), span('c', 'b', 'frontend', 3)]);
    expect(w.services).toEqual(['frontend', 'api-gateway']);
    expect(w.colors).toEqual(serviceColors(['frontend', 'api-gateway']));
  });
});

describe('6: the SLO burn-down', () => {
  const now = 1_000_000;
  const period: [number, number] = [now - 7 * 86400, now];
  const points = [
    { timestamp: now - 7200, compliance: 97, budget_remaining: -200 },
    { timestamp: now - 3600, compliance: 95, budget_remaining: -400 },
    { timestamp: now, compliance: 92, budget_remaining: -700 },
  ];

  it('spans from the SLO’s first events (not the whole period), starting at a whole budget', () => {
    const d = burnDownSeries(points, period, 99)!;
    expect(d.range).toEqual([now - 10800, now]);
    expect(d.times[0]).toBe(now - 10800);
    expect([d.budget[0], d.compliance[0]]).toEqual([100, 100]);
    expect(d.budget.slice(1)).toEqual([-200, -400, -700]);
  });

  it('gives budget and compliance their own axes (−700 … 100 against 91 … 100)', () => {
    const d = burnDownSeries(points, period, 99)!;
    expect(d.budgetY).toEqual([-700, 100]);
    expect(d.complianceY).toEqual([91, 100]);
  });

  it('needs no lead point when the first one is already whole, and nothing without points', () => {
    const d = burnDownSeries([{ timestamp: now - 3600, compliance: 100, budget_remaining: 100 }, ...points.slice(2)], period)!;
    expect(d.times).toEqual([now - 3600, now]);
    expect(burnDownSeries([], period)).toBeUndefined();
  });
});

describe('9: smaller ones', () => {
  it('says "within 1 hour", not "1 hours" (burn alerts read their minutes with spanText)', () => {
    expect(spanText(60 * 60)).toBe('1 hour');
    expect(spanText(240 * 60)).toBe('4 hours');
    expect(spanText(1440 * 60)).toBe('1 day');
    expect(spanText(90 * 60)).toBe('90 minutes');
  });
});
