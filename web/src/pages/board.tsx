// A board: its panels laid out as positioned, each query panel running its query (with the
// board's preset filters and the chosen view's filters added) and drawing it as the panel's chart
// type, SLO panels showing their SLO, text panels their Markdown. A query panel shows its query's
// time comparison (`compare_time_offset_seconds`) unless its `visualization_settings.hide_compare`
// is set; the editor turns it on with another offset by saving the query with it (PanelCompare).
import { useMemo, useState } from 'preact/hooks';
import { createQuery, createQueryAnnotation, getBoard, getQuery, getQueryAnnotation, getSlo, listBoardViews, runQuery } from '../api/endpoints.js';
import type { Board, BoardPanel, BoardView, Filter, FilterOp, QueryResult, QuerySpec } from '../api/types.js';
import type { ChartMarker } from '../charts/line-chart.js';
import { chartMarkers } from '../chart-markers.js';
import { LazyBoardEditor } from '../components/board-edit.js';
import { Markdown } from '../components/markdown.js';
import { ResultsView } from '../components/results-view.js';
import { SloFigures } from '../components/slo-summary.js';
import { ErrorNotice, Loaded, PageHead, Spinner, useAsync } from '../components/ui.js';
import { formatNumber } from '../format.js';
import { specToSearch } from '../query-url.js';
import { OFFSETS, shapeResult } from '../results.js';
import { Link, navigate, useLocation } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { PRESETS, truncatedWindow, windowOf, withPreset } from '../time.js';

export function BoardPage({ scope, boardId }: { scope: Scope; boardId: string }) {
  const board = useAsync(() => Promise.all([getBoard(boardId), listBoardViews(boardId).catch(() => [] as BoardView[])]), [boardId]);
  // `?edit=1`: the Edit mode (components/board-edit.tsx, loaded when first asked for).
  const loc = useLocation();
  const edit = (on: boolean) => {
    const s = new URLSearchParams(loc.search);
    if (on) s.set('edit', '1');
    else s.delete('edit');
    navigate(`${pathOf({ page: 'board', boardId, ...scope })}${s.toString() ? `?${s}` : ''}`, { replace: true });
  };
  return (
    <Loaded async={board} label="Loading the board">
      {([b, views]) =>
        loc.search.get('edit') ? (
          <LazyBoardEditor scope={scope} board={b} views={views} onDone={() => (edit(false), board.reload())} />
        ) : (
          <BoardBody scope={scope} board={b} views={views} onEdit={() => edit(true)} />
        )
      }
    </Loaded>
  );
}

function BoardBody({ scope, board, views, onEdit }: { scope: Scope; board: Board; views: BoardView[]; onEdit?: () => void }) {
  const loc = useLocation();
  const viewId = loc.search.get('view') ?? '';
  const range = loc.search.get('range');
  const view = views.find((v) => v.id === viewId);
  const presets = board.preset_filters ?? [];
  const [presetValues, setPresetValues] = useState<Record<string, string>>({});
  const [applied, setApplied] = useState<Record<string, string>>({});
  const extra = useMemo<Filter[]>(() => {
    const f: Filter[] = (view?.filters ?? []).map((x) => ({ column: x.column, op: x.operation as FilterOp, ...(x.value === undefined ? {} : { value: x.value as Filter['value'] }) }));
    for (const p of presets) if (applied[p.column]) f.push({ column: p.column, op: '=', value: applied[p.column] });
    return f;
  }, [view, applied]);
  const setParam = (k: string, v: string) => {
    const s = new URLSearchParams(loc.search);
    if (v) s.set(k, v);
    else s.delete(k);
    navigate(`${pathOf({ page: 'board', boardId: board.id, ...scope })}${s.toString() ? `?${s}` : ''}`, { replace: true });
  };
  return (
    <div class="stack">
      <PageHead title={board.name} sub={board.description || undefined}>
        <label class="row small muted">
          Time
          <select value={range ?? ''} onChange={(e) => setParam('range', (e.target as HTMLSelectElement).value)} aria-label="Time range of every panel">
            <option value="">each query's own</option>
            {PRESETS.map((p) => (
              <option key={p.seconds} value={String(p.seconds)}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        {views.length > 0 && (
          <label class="row small muted">
            View
            <select value={viewId} onChange={(e) => setParam('view', (e.target as HTMLSelectElement).value)} aria-label="Board view">
              <option value="">No view</option>
              {views.map((v) => (
                <option key={v.id} value={v.id}>
                  {v.name}
                </option>
              ))}
            </select>
          </label>
        )}
        {onEdit && <button onClick={onEdit}>Edit</button>}
      </PageHead>
      {presets.length > 0 && (
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            setApplied({ ...presetValues });
          }}
        >
          {presets.map((p) => (
            <label key={p.column} class="field">
              {p.alias}
              <input value={presetValues[p.column] ?? ''} placeholder={p.column} onInput={(e) => setPresetValues({ ...presetValues, [p.column]: (e.target as HTMLInputElement).value })} />
            </label>
          ))}
          <button type="submit" style={{ alignSelf: 'flex-end' }}>
            Apply filters
          </button>
        </form>
      )}
      {extra.length > 0 && (
        <div class="small muted">
          Every query panel is filtered by {extra.map((f) => `${f.column} ${f.op} ${f.value ?? ''}`).join(' and ')}.
        </div>
      )}
      {board.panels.length === 0 ? (
        <div class="panel empty">This board has no panels.</div>
      ) : (
        <div class="board-grid">
          {board.panels.map((p, i) => (
            <PanelBox key={i} panel={p} scope={scope} extra={extra} range={range ? Number(range) : undefined} />
          ))}
        </div>
      )}
    </div>
  );
}

function PanelBox({ panel, scope, extra, range }: { panel: BoardPanel; scope: Scope; extra: Filter[]; range?: number }) {
  const pos = panel.position;
  const w = pos?.width || 6;
  const h = pos?.height || (panel.type === 'text' ? 4 : 6);
  const style = pos && (pos.width || pos.height || pos.x_coordinate || pos.y_coordinate)
    ? { gridColumn: `${(pos.x_coordinate ?? 0) + 1} / span ${Math.min(12, w)}`, gridRow: `${(pos.y_coordinate ?? 0) + 1} / span ${h}` }
    : { gridColumn: `span ${Math.min(12, w)}`, gridRow: `span ${h}` };
  return (
    <section class="panel board-panel" style={style} data-panel-type={panel.type}>
      {panel.type === 'query' && panel.query_panel && <QueryPanel p={panel.query_panel} scope={scope} extra={extra} range={range} chartHeight={Math.max(110, h * 70 - 76)} />}
      {panel.type === 'slo' && panel.slo_panel && <SloPanel id={panel.slo_panel.slo_id} scope={scope} />}
      {panel.type === 'text' && panel.text_panel && (
        <div class="body">
          <Markdown text={panel.text_panel.content} />
        </div>
      )}
    </section>
  );
}

export function QueryPanel({ p, scope, extra, range, chartHeight }: { p: NonNullable<BoardPanel['query_panel']>; scope: Scope; extra: Filter[]; range?: number; chartHeight: number }) {
  const ds = p.dataset || '__all__';
  const chartType = p.visualization_settings?.charts?.[0]?.chart_type ?? 'default';
  const logScale = p.visualization_settings?.charts?.[0]?.log_scale ?? false;
  const hideCompare = p.visualization_settings?.hide_compare === true;
  const markers = useAsync(() => chartMarkers(ds), [ds]);
  const run = useAsync(async (signal) => {
    const [q, annotation] = await Promise.all([getQuery(ds, p.query_id), getQueryAnnotation(ds, p.query_annotation_id).catch(() => undefined)]);
    const { id: _id, ...base } = q;
    let spec: QuerySpec = extra.length ? { ...base, filters: [...(base.filters ?? []), ...extra], filter_combination: 'AND' } : base;
    if (range) spec = withPreset(spec, range);
    // No comparison when the panel hides it, or when the board's time range is longer than its offset.
    if (spec.compare_time_offset_seconds !== undefined && (hideCompare || (range !== undefined && range > spec.compare_time_offset_seconds))) {
      const { compare_time_offset_seconds: _c, ...rest } = spec;
      spec = rest;
    }
    const result = await runQuery(ds, spec, undefined, signal, { background: true });
    return { spec, result, title: annotation?.name };
  }, [p.query_id, JSON.stringify(extra), range, hideCompare]);
  return (
    <>
      <header class="row" style={{ marginBottom: '6px' }}>
        <h2 style={{ margin: 0 }}>{run.data?.title ?? 'Query'}</h2>
        <span class="spacer" />
        {run.data && (
          <Link class="small" href={`${pathOf({ page: 'query', dataset: ds, ...scope })}${specToSearch(run.data.spec)}`}>
            Open query
          </Link>
        )}
      </header>
      <div class="body">
        {run.error ? <ErrorNotice error={run.error} /> : !run.data ? <Spinner label="Running" /> : run.data.result.error ? (
          <ErrorNotice error={run.data.result.error} />
        ) : (
          <PanelResult spec={run.data.spec} data={run.data.result.data!} window={run.data.result.window} chartType={chartType} style={p.query_style} logScale={logScale} chartHeight={chartHeight} markers={markers.data ?? []} />
        )}
      </div>
    </>
  );
}

function PanelResult(props: { spec: QuerySpec; window?: { start: number; end: number }; data: NonNullable<QueryResult['data']>; chartType: string; style?: string; logScale: boolean; chartHeight: number; markers: ChartMarker[] }) {
  const shaped = useMemo(() => shapeResult(props.spec, props.data, props.window ?? truncatedWindow(props.spec, Math.floor(Date.now() / 1000))), [props.data]);
  if (props.chartType === 'stat') {
    const key = shaped.series[0]?.key;
    const total = key ? props.data.total_by_aggregate?.data[key] : undefined;
    return (
      <div>
        <div class="stat">{typeof total === 'number' ? formatNumber(total) : '–'}</div>
        <div class="small muted mono">{key}</div>
      </div>
    );
  }
  const table = props.style === 'table';
  const chartStyle = props.chartType === 'stacked' ? 'stacked' : props.chartType === 'tsbar' ? 'bars' : 'line';
  return (
    <ResultsView
      result={shaped}
      markers={props.markers}
      compact
      fitHeight={props.style === 'combo' ? Math.round(props.chartHeight / 2) : props.chartHeight}
      chartStyle={chartStyle}
      logScale={props.logScale}
      show={{ charts: !table, table: table || props.style === 'combo' }}
    />
  );
}

type QueryPanelOf = NonNullable<BoardPanel['query_panel']>;

/**
 * The editor's "Compare to" of a query panel: none hides the query's comparison
 * (`hide_compare`); an offset the query has shows it; another offset saves the query with it (and
 * a copy of the panel's annotation, which belongs to one query) and points the panel at them.
 */
export function PanelCompare({ p, onPanel }: { p: QueryPanelOf; onPanel: (q: QueryPanelOf) => void }) {
  const ds = p.dataset || '__all__';
  const query = useAsync(() => getQuery(ds, p.query_id), [p.query_id]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const q = query.data;
  const own = q?.compare_time_offset_seconds;
  const hidden = p.visualization_settings?.hide_compare === true;
  const value = own !== undefined && !hidden ? String(own) : '';
  const w = q ? windowOf(q, Math.floor(Date.now() / 1000)) : undefined;
  const duration = w ? w.end - w.start : 0;
  const withHide = (panel: QueryPanelOf, hide: boolean): QueryPanelOf => {
    const { hide_compare: _h, ...vs } = panel.visualization_settings ?? {};
    return { ...panel, visualization_settings: hide ? { ...vs, hide_compare: true } : vs };
  };
  const choose = async (v: string) => {
    if (!q) return;
    if (v === '') return onPanel(withHide(p, true));
    const offset = Number(v);
    if (offset === own) return onPanel(withHide(p, false));
    setBusy(true);
    setError(null);
    try {
      const { id: _id, ...spec } = q;
      const saved = await createQuery(ds, { ...spec, compare_time_offset_seconds: offset });
      const annotation = await getQueryAnnotation(ds, p.query_annotation_id);
      const copy = await createQueryAnnotation(ds, { name: annotation.name, description: annotation.description, query_id: saved.id });
      onPanel(withHide({ ...p, query_id: saved.id, query_annotation_id: copy.id }, false));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <select aria-label="Compare to" title="Compare with the same window earlier" value={value} disabled={!q || busy} onChange={(e) => void choose((e.target as HTMLSelectElement).value)}>
        <option value="">No comparison</option>
        {OFFSETS.map((o) => (
          <option key={o.seconds} value={String(o.seconds)} disabled={o.seconds < duration}>
            vs {o.label} earlier
          </option>
        ))}
      </select>
      {error !== null && <ErrorNotice error={error} />}
    </>
  );
}

export function SloPanel({ id, scope }: { id: string; scope: Scope }) {
  const slo = useAsync(() => getSlo('__all__', id), [id]);
  return (
    <Loaded async={slo} label="Loading the SLO">
      {(s) => (
        <>
          <header class="row" style={{ marginBottom: '8px' }}>
            <h2 style={{ margin: 0 }}>{s.name}</h2>
            <span class="spacer" />
            <Link class="small" href={pathOf({ page: 'slo', dataset: s.dataset_slugs?.length === 1 ? s.dataset_slugs[0] : '__all__', sloId: s.id, ...scope })}>
              Open SLO
            </Link>
          </header>
          <SloFigures slo={s} />
        </>
      )}
    </Loaded>
  );
}
