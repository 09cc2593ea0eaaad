// The chart of a query result as a PNG image: what `links.graph_image_url` answers
// (src/api/v1/query-results.ts) and what a Slack message shows of a trigger's result.
//
// Decisions (docs/queries.md, "graph_image_url"):
// - An SVG is built here (one line per group and calculation, the time axis in UTC, the value
//   axis, the title, a legend) and turned into a PNG by resvg (@resvg/resvg-js, prebuilt, no
//   browser). Text uses the system's fonts (sans-serif); without any installed the PNG has
//   lines and no text.
// - Bounded: at most MAX_LINES lines (the result's first groups, as the result orders them; the
//   legend says how many more), and a line has one point per time bucket of the result (the
//   query's granularity: at most 1,000 buckets), so a huge result costs no more than a large one.
// - HEATMAP calculations are not drawn (the legend says so); a result with nothing to draw (no
//   series, series disabled, a failed run) gives an image saying so, in the same size.
// - An optional threshold (a trigger's) is drawn as a dashed horizontal line.
import { Resvg } from '@resvg/resvg-js';
import { calculationKey, granularityFor, type QuerySpec } from '../query/spec.js';
import type { QueryData } from '../query/run.js';

export const IMAGE_WIDTH = 800;
export const IMAGE_HEIGHT = 400;
/** Most lines drawn. */
export const MAX_LINES = 20;
/** Most time buckets filled in (past that, only the buckets with data). */
const MAX_BUCKETS = 5000;

const COLORS = ['#5b8def', '#e8823a', '#3fb27f', '#d9534f', '#9b6bdf', '#c7a72c', '#2bb3c0', '#e06ca6', '#7f8c3d', '#8c6d5a'];
const ZERO_WHEN_EMPTY = new Set(['COUNT', 'SUM', 'CONCURRENCY', 'COUNT_DISTINCT']);

export interface ChartImageInput {
  title: string;
  /** A second line under the title (dataset, window). */
  subtitle?: string;
  query: QuerySpec;
  /** The result's window, Unix seconds [start, end). */
  start: number;
  end: number;
  data?: QueryData;
  /** Why there is no data (a failed run), shown instead of the chart. */
  error?: string;
  threshold?: { op: string; value: number };
}

export interface ChartLine {
  label: string;
  values: (number | null)[];
}

/** The lines of a result, bounded: times (Unix seconds, ascending), lines, and how many were left out. */
export function chartLines(input: Pick<ChartImageInput, 'query' | 'start' | 'end' | 'data'>): { times: number[]; lines: ChartLine[]; omitted: number; heatmaps: number } {
  const { query, data } = input;
  const calcs = query.calculations?.length ? query.calculations : [{ op: 'COUNT' as const }];
  const drawn = [...new Map(calcs.filter((c) => c.op !== 'HEATMAP').map((c) => [calculationKey(c), c.op])).entries()];
  const heatmaps = calcs.length - calcs.filter((c) => c.op !== 'HEATMAP').length;
  if (!data || data.series.length === 0 || drawn.length === 0) return { times: [], lines: [], omitted: 0, heatmaps };
  const breakdowns = query.breakdowns ?? [];
  const groupKey = (d: Record<string, unknown>) => JSON.stringify(breakdowns.map((b) => d[b] ?? null));
  const groupLabel = (d: Record<string, unknown>) => (breakdowns.length ? breakdowns.map((b) => (d[b] === undefined ? '(none)' : String(d[b]))).join(', ') : '');

  // Times: every bucket of the window (quiet ones too), plus any the series has.
  const g = granularityFor(query, input.start, input.end);
  const first = Math.floor(input.start / g) * g;
  const timeSet = new Set<number>();
  if ((input.end - first) / g <= MAX_BUCKETS) for (let t = first; t < input.end; t += g) timeSet.add(t);
  for (const s of data.series) timeSet.add(Date.parse(s.time) / 1000);
  const times = [...timeSet].filter(Number.isFinite).sort((a, b) => a - b);
  const tIndex = new Map(times.map((t, i) => [t, i]));

  // Groups in the result's order (its ordering is what the result ranks first).
  const groups = (data.results.length ? data.results : data.series).map((r) => r.data);
  const order = [...new Map(groups.map((d) => [groupKey(d), d])).entries()];
  const total = order.length * drawn.length;
  const lines: ChartLine[] = [];
  const index = new Map<string, number>();
  for (const [key, d] of order) {
    for (const [calc, op] of drawn) {
      if (lines.length >= MAX_LINES) break;
      const label = [groupLabel(d), drawn.length > 1 || !breakdowns.length ? calc : ''].filter(Boolean).join(' · ');
      index.set(`${key}\u0000${calc}`, lines.length);
      lines.push({ label, values: new Array<number | null>(times.length).fill(ZERO_WHEN_EMPTY.has(op) ? 0 : null) });
    }
  }
  for (const s of data.series) {
    const t = tIndex.get(Date.parse(s.time) / 1000);
    if (t === undefined) continue;
    const key = groupKey(s.data);
    for (const [calc] of drawn) {
      const i = index.get(`${key}\u0000${calc}`);
      const v = s.data[calc];
      if (i !== undefined && typeof v === 'number' && Number.isFinite(v)) lines[i].values[t] = v;
    }
  }
  return { times, lines, omitted: total - lines.length, heatmaps };
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** `1,234`, `12.5k`, `3.2M`, `0.0125`. */
export function compactNumber(v: number): string {
  const a = Math.abs(v);
  const trim = (x: number) => String(Number(x.toPrecision(3)));
  if (a >= 1e9) return `${trim(v / 1e9)}G`;
  if (a >= 1e6) return `${trim(v / 1e6)}M`;
  if (a >= 1e4) return `${trim(v / 1e3)}k`;
  if (Number.isInteger(v)) return String(v);
  return trim(v);
}

/** About `count` round steps between lo and hi. */
function niceTicks(lo: number, hi: number, count: number): number[] {
  const span = hi - lo || Math.abs(hi) || 1;
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

const TIME_STEPS = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];
const pad = (n: number) => String(n).padStart(2, '0');
function timeLabel(t: number, span: number): string {
  const d = new Date(t * 1000);
  const hm = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  if (span <= 86_400) return hm;
  const md = `${d.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' })} ${d.getUTCDate()}`;
  return d.getUTCHours() === 0 && d.getUTCMinutes() === 0 ? md : `${md} ${hm}`;
}

/** The SVG of the chart (IMAGE_WIDTH × IMAGE_HEIGHT). */
export function chartSvg(input: ChartImageInput): string {
  const W = IMAGE_WIDTH;
  const H = IMAGE_HEIGHT;
  const font = 'font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif"';
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="16" y="26" ${font} font-size="16" font-weight="bold" fill="#1f2330">${esc(clip(input.title, 80))}</text>`,
  ];
  if (input.subtitle) parts.push(`<text x="16" y="45" ${font} font-size="11" fill="#6b7080">${esc(clip(input.subtitle, 120))}</text>`);
  const { times, lines, omitted, heatmaps } = chartLines(input);
  const values = lines.flatMap((l) => l.values.filter((v): v is number => v !== null));
  if (values.length === 0 || times.length === 0) {
    const why = input.error ?? (heatmaps > 0 && lines.length === 0 && input.data?.series.length ? 'A heatmap is not drawn in this image' : 'No data in this result');
    parts.push(`<rect x="16" y="60" width="${W - 32}" height="${H - 76}" fill="#f6f7f9" stroke="#e1e3e8"/>`);
    parts.push(`<text x="${W / 2}" y="${H / 2 + 10}" text-anchor="middle" ${font} font-size="15" fill="#6b7080">${esc(clip(why, 90))}</text>`);
    parts.push('</svg>');
    return parts.join('');
  }

  // Plot area; the legend takes rows under it.
  const legendRows = Math.min(3, Math.ceil((lines.length + (omitted ? 1 : 0)) / 3));
  const left = 64;
  const right = W - 16;
  const top = input.subtitle ? 60 : 48;
  const bottom = H - 28 - legendRows * 16;
  const t0 = times[0];
  const t1 = Math.max(times[times.length - 1], input.end - 1);
  const tStart = Math.min(t0, input.start);
  let lo = Math.min(0, ...values);
  let hi = Math.max(...values);
  if (input.threshold && Number.isFinite(input.threshold.value)) {
    lo = Math.min(lo, input.threshold.value);
    hi = Math.max(hi, input.threshold.value);
  }
  if (hi === lo) hi = lo + 1;
  hi += (hi - lo) * 0.05;
  const x = (t: number) => left + ((t - tStart) / Math.max(1, t1 - tStart)) * (right - left);
  const y = (v: number) => bottom - ((v - lo) / (hi - lo)) * (bottom - top);

  // Axes: value gridlines and labels, time ticks and labels (UTC).
  for (const v of niceTicks(lo, hi, 5)) {
    const yy = y(v).toFixed(1);
    parts.push(`<line x1="${left}" y1="${yy}" x2="${right}" y2="${yy}" stroke="#e6e8ee" stroke-width="1"/>`);
    parts.push(`<text x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" ${font} font-size="11" fill="#6b7080">${esc(compactNumber(v))}</text>`);
  }
  const span = t1 - tStart;
  const step = TIME_STEPS.find((s) => span / s <= 8) ?? 604800;
  for (let t = Math.ceil(tStart / step) * step; t <= t1; t += step) {
    const xx = x(t).toFixed(1);
    parts.push(`<line x1="${xx}" y1="${bottom}" x2="${xx}" y2="${bottom + 4}" stroke="#9aa0ad" stroke-width="1"/>`);
    parts.push(`<text x="${xx}" y="${bottom + 16}" text-anchor="middle" ${font} font-size="11" fill="#6b7080">${esc(timeLabel(t, span))}</text>`);
  }
  parts.push(`<text x="${right}" y="${bottom + 16}" text-anchor="end" ${font} font-size="9" fill="#9aa0ad" dy="-20">UTC</text>`);
  parts.push(`<line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#9aa0ad" stroke-width="1"/>`);

  // Lines: a gap where a bucket has no value; a lone point as a dot.
  lines.forEach((l, i) => {
    const color = COLORS[i % COLORS.length];
    const segs: string[] = [];
    let run: string[] = [];
    const flush = () => {
      if (run.length === 1) segs.push(`<circle cx="${run[0].split(',')[0]}" cy="${run[0].split(',')[1]}" r="2" fill="${color}"/>`);
      else if (run.length > 1) segs.push(`<polyline points="${run.join(' ')}" fill="none" stroke="${color}" stroke-width="1.6" stroke-linejoin="round"/>`);
      run = [];
    };
    l.values.forEach((v, j) => {
      if (v === null) return flush();
      run.push(`${x(times[j]).toFixed(1)},${y(v).toFixed(1)}`);
    });
    flush();
    parts.push(...segs);
  });

  if (input.threshold && Number.isFinite(input.threshold.value)) {
    const yy = y(input.threshold.value).toFixed(1);
    parts.push(`<line x1="${left}" y1="${yy}" x2="${right}" y2="${yy}" stroke="#d9534f" stroke-width="1.5" stroke-dasharray="6 4"/>`);
    parts.push(`<text x="${right - 4}" y="${(Number(yy) - 5).toFixed(1)}" text-anchor="end" ${font} font-size="11" fill="#d9534f">threshold ${esc(input.threshold.op)} ${esc(compactNumber(input.threshold.value))}</text>`);
  }

  // Legend: up to three rows of three.
  const legend = lines.map((l, i) => ({ label: l.label || 'all events', color: COLORS[i % COLORS.length] }));
  const shown = legend.slice(0, legendRows * 3 - (omitted ? 1 : 0));
  const more = omitted + legend.length - shown.length;
  const colW = (W - 32) / 3;
  shown.forEach((e, i) => {
    const lx = 16 + (i % 3) * colW;
    const ly = bottom + 34 + Math.floor(i / 3) * 16;
    parts.push(`<rect x="${lx}" y="${ly - 9}" width="10" height="10" fill="${e.color}"/>`);
    parts.push(`<text x="${lx + 15}" y="${ly}" ${font} font-size="11" fill="#1f2330">${esc(clip(e.label, 38))}</text>`);
  });
  if (more > 0) {
    const i = shown.length;
    parts.push(`<text x="${16 + (i % 3) * colW}" y="${bottom + 34 + Math.floor(i / 3) * 16}" ${font} font-size="11" fill="#6b7080">+${more} more series not drawn</text>`);
  }
  parts.push('</svg>');
  return parts.join('');
}

/** The PNG of the chart. */
export function chartPng(input: ChartImageInput): Buffer {
  const resvg = new Resvg(chartSvg(input), { font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' }, background: '#ffffff' });
  return resvg.render().asPng();
}

/** A title for a result without one: `COUNT, P99(duration_ms) by service.name`. */
export function describeSpec(q: QuerySpec): string {
  const calcs = (q.calculations?.length ? q.calculations : [{ op: 'COUNT' as const }]).map(calculationKey).join(', ');
  const by = q.breakdowns?.length ? ` by ${q.breakdowns.join(', ')}` : '';
  const where = q.filters?.length ? ` where ${q.filters.map((f) => `${f.column} ${f.op}${f.value === undefined || f.value === null ? '' : ` ${Array.isArray(f.value) ? f.value.join(',') : String(f.value)}`}`).join(q.filter_combination === 'OR' ? ' or ' : ' and ')}` : '';
  return `${calcs}${by}${where}`;
}

/** The PNG of a stored result's chart: its trigger's name (or its query) as the title. */
export function resultChartPng(
  body: Pick<ChartImageInput, 'query' | 'start' | 'end'> & { complete: boolean; datasetSlug: string; data?: ChartImageInput['data']; error?: string; trigger?: { name: string; threshold?: ChartImageInput['threshold'] } },
  environmentName: string,
): Buffer {
  return chartPng({
    title: body.trigger?.name ?? describeSpec(body.query),
    subtitle: [body.datasetSlug === '__all__' ? 'all datasets' : body.datasetSlug, environmentName, ...(body.trigger ? [describeSpec(body.query)] : [])].join(' · '),
    query: body.query,
    start: body.start,
    end: body.end,
    data: body.complete ? body.data : undefined,
    error: body.complete ? body.error : 'The result is still running',
    threshold: body.trigger?.threshold,
  });
}
