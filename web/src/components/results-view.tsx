// A query's answer: a chart per calculation (a line per group), the HEATMAP, and the sortable
// results table. Clicking a group (a line, or its row) narrows the query to it; dragging across
// a chart or a heatmap region starts BubbleUp. With a time comparison, each line has a dashed
// past line in its colour, and the table a past value and the change in % per calculation. With
// `bands` (the query page's "Show expected band"), each line's expected band and the points
// outside it.
import type { ComponentChildren } from 'preact';
import { useMemo, useRef, useState } from 'preact/hooks';
import type { BubbleUpSelection, ResultValue } from '../api/types.js';
import { HeatmapChart } from '../charts/heatmap-chart.js';
import { LineChart, type ChartMarker, type Line } from '../charts/line-chart.js';
import type { LineBand } from '../bands.js';
import { seriesColor } from '../charts/palette.js';
import { formatNumber } from '../format.js';
import { changePercent, formatChange, offsetLabel, sortRows, type Group, type ShapedResult } from '../results.js';
import { Link } from '../router.js';
import { formatDateTime } from '../time.js';

export interface ResultsViewProps {
  result: ShapedResult;
  markers: ChartMarker[];
  onNarrow?: (group: Group) => void;
  onSelect?: (s: BubbleUpSelection) => void;
  /** Link for a trace id in the table. */
  traceHref?: (traceId: string) => string;
  traceColumn?: string;
  chartStyle?: 'line' | 'bars' | 'stacked';
  logScale?: boolean;
  compact?: boolean;
  /** Called (with performance.now()) once every chart has drawn. */
  onDrawn?: (at: number) => void;
  show?: { charts?: boolean; table?: boolean };
  /** Height of each chart (default 220, 150 compact). */
  chartHeight?: number;
  /**
   * Compact: the height the charts and their legend share (a board panel's), so that every chart
   * shows in it; overrides chartHeight.
   */
  fitHeight?: number;
  /** A threshold drawn on the chart of one calculation (a trigger being made). */
  threshold?: { calc: string; value: number };
  /** When set, clicking a chart gives the time under the pointer (placing a marker). */
  onPickTime?: (unixSeconds: number) => void;
  /** Per calculation key, per group: its expected band (web/src/bands.ts). */
  bands?: Map<string, (LineBand | undefined)[]>;
  /** Shown between the charts and the table (BubbleUp). */
  children?: ComponentChildren;
}

let views = 0;

export function ResultsView(props: ResultsViewProps) {
  const r = props.result;
  const pending = useRef(r.series.length + (r.heatmap ? 1 : 0));
  const drawn = () => {
    pending.current -= 1;
    if (pending.current === 0) props.onDrawn?.(performance.now());
  };
  const colors = useMemo(() => r.groups.map((_, i) => seriesColor(i)), [r]);
  // One crosshair across the charts of this answer.
  const syncKey = useMemo(() => `results-${++views}`, []);
  const charts = props.show?.charts ?? true;
  const count = r.series.length + (r.heatmap ? 1 : 0);
  // Compact (a board panel): a legend of the groups under the charts (the table is not shown),
  // and each chart captioned when there are several.
  const legend = !!props.compact && charts && r.series.length > 0 && r.groups.length > 1;
  // (a legend of up to 5 groups takes one line; more, up to two, then scrolls)
  const legendLines = !legend ? 0 : r.groups.length <= 5 ? 1 : 2;
  const captioned = !!props.compact && count > 1;
  const chartHeight = props.compact && props.fitHeight ? fittedHeight(props.fitHeight, count, legendLines, captioned) : props.chartHeight;
  // A HEATMAP alone has no column for a table.
  const table = (props.show?.table ?? true) && (r.breakdowns.length > 0 || r.series.length > 0);
  return (
    <div class="stack" data-testid="results">
      {charts &&
        // In the query's order: a HEATMAP asked for after COUNT is drawn after it.
        r.calcKeys.map((k) => {
          if (r.heatmap && k === r.heatmap.key) {
            return (
              <section key={k} class={props.compact ? '' : 'panel chart-card'} aria-label={`Heatmap of ${r.heatmap.key}`} data-chart={r.heatmap.key}>
                {captioned && <div class="chart-caption">{r.heatmap.key}</div>}
                {!props.compact && (
                  <header>
                    <h2>{r.heatmap.key}</h2>
                    {props.onSelect && <span class="small muted">Drag a region to BubbleUp what is different about it</span>}
                  </header>
                )}
                <HeatmapChart
                  rows={r.heatmap.rows}
                  column={r.heatmap.column}
                  // (a panel's fitted height holds the colour legend under the heatmap too)
                  height={chartHeight !== undefined && props.fitHeight ? chartHeight - 20 : (chartHeight ?? (props.compact ? 180 : 280))}
                  onDrawn={drawn}
                  onSelect={props.onSelect ? (s) => props.onSelect!({ ...s, column: r.heatmap!.column }) : undefined}
                />
              </section>
            );
          }
          const s = r.series.find((x) => x.key === k);
          if (!s) return null;
          return (
            <SeriesChart
              key={s.key}
              calc={s.key}
              times={r.times}
              span={r.span}
              lines={s.lines.map((values, i) => ({ label: r.groups[i].label, values, color: colors[i], ...(s.past ? { past: s.past[i] } : {}), ...(props.bands?.get(s.key)?.[i] ? { band: props.bands.get(s.key)![i] } : {}) }))}
              bands={props.bands}
              markers={props.markers}
              compact={props.compact}
              caption={captioned}
              syncKey={syncKey}
              height={chartHeight}
              style={props.chartStyle}
              logScale={props.logScale}
              onDrawn={drawn}
              onSelectRange={props.onSelect ? (start, end) => props.onSelect!({ start_time: start, end_time: end }) : undefined}
              onPick={props.onNarrow ? (i) => props.onNarrow!(r.groups[i]) : undefined}
              onPickTime={props.onPickTime}
              threshold={props.threshold?.calc === s.key ? props.threshold.value : undefined}
            />
          );
        })}
      {legend && <Legend labels={r.groups.map((g) => g.label)} colors={colors} />}
      {charts && r.comparison && r.series.length > 0 && (
        <div class="small muted" data-testid="comparison-note">
          <span class="dash-swatch" aria-hidden="true" /> dashed: {offsetLabel(r.comparison.offset)} earlier
        </div>
      )}
      {props.children}
      {table && <ResultsTable {...props} colors={colors} />}
    </div>
  );
}

function SeriesChart(p: {
  calc: string;
  times: number[];
  span?: [number, number];
  lines: Line[];
  markers: ChartMarker[];
  compact?: boolean;
  caption?: boolean;
  syncKey?: string;
  height?: number;
  style?: 'line' | 'bars' | 'stacked';
  logScale?: boolean;
  onDrawn: () => void;
  onSelectRange?: (start: number, end: number) => void;
  onPick?: (i: number) => void;
  onPickTime?: (t: number) => void;
  threshold?: number;
  bands?: Map<string, (LineBand | undefined)[]>;
}) {
  // Stable identities so the chart is built once per answer (and per bands), not on every render.
  const lines = useMemo(() => p.lines, [p.times, p.bands]);
  const outside = p.bands ? lines.reduce((n, l) => n + (l.band?.outside.filter(Boolean).length ?? 0), 0) : undefined;
  return (
    <section class={p.compact ? '' : 'panel chart-card'} aria-label={`Chart of ${p.calc}`} data-chart={p.calc} data-series={lines.length} data-span={p.span?.join(',')} data-threshold={p.threshold} data-outside={outside}>
      {p.caption && <div class="chart-caption">{p.calc}</div>}
      {!p.compact && (
        <header>
          <h2>{p.calc}</h2>
          <span class="small muted">
            {lines.length === 1 ? '' : `${lines.length} groups · `}
            {p.onSelectRange ? 'drag across to BubbleUp a time range' : ''}
          </span>
        </header>
      )}
      <LineChart
        label={`${p.calc} over time${lines.length > 1 ? `, ${lines.length} groups` : ''}`}
        times={p.times}
        xRange={p.span}
        syncKey={p.syncKey}
        lines={lines}
        markers={p.markers}
        height={p.height ?? (p.compact ? 150 : 220)}
        style={p.style}
        logScale={p.logScale}
        onDrawn={p.onDrawn}
        onSelectRange={p.onSelectRange}
        onPick={p.onPick}
        onPickTime={p.onPickTime}
        threshold={p.threshold}
      />
      {!p.compact && <ChartData calc={p.calc} times={p.times} lines={lines} />}
    </section>
  );
}

/** The heights of a legend line and of a caption, and the gap between charts, px. */
const LEGEND_H = 20;
const CAPTION_H = 18;
const GAP = 16;

/** Each chart's height when `count` charts (and a legend of `legendLines`, and captions) share `total` px. */
export function fittedHeight(total: number, count: number, legendLines: number, captioned: boolean): number {
  const n = Math.max(1, count);
  const free = total - (legendLines > 0 ? legendLines * LEGEND_H + GAP : 0) - (n - 1) * GAP - (captioned ? n * CAPTION_H : 0);
  return Math.max(60, Math.floor(free / n));
}

/** The groups' colours (a board panel shows no table), each label cut with an ellipsis, whole in its tooltip. */
function Legend({ labels, colors }: { labels: string[]; colors: string[] }) {
  return (
    <ul class="legend" aria-label="Legend" data-testid="legend">
      {labels.map((l, i) => (
        <li key={l} title={l}>
          <span class="swatch" style={{ background: colors[i] }} />
          <span class="n">{l}</span>
        </li>
      ))}
    </ul>
  );
}

/** The chart's numbers as a table, for screen readers and anyone who wants them (built when opened). */
function ChartData({ calc, times, lines }: { calc: string; times: number[]; lines: Line[] }) {
  const [open, setOpen] = useState(false);
  return (
    <details class="small" onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary class="muted">Chart data</summary>
      {open && (
        <div class="table-wrap">
          <table data-chart-data={calc}>
            <thead>
              <tr>
                <th scope="col">time</th>
                {lines.map((l) => (
                  <th scope="col" key={l.label}>
                    {l.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {times.map((t, i) => (
                <tr key={t}>
                  <td class="nowrap" data-time={t}>
                    {formatDateTime(t)}
                  </td>
                  {lines.map((l) => (
                    <td key={l.label} class="num" data-value={l.values[i] ?? ''}>
                      {formatNumber(l.values[i])}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </details>
  );
}

function ResultsTable(props: ResultsViewProps & { colors: string[] }) {
  const r = props.result;
  const calcCols = r.calcKeys.filter((k) => !k.startsWith('HEATMAP'));
  const [sort, setSort] = useState<{ column: string; desc: boolean } | null>(null);
  // With a comparison, each calculation's past value and change are columns of their own (sortable).
  const cmp = r.comparison;
  const earlier = cmp ? `${offsetLabel(cmp.offset)} earlier` : '';
  const pastKey = (c: string) => `${c} · ${earlier}`;
  const changeKey = (c: string) => `${c} · change`;
  const indexed = r.rows.map((row, i) => {
    const out = { ...row, __i: i } as Record<string, ResultValue> & { __i: number };
    if (cmp) {
      for (const c of calcCols) {
        const past = cmp.rows[i]?.[c];
        if (past !== undefined) out[pastKey(c)] = past;
        const pct = changePercent(row[c], past);
        if (pct !== undefined) out[changeKey(c)] = pct;
      }
    }
    return out;
  });
  const rows = sort ? (sortRows(indexed, sort.column, sort.desc) as typeof indexed) : indexed;
  const header = (col: string, numeric: boolean) => {
    const active = sort?.column === col;
    return (
      <th class={numeric ? 'num' : ''} key={col} aria-sort={active ? (sort!.desc ? 'descending' : 'ascending') : 'none'} scope="col">
        <button class="sort" onClick={() => setSort({ column: col, desc: active ? !sort!.desc : numeric })}>
          {col}
          <span aria-hidden="true">{active ? (sort!.desc ? '▼' : '▲') : ''}</span>
        </button>
      </th>
    );
  };
  if (r.rows.length === 0) return <div class="panel empty">No events matched this query in its time range.</div>;
  return (
    <section class={props.compact ? '' : 'panel flush'} aria-label="Results table">
      <div class="table-wrap">
        <table data-testid="results-table">
          <thead>
            <tr>
              {r.breakdowns.length > 0 && <th aria-label="Colour" />}
              {r.breakdowns.map((b) => header(b, false))}
              {calcCols.map((c) => header(c, true))}
              {cmp && calcCols.map((c) => [header(pastKey(c), true), header(changeKey(c), true)])}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => {
              const g = r.groups[row.__i];
              return (
                <tr key={g.key} data-group={g.label}>
                  {r.breakdowns.length > 0 && (
                    <td>
                      <span class="swatch" style={{ background: props.colors[row.__i] }} />
                    </td>
                  )}
                  {r.breakdowns.map((b, j) => {
                    const v = row[b];
                    const text = v === undefined ? '(none)' : String(v);
                    const isTrace = props.traceHref && b === props.traceColumn && typeof v === 'string';
                    return (
                      <td key={b} class="mono">
                        {isTrace ? (
                          <Link href={props.traceHref!(v as string)} title="Open this trace">
                            {text}
                          </Link>
                        ) : props.onNarrow && j === 0 ? (
                          <button class="group-link" title="Show only this group" onClick={() => props.onNarrow!(g)}>
                            {text}
                          </button>
                        ) : (
                          text
                        )}
                      </td>
                    );
                  })}
                  {calcCols.map((c) => (
                    <td key={c} class="num" title={String(row[c] ?? '')}>
                      {typeof row[c] === 'number' ? formatNumber(row[c] as number) : String(row[c] ?? '–')}
                    </td>
                  ))}
                  {cmp &&
                    calcCols.map((c) => [
                      <td key={pastKey(c)} class="num muted" data-past={c}>
                        {typeof row[pastKey(c)] === 'number' ? formatNumber(row[pastKey(c)] as number) : '–'}
                      </td>,
                      <td key={changeKey(c)} class="num" data-change={c}>
                        {formatChange(row[changeKey(c)] as number | undefined)}
                      </td>,
                    ])}
                </tr>
              );
            })}
            {r.other && (
              <tr class="muted" data-group="other">
                {r.breakdowns.length > 0 && <td />}
                {r.breakdowns.map((b, j) => (
                  <td key={b}>{j === 0 ? <em title="The events of the groups past the limit">other groups</em> : ''}</td>
                ))}
                {calcCols.map((c) => (
                  <td key={c} class="num">
                    {typeof r.other![c] === 'number' ? formatNumber(r.other![c] as number) : '–'}
                  </td>
                ))}
                {cmp && calcCols.map((c) => [<td key={pastKey(c)} />, <td key={changeKey(c)} />])}
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}
