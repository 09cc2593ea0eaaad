// One trigger: its query's graph over a recent window with the threshold drawn as a line and the
// periods it was firing shaded, its settings and last evaluation, and the history of its state
// changes (each with the stored result of that evaluation) and of its notifications' deliveries
// (GET /1/triggers/{ds}/{id}/history, a Waggle extension: docs/triggers.md). Notifications link
// here (`trigger_url`).
import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { deleteTrigger, getTrigger, runQuery, triggerHistory, updateTrigger } from '../api/endpoints.js';
import { TriggerForm, triggerPutBody } from '../components/trigger-form.js';
import type { QuerySpec, Trigger, TriggerDelivery, TriggerHistory, TriggerStateChange } from '../api/types.js';
import { LineChart, type ChartMarker, type Line } from '../charts/line-chart.js';
import { cssVar, seriesColor } from '../charts/palette.js';
import { describeQuery } from '../describe.js';
import { ErrorNotice, Loaded, PageHead, Spinner, useAsync } from '../components/ui.js';
import { ago, formatNumber, formatTimestamp } from '../format.js';
import { specToSearch } from '../query-url.js';
import { shapeResult } from '../results.js';
import { Link, navigate } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { spanText } from '../time.js';

const HOUR = 3600;
const DAY = 86_400;
/** Most lines drawn besides the threshold (the result's first groups). */
const MAX_GROUPS = 10;

/**
 * The graph's window and bucket: 48 evaluation windows back (at least 6 hours, at most the 7 days
 * a query reads), each point the calculation over one trigger window (the value the threshold is
 * compared with) — coarser only when that would be fewer than 24 points.
 */
export function graphSpec(trigger: Trigger): { spec: QuerySpec; window: number; bucket: number } {
  const { time_range: _r, start_time: _s, end_time: _e, granularity: _g, ...rest } = trigger.query;
  const range = trigger.query.time_range ?? trigger.frequency;
  const window = Math.min(7 * DAY, Math.max(6 * HOUR, range * 48));
  const bucket = Math.max(Math.ceil(window / 1000), Math.min(range, Math.floor(window / 24)));
  return { spec: { ...rest, time_range: window, granularity: bucket }, window, bucket };
}

/** The periods the trigger was firing, from its state changes (newest first), as [start, end) Unix seconds. */
export function firingPeriods(changes: TriggerStateChange[], triggered: boolean, now: number): [number, number][] {
  const out: [number, number][] = [];
  let since: number | undefined;
  for (const c of [...changes].reverse()) {
    const at = Date.parse(c.at) / 1000;
    if (c.status === 'triggered') since ??= at;
    else if (since !== undefined) {
      out.push([since, at]);
      since = undefined;
    }
  }
  if (since !== undefined && triggered) out.push([since, now]);
  return out;
}

export function TriggerPage({ scope, dataset, triggerId }: { scope: Scope; dataset: string; triggerId: string }) {
  const trigger = useAsync(() => getTrigger(dataset, triggerId), [dataset, triggerId]);
  const history = useAsync(() => triggerHistory(dataset, triggerId), [dataset, triggerId]);
  return (
    <Loaded async={trigger} label="Loading the trigger">
      {(t) => <TriggerBody scope={scope} dataset={dataset} trigger={t} history={history.data} historyError={history.error} reload={trigger.reload} />}
    </Loaded>
  );
}

function stateBadge(t: Trigger) {
  if (t.disabled) return <span class="badge">disabled</span>;
  if (t.triggered) return <span class="badge bad">triggered</span>;
  if (t.last_evaluation?.error) return <span class="badge warn">error</span>;
  if (!t.last_evaluation) return <span class="badge">not yet run</span>;
  return <span class="badge ok">ok</span>;
}

const every = (s: number) => (s >= HOUR && s % HOUR === 0 ? `${s / HOUR} h` : `${s / 60} min`);

function TriggerBody(props: { scope: Scope; dataset: string; trigger: Trigger; history?: TriggerHistory; historyError?: unknown; reload: () => void }) {
  const { scope, dataset, trigger, history, historyError } = props;
  const range = trigger.query.time_range ?? trigger.frequency;
  const last = trigger.last_evaluation;
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const act = async (fn: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await fn();
    } catch (e) {
      setError(e);
    }
  };
  const toggle = () => act(async () => {
    await updateTrigger(dataset, trigger.id, triggerPutBody(trigger, { disabled: !trigger.disabled }));
    props.reload();
  });
  const remove = () => act(async () => {
    if (!confirm(`Delete the trigger ${trigger.name}?`)) return;
    await deleteTrigger(dataset, trigger.id);
    navigate(pathOf({ page: 'triggers', ...scope }));
  });
  return (
    <div class="stack" data-testid="trigger-page">
      <PageHead
        title={<>{trigger.name} {stateBadge(trigger)}</>}
        sub={trigger.description || `${dataset === '__all__' ? 'all datasets' : dataset} · ${describeQuery(trigger.query)}`}
      >
        <Link class="button" href={`${pathOf({ page: 'query', dataset, ...scope })}${specToSearch(trigger.query)}`}>
          Open the query
        </Link>
        <button onClick={() => setEditing(true)} disabled={editing}>Edit</button>
        <button onClick={() => void toggle()}>{trigger.disabled ? 'Enable' : 'Disable'}</button>
        <button class="ghost" onClick={() => void remove()}>Delete</button>
      </PageHead>
      {error !== undefined && <ErrorNotice error={error} />}
      {editing && (
        <section class="panel">
          <TriggerForm dataset={dataset} spec={trigger.query} trigger={trigger} onDone={(saved) => { setEditing(false); if (saved) props.reload(); }} />
        </section>
      )}
      <section class="panel">
        <div class="row" style={{ gap: '28px', alignItems: 'flex-start' }} data-testid="trigger-figures">
          <Figure label="Fires when" value={<span class="mono">{describeQuery({ ...trigger.query, breakdowns: undefined, filters: undefined })} {trigger.threshold.op} {formatNumber(trigger.threshold.value)}</span>}
            sub={`${trigger.baseline_details?.offset_minutes ? `change against ${spanText(trigger.baseline_details.offset_minutes * 60)} earlier${trigger.baseline_details.type === 'percentage' ? ' (%)' : ''} · ` : ''}over ${spanText(range)}${(trigger.threshold.exceeded_limit ?? 1) > 1 ? `, ${trigger.threshold.exceeded_limit}× in a row` : ''}`} />
          <Figure label="Evaluated" value={`every ${every(trigger.frequency)}`} sub={trigger.alert_type === 'on_true' ? 'notifies at every breaching run' : 'notifies on change'} />
          <Figure
            label="Last evaluation"
            value={last ? (last.no_data ? 'no data' : formatNumber(last.value)) : '–'}
            sub={last ? <span title={last.at}>{ago(last.at)}{last.breaching ? ' · breaching' : ''}</span> : 'not yet run'}
          />
          <Figure label="Recipients" value={String(trigger.recipients.length)} sub={trigger.recipients.map((r) => `${r.type}${r.target ? `: ${r.target}` : ''}`).join(', ') || 'none'} />
        </div>
        {last?.error && <div class="field-error">{last.error}</div>}
      </section>
      <TriggerGraph dataset={dataset} trigger={trigger} history={history} />
      {historyError ? (
        <ErrorNotice error={historyError} title="History" />
      ) : !history ? (
        <Spinner label="Loading the history" />
      ) : (
        <div class="grid cols-2">
          <section class="panel flush" aria-labelledby="changes-h">
            <div style={{ padding: '12px 16px 0' }}>
              <h2 id="changes-h">State changes</h2>
            </div>
            {history.state_changes.length === 0 ? <p class="empty">It has not fired yet.</p> : <ChangeTable list={history.state_changes} dataset={dataset} scope={scope} />}
          </section>
          <section class="panel flush" aria-labelledby="deliveries-h">
            <div style={{ padding: '12px 16px 0' }}>
              <h2 id="deliveries-h">Deliveries</h2>
            </div>
            {history.deliveries.length === 0 ? <p class="empty">No notifications sent.</p> : <DeliveryTable list={history.deliveries} />}
          </section>
        </div>
      )}
    </div>
  );
}

function Figure({ label, value, sub }: { label: string; value: ComponentChildren; sub?: ComponentChildren }) {
  return (
    <div style={{ maxWidth: '320px' }}>
      <div class="small muted">{label}</div>
      <div class="stat" style={{ fontSize: '18px' }}>{value}</div>
      {sub && <div class="small muted">{sub}</div>}
    </div>
  );
}

function TriggerGraph({ dataset, trigger, history }: { dataset: string; trigger: Trigger; history?: TriggerHistory }) {
  const { spec, window, bucket } = useMemo(() => graphSpec(trigger), [trigger]);
  const [now] = useState(() => Math.floor(Date.now() / 1000));
  const result = useAsync((signal) => runQuery(dataset, spec, undefined, signal, { background: true }), [dataset, JSON.stringify(spec)]);
  const baseline = !!trigger.baseline_details?.offset_minutes;
  const chart = useMemo(() => {
    if (!result.data?.data) return undefined;
    const w = { start: now - window, end: now };
    const shaped = shapeResult(spec, result.data.data, w);
    const s = shaped.series[0];
    const lines: Line[] = (s?.lines ?? []).slice(0, MAX_GROUPS).map((values, i) => ({ label: shaped.groups[i]?.label ?? 'all events', values, color: seriesColor(i) }));
    if (!baseline) {
      lines.push({ label: `threshold ${trigger.threshold.op} ${formatNumber(trigger.threshold.value)}`, values: shaped.times.map(() => trigger.threshold.value), color: cssVar('--danger', '#d9534f') });
    }
    return { times: shaped.times, lines, groups: shaped.groups.length, key: s?.key };
  }, [result.data, trigger, now]);
  const markers = useMemo<ChartMarker[]>(
    () =>
      history
        ? firingPeriods(history.state_changes, history.triggered, now)
            .filter(([, end]) => end > now - window)
            .map(([start, end]) => ({ time: Math.max(start, now - window), end, color: cssVar('--danger', '#d9534f'), label: `triggered ${formatTimestamp(new Date(start * 1000).toISOString())}` }))
        : [],
    [history, now],
  );
  return (
    <section class="panel chart-card" aria-labelledby="graph-h">
      <header>
        <h2 id="graph-h">{chart?.key ?? describeQuery(trigger.query)}</h2>
        <span class="small muted">
          last {spanText(window)}, each point over {spanText(bucket)}
          {baseline ? ' · the threshold applies to the change against the baseline, not drawn' : ' · the threshold in red'} · firing periods shaded
        </span>
      </header>
      {result.error ? (
        <ErrorNotice error={result.error} />
      ) : !chart ? (
        <Spinner label="Running the query" />
      ) : chart.times.length === 0 ? (
        <p class="muted">No events in the last {spanText(window)}.</p>
      ) : (
        <>
          <LineChart label={`${trigger.name}: its query over the last ${spanText(window)}`} times={chart.times} lines={chart.lines} markers={markers} xRange={[now - window, now]} height={260} />
          {chart.groups > MAX_GROUPS && <div class="small muted">The first {MAX_GROUPS} of {chart.groups} groups.</div>}
          <div class="row small" style={{ marginTop: '6px' }} data-testid="trigger-legend">
            {chart.lines.map((l) => (
              <span key={l.label} class="row" style={{ gap: '4px' }}>
                <span class="swatch" style={{ background: l.color }} />
                {l.label}
              </span>
            ))}
          </div>
        </>
      )}
    </section>
  );
}

function ChangeTable({ list, dataset, scope }: { list: TriggerStateChange[]; dataset: string; scope: Scope }) {
  return (
    <div class="table-wrap">
      <table data-testid="trigger-changes">
        <thead>
          <tr>
            <th>When</th>
            <th>State</th>
            <th>Value</th>
            <th>Result</th>
          </tr>
        </thead>
        <tbody>
          {list.map((c, i) => (
            <tr key={i}>
              <td class="nowrap" title={c.at}>
                {formatTimestamp(c.at)}
                <div class="small muted">{ago(c.at)}</div>
              </td>
              <td>
                {c.status === 'triggered' ? <span class="badge bad">triggered</span> : <span class="badge ok">resolved</span>}
                {c.reason && <div class="small muted">{c.reason}</div>}
              </td>
              <td class="mono nowrap">
                {c.value === undefined ? '–' : formatNumber(c.value)}
                <div class="small muted">
                  {c.threshold.op} {formatNumber(c.threshold.value)}
                </div>
              </td>
              <td>{c.result_id ? <Link href={pathOf({ page: 'query', dataset, resultId: c.result_id, ...scope })}>the result</Link> : <span class="muted">–</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function deliveryBadge(d: TriggerDelivery) {
  const cls = d.state === 'delivered' ? 'ok' : d.state === 'failed' || d.state === 'refused' ? 'bad' : 'warn';
  return <span class={`badge ${cls}`}>{d.state}</span>;
}

function DeliveryTable({ list }: { list: TriggerDelivery[] }) {
  return (
    <div class="table-wrap">
      <table data-testid="trigger-deliveries">
        <thead>
          <tr>
            <th>When</th>
            <th>Notification</th>
            <th>Recipient</th>
            <th>Outcome</th>
          </tr>
        </thead>
        <tbody>
          {list.map((d) => (
            <tr key={d.id}>
              <td class="nowrap" title={d.created_at}>
                {formatTimestamp(d.created_at)}
              </td>
              <td>{d.status}</td>
              <td class="small">
                {d.recipient.type}
                <div class="muted">{d.recipient.target}</div>
              </td>
              <td class="small">
                {deliveryBadge(d)}{' '}
                <span class="muted">
                  {d.attempt_count} attempt{d.attempt_count === 1 ? '' : 's'}
                  {d.http_status !== undefined ? ` · HTTP ${d.http_status}` : ''}
                </span>
                {d.error && <div class="field-error">{d.error}</div>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
