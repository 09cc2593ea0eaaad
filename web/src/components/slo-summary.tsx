// An SLO's standing in a few figures: compliance against its target, budget left, burn rate.
import type { Slo } from '../api/types.js';
import { formatNumber } from '../format.js';

export const targetPercent = (s: Slo) => s.target_per_million / 10_000;

export function sloStatusBadge(s: Slo) {
  switch (s.status) {
    case 'triggered':
      return <span class="badge bad">burn alert triggered</span>;
    case 'no_events':
      return <span class="badge">no events</span>;
    case 'normal':
      return <span class="badge ok">ok</span>;
    case 'no_alerts':
      return (s.budget_remaining ?? 100) < 0 ? <span class="badge bad">budget exhausted</span> : <span class="badge ok">ok · no burn alerts</span>;
    default:
      return null;
  }
}

export function SloFigures({ slo }: { slo: Slo }) {
  const budget = slo.budget_remaining ?? 100;
  return (
    <div class="row" style={{ gap: '24px', alignItems: 'flex-end' }}>
      <div>
        <div class="small muted">Compliance</div>
        <div class="stat" data-testid="compliance">{formatNumber(slo.compliance ?? 100)}%</div>
        <div class="small muted">target {targetPercent(slo)}%</div>
      </div>
      <div>
        <div class="small muted">Budget remaining</div>
        <div class="stat" style={{ color: budget < 0 ? 'var(--danger)' : budget < 25 ? 'var(--warn)' : 'var(--ok)' }} data-testid="budget">
          {formatNumber(budget)}%
        </div>
        <div class="small muted">over {slo.time_period_days} days</div>
      </div>
      <div>
        <div class="small muted">Burn rate (4 h)</div>
        <div class="stat">{formatNumber(slo.burn_rate ?? 0)}×</div>
        <div class="small muted">{sloStatusBadge(slo)}</div>
      </div>
    </div>
  );
}
