// Stacked areas: each group's band sits on the ones before it. The chart draws the running sums
// (a group with no value in a bucket adds nothing there) and fills each band only between its own
// top and the top of the band below (uPlot `bands`), the first down to zero: bands never overlap,
// so each keeps its own colour.

/** The running sums of the lines, in order: out[i][t] = lines[0][t] + … + lines[i][t]. */
export function cumulative(lines: (number | null)[][]): number[][] {
  const out: number[][] = [];
  let acc: number[] | undefined;
  for (const l of lines) {
    const next = l.map((v, i) => (acc ? acc[i] : 0) + (v ?? 0));
    out.push(next);
    acc = next;
  }
  return out;
}

/**
 * uPlot bands for `n` stacked series (uPlot's series 1 … n, series 0 being time): each series'
 * fill is clipped to above the series below it, [upper, lower].
 */
export function stackBands(n: number): { series: [number, number] }[] {
  const out: { series: [number, number] }[] = [];
  for (let i = 2; i <= n; i++) out.push({ series: [i, i - 1] });
  return out;
}
