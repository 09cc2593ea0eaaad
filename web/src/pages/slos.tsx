// The environment's SLOs with their compliance and budget remaining.
import { useState } from 'preact/hooks';
import { getSlo, listSlos } from '../api/endpoints.js';
import { SloForm } from '../components/slo-form.js';
import { sloStatusBadge, targetPercent } from '../components/slo-summary.js';
import { Loaded, PageHead, useAsync } from '../components/ui.js';
import { formatNumber } from '../format.js';
import { Link, navigate } from '../router.js';
import { pathOf, type Scope } from '../routes.js';

export function SlosPage({ scope }: { scope: Scope }) {
  const slos = useAsync(async () => {
    const list = await listSlos('__all__');
    return Promise.all(list.map((s) => getSlo('__all__', s.id).catch(() => s)));
  }, []);
  const [making, setMaking] = useState(false);
  return (
    <div class="stack">
      <PageHead title="SLOs" sub="Service level objectives: compliance and error budget over each SLO's period">
        <button class="primary" onClick={() => setMaking(true)} disabled={making}>New SLO</button>
      </PageHead>
      {making && (
        <section class="panel">
          <h2>New SLO</h2>
          <SloForm onDone={(saved) => {
            setMaking(false);
            if (saved) navigate(pathOf({ page: 'slo', dataset: saved.dataset, sloId: saved.slo.id, ...scope }));
          }} />
        </section>
      )}
      <section class="panel flush">
        <Loaded async={slos} label="Loading SLOs">
          {(list) =>
            list.length === 0 ? (
              <p class="empty">No SLOs yet: "New SLO" makes one over a boolean calculated field.</p>
            ) : (
              <table data-testid="slos-table">
                <thead>
                  <tr>
                    <th>SLO</th>
                    <th class="num">Target</th>
                    <th class="num">Compliance</th>
                    <th class="num">Budget remaining</th>
                    <th>Status</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((s) => {
                    const ds = s.dataset_slugs?.length === 1 ? s.dataset_slugs[0] : '__all__';
                    const budget = s.budget_remaining ?? 100;
                    return (
                      <tr key={s.id}>
                        <td>
                          <Link href={pathOf({ page: 'slo', dataset: ds, sloId: s.id, ...scope })}>{s.name}</Link>
                          <div class="small muted">
                            {s.time_period_days} days · SLI <span class="mono">{s.sli.alias}</span> · {(s.dataset_slugs ?? []).join(', ')}
                          </div>
                        </td>
                        <td class="num">{targetPercent(s)}%</td>
                        <td class="num">{formatNumber(s.compliance ?? 100)}%</td>
                        <td class="num" style={{ color: budget < 0 ? 'var(--danger)' : undefined }}>
                          {formatNumber(budget)}%
                        </td>
                        <td>{sloStatusBadge(s)}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            )
          }
        </Loaded>
      </section>
    </div>
  );
}
