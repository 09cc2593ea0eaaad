// A trace: its spans as a waterfall (nested by parent, placed by start and duration, coloured by
// service, errors marked, span events as diamonds on their span, links listed), and a side
// panel with every field of the selected span. Rows take the keyboard: arrows move, Enter selects.
// Above it, the ways to compare the trace with another (trace-compare.tsx).
import { Fragment } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { getTrace } from '../api/endpoints.js';
import type { TraceSpan } from '../api/types.js';
import { ErrorNotice, FieldName, PageHead, Spinner, useAsync } from '../components/ui.js';
import { formatDuration, formatTimestamp } from '../format.js';
import { Link } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { buildWaterfall, offsetOf, type Waterfall, type WaterfallRow } from '../trace.js';
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

function TraceView({ spans, truncated, scope }: { spans: TraceSpan[]; truncated: boolean; scope: Scope }) {
  const w = useMemo(() => buildWaterfall(spans), [spans]);
  const [selected, setSelected] = useState<number>(0);
  const [collapsed, setCollapsed] = useState<Set<number>>(new Set());
  const visible = visibleRows(w.rows, collapsed);
  const row = w.rows[selected];
  const root = w.rows[0]?.span;
  return (
    <>
      <div class="row small">
        <span class="badge">{w.rows.length} spans</span>
        <span class="badge">{w.services.length} services</span>
        <span class="badge">{formatDuration(w.total)}</span>
        {w.errors > 0 && <span class="badge bad">{w.errors} with errors</span>}
        {root && <span class="muted">started {formatTimestamp(root.time)}</span>}
        {truncated && <span class="badge warn">only the first 10,000 events are shown</span>}
      </div>
      <div class="trace-layout">
        <div class="panel flush waterfall" role="tree" aria-label="Spans of the trace" data-testid="waterfall">
          <Scale total={w.total} />
          {visible.map((i) => (
            <Row
              key={i}
              w={w}
              r={w.rows[i]}
              selected={i === selected}
              collapsed={collapsed.has(i)}
              onSelect={() => setSelected(i)}
              onToggle={() => {
                const next = new Set(collapsed);
                if (next.has(i)) next.delete(i);
                else next.add(i);
                setCollapsed(next);
              }}
              onKey={(ev) => {
                const at = visible.indexOf(i);
                if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
                  ev.preventDefault();
                  const next = visible[Math.max(0, Math.min(visible.length - 1, at + (ev.key === 'ArrowDown' ? 1 : -1)))];
                  setSelected(next);
                  (document.querySelector(`[data-row="${next}"]`) as HTMLElement | null)?.focus();
                }
              }}
              index={i}
            />
          ))}
        </div>
        {row && <SpanDetails w={w} r={row} scope={scope} />}
      </div>
    </>
  );
}

/** Rows not hidden under a collapsed ancestor. */
function visibleRows(rows: WaterfallRow[], collapsed: Set<number>): number[] {
  const out: number[] = [];
  let hideBelow = Infinity;
  rows.forEach((r, i) => {
    if (r.depth > hideBelow) return;
    hideBelow = Infinity;
    out.push(i);
    if (collapsed.has(i)) hideBelow = r.depth;
  });
  return out;
}

function Scale({ total }: { total: number }) {
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return (
    <div class="wf-scale" aria-hidden="true">
      <div style={{ padding: '3px 8px' }}>span</div>
      <div class="ticks">
        {ticks.map((t) => (
          <span key={t} style={{ left: `${t * 100}%` }}>
            {formatDuration(total * t)}
          </span>
        ))}
      </div>
    </div>
  );
}

function Row(props: { w: Waterfall; r: WaterfallRow; selected: boolean; collapsed: boolean; index: number; onSelect: () => void; onToggle: () => void; onKey: (ev: KeyboardEvent) => void }) {
  const { w, r } = props;
  const s = r.span;
  const service = s.service_name ?? s.dataset;
  const total = Math.max(w.total, 0.001);
  const left = (r.offset / total) * 100;
  const width = (r.duration / total) * 100;
  return (
    <div
      class="wf-row"
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
      </div>
      <div class="wf-track">
        <div class={`wf-bar${s.error ? ' error' : ''}`} style={{ left: `${left}%`, width: `${Math.max(width, 0.15)}%`, background: w.colors[service] }} />
        {r.events.map((e, i) => (
          <span key={i} class="wf-event" style={{ left: `${(offsetOf(w, e) / total) * 100}%` }} title={`${e.name ?? 'span event'} at ${formatDuration(offsetOf(w, e) - r.offset)}`} />
        ))}
        <span class="wf-dur" style={{ left: `calc(${Math.min(left + width, 100)}% + 6px)` }}>
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
