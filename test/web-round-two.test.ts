// Regression tests of issue 37's defects ("Web UI, round two") in the web UI's pure logic: each
// `describe` names the defect it keeps fixed. The browser side is test/ui-defects.test.ts.
import { describe, expect, it } from 'vitest';
import { shapeResult, stepOf } from '../web/src/results.js';
import { cumulative, stackBands } from '../web/src/charts/stack.js';
import type { QueryData } from '../web/src/api/types.js';

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
