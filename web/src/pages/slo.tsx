// One SLO: its figures, the budget burn-down over its period (from SLO reporting), its burn
// alerts and their state, and a BubbleUp of the events that fail it against those that pass.
import { useMemo, useState } from 'preact/hooks';
import { deleteBurnAlert, deleteSlo, getSlo, listBurnAlerts, sloHistory } from '../api/endpoints.js';
import type { BurnAlert, Slo } from '../api/types.js';
import { LineChart } from '../charts/line-chart.js';
import { cssVar } from '../charts/palette.js';
import { SloFigures, targetPercent } from '../components/slo-summary.js';
import { BurnAlertForm } from '../components/burn-alert-form.js';
import { SloForm } from '../components/slo-form.js';
import { ErrorNotice, Loaded, PageHead, Spinner, useAsync } from '../components/ui.js';
import { burnDownSeries, type BurnPoint } from '../burn-down.js';
import { formatNumber } from '../format.js';
import { specToSearch } from '../query-url.js';
import { Link, navigate } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { spanText } from '../time.js';

const DAY = 86_400;
/** Query results read at most 7 days: the BubbleUp of failures looks at the last 7 days or the period, whichever is shorter. */
const MAX_QUERY = 7 * DAY;

export function SloPage({ scope, dataset, sloId }: { scope: Scope; dataset: string; sloId: string }) {
  const slo = useAsync(() => getSlo(dataset, sloId), [dataset, sloId]);
  return <Loaded async={slo} label="Loading the SLO">{(s) => <SloBody scope={scope} dataset={dataset} slo={s} reload={slo.reload} />}</Loaded>;
}

function SloBody({ scope, dataset, slo, reload }: { scope: Scope; dataset: string; slo: Slo; reload: () => void }) {
  const [editing, setEditing] = useState<'slo' | 'alert' | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const remove = async () => {
    if (!confirm(`Delete the SLO ${slo.name} and its burn alerts?`)) return;
    try {
      await deleteSlo(dataset, slo.id);
      navigate(pathOf({ page: 'slos', ...scope }));
    } catch (e) {
      setError(e);
    }
  };
  const [now] = useState(() => Math.floor(Date.now() / 1000));
  const start = Math.max(now - slo.time_period_days * DAY, slo.reset_at ? Math.floor(Date.parse(slo.reset_at) / 1000) : 0);
  const history = useAsync(() => sloHistory([slo.id], start, now), [slo.id]);
  const alerts = useAsync(() => listBurnAlerts(dataset, slo.id), [slo.id]);
  const range = Math.min(MAX_QUERY, slo.time_period_days * DAY);
  const bubbleHref = `${pathOf({ page: 'query', dataset, ...scope })}${sloBubbleUpSearch(slo.sli.alias, range)}`;
  return (
    <div class="stack">
      <PageHead title={slo.name} sub={slo.description || `SLI ${slo.sli.alias} · target ${targetPercent(slo)}% over ${slo.time_period_days} days`}>
        <Link class="button primary" href={bubbleHref}>
          BubbleUp failing events
        </Link>
        <button onClick={() => setEditing('slo')} disabled={editing !== null}>Edit</button>
        <button class="ghost" onClick={() => void remove()}>Delete</button>
      </PageHead>
      {error !== undefined && <ErrorNotice error={error} />}
      {editing === 'slo' && (
        <section class="panel">
          <SloForm slo={slo} dataset={dataset} onDone={(saved) => { setEditing(null); if (saved) reload(); }} />
        </section>
      )}
      <section class="panel">
        <SloFigures slo={slo} />
      </section>
      <section class="panel chart-card" aria-labelledby="burn-h">
        <header>
          <h2 id="burn-h" style={{ fontFamily: 'inherit' }}>
            Budget burn-down
          </h2>
          <span class="small muted">since the SLO's first events in its period</span>
        </header>
        {history.error ? <ErrorNotice error={history.error} /> : !history.data ? <Spinner label="Loading the history" /> : <BurnDown points={history.data[slo.id] ?? []} range={[start, now]} target={slo.target_per_million / 10_000} />}
      </section>
      <section class="panel flush" aria-labelledby="alerts-h">
        <div class="row" style={{ padding: '12px 16px' }}>
          <h2 id="alerts-h">Burn alerts</h2>
          <span class="spacer" />
          <button class="primary" onClick={() => setEditing('alert')} disabled={editing !== null}>New burn alert</button>
        </div>
        {editing === 'alert' && (
          <div style={{ padding: '0 16px 16px' }}>
            <BurnAlertForm dataset={dataset} sloId={slo.id} onDone={(changed) => { setEditing(null); if (changed) alerts.reload(); }} />
          </div>
        )}
        <Loaded async={alerts} label="Loading burn alerts">
          {(list) => (list.length === 0 ? <p class="empty">No burn alerts on this SLO.</p> : <AlertTable list={list} onDelete={async (a) => {
            if (!confirm('Delete this burn alert?')) return;
            try {
              await deleteBurnAlert(dataset, a.id);
              alerts.reload();
            } catch (e) {
              setError(e);
            }
          }} />)}
        </Loaded>
      </section>
    </div>
  );
}

/**
 * The query and selection of "BubbleUp failing events", as Honeycomb compares them: only the
 * events the SLI applies to (it `exists`: an SLI is null for the events it does not judge), the
 * failing ones (SLI false, 0) selected, so the baseline is the passing ones, not every other event.
 */
export function sloBubbleUpSearch(sli: string, range: number): string {
  const spec = {
    calculations: [{ op: 'COUNT' as const }],
    filters: [{ column: sli, op: 'exists' as const }],
    breakdowns: [sli],
    time_range: range,
  };
  return `${specToSearch(spec)}&bubbleup=${encodeURIComponent(JSON.stringify({ column: sli, lower: 0, upper: 0, label: `${sli} = false` }))}`;
}

function BurnDown({ points, range, target }: { points: BurnPoint[]; range: [number, number]; target: number }) {
  const d = useMemo(() => burnDownSeries(points, range, target), [points]);
  const lines = useMemo(() => {
    if (!d) return undefined;
    return {
      budget: [{ label: 'budget remaining', values: d.budget, color: cssVar('--accent', '#5b3fd6') }],
      compliance: [
        { label: 'compliance', values: d.compliance, color: '#3fb27f' },
        { label: 'target', values: d.times.map(() => target), color: cssVar('--muted', '#888888') },
      ],
    };
  }, [d]);
  if (!d || !lines) return <p class="muted">No eligible events in the period yet.</p>;
  const pct = (v: number) => `${formatNumber(v)}%`;
  return (
    <div class="burn-down" data-range={d.range.join(',')} data-first-budget={d.budget[0]}>
      <div class="small muted">Budget remaining</div>
      <LineChart label="Budget remaining over the SLO's period" times={d.times} lines={lines.budget} height={200} xRange={d.range} yRange={d.budgetY} format={pct} />
      <div class="small muted" style={{ marginTop: '10px' }}>
        Compliance (target {pct(target)})
      </div>
      <LineChart label="Compliance over the SLO's period, with its target" times={d.times} lines={lines.compliance} height={160} xRange={d.range} yRange={d.complianceY} format={pct} />
    </div>
  );
}

function AlertTable({ list, onDelete }: { list: BurnAlert[]; onDelete: (a: BurnAlert) => void }) {
  return (
    <table data-testid="burn-alerts">
      <thead>
        <tr>
          <th>Alert</th>
          <th>Fires when</th>
          <th>State</th>
          <th><span class="sr-only">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        {list.map((a) => (
          <tr key={a.id}>
            <td>
              {a.alert_type === 'exhaustion_time' ? 'Exhaustion time' : 'Budget rate'}
              {a.description && <div class="small muted">{a.description}</div>}
            </td>
            <td>
              {a.alert_type === 'exhaustion_time'
                ? `the budget would run out within ${formatMinutes(a.exhaustion_minutes ?? 0)}`
                : `${formatNumber((a.budget_rate_decrease_threshold_per_million ?? 0) / 10_000)}% of the budget is spent within ${formatMinutes(a.budget_rate_window_minutes ?? 0)}`}
            </td>
            <td>{a.triggered ? <span class="badge bad">triggered</span> : <span class="badge ok">ok</span>}</td>
            <td><button class="ghost" onClick={() => onDelete(a)}>Delete</button></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** `1 hour`, `4 hours`, `2 days`, `90 minutes`. */
const formatMinutes = (m: number) => spanText(m * 60);
