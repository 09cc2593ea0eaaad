// Two traces side by side, span by span (trace-compare.ts lines them up): each row a span of
// either trace with both bars on one scale (A above, B below, each from its trace's start), the
// durations and the difference A − B coloured (slower red, faster green); spans only one trace
// has are marked. Reached from a trace's page: "Compare with a typical trace" (the server's
// GET /1/traces/{ds}/{id}/typical) or "Compare with…" another trace id.
import { useMemo, useState } from 'preact/hooks';
import { getTrace, getTypicalTrace } from '../api/endpoints.js';
import type { TraceSpan } from '../api/types.js';
import { ErrorNotice, PageHead, Spinner, useAsync } from '../components/ui.js';
import { formatDuration } from '../format.js';
import { Link, navigate, useLocation } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { compareTraces, formatDiff, type CompareRow, type Side } from '../trace-compare.js';

export function TraceComparePage({ scope, dataset, traceId, otherId }: { scope: Scope; dataset: string; traceId: string; otherId: string }) {
  const traces = useAsync(() => Promise.all([getTrace(dataset, traceId), getTrace(dataset, otherId)]), [dataset, traceId, otherId]);
  const open = (id: string) => pathOf({ page: 'trace', dataset, traceId: id, ...scope });
  // Reached by "Compare with a typical trace": what the server said of B (?median=&roots=).
  const search = useLocation().search;
  const median = Number(search.get('median') ?? NaN);
  const roots = Number(search.get('roots') ?? NaN);
  return (
    <div class="stack">
      <PageHead
        title="Compare traces"
        sub={
          <span>
            <span class="tc-key a">A</span> <Link href={open(traceId)} class="mono">{traceId}</Link> against <span class="tc-key b">B</span>{' '}
            <Link href={open(otherId)} class="mono">{otherId}</Link>
          </span>
        }
      >
        <Link href={pathOf({ page: 'trace-compare', dataset, traceId: otherId, otherId: traceId, ...scope })}>Swap A and B</Link>
      </PageHead>
      {Number.isFinite(median) && Number.isFinite(roots) && (
        <div class="muted small" data-testid="typical-note">
          B is a typical trace: of the {roots} traces with the same root span within 12 hours, its root took the time nearest their median, {formatDuration(median)}.
        </div>
      )}
      {traces.error ? <ErrorNotice error={traces.error} /> : !traces.data ? <Spinner label="Finding both traces' spans" /> : traces.data[0].spans.length === 0 || traces.data[1].spans.length === 0 ? (
        <div class="panel empty">No events of trace {traces.data[0].spans.length === 0 ? traceId : otherId} {dataset === '__all__' ? 'in this environment' : `in ${dataset}`}.</div>
      ) : (
        <CompareView a={traces.data[0].spans} b={traces.data[1].spans} truncated={traces.data[0].truncated || traces.data[1].truncated} />
      )}
    </div>
  );
}

function CompareView({ a, b, truncated }: { a: TraceSpan[]; b: TraceSpan[]; truncated: boolean }) {
  const c = useMemo(() => compareTraces(a, b), [a, b]);
  const [onlyDifferent, setOnlyDifferent] = useState(false);
  const scale = Math.max(c.totalA, c.totalB, 0.001);
  const rows = onlyDifferent ? c.rows.filter((r) => r.in !== 'both' || Math.abs(r.diffPct ?? 0) >= 10) : c.rows;
  const total = { diffMs: c.totalA - c.totalB, diffPct: c.totalB > 0 ? ((c.totalA - c.totalB) / c.totalB) * 100 : null };
  return (
    <>
      <div class="row small" data-testid="compare-summary">
        <span class="badge">A {formatDuration(c.totalA)}</span>
        <span class="badge">B {formatDuration(c.totalB)}</span>
        <span class={`badge ${diffClass(total.diffMs)}`}>A − B {formatDiff(total, formatDuration)}</span>
        <span class="badge">{c.matched} matched</span>
        <span class={`badge${c.onlyA ? ' warn' : ''}`}>{c.onlyA} only in A</span>
        <span class={`badge${c.onlyB ? ' warn' : ''}`}>{c.onlyB} only in B</span>
        {truncated && <span class="badge warn">only the first 10,000 events of a trace are compared</span>}
        <span class="muted">bars: A above, B below (lighter), each from its trace's start</span>
        <label class="row" style={{ gap: '4px' }}>
          <input type="checkbox" checked={onlyDifferent} onChange={(ev) => setOnlyDifferent((ev.target as HTMLInputElement).checked)} />
          only spans that differ (by 10 % or more, or in one trace only)
        </label>
      </div>
      <div class="panel flush waterfall tc" role="table" aria-label="Spans of both traces" data-testid="trace-compare">
        <div class="tc-row tc-head" role="row">
          <div role="columnheader" style={{ padding: '3px 8px' }}>span</div>
          <div role="columnheader" class="tc-track">
            <span style={{ left: 0 }}>0</span>
            <span style={{ left: '50%' }}>{formatDuration(scale / 2)}</span>
            <span style={{ right: 0 }}>{formatDuration(scale)}</span>
          </div>
          <div role="columnheader" class="num">A</div>
          <div role="columnheader" class="num">B</div>
          <div role="columnheader" class="num">A − B</div>
        </div>
        {rows.map((r, i) => (
          <Row key={i} r={r} scale={scale} color={c.colors[r.service]} />
        ))}
      </div>
    </>
  );
}

const diffClass = (ms: number | undefined) => (ms === undefined || Math.abs(ms) < 0.0005 ? '' : ms > 0 ? 'bad' : 'ok');

function Row({ r, scale, color }: { r: CompareRow; scale: number; color: string }) {
  const bar = (s: Side | undefined, which: 'a' | 'b') =>
    s && <div class={`tc-bar ${which}${s.span.error ? ' error' : ''}`} style={{ left: `${(s.offset / scale) * 100}%`, width: `${Math.max((s.duration / scale) * 100, 0.15)}%`, background: color }} title={`${which.toUpperCase()}: ${formatDuration(s.duration)} from +${formatDuration(s.offset)}`} />;
  return (
    <div class={`tc-row in-${r.in}`} role="row" data-in={r.in} data-name={r.name} data-service={r.service} data-diff-ms={r.diffMs === undefined ? undefined : r.diffMs.toFixed(3)}>
      <div class="wf-name" role="cell" style={{ paddingLeft: `${8 + r.depth * 14}px` }}>
        <span class="swatch" style={{ background: color }} />
        <span class="svc">{r.service}</span>
        <span class="nm" title={r.name}>{r.name}</span>
        {r.in !== 'both' && <span class="badge warn">only in {r.in.toUpperCase()}</span>}
      </div>
      <div class="tc-track" role="cell">
        {bar(r.a, 'a')}
        {bar(r.b, 'b')}
      </div>
      <div class="num" role="cell">{r.a ? formatDuration(r.a.duration) : '—'}</div>
      <div class="num" role="cell">{r.b ? formatDuration(r.b.duration) : '—'}</div>
      <div class={`num tc-diff ${diffClass(r.diffMs)}`} role="cell">{r.in === 'both' ? formatDiff(r, formatDuration) : ''}</div>
    </div>
  );
}

/** The trace page's way here: a typical trace found by the server, or another trace id typed in. */
export function CompareWith({ scope, dataset, traceId }: { scope: Scope; dataset: string; traceId: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [other, setOther] = useState('');
  const go = (otherId: string, search = '') => navigate(pathOf({ page: 'trace-compare', dataset, traceId, otherId, ...scope }) + search);
  return (
    <div class="row small" data-testid="compare-with">
      <button
        disabled={busy}
        title="Compare with a trace whose root span has the same service and name, with the duration nearest their median"
        onClick={async () => {
          setBusy(true);
          setError(undefined);
          try {
            const typical = await getTypicalTrace(dataset, traceId);
            go(typical.trace_id, `?median=${typical.median_ms}&roots=${typical.roots}`);
          } catch (err) {
            setError(err);
          } finally {
            setBusy(false);
          }
        }}
      >
        {busy ? 'Finding a typical trace…' : 'Compare with a typical trace'}
      </button>
      <form
        class="row"
        style={{ gap: '4px' }}
        onSubmit={(ev) => {
          ev.preventDefault();
          if (other.trim()) go(other.trim());
        }}
      >
        <input aria-label="Another trace id" placeholder="another trace id" value={other} onInput={(ev) => setOther((ev.target as HTMLInputElement).value)} />
        <button type="submit" disabled={!other.trim()}>
          Compare with…
        </button>
      </form>
      {error !== undefined && <ErrorNotice error={error} title="No typical trace" />}
    </div>
  );
}
