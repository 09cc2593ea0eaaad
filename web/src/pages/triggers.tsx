// Triggers (state, last evaluation, threshold, recipients) and markers of every dataset.
import { listMarkers, listTriggers } from '../api/endpoints.js';
import type { Marker, Trigger } from '../api/types.js';
import { ErrorNotice, Loaded, PageHead, useAsync } from '../components/ui.js';
import { ago, formatNumber, formatTimestamp } from '../format.js';
import { specToSearch } from '../query-url.js';
import { describeQuery } from '../describe.js';
import { Link } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { useSession } from '../session.js';

/** Every dataset's list and the environment-wide one, each list once (a failing one is skipped). */
async function acrossDatasets<T extends { id: string }>(slugs: string[], list: (ds: string) => Promise<T[]>): Promise<(T & { __dataset: string })[]> {
  const lists = await Promise.all(['__all__', ...slugs].map((ds) => list(ds).then((l) => l.map((x) => ({ ...x, __dataset: ds })), () => [])));
  const seen = new Set<string>();
  return lists.flat().filter((x) => !seen.has(x.id) && !!seen.add(x.id));
}

export function TriggersPage({ scope }: { scope: Scope }) {
  const { datasets } = useSession();
  const slugs = (datasets ?? []).map((d) => d.slug);
  const triggers = useAsync(() => acrossDatasets(slugs, listTriggers), [slugs.join()]);
  const markers = useAsync(() => acrossDatasets(slugs, listMarkers), [slugs.join()]);
  return (
    <div class="stack">
      <PageHead title="Triggers & markers" />
      <section class="panel flush" aria-labelledby="triggers-h">
        <div style={{ padding: '12px 16px 0' }}>
          <h2 id="triggers-h">Triggers</h2>
        </div>
        <Loaded async={triggers} label="Loading triggers">
          {(list) => (list.length === 0 ? <p class="empty">No triggers in this environment.</p> : <TriggerTable list={list} scope={scope} />)}
        </Loaded>
      </section>
      <section class="panel flush" aria-labelledby="markers-h">
        <div style={{ padding: '12px 16px 0' }}>
          <h2 id="markers-h">Markers</h2>
        </div>
        {markers.error ? <ErrorNotice error={markers.error} /> : (
          <Loaded async={markers} label="Loading markers">
            {(list) => (list.length === 0 ? <p class="empty">No markers yet (deploys and other events sent to <code>/1/markers</code>).</p> : <MarkerTable list={list} />)}
          </Loaded>
        )}
      </section>
    </div>
  );
}

function stateBadge(t: Trigger) {
  if (t.disabled) return <span class="badge">disabled</span>;
  if (t.triggered) return <span class="badge bad">triggered</span>;
  if (t.last_evaluation?.error) return <span class="badge warn">error</span>;
  if (!t.last_evaluation) return <span class="badge">not yet run</span>;
  return <span class="badge ok">ok</span>;
}

function TriggerTable({ list, scope }: { list: (Trigger & { __dataset: string })[]; scope: Scope }) {
  return (
    <div class="table-wrap">
      <table data-testid="triggers-table">
        <thead>
          <tr>
            <th>Trigger</th>
            <th>State</th>
            <th>Last evaluation</th>
            <th>Threshold</th>
            <th>Every</th>
            <th>Recipients</th>
          </tr>
        </thead>
        <tbody>
          {list.map((t) => (
            <tr key={t.id}>
              <td>
                <Link href={pathOf({ page: 'trigger', dataset: t.dataset_slug, triggerId: t.id, ...scope })}>
                  <strong>{t.name}</strong>
                </Link>
                <div class="small muted">
                  {t.dataset_slug === '__all__' ? 'all datasets' : t.dataset_slug} ·{' '}
                  <Link class="mono" href={`${pathOf({ page: 'query', dataset: t.dataset_slug, ...scope })}${specToSearch(t.query)}`}>
                    {describeQuery(t.query)}
                  </Link>
                </div>
              </td>
              <td>{stateBadge(t)}</td>
              <td class="small">
                {t.last_evaluation ? (
                  <>
                    {t.last_evaluation.no_data ? 'no data' : `value ${formatNumber(t.last_evaluation.value)}`}
                    {t.last_evaluation.error && <div class="field-error">{t.last_evaluation.error}</div>}
                    <div class="muted" title={t.last_evaluation.at}>
                      {ago(t.last_evaluation.at)}
                    </div>
                  </>
                ) : (
                  <span class="muted">–</span>
                )}
              </td>
              <td class="mono nowrap">
                {t.threshold.op} {formatNumber(t.threshold.value)}
                {(t.threshold.exceeded_limit ?? 1) > 1 && <div class="small muted">{t.threshold.exceeded_limit}× in a row</div>}
              </td>
              <td class="nowrap">{t.frequency >= 3600 ? `${t.frequency / 3600} h` : `${t.frequency / 60} min`}</td>
              <td class="small">
                {t.recipients.length === 0 ? <span class="muted">none</span> : t.recipients.map((r, i) => <div key={i}>{r.type}{r.target ? `: ${r.target}` : ''}</div>)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function MarkerTable({ list }: { list: (Marker & { __dataset: string })[] }) {
  const sorted = [...list].sort((a, b) => b.start_time - a.start_time);
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>Time</th>
            <th>Type</th>
            <th>Message</th>
            <th>Dataset</th>
          </tr>
        </thead>
        <tbody>
          {sorted.map((m) => (
            <tr key={m.id}>
              <td class="nowrap">
                {formatTimestamp(new Date(m.start_time * 1000).toISOString())}
                {m.end_time ? <div class="small muted">until {formatTimestamp(new Date(m.end_time * 1000).toISOString())}</div> : null}
              </td>
              <td class="nowrap">
                <span class="swatch" style={{ background: m.color ?? 'var(--baseline)' }} /> {m.type || <span class="muted">–</span>}
              </td>
              <td>{m.url && /^https?:\/\//.test(m.url) ? <a href={m.url} rel="noopener noreferrer">{m.message || m.url}</a> : m.message}</td>
              <td class="small muted">{m.__dataset === '__all__' ? 'all datasets' : m.__dataset}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
