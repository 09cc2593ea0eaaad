// A time-series chart (uPlot): one line per group, a hover tooltip listing the groups' values at
// the hovered time (largest first), markers drawn as vertical lines in their marker-setting
// colours, and dragging across the chart selects a time range (for BubbleUp). Clicking a line
// picks its group. A line with `past` (a time comparison) gets a second, dashed and fainter line in
// its colour (line charts only), and the tooltip shows the past value and the change in %.
// A line with `band` (the "Show expected band" toggle, web/src/bands.ts) gets its expected band
// filled in its colour behind it and the points outside it ringed in red; the tooltip shows the
// expected value and the band. uPlot draws on canvas and handles 10,000s of points per series.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatNumber } from '../format.js';
import { changePercent, formatChange } from '../results.js';
import { formatTooltipTime } from '../time.js';
import { cssVar } from './palette.js';
import { cumulative, stackBands } from './stack.js';
import type { LineBand } from '../bands.js';

export interface Line {
  label: string;
  values: (number | null)[];
  color: string;
  /** The same group one comparison offset back, on the same times. */
  past?: (number | null)[];
  /** Its expected band on the same times, and which points are outside it. */
  band?: LineBand;
}
export interface ChartMarker {
  time: number;
  end?: number;
  color: string;
  label: string;
}

export interface LineChartProps {
  /** Unix seconds, ascending. */
  times: number[];
  lines: Line[];
  markers?: ChartMarker[];
  height?: number;
  style?: 'line' | 'bars' | 'stacked';
  logScale?: boolean;
  format?: (v: number) => string;
  /** The x axis' span, Unix seconds (default: the data's). */
  xRange?: [number, number];
  /** The y axis' span (default: from 0, or the lowest value, to a little over the highest). */
  yRange?: [number, number];
  onSelectRange?: (start: number, end: number) => void;
  onPick?: (lineIndex: number) => void;
  /** When set, a click gives the time under the pointer (placing a marker) instead of picking a line. */
  onPickTime?: (unixSeconds: number) => void;
  /** A threshold drawn across the chart as a dashed red line (a trigger being made). */
  threshold?: number;
  /** Charts with the same key share their crosshair (a query's charts). */
  syncKey?: string;
  /** Called once the chart has drawn (the results page measures its drawing time with it). */
  onDrawn?: () => void;
  label: string;
}

interface Hover {
  left: number;
  top: number;
  time: number;
  rows: { label: string; value: number; color: string; past?: number | null; band?: { expected: number; lower: number; upper: number; outside: boolean } }[];
  more: number;
}

const TOOLTIP_ROWS = 10;

export function LineChart(props: LineChartProps) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot>();
  const focused = useRef<number | null>(null);
  const hovering = useRef(false);
  const propsRef = useRef(props);
  propsRef.current = props;
  const [hover, setHover] = useState<Hover | null>(null);
  const [flags, setFlags] = useState<{ left: number; color: string; label: string }[]>([]);

  // Built as soon as the chart is in the page (a layout effect), not after the next paint.
  useLayoutEffect(() => {
    const el = host.current!;
    const fmt = props.format ?? formatNumber;
    const axisColor = cssVar('--muted');
    const gridColor = cssVar('--border');
    const stacked = props.style === 'stacked';
    // Stacked areas: each line drawn as the running sum of those before it, each band filled
    // between its top and the one below (charts/stack.ts), not each from zero.
    const values = stacked ? cumulative(props.lines.map((l) => l.values)) : props.lines.map((l) => l.values);
    // The past lines of a comparison (not stacked nor as bars), drawn after the lines.
    const pastOf = !stacked && props.style !== 'bars' ? props.lines.flatMap((l, i) => (l.past ? [i] : [])) : [];
    const data: uPlot.AlignedData = [props.times, ...values, ...pastOf.map((i) => props.lines[i].past!)];
    // Bands (not on stacked charts, whose lines are sums, nor on a log scale, where a band's
    // lower bound may be 0): the y axis reaches their tops too.
    const banded = stacked || props.logScale ? [] : props.lines.flatMap((l, i) => (l.band ? [i] : []));
    let bandTop = -Infinity;
    for (const i of banded) for (const v of props.lines[i].band!.upper) if (v !== null && v > bandTop) bandTop = v;
    const bars = props.style === 'bars' ? uPlot.paths.bars!({ size: [0.8, 40] }) : undefined;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height: props.height ?? 220,
      legend: { show: false },
      pxAlign: 0,
      cursor: {
        drag: { x: !!props.onSelectRange, y: false, setScale: false },
        focus: { prox: 24 },
        points: { size: 6 },
        ...(props.syncKey ? { sync: { key: props.syncKey, setSeries: false } } : {}),
      },
      focus: { alpha: 0.35 },
      bands: stacked ? stackBands(props.lines.length).map((b) => ({ ...b, fill: props.lines[b.series[0] - 1].color + '99' })) : undefined,
      scales: { x: props.xRange ? { time: true, range: () => props.xRange as [number, number] } : { time: true }, y: props.logScale ? { distr: 3 } : { range: (_u, min, max) => props.yRange ?? withThreshold([Math.min(0, min), Math.max(max, bandTop) > 0 ? Math.max(max, bandTop) * 1.05 : 1], props.threshold) } },
      axes: [
        { stroke: axisColor, grid: { stroke: gridColor, width: 1 }, ticks: { stroke: gridColor } },
        { stroke: axisColor, grid: { stroke: gridColor, width: 1 }, ticks: { stroke: gridColor }, size: 56, values: (_u, ticks) => ticks.map((v) => fmt(v)) },
      ],
      series: [
        {},
        ...props.lines.map((l, i) => ({
          label: l.label,
          stroke: l.color,
          width: 1.5,
          fill: stacked ? l.color + '99' : bars ? l.color + 'cc' : undefined,
          paths: bars,
          points: { show: props.times.length <= 60 && props.lines.length <= 10 },
          spanGaps: false,
          // (the stacked copy holds sums; the tooltip reads the lines' own values)
          value: (_u: uPlot, _v: number | null, _s: number, idx: number | null) => (idx === null ? '' : fmt(props.lines[i].values[idx] ?? NaN)),
        })),
        ...pastOf.map((i) => ({
          label: `${props.lines[i].label} (earlier)`,
          stroke: props.lines[i].color + '99',
          width: 1.25,
          dash: [5, 4],
          points: { show: false },
          spanGaps: false,
        })),
      ],
      hooks: {
        setCursor: [
          (u) => {
            const idx = u.cursor.idx;
            // (a crosshair moved by another chart of the same key shows no tooltip here)
            if (!hovering.current || idx === null || idx === undefined || u.cursor.left === undefined || u.cursor.left < 0) return setHover(null);
            const p = propsRef.current;
            const rows = p.lines
              .map((l) => ({ label: l.label, value: l.values[idx], color: l.color, past: l.past?.[idx], band: bandAt(l.band, idx) }))
              .filter((r): r is typeof r & { value: number } => typeof r.value === 'number')
              .sort((a, b) => b.value - a.value);
            setHover({
              left: u.cursor.left + u.over.offsetLeft,
              top: (u.cursor.top ?? 0) + u.over.offsetTop,
              time: p.times[idx],
              rows: rows.slice(0, TOOLTIP_ROWS),
              more: Math.max(0, rows.length - TOOLTIP_ROWS),
            });
          },
        ],
        setSeries: [(_u, idx) => void (focused.current = idx)],
        setSelect: [
          (u) => {
            if (u.select.width < 2) return;
            const start = u.posToVal(u.select.left, 'x');
            const end = u.posToVal(u.select.left + u.select.width, 'x');
            propsRef.current.onSelectRange?.(Math.floor(start), Math.ceil(end));
          },
        ],
        draw: [
          (u) => drawBands(u, propsRef.current.lines, banded),
          (u) => {
            const t = propsRef.current.threshold;
            if (t === undefined || !Number.isFinite(t)) return;
            const y = u.valToPos(t, 'y', true);
            const ctx = u.ctx;
            ctx.save();
            ctx.strokeStyle = '#d9534f';
            ctx.lineWidth = 2 * devicePixelRatio;
            ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
            ctx.beginPath();
            ctx.moveTo(u.bbox.left, y);
            ctx.lineTo(u.bbox.left + u.bbox.width, y);
            ctx.stroke();
            ctx.restore();
          },
          (u) => {
            // Markers: a line per marker (a band for ranges) in its colour.
            const ms = propsRef.current.markers ?? [];
            if (ms.length === 0) return;
            const ctx = u.ctx;
            const top = u.bbox.top;
            const h = u.bbox.height;
            ctx.save();
            const out: { left: number; color: string; label: string }[] = [];
            for (const m of ms) {
              const x = u.valToPos(m.time, 'x', true);
              if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
              ctx.strokeStyle = m.color;
              ctx.fillStyle = m.color + '22';
              ctx.lineWidth = 1.5 * devicePixelRatio;
              if (m.end && m.end > m.time) {
                const x2 = u.valToPos(m.end, 'x', true);
                ctx.fillRect(x, top, Math.max(1, x2 - x), h);
              }
              ctx.beginPath();
              ctx.moveTo(x, top);
              ctx.lineTo(x, top + h);
              ctx.stroke();
              out.push({ left: x / devicePixelRatio, color: m.color, label: m.label });
            }
            ctx.restore();
            setFlags(out);
          },
        ],
        ready: [() => requestAnimationFrame(() => propsRef.current.onDrawn?.())],
      },
    };
    const u = new uPlot(opts, data, el);
    plot.current = u;
    const click = () => {
      const p = propsRef.current;
      if (p.onPickTime) {
        if (u.cursor.left !== undefined && u.cursor.left >= 0) p.onPickTime(Math.round(u.posToVal(u.cursor.left, 'x')));
        return;
      }
      // (a past line picks its group)
      if (focused.current !== null && focused.current > 0) p.onPick?.(focused.current <= p.lines.length ? focused.current - 1 : (pastOf[focused.current - 1 - p.lines.length] ?? 0));
    };
    u.over.addEventListener('click', click);
    const leave = () => {
      hovering.current = false;
      setHover(null);
    };
    const enter = () => void (hovering.current = true);
    u.over.addEventListener('mouseleave', leave);
    u.over.addEventListener('mouseenter', enter);
    const ro = new ResizeObserver(() => {
      const w = Math.max(200, el.clientWidth);
      if (w !== u.width) u.setSize({ width: w, height: u.height });
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
    };
  }, [props.times, props.lines, props.style, props.logScale, props.height, props.markers, props.xRange?.[0], props.xRange?.[1], props.yRange?.[0], props.yRange?.[1], props.threshold]);

  return (
    <div class="chart" role="img" aria-label={props.label}>
      <div ref={host} />
      {flags.map((f, i) => (
        <span key={i} class="marker-flag" style={{ left: `${f.left}px`, background: f.color }} title={f.label} />
      ))}
      {hover && hover.rows.length > 0 && (
        <div class="tooltip" style={{ left: `${Math.min(hover.left + 14, (host.current?.clientWidth ?? 400) - 240)}px`, top: `${Math.max(0, hover.top - 20)}px` }}>
          <div class="t">{formatTooltipTime(hover.time)}</div>
          {hover.rows.map((r) => (
            <div class="s" key={r.label}>
              <span class="swatch" style={{ background: r.color }} />
              <span class="n">{r.label}</span>
              <strong>{(props.format ?? formatNumber)(r.value)}</strong>
              {r.band && (
                <span class={r.band.outside ? 'past outside' : 'past'} data-testid="tooltip-band" data-outside={r.band.outside || undefined}>
                  {r.band.outside ? 'outside · ' : ''}expected {(props.format ?? formatNumber)(r.band.expected)} ({(props.format ?? formatNumber)(r.band.lower)}–{(props.format ?? formatNumber)(r.band.upper)})
                </span>
              )}
              {r.past !== undefined && (
                <span class="past" data-testid="tooltip-past">
                  was {typeof r.past === 'number' ? (props.format ?? formatNumber)(r.past) : '–'} · {formatChange(changePercent(r.value, r.past))}
                </span>
              )}
            </div>
          ))}
          {hover.more > 0 && <div class="muted">+{hover.more} more</div>}
        </div>
      )}
    </div>
  );
}

/** The y range widened to show a threshold with some room around it. */
export function withThreshold(range: [number, number], threshold: number | undefined): [number, number] {
  if (threshold === undefined || !Number.isFinite(threshold)) return range;
  return [Math.min(range[0], threshold), Math.max(range[1], threshold > 0 ? threshold * 1.1 : threshold)];
}

function bandAt(b: LineBand | undefined, i: number) {
  const expected = b?.expected[i];
  const lower = b?.lower[i];
  const upper = b?.upper[i];
  if (!b || typeof expected !== 'number' || typeof lower !== 'number' || typeof upper !== 'number') return undefined;
  return { expected, lower, upper, outside: b.outside[i] };
}

/** Fills each banded line's band (each run of buckets with one) in its colour, and rings its points outside the band in red. */
function drawBands(u: uPlot, lines: Line[], banded: number[]): void {
  if (banded.length === 0) return;
  const ctx = u.ctx;
  const xs = u.data[0];
  ctx.save();
  ctx.beginPath();
  ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
  ctx.clip();
  for (const li of banded) {
    const { band, color, values } = lines[li];
    if (!band) continue;
    ctx.fillStyle = color + '2e';
    let i = 0;
    while (i < xs.length) {
      if (band.lower[i] === null || band.upper[i] === null) {
        i++;
        continue;
      }
      let j = i;
      while (j + 1 < xs.length && band.lower[j + 1] !== null && band.upper[j + 1] !== null) j++;
      ctx.beginPath();
      for (let k = i; k <= j; k++) ctx.lineTo(u.valToPos(xs[k], 'x', true), u.valToPos(band.upper[k]!, 'y', true));
      for (let k = j; k >= i; k--) ctx.lineTo(u.valToPos(xs[k], 'x', true), u.valToPos(band.lower[k]!, 'y', true));
      ctx.closePath();
      ctx.fill();
      i = j + 1;
    }
    ctx.strokeStyle = '#d9534f';
    ctx.fillStyle = '#d9534f';
    ctx.lineWidth = 2 * devicePixelRatio;
    for (let k = 0; k < xs.length; k++) {
      const v = values[k];
      if (!band.outside[k] || typeof v !== 'number') continue;
      ctx.beginPath();
      ctx.arc(u.valToPos(xs[k], 'x', true), u.valToPos(v, 'y', true), 5 * devicePixelRatio, 0, 2 * Math.PI);
      ctx.stroke();
    }
  }
  ctx.restore();
}
