// One SLO: its figures, the budget burn-down over its period (from SLO reporting), its burn
// alerts and their state, and a BubbleUp of the events that fail it against those that pass.
import { useMemo, useState } from 'preact/hooks';
import { getSlo, listBurnAlerts, sloHistory } from '../api/endpoints.js';
import type { BurnAlert, Slo } from '../api/types.js';
import { LineChart } from '../charts/line-chart.js';
import { cssVar } from '../charts/palette.js';
import { SloFigures, targetPercent } from '../components/slo-summary.js';
import { ErrorNotice, Loaded, PageHead, Spinner, useAsync } from '../components/ui.js';
import { formatNumber } from '../format.js';
import { specToSearch } from '../query-url.js';
import { Link } from '../router.js';
import { pathOf, type Scope } from '../routes.js';

const DAY = 86_400;
/** Query results read at most 7 days: the BubbleUp of failures looks at the last 7 days or the period, whichever is shorter. */
const MAX_QUERY = 7 * DAY;

export function SloPage({ scope, dataset, sloId }: { scope: Scope; dataset: string; sloId: string }) {
  const slo = useAsync(() => getSlo(dataset, sloId), [dataset, sloId]);
  return <Loaded async={slo} label="Loading the SLO">{(s) => <SloBody scope={scope} dataset={dataset} slo={s} />}</Loaded>;
}

function SloBody({ scope, dataset, slo }: { scope: Scope; dataset: string; slo: Slo }) {
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
      </PageHead>
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
        <div style={{ padding: '12px 16px 0' }}>
          <h2 id="alerts-h">Burn alerts</h2>
        </div>
        <Loaded async={alerts} label="Loading burn alerts">
          {(list) => (list.length === 0 ? <p class="empty">No burn alerts on this SLO.</p> : <AlertTable list={list} />)}
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

function AlertTable({ list }: { list: BurnAlert[] }) {
  return (
    <table data-testid="burn-alerts">
      <thead>
        <tr>
          <th>Alert</th>
          <th>Fires when</th>
          <th>State</th>
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
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const formatMinutes = (m: number) => (m % 1440 === 0 && m > 0 ? `${m / 1440} days` : m % 60 === 0 && m > 0 ? `${m / 60} hours` : `${m} minutes`);
