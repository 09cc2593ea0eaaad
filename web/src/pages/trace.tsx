// A trace: its spans as a waterfall (nested by parent, placed by start and duration, coloured by
// service, errors marked, span events as diamonds on their span, links listed), and a side
// panel with every field of the selected span. Rows take the keyboard: arrows move, Enter selects.
// Built for traces of 100,000 spans: only the rows in view are drawn (big-trace.ts), a minimap
// zooms and pans the time, search finds spans by name or field, services collapse, and the
// critical path is marked.
// Above it, the ways to compare the trace with another (trace-compare.tsx).
import { Fragment } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { getTrace } from '../api/endpoints.js';
import type { TraceSpan } from '../api/types.js';
import { ErrorNotice, FieldName, PageHead, Spinner, useAsync } from '../components/ui.js';
import { formatDuration, formatTimestamp } from '../format.js';
import { Link } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { clampWindow, criticalPath, isFolded, parentsOf, scrollToShow, searchRows, shownRows, virtualWindow } from '../big-trace.js';
import { buildWaterfall, offsetOf, serviceOf, type Waterfall, type WaterfallRow } from '../trace.js';
import { CompareWith } from './trace-compare.js';

export function TracePage({ scope, dataset, traceId }: { scope: Scope; dataset: string; traceId: string }) {
  const trace = useAsync(() => getTrace(dataset, traceId), [dataset, traceId]);
  return (
    <div class="stack">
      <PageHead title="Trace" sub={<span class="mono">{traceId}</span>}>
        {dataset !== '__all__' && <Link href={pathOf({ page: 'trace', dataset: '__all__', traceId, ...scope })}>Search every dataset</Link>}
      </PageHead>
      {trace.error ? <ErrorNotice error={trace.error} /> : !trace.data ? <Spinner label="Finding the trace's spans" /> : trace.data.spans.length === 0 ? (
        <div class="panel empty">No events of trace {traceId} {dataset === '__all__' ? 'in this environment' : `in ${dataset}`}.</div>
      ) : (
        <>
          <CompareWith scope={scope} dataset={dataset} traceId={traceId} />
          <TraceView spans={trace.data.spans} truncated={trace.data.truncated} scope={scope} />
        </>
      )}
    </div>
  );
}

/** Height of a waterfall row, px (styles.css `.wf-rows .wf-row`): fixed, so rows can be virtualised. */
const ROW_H = 28;
const OVERSCAN = 12;

function TraceView({ spans, truncated, scope }: { spans: TraceSpan[]; truncated: boolean; scope: Scope }) {
  const w = useMemo(() => buildWaterfall(spans), [spans]);
  const parent = useMemo(() => parentsOf(w.rows), [w]);
  const critical = useMemo(() => criticalPath(w), [w]);
  const [selected, setSelected] = useState<number>(0);
  const [collapsed, setCollapsed] = useState<Set<number>>(new Set());
  const [services, setServices] = useState<Set<string>>(new Set());
  const [showCritical, setShowCritical] = useState(true);
  const [query, setQuery] = useState('');
  const matches = useMemo(() => searchRows(w, query), [w, query]);
  const matchSet = useMemo(() => new Set(matches), [matches]);
  const [match, setMatch] = useState(-1);
  const [range, setRange] = useState<[number, number]>([0, w.total]);
  useEffect(() => setRange([0, w.total]), [w]);
  const visible = useMemo(() => shownRows(w, collapsed, services), [w, collapsed, services]);
  const position = useMemo(() => {
    const m = new Map<number, number>();
    visible.forEach((r, k) => m.set(r, k));
    return m;
  }, [visible]);
  const box = useRef<HTMLDivElement>(null);
  const [scroll, setScroll] = useState({ top: 0, height: 600 });
  const win = virtualWindow(scroll.top, scroll.height, ROW_H, visible.length, OVERSCAN);
  const focusNext = useRef<number | null>(null);
  useLayoutEffect(() => {
    const el = box.current;
    if (el) setScroll({ top: el.scrollTop, height: el.clientHeight });
  }, [visible.length]);
  useEffect(() => {
    if (focusNext.current === null) return;
    const el = document.querySelector(`[data-row="${focusNext.current}"]`) as HTMLElement | null;
    if (el) {
      el.focus({ preventScroll: true });
      focusNext.current = null;
    }
  });

  /** Selects row `i`, unfolding what hides it, scrolled into view; focuses it when asked. */
  const show = (i: number, focus: boolean) => {
    let c = collapsed;
    let sv = services;
    if (isFolded(w, parent, i, collapsed, services)) {
      c = new Set(collapsed);
      sv = new Set(services);
      for (let p = parent[i]; p >= 0; p = parent[p]) {
        c.delete(p);
        sv.delete(serviceOf(w.rows[p].span));
      }
      setCollapsed(c);
      setServices(sv);
    }
    const order = c === collapsed && sv === services ? visible : shownRows(w, c, sv);
    const at = order.indexOf(i);
    const el = box.current;
    if (el && at >= 0) {
      const head = ROW_H; // the sticky scale
      const top = scrollToShow(at, Math.max(0, el.scrollTop), el.clientHeight - head, ROW_H);
      if (top !== el.scrollTop) el.scrollTop = top;
      setScroll({ top: el.scrollTop, height: el.clientHeight });
    }
    setSelected(i);
    if (focus) focusNext.current = i;
  };
  const jump = (step: number) => {
    if (!matches.length) return;
    const next = match < 0 && step < 0 ? matches.length - 1 : (match + step + matches.length) % matches.length;
    setMatch(next);
    show(matches[next], false);
  };
  const row = w.rows[selected];
  const root = w.rows[0]?.span;
  const toggle = (i: number) => {
    const sv = serviceOf(w.rows[i].span);
    if (services.has(sv) && !collapsed.has(i)) {
      // Open one subtree of a collapsed service: the service's other subtrees stay collapsed, one by one.
      const next = new Set(services);
      next.delete(sv);
      setServices(next);
      const c = new Set(collapsed);
      for (const k of visible) if (k !== i && w.rows[k].childCount > 0 && serviceOf(w.rows[k].span) === sv) c.add(k);
      setCollapsed(c);
      return;
    }
    const next = new Set(collapsed);
    if (next.has(i)) next.delete(i);
    else next.add(i);
    setCollapsed(next);
  };
  const scrollTo = (at: number) => {
    const el = box.current;
    if (!el) return;
    el.scrollTop = Math.max(0, at * ROW_H - el.clientHeight / 2);
    setScroll({ top: el.scrollTop, height: el.clientHeight });
  };
  return (
    <>
      <div class="row small">
        <span class="badge">{w.rows.length.toLocaleString('en-US')} spans</span>
        <span class="badge">{w.services.length} services</span>
        <span class="badge">{formatDuration(w.total)}</span>
        {w.errors > 0 && <span class="badge bad">{w.errors} with errors</span>}
        {root && <span class="muted">started {formatTimestamp(root.time)}</span>}
        {truncated && <span class="badge warn">only the first 100,000 events are shown</span>}
      </div>
      <div class="row small wf-tools">
        <input
          type="search"
          placeholder="Search spans: name, service, field or field=value"
          aria-label="Search spans"
          data-testid="trace-search"
          value={query}
          onInput={(ev) => {
            setQuery((ev.target as HTMLInputElement).value);
            setMatch(-1);
          }}
          onKeyDown={(ev) => {
            if (ev.key === 'Enter') {
              ev.preventDefault();
              jump(ev.shiftKey ? -1 : 1);
            }
          }}
          style={{ minWidth: '300px' }}
        />
        <span class="muted" data-testid="trace-search-count">
          {query.trim() ? `${match >= 0 ? `${match + 1} of ` : ''}${matches.length.toLocaleString('en-US')} ${matches.length === 1 ? 'match' : 'matches'}` : ''}
        </span>
        <button type="button" disabled={!matches.length} onClick={() => jump(-1)} aria-label="Previous match" data-testid="trace-search-prev">
          ↑
        </button>
        <button type="button" disabled={!matches.length} onClick={() => jump(1)} aria-label="Next match" data-testid="trace-search-next">
          ↓
        </button>
        <label>
          <input type="checkbox" checked={showCritical} onChange={(ev) => setShowCritical((ev.target as HTMLInputElement).checked)} data-testid="critical-toggle" /> critical path ({critical.size})
        </label>
        <span class="muted">collapse:</span>
        {w.services.map((sv) => (
          <button
            key={sv}
            type="button"
            class={`chip${services.has(sv) ? ' on' : ''}`}
            aria-pressed={services.has(sv)}
            data-testid="service-toggle"
            data-service={sv}
            title={services.has(sv) ? `Expand ${sv}'s spans` : `Collapse ${sv}'s spans into their subtree roots`}
            onClick={() => {
              const next = new Set(services);
              if (next.has(sv)) next.delete(sv);
              else next.add(sv);
              setServices(next);
            }}
          >
            <span class="swatch" style={{ background: w.colors[sv] }} />
            {sv}
          </button>
        ))}
      </div>
      <Minimap w={w} visible={visible} win={win} range={range} critical={showCritical ? critical : undefined} onRange={setRange} onScrollTo={scrollTo} />
      <div class="trace-layout">
        <div
          class="panel flush waterfall wf-rows"
          role="tree"
          aria-label="Spans of the trace"
          data-testid="waterfall"
          data-shown={visible.length}
          ref={box}
          onScroll={(ev) => {
            const el = ev.currentTarget as HTMLDivElement;
            setScroll({ top: el.scrollTop, height: el.clientHeight });
          }}
        >
          <Scale range={range} />
          <div style={{ height: `${win.top}px` }} aria-hidden="true" />
          {visible.slice(win.first, win.last).map((i) => (
            <Row
              key={i}
              w={w}
              r={w.rows[i]}
              range={range}
              selected={i === selected}
              collapsed={collapsed.has(i) || (w.rows[i].childCount > 0 && services.has(serviceOf(w.rows[i].span)))}
              critical={showCritical && critical.has(i)}
              match={matchSet.has(i)}
              current={match >= 0 && matches[match] === i}
              onSelect={() => setSelected(i)}
              onToggle={() => toggle(i)}
              onKey={(ev) => {
                const at = position.get(i) ?? 0;
                const step = ev.key === 'ArrowDown' ? 1 : ev.key === 'ArrowUp' ? -1 : ev.key === 'PageDown' ? 20 : ev.key === 'PageUp' ? -20 : ev.key === 'Home' ? -Infinity : ev.key === 'End' ? Infinity : 0;
                if (step) {
                  ev.preventDefault();
                  show(visible[Math.max(0, Math.min(visible.length - 1, at + step))], true);
                }
              }}
              index={i}
            />
          ))}
          <div style={{ height: `${win.bottom}px` }} aria-hidden="true" />
        </div>
        {row && <SpanDetails w={w} r={row} scope={scope} />}
      </div>
    </>
  );
}

/**
 * The whole trace small: a line per shown row (past one row a pixel, one a pixel row), the
 * rows in view and the time window shaded. Drag across it to zoom the waterfall's time to that
 * window, drag the window to pan it, click to scroll there, double-click for the whole trace.
 */
function Minimap(props: {
  w: Waterfall;
  visible: number[];
  win: { first: number; last: number };
  range: [number, number];
  critical?: Set<number>;
  onRange: (r: [number, number]) => void;
  onScrollTo: (at: number) => void;
}) {
  const { w, visible, range } = props;
  const canvas = useRef<HTMLCanvasElement>(null);
  const H = 64;
  const total = Math.max(w.total, 0.001);
  useEffect(() => {
    const c = canvas.current;
    if (!c) return;
    const width = c.clientWidth || 800;
    const dpr = window.devicePixelRatio || 1;
    c.width = Math.round(width * dpr);
    c.height = Math.round(H * dpr);
    const g = c.getContext('2d');
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, H);
    const n = visible.length;
    for (let k = 0; k < n; k++) {
      const i = visible[k];
      const r = w.rows[i];
      const y = n <= H ? (k / n) * H : Math.floor((k / n) * H);
      const h = n <= H ? Math.max(1, H / n - 1) : 1;
      g.fillStyle = props.critical?.has(i) ? '#d9534f' : w.colors[serviceOf(r.span)];
      g.fillRect((r.offset / total) * width, y, Math.max(1, (r.duration / total) * width), h);
    }
  }, [w, visible, props.critical]);
  const drag = useRef<{ x0: number; mode: 'zoom' | 'pan'; r0: [number, number] } | null>(null);
  const [band, setBand] = useState<[number, number] | null>(null);
  const at = (ev: PointerEvent) => {
    const rect = (ev.currentTarget as HTMLElement).getBoundingClientRect();
    return { t: ((ev.clientX - rect.left) / rect.width) * total, y: (ev.clientY - rect.top) / rect.height };
  };
  const n = Math.max(visible.length, 1);
  return (
    <div
      class="panel flush wf-minimap"
      data-testid="trace-minimap"
      data-range={`${range[0].toFixed(3)},${range[1].toFixed(3)}`}
      title="Drag to zoom the time, drag the window to pan, click to scroll there, double-click for the whole trace"
      onPointerDown={(ev) => {
        (ev.currentTarget as HTMLElement).setPointerCapture?.(ev.pointerId);
        const { t } = at(ev);
        const zoomed = range[0] > 0 || range[1] < total;
        drag.current = { x0: t, mode: zoomed && t >= range[0] && t <= range[1] ? 'pan' : 'zoom', r0: range };
      }}
      onPointerMove={(ev) => {
        const d = drag.current;
        if (!d) return;
        const { t } = at(ev);
        if (d.mode === 'pan') props.onRange(clampWindow(d.r0[0] + t - d.x0, d.r0[1] + t - d.x0, total));
        else setBand([Math.min(d.x0, t), Math.max(d.x0, t)]);
      }}
      onPointerUp={(ev) => {
        const d = drag.current;
        drag.current = null;
        setBand(null);
        if (!d) return;
        const { t, y } = at(ev);
        const moved = Math.abs(t - d.x0) / total > 0.005;
        if (d.mode === 'zoom' && moved) props.onRange(clampWindow(d.x0, t, total));
        else if (!moved) props.onScrollTo(Math.floor(y * visible.length));
      }}
      onDblClick={() => props.onRange([0, w.total])}
    >
      <canvas ref={canvas} style={{ width: '100%', height: `${H}px`, display: 'block' }} />
      <div class="wf-mm-rows" style={{ top: `${(props.win.first / n) * 100}%`, height: `${Math.max(2, ((props.win.last - props.win.first) / n) * 100)}%` }} />
      <div class="wf-mm-window" style={{ left: `${(range[0] / total) * 100}%`, width: `${((range[1] - range[0]) / total) * 100}%` }} />
      {band && <div class="wf-mm-band" style={{ left: `${(band[0] / total) * 100}%`, width: `${((band[1] - band[0]) / total) * 100}%` }} />}
    </div>
  );
}

function Scale({ range }: { range: [number, number] }) {
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return (
    <div class="wf-scale" aria-hidden="true">
      <div style={{ padding: '3px 8px' }}>span</div>
      <div class="ticks">
        {ticks.map((t) => (
          <span key={t} style={{ left: `${t * 100}%` }}>
            {formatDuration(range[0] + (range[1] - range[0]) * t)}
          </span>
        ))}
      </div>
    </div>
  );
}

function Row(props: { w: Waterfall; r: WaterfallRow; range: [number, number]; selected: boolean; collapsed: boolean; critical: boolean; match: boolean; current: boolean; index: number; onSelect: () => void; onToggle: () => void; onKey: (ev: KeyboardEvent) => void }) {
  const { w, r } = props;
  const s = r.span;
  const service = s.service_name ?? s.dataset;
  const [from, to] = props.range;
  const span = Math.max(to - from, 0.001);
  const pos = (t: number) => ((t - from) / span) * 100;
  const left = pos(r.offset);
  const width = (r.duration / span) * 100;
  return (
    <div
      class={`wf-row${props.critical ? ' critical' : ''}${props.match ? ' match' : ''}${props.current ? ' current' : ''}`}
      data-critical={props.critical ? 'true' : undefined}
      data-match={props.match ? 'true' : undefined}
      role="treeitem"
      aria-level={r.depth + 1}
      aria-selected={props.selected}
      aria-expanded={r.childCount ? !props.collapsed : undefined}
      tabIndex={props.selected ? 0 : -1}
      data-row={props.index}
      data-span-id={s.span_id ?? ''}
      data-depth={r.depth}
      data-offset-ms={r.offset.toFixed(3)}
      data-duration-ms={r.duration}
      onClick={props.onSelect}
      onKeyDown={(ev) => {
        if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault();
          props.onSelect();
        } else if ((ev.key === 'ArrowLeft' && !props.collapsed) || (ev.key === 'ArrowRight' && props.collapsed)) {
          if (r.childCount) props.onToggle();
        } else props.onKey(ev);
      }}
    >
      <div class="wf-name" style={{ paddingLeft: `${8 + r.depth * 14}px` }}>
        {r.childCount > 0 ? (
          <button
            class="icon"
            tabIndex={-1}
            aria-label={props.collapsed ? 'Expand' : 'Collapse'}
            onClick={(ev) => {
              ev.stopPropagation();
              props.onToggle();
            }}
          >
            {props.collapsed ? '▸' : '▾'}
          </button>
        ) : (
          <span style={{ width: '22px', display: 'inline-block' }} />
        )}
        {s.error && <span class="err-dot" title="error" aria-label="error" />}
        <span class="swatch" style={{ background: w.colors[service] }} />
        <span class="svc">{service}</span>
        <span class="nm" title={s.name ?? s.span_id ?? undefined}>
          {s.name ?? s.span_id ?? '(unnamed span)'}
        </span>
        {r.orphan && <span class="badge warn" title="Its parent span is not in the trace">orphan</span>}
        {r.childCount > 0 && props.collapsed && <span class="badge">{r.childCount}</span>}
        {props.critical && <span class="cp-mark" title="On the critical path" aria-label="critical path" />}
      </div>
      <div class="wf-track">
        {/* Zoomed in (the minimap), a bar is cut to the window, and not drawn when outside it. */}
        {left + width >= 0 && left <= 100 && (
          <div
            class={`wf-bar${s.error ? ' error' : ''}`}
            style={{ left: `${Math.max(0, left)}%`, width: `${Math.max(Math.min(left + width, 100) - Math.max(0, left), 0.15)}%`, background: w.colors[service] }}
          />
        )}
        {r.events.map((e, i) => pos(offsetOf(w, e)) < 0 || pos(offsetOf(w, e)) > 100 ? null : (
          <span key={i} class="wf-event" style={{ left: `${pos(offsetOf(w, e))}%` }} title={`${e.name ?? 'span event'} at ${formatDuration(offsetOf(w, e) - r.offset)}`} />
        ))}
        <span class="wf-dur" style={{ left: `calc(${Math.max(0, Math.min(left + width, 100))}% + 6px)` }}>
          {formatDuration(r.duration)}
        </span>
      </div>
    </div>
  );
}

function SpanDetails({ w, r, scope }: { w: Waterfall; r: WaterfallRow; scope: Scope }) {
  const s = r.span;
  const keys = Object.keys(s.data).sort();
  return (
    <aside class="panel side" aria-label="Selected span" data-testid="span-details">
      <h2 style={{ marginBottom: '2px' }}>{s.name ?? s.span_id ?? 'span'}</h2>
      <div class="row small" style={{ marginBottom: '10px' }}>
        <span class="swatch" style={{ background: w.colors[s.service_name ?? s.dataset] }} />
        {s.service_name ?? s.dataset}
        <span class="muted">· {formatDuration(r.duration)} · starts at +{formatDuration(r.offset)}</span>
        {s.error && <span class="badge bad">error</span>}
      </div>
      {r.events.length > 0 && (
        <>
          <h3>Span events</h3>
          <ul class="small">
            {r.events.map((e, i) => (
              <li key={i}>
                <strong>{e.name ?? 'event'}</strong> at +{formatDuration(offsetOf(w, e) - r.offset)}
                {e.error && <span class="badge bad">error</span>}
              </li>
            ))}
          </ul>
        </>
      )}
      {r.links.length > 0 && (
        <>
          <h3>Links</h3>
          <ul class="small mono">
            {r.links.map((l, i) => (
              <li key={i} data-testid="span-link">
                {l.link?.trace_id ? (
                  <Link href={pathOf({ page: 'trace', dataset: '__all__', traceId: l.link.trace_id, ...scope })} title="Open the linked trace">
                    trace {l.link.trace_id}
                  </Link>
                ) : (
                  'trace ?'
                )}{' '}
                · span {l.link?.span_id ?? '?'}
              </li>
            ))}
          </ul>
        </>
      )}
      <h3>Fields</h3>
      <div class="kv">
        <div class="k">time</div>
        <div class="v">{s.time}</div>
        <div class="k">dataset</div>
        <div class="v">{s.dataset}</div>
        {keys.map((k) => (
          <Fragment key={k}>
            <div class="k" title={k}>
              <FieldName name={k} />
            </div>
            <div class="v">{String(s.data[k])}</div>
          </Fragment>
        ))}
      </div>
    </aside>
  );
}
