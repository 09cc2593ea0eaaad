// An SLO's burn-down as the page draws it (SLO reporting's points, hourly, each the figures up to
// its time): the axis from where the SLO's events begin (not the whole period when they began an
// hour ago) to now, starting at 100 % (a whole budget before the first event), budget remaining
// and compliance as two series for two charts (their ranges differ: −700 % … 100 % against 90 …
// 100 %).

export interface BurnPoint {
  timestamp: number;
  compliance: number;
  budget_remaining: number;
}

export interface BurnDown {
  times: number[];
  budget: number[];
  compliance: number[];
  /** The x axis, Unix seconds. */
  range: [number, number];
  /** The y axes: budget from its lowest (or 0) to 100 %; compliance from just under its lowest (or the target) to 100 %. */
  budgetY: [number, number];
  complianceY: [number, number];
}

/** `points` ascending (SLO reporting's order); `period`: [the period's start, now]. */
export function burnDownSeries(points: BurnPoint[], period: [number, number], target = 0): BurnDown | undefined {
  const ps = points.filter((p) => p.timestamp >= period[0] && p.timestamp <= period[1]).sort((a, b) => a.timestamp - b.timestamp);
  if (ps.length === 0) return undefined;
  const step = ps.length > 1 ? ps[1].timestamp - ps[0].timestamp : 3600;
  // Where the budget was whole: the first point when it says so, else a step before it (never
  // before the period).
  const origin = ps[0].budget_remaining >= 100 ? ps[0].timestamp : Math.max(period[0], ps[0].timestamp - step);
  const lead = origin < ps[0].timestamp ? [{ timestamp: origin, compliance: 100, budget_remaining: 100 }] : [];
  const all = [...lead, ...ps];
  const end = Math.max(period[1], all[all.length - 1].timestamp);
  return {
    times: all.map((p) => p.timestamp),
    budget: all.map((p) => p.budget_remaining),
    compliance: all.map((p) => p.compliance),
    range: [origin, end],
    budgetY: [Math.min(0, ...all.map((p) => p.budget_remaining)), 100],
    complianceY: [Math.max(0, Math.floor(Math.min(target, ...all.map((p) => p.compliance))) - 1), 100],
  };
}
