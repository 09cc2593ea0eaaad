// A HEATMAP on canvas: time buckets across, value buckets up, each cell coloured by its count on
// a log scale. Hovering shows the cell's time and value range and count; dragging a rectangle
// (or, from the keyboard, moving with the arrows and extending with Shift+arrows, Enter to
// confirm) selects a region for BubbleUp.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { formatDuration, formatNumber } from '../format.js';
import { buildGrid, intensity, niceTicks, selectionOf, timeTicks, unitOf, type HeatGrid } from '../heatmap.js';
import type { HeatCell } from '../results.js';
import { formatClock, formatTooltipTime } from '../time.js';
import { cssVar } from './palette.js';

export interface HeatSelection {
  start_time: number;
  end_time: number;
  lower: number;
  upper: number;
}

const PAD = { left: 64, right: 12, top: 8, bottom: 26 };

interface Cell {
  t: number;
  b: number;
}

export function HeatmapChart(props: {
  rows: { time: number; cells: HeatCell[] }[];
  column: string;
  height?: number;
  onSelect?: (s: HeatSelection) => void;
  onDrawn?: () => void;
}) {
  const grid = useMemo(() => buildGrid(props.rows), [props.rows]);
  const canvas = useRef<HTMLCanvasElement>(null);
  const wrap = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(600);
  const [hover, setHover] = useState<(Cell & { x: number; y: number }) | null>(null);
  const [drag, setDrag] = useState<{ a: Cell; b: Cell } | null>(null);
  const [sel, setSel] = useState<{ a: Cell; b: Cell } | null>(null);
  const [cursor, setCursor] = useState<Cell | null>(null);
  const height = props.height ?? 260;

  useEffect(() => {
    const el = wrap.current!;
    const ro = new ResizeObserver(() => setWidth(Math.max(240, el.clientWidth)));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const plotW = width - PAD.left - PAD.right;
  const plotH = height - PAD.top - PAD.bottom;

  useLayoutEffect(() => {
    const c = canvas.current;
    if (!c || !grid) return;
    draw(c, grid, width, height, sel ?? drag, valueFormat(props.column));
    props.onDrawn?.();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [grid, width, height, sel, drag]);

  if (!grid) return <div class="empty">No values of {props.column} in this time range.</div>;

  const cellAt = (ev: MouseEvent): Cell => {
    const r = canvas.current!.getBoundingClientRect();
    const x = ev.clientX - r.left - PAD.left;
    const y = ev.clientY - r.top - PAD.top;
    return {
      t: clamp(Math.floor((x / plotW) * grid.times.length), 0, grid.times.length - 1),
      b: clamp(Math.floor(((plotH - y) / plotH) * grid.buckets), 0, grid.buckets - 1),
    };
  };
  const finish = (a: Cell, b: Cell) => {
    setSel({ a, b });
    setDrag(null);
    props.onSelect?.(selectionOf(grid, a.t, b.t, a.b, b.b));
  };
  const onKey = (ev: KeyboardEvent) => {
    const cur = cursor ?? { t: grid.times.length - 1, b: 0 };
    const moves: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
    const m = moves[ev.key];
    if (m) {
      ev.preventDefault();
      const next = { t: clamp(cur.t + m[0], 0, grid.times.length - 1), b: clamp(cur.b + m[1], 0, grid.buckets - 1) };
      setCursor(next);
      if (ev.shiftKey) setDrag({ a: drag?.a ?? cur, b: next });
      else setDrag(null);
    } else if (ev.key === 'Enter') {
      ev.preventDefault();
      finish(drag?.a ?? cur, drag?.b ?? cur);
    } else if (ev.key === 'Escape') {
      setDrag(null);
      setSel(null);
    }
  };
  const shown = hover ?? (cursor ? { ...cursor, x: PAD.left + ((cursor.t + 0.5) / grid.times.length) * plotW, y: PAD.top + plotH - ((cursor.b + 0.5) / grid.buckets) * plotH } : null);
  const count = shown ? grid.counts[shown.t * grid.buckets + shown.b] : 0;

  return (
    <div class="chart heatmap" ref={wrap}>
      <canvas
        ref={canvas}
        tabIndex={0}
        role="img"
        aria-label={`Heatmap of ${props.column}: time across, value up. Drag a region, or use the arrow keys with Shift and press Enter, to BubbleUp it.`}
        onMouseMove={(ev) => {
          const c = cellAt(ev);
          const r = canvas.current!.getBoundingClientRect();
          setHover({ ...c, x: ev.clientX - r.left, y: ev.clientY - r.top });
          if (drag) setDrag({ a: drag.a, b: c });
        }}
        onMouseLeave={() => setHover(null)}
        onMouseDown={(ev) => {
          const c = cellAt(ev);
          setDrag({ a: c, b: c });
          setSel(null);
        }}
        onMouseUp={(ev) => drag && finish(drag.a, cellAt(ev))}
        onKeyDown={onKey}
      />
      {shown && (
        <div class="tooltip" style={{ left: `${Math.min(shown.x + 14, width - 220)}px`, top: `${Math.max(0, shown.y - 60)}px` }}>
          <div class="t">
            {formatTooltipTime(grid.times[shown.t])} + {grid.step >= 60 ? `${grid.step / 60} min` : `${grid.step} s`}
          </div>
          <div>
            {props.column}: {valueFormat(props.column)(grid.lo + shown.b * grid.width)} – {valueFormat(props.column)(grid.lo + (shown.b + 1) * grid.width)}
          </div>
          <div>
            <strong>{formatNumber(count)}</strong> events
          </div>
        </div>
      )}
      <div class="heat-legend small muted" data-testid="heat-legend" aria-label={`Colour: events per cell, 1 to ${formatNumber(grid.max)} (log scale)`}>
        <span>events per cell</span>
        <span>1</span>
        <span class="heat-ramp" />
        <span>{formatNumber(grid.max)}</span>
      </div>
    </div>
  );
}

/** How the value axis reads: with the column's unit when its name says it (`duration_ms` → ms). */
export function valueFormat(column: string): (v: number) => string {
  const unit = unitOf(column);
  if (unit === 'ms') return (v) => formatDuration(v);
  if (unit === 's') return (v) => formatDuration(v * 1000);
  return (v) => formatNumber(v);
}

const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, v));

function draw(c: HTMLCanvasElement, g: HeatGrid, width: number, height: number, sel: { a: Cell; b: Cell } | null, fmt: (v: number) => string) {
  const dpr = devicePixelRatio || 1;
  c.width = Math.round(width * dpr);
  c.height = Math.round(height * dpr);
  c.style.width = `${width}px`;
  c.style.height = `${height}px`;
  const ctx = c.getContext('2d')!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const plotW = width - PAD.left - PAD.right;
  const plotH = height - PAD.top - PAD.bottom;
  const cw = plotW / g.times.length;
  const ch = plotH / g.buckets;
  const lo = cssVar('--heat-0', '255,247,188').split(',').map(Number);
  const hi = cssVar('--heat-1', '70,20,140').split(',').map(Number);
  for (let t = 0; t < g.times.length; t++) {
    for (let b = 0; b < g.buckets; b++) {
      const n = g.counts[t * g.buckets + b];
      if (n <= 0) continue;
      const k = intensity(n, g.max);
      ctx.fillStyle = `rgb(${lo.map((v, i) => Math.round(v + (hi[i] - v) * k)).join(',')})`;
      ctx.fillRect(PAD.left + t * cw, PAD.top + plotH - (b + 1) * ch, Math.ceil(cw), Math.ceil(ch));
    }
  }
  // Axes: round values up the left (with the column's unit), times at round local steps along
  // the bottom in the line charts' 12-hour form.
  const muted = cssVar('--muted');
  ctx.fillStyle = muted;
  ctx.strokeStyle = cssVar('--border');
  ctx.font = '11px system-ui, sans-serif';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  const top = g.lo + g.buckets * g.width;
  for (const v of niceTicks(g.lo, top, Math.max(2, Math.min(6, Math.floor(plotH / 40))))) {
    const y = PAD.top + plotH - ((v - g.lo) / (top - g.lo || 1)) * plotH;
    ctx.fillText(fmt(v), PAD.left - 6, y);
    ctx.beginPath();
    ctx.moveTo(PAD.left, y);
    ctx.lineTo(PAD.left + plotW, y);
    ctx.globalAlpha = 0.35;
    ctx.stroke();
    ctx.globalAlpha = 1;
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  const t0 = g.times[0];
  const tEnd = t0 + g.step * g.times.length;
  const { step, ticks } = timeTicks(t0, tEnd, Math.max(2, Math.floor(plotW / 80)));
  for (const t of ticks) {
    const x = PAD.left + ((t - t0) / (tEnd - t0)) * plotW;
    if (x < PAD.left + 12 || x > PAD.left + plotW - 12) continue;
    ctx.fillText(step >= 86400 ? new Date(t * 1000).toLocaleDateString() : formatClock(t), x, PAD.top + plotH + 6);
  }
  if (sel) {
    const [t0, t1] = [Math.min(sel.a.t, sel.b.t), Math.max(sel.a.t, sel.b.t)];
    const [b0, b1] = [Math.min(sel.a.b, sel.b.b), Math.max(sel.a.b, sel.b.b)];
    ctx.strokeStyle = cssVar('--selection');
    ctx.lineWidth = 2;
    ctx.setLineDash([5, 3]);
    ctx.strokeRect(PAD.left + t0 * cw, PAD.top + plotH - (b1 + 1) * ch, (t1 - t0 + 1) * cw, (b1 - b0 + 1) * ch);
    ctx.setLineDash([]);
  }
}
