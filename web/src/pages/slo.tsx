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
import { formatNumber } from '../format.js';
import { specToSearch } from '../query-url.js';
import { Link, navigate } from '../router.js';
import { pathOf, type Scope } from '../routes.js';

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
  const failing = {
    calculations: [{ op: 'COUNT' as const }],
    breakdowns: [slo.sli.alias],
    time_range: range,
  };
  const bubbleHref = `${pathOf({ page: 'query', dataset, ...scope })}${specToSearch(failing)}&bubbleup=${encodeURIComponent(JSON.stringify({ column: slo.sli.alias, lower: 0, upper: 0 }))}`;
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
          <span class="small muted">budget remaining (%) over the period; compliance in the tooltip</span>
        </header>
        {history.error ? <ErrorNotice error={history.error} /> : !history.data ? <Spinner label="Loading the history" /> : <BurnDown points={history.data[slo.id] ?? []} range={[start, now]} />}
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

function BurnDown({ points, range }: { points: { timestamp: number; compliance: number; budget_remaining: number }[]; range: [number, number] }) {
  const data = useMemo(() => {
    const times = points.map((p) => p.timestamp);
    return {
      times,
      lines: [
        { label: 'budget remaining %', values: points.map((p) => p.budget_remaining), color: cssVar('--accent', '#5b3fd6') },
        { label: 'compliance %', values: points.map((p) => p.compliance), color: '#3fb27f' },
      ],
    };
  }, [points]);
  if (points.length === 0) return <p class="muted">No eligible events in the period yet.</p>;
  return <LineChart label="Budget remaining over the SLO's period" times={data.times} lines={data.lines} height={240} xRange={range} format={(v) => `${formatNumber(v)}`} />;
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

const formatMinutes = (m: number) => (m % 1440 === 0 && m > 0 ? `${m / 1440} days` : m % 60 === 0 && m > 0 ? `${m / 60} hours` : `${m} minutes`);
