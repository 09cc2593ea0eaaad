// The query page: the builder, the run (saved with /1/queries, run with /1/query_results, shown
// while it runs), the answer's charts and table, and BubbleUp. The query lives in the address
// (`?query=`), so running one is a navigation: reload and back/forward show the same queries.
// `…/result/<id>` (a query_url) opens that stored result as it was computed.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, type FieldProblem } from '../api/client.js';
import { bubbleUp, getResultWindow, listCalculatedFields, listColumns, runQuery } from '../api/endpoints.js';
import type { BubbleUpAnswer, BubbleUpSelection, QueryResult, QuerySpec } from '../api/types.js';
import type { ChartMarker } from '../charts/line-chart.js';
import { AddToBoard } from '../components/add-to-board.js';
import { BubbleUpPanel } from '../components/bubbleup-panel.js';
import { CompareControl, QueryBuilder, type ColumnInfo } from '../components/query-builder.js';
import { cleanSpec, clauseOf } from '../spec-edit.js';
import { MarkerForm } from '../components/marker-form.js';
import { ResultsView } from '../components/results-view.js';
import { BandToggle, useResultBands } from '../components/band-toggle.js';
import { TriggerForm, watchable } from '../components/trigger-form.js';
import { GranularityPicker, TimePicker } from '../components/time-picker.js';
import { ErrorNotice, PageHead, useAsync } from '../components/ui.js';
import { chartMarkers, forgetChartMarkers } from '../chart-markers.js';
import { describeQuery } from '../describe.js';
import { normaliseSpec, sameSpec, searchToSpec, specToSearch } from '../query-url.js';
import { addRecent } from '../recent.js';
import { shapeResult, type Group } from '../results.js';
import { Link, navigate, useLocation } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { useSession } from '../session.js';
import { truncatedWindow, windowOf } from '../time.js';

export const DEFAULT_SPEC: QuerySpec = { calculations: [{ op: 'COUNT' }], time_range: 7200 };
export const TRACE_ID_COLUMN = 'trace.trace_id';
/** Clauses whose problems the builder shows in their own box. */
const PLACED = ['visualize', 'where', 'group', 'order', 'limit', 'having', 'calculated'];

type Run =
  | { status: 'idle' }
  | { status: 'saving' | 'running'; since: number }
  /** `answeredAt`: performance.now() when the answer arrived (the page reports its drawing time from it). */
  | { status: 'done'; result: QueryResult; spec: QuerySpec; window?: { start: number; end: number }; answeredAt: number }
  | { status: 'failed'; error: unknown; problems: FieldProblem[] };

export function QueryPage({ scope, dataset, resultId }: { scope: Scope; dataset: string; resultId?: string }) {
  const loc = useLocation();
  const { datasets } = useSession();
  const here = pathOf({ page: 'query', dataset, ...scope });
  const fromUrl = resultId ? undefined : searchToSpec(loc.search);
  const urlKey = resultId ? `result:${resultId}` : (loc.search.get('query') ?? '');
  // `?draft=`: a query being built, not run (the dataset changed before any query ran).
  const draftParam = resultId ? null : loc.search.get('draft');
  const fromDraft = draftParam ? searchToSpec(new URLSearchParams([['query', draftParam]])) : undefined;
  const [draft, setDraft] = useState<QuerySpec>(fromUrl && !('error' in fromUrl) ? fromUrl : fromDraft && !('error' in fromDraft) ? fromDraft : DEFAULT_SPEC);
  const [run, setRun] = useState<Run>({ status: 'idle' });
  const [selection, setSelection] = useState<BubbleUpSelection | null>(null);
  /** How the selection reads when a link named it (`sli = false` rather than a range 0 – 0). */
  const [selectionLabel, setSelectionLabel] = useState<string | undefined>(undefined);
  const [bubble, setBubble] = useState<{ answer?: BubbleUpAnswer; error?: unknown }>({});
  /** BubbleUp's "Compare with": seconds back (0: the rest of the query's events). */
  const [compareOffset, setCompareOffset] = useState(0);
  const bubbleAsked = useRef(0);
  const [drawMs, setDrawMs] = useState<number | null>(null);
  const abort = useRef<AbortController>();

  const columns = useAsync(async (): Promise<ColumnInfo[]> => {
    const [cols, calc] = await Promise.all([listColumns(dataset), listCalculatedFields(dataset).catch(() => [])]);
    const out = new Map<string, ColumnInfo>();
    for (const c of cols) if (!c.hidden) out.set(c.key_name, { name: c.key_name, type: c.type });
    for (const c of calc) out.set(c.alias, { name: c.alias, type: 'calculated' });
    return [...out.values()].sort((a, b) => a.name.localeCompare(b.name));
  }, [dataset]);
  const markers = useAsync((): Promise<ChartMarker[]> => chartMarkers(dataset), [dataset]);
  // Authoring from a result: a trigger (its threshold drawn on the chart as it is edited), or a
  // marker (placed by a click on a chart).
  const [making, setMaking] = useState<'trigger' | 'marker' | null>(null);
  const [threshold, setThreshold] = useState<{ calc: string; value: number } | undefined>(undefined);
  const [markerAt, setMarkerAt] = useState<number | undefined>(undefined);
  const [madeTrigger, setMadeTrigger] = useState<{ id: string; name: string } | undefined>(undefined);

  const execute = (spec: QuerySpec) => {
    abort.current?.abort();
    const ctl = new AbortController();
    abort.current = ctl;
    setSelection(null);
    setDrawMs(null);
    setRun({ status: 'saving', since: Date.now() });
    runQuery(dataset, spec, (stage) => !ctl.signal.aborted && setRun({ status: stage, since: Date.now() }), ctl.signal).then(
      (result) => {
        if (ctl.signal.aborted) return;
        setRun({ status: 'done', result, spec, window: result.window ?? truncatedWindow(spec, Math.floor(Date.now() / 1000)), answeredAt: performance.now() });
        addRecent(scope, { dataset, resultId: result.id, spec, at: Date.now() });
      },
      (error) => {
        if (ctl.signal.aborted || (error as Error).name === 'AbortError') return;
        setRun({ status: 'failed', error, problems: error instanceof ApiError ? error.fields : [] });
      },
    );
  };

  // What the address names is what runs: a stored result, or the spec in ?query=.
  useEffect(() => {
    if (resultId) {
      const ctl = new AbortController();
      abort.current?.abort();
      abort.current = ctl;
      setRun({ status: 'running', since: Date.now() });
      getResultWindow(dataset, resultId, ctl.signal)
        .then(
          ({ result, window }) => {
            const { id: _id, ...spec } = result.query;
            setDraft(spec);
            // The window the result covers, as the server says it (a relative range ran at a time
            // the query does not say); without it, the buckets with events and the quiet ones between.
            const absolute = spec.start_time !== undefined && spec.end_time !== undefined;
            setRun({ status: 'done', result, spec, window: window ?? (absolute ? truncatedWindow(spec, spec.end_time!) : undefined), answeredAt: performance.now() });
          },
          (error) => !ctl.signal.aborted && setRun({ status: 'failed', error, problems: [] }),
        );
      return () => ctl.abort();
    }
    // Opening the page runs nothing (nor lists anything as recent) until a query is asked for.
    if (fromUrl === undefined) {
      abort.current?.abort();
      setRun({ status: 'idle' });
      return;
    }
    if ('error' in fromUrl) {
      setRun({ status: 'failed', error: new Error(fromUrl.error), problems: [] });
      return;
    }
    setDraft(fromUrl);
    execute(fromUrl);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [urlKey]);
  useEffect(() => () => abort.current?.abort(), []);

  const submit = (spec = draft) => {
    const s = normaliseSpec(cleanSpec(spec));
    setDraft(s);
    if (!resultId && fromUrl && !('error' in fromUrl) && sameSpec(s, fromUrl)) execute(s);
    else navigate(`${here}${specToSearch(s)}`);
  };
  const narrow = (g: Group) => {
    const base = run.status === 'done' ? run.spec : draft;
    const add = (base.breakdowns ?? []).map((b) =>
      g.values[b] === undefined ? { column: b, op: 'does-not-exist' as const } : { column: b, op: '=' as const, value: g.values[b] },
    );
    const kept = (base.filters ?? []).filter((f) => !add.some((a) => a.column === f.column));
    submit({ ...base, filters: [...kept, ...add], filter_combination: 'AND' });
  };
  const startBubbleUp = (sel: BubbleUpSelection, offset = compareOffset) => {
    if (run.status !== 'done') return;
    // The same selection earlier must not overlap it: a selection longer than the offset compares with the rest.
    const back = offset >= sel.end_time - sel.start_time ? offset : 0;
    setSelection(sel);
    if (sel !== selection) setSelectionLabel(undefined);
    setCompareOffset(back);
    setBubble({});
    const ticket = ++bubbleAsked.current;
    bubbleUp(dataset, run.spec, sel, back > 0 ? { kind: 'past', offset_seconds: back } : { kind: 'rest' }).then(
      (answer) => ticket === bubbleAsked.current && setBubble({ answer }),
      (error) => ticket === bubbleAsked.current && setBubble({ error }),
    );
  };

  // `&bubbleup={column, lower, upper}` (the SLO page's "BubbleUp failing events"): once the
  // query has run, compare those events with the rest over its whole window.
  const asked = loc.search.get('bubbleup');
  useEffect(() => {
    if (!asked || run.status !== 'done' || selection) return;
    try {
      const b = JSON.parse(asked) as Partial<BubbleUpSelection> & { label?: string };
      const w = windowOf(run.spec, Math.floor(Date.now() / 1000));
      startBubbleUp({ start_time: b.start_time ?? w.start, end_time: b.end_time ?? w.end, column: b.column, lower: b.lower, upper: b.upper });
      if (typeof b.label === 'string') setSelectionLabel(b.label);
    } catch {
      // a mangled link: no BubbleUp
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [run.status, asked]);

  const shaped = useMemo(() => (run.status === 'done' && run.result.data ? shapeResult(run.spec, run.result.data, run.window) : undefined), [run]);
  const bands = useResultBands(dataset, run.status === 'done' && !run.result.error ? run.result.id : undefined, shaped);
  const problems = run.status === 'failed' ? run.problems : [];
  const busy = run.status === 'saving' || run.status === 'running';
  const dsName = dataset === '__all__' ? 'All datasets' : (datasets?.find((d) => d.slug === dataset)?.name ?? dataset);

  return (
    <div onKeyDown={(e) => (e.ctrlKey || e.metaKey) && e.key === 'Enter' && submit()}>
      <PageHead title="Query" sub={resultId ? `Result ${resultId}` : undefined}>
        <label class="row small muted">
          Dataset
          <select
            aria-label="Dataset"
            value={dataset}
            onChange={(e) => {
              // A query shown runs on the new dataset; a query not yet run stays a draft.
              const path = pathOf({ page: 'query', dataset: (e.target as HTMLSelectElement).value, ...scope });
              const spec = normaliseSpec(cleanSpec(draft));
              navigate(fromUrl !== undefined ? `${path}${specToSearch(spec)}` : `${path}?draft=${encodeURIComponent(JSON.stringify(spec))}`);
            }}
          >
            <option value="__all__">All datasets</option>
            {(datasets ?? []).map((d) => (
              <option key={d.slug} value={d.slug}>
                {d.name}
              </option>
            ))}
            {dataset !== '__all__' && !datasets?.some((d) => d.slug === dataset) && <option value={dataset}>{dataset}</option>}
          </select>
        </label>
      </PageHead>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <QueryBuilder spec={draft} onChange={setDraft} columns={columns.data ?? []} problems={problems} />
        <div class="builder-bar">
          <TimePicker spec={draft} onChange={(s) => setDraft(s)} />
          <GranularityPicker spec={draft} onChange={setDraft} />
          <CompareControl spec={draft} onChange={setDraft} />
          {!draft.calculated_fields?.length && (
            <button type="button" class="ghost" onClick={() => setDraft({ ...draft, calculated_fields: [{ name: '', expression: '' }] })}>
              + Calculated field
            </button>
          )}
          <button class="primary" type="submit" disabled={busy} title="Run (Ctrl+Enter)">
            {busy ? 'Running…' : 'Run query'}
          </button>
          {busy && <Progress run={run} />}
          <span class="spacer" />
          {run.status === 'done' && (
            <>
              <Link href={`${pathOf({ page: 'events', dataset, ...scope })}${specToSearch(run.spec)}`}>Events</Link>
              <a href={run.result.links.query_url} title="A link to exactly this result">
                Permalink
              </a>
              <button type="button" onClick={() => setMaking('trigger')} disabled={making !== null || watchable(run.spec).length === 0}>
                Make a trigger
              </button>
              <button type="button" onClick={() => { setMarkerAt(undefined); setMaking('marker'); }} disabled={making !== null} title="Then click a chart at the marker's time">
                Add marker
              </button>
              <AddToBoard scope={scope} dataset={dataset} spec={run.spec} />
            </>
          )}
        </div>
      </form>

      {run.status === 'failed' && (problems.length === 0 || problems.some((p) => !PLACED.includes(clauseOf(p.field)))) && (
        <ErrorNotice error={run.error} title="The query could not run" />
      )}
      {run.status === 'done' && run.result.error && <ErrorNotice error={run.result.error} title="The query did not finish" />}
      {run.status === 'done' && shaped && (
        <div class="stack" data-draw-ms={drawMs ?? undefined} data-result-id={run.result.id}>
          <div class="small muted" aria-live="polite">
            {dsName} · {describeQuery(run.spec)} · {shaped.groups.length} {shaped.groups.length === 1 ? 'group' : 'groups'}
            {shaped.series.length > 0 && <BandToggle b={bands} />}
          </div>
          {making === 'trigger' && (
            <section class="panel">
              <h2>New trigger</h2>
              <TriggerForm
                dataset={dataset}
                spec={run.spec}
                onThreshold={setThreshold}
                onDone={(saved) => {
                  setMaking(null);
                  if (saved) setMadeTrigger(saved);
                }}
              />
            </section>
          )}
          {madeTrigger && making === null && (
            <div class="notice" role="status">
              Trigger <Link href={pathOf({ page: 'trigger', dataset, triggerId: madeTrigger.id, ...scope })}>{madeTrigger.name}</Link> made.
            </div>
          )}
          {making === 'marker' &&
            (markerAt === undefined ? (
              <div class="notice" role="status" data-testid="marker-hint">
                Click a chart at the marker's time. <button type="button" class="ghost" onClick={() => setMarkerAt(Math.floor(Date.now() / 1000))}>Now</button>
                <button type="button" class="ghost" onClick={() => setMaking(null)}>Cancel</button>
              </div>
            ) : (
              <MarkerForm
                dataset={dataset}
                time={markerAt}
                onDone={(made) => {
                  setMaking(null);
                  if (made) {
                    forgetChartMarkers(dataset);
                    markers.reload();
                  }
                }}
              />
            ))}
          <ResultsView
            result={shaped}
            bands={bands.bands}
            threshold={making === 'trigger' ? threshold : undefined}
            onPickTime={making === 'marker' && markerAt === undefined ? setMarkerAt : undefined}
            markers={markers.data ?? []}
            onNarrow={shaped.breakdowns.length ? narrow : undefined}
            onSelect={startBubbleUp}
            traceColumn={TRACE_ID_COLUMN}
            traceHref={(id) => pathOf({ page: 'trace', dataset: '__all__', traceId: id, ...scope })}
            onDrawn={(at) => setDrawMs(Math.round(at - run.answeredAt))}
          >
          {selection && (
              <BubbleUpPanel
                selection={selection}
                label={selectionLabel}
                answer={bubble.answer}
                error={bubble.error}
                offset={compareOffset}
                onOffset={(seconds) => startBubbleUp(selection, seconds)}
                onClose={() => setSelection(null)}
                onFilter={(column, value) =>
                  submit({ ...run.spec, filters: [...(run.spec.filters ?? []), value === null ? { column, op: 'does-not-exist' } : { column, op: '=', value }] })
                }
              />
            )}
          </ResultsView>
        </div>
      )}
      {run.status === 'idle' && (
        <div class="panel empty" data-testid="not-run">
          Build a query above and run it (Ctrl+Enter).
        </div>
      )}
    </div>
  );
}

function Progress({ run }: { run: Run }) {
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((n) => n + 1), 250);
    return () => clearInterval(t);
  }, []);
  if (run.status !== 'saving' && run.status !== 'running') return null;
  const s = ((Date.now() - run.since) / 1000).toFixed(1);
  return (
    <span class="row small muted" role="status" data-testid="progress">
      <span class="spinner" aria-hidden="true" />
      {run.status === 'saving' ? 'Saving the query…' : `Running… ${s} s`}
    </span>
  );
}
