// Home's "Query history": the team's recent and most-run queries, from the server
// (`GET /1/query_history`, a Waggle extension: every query run in the UI by anyone in the
// environment), searched by text, dataset and column. Each entry opens as a query (the query
// page's `?query=`), or as the result it gave. Without the server's history (an older server, a
// failure), the queries run in this browser (recent.ts).
import { useEffect, useState } from 'preact/hooks';
import { queryHistory } from '../api/endpoints.js';
import type { Dataset, HistoryEntry, QuerySpec } from '../api/types.js';
import { describeQuery } from '../describe.js';
import { ago, formatDuration } from '../format.js';
import { listRecent } from '../recent.js';
import { Link } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { specToSearch } from '../query-url.js';
import { describeRange } from '../time.js';
import { Spinner, useAsync } from './ui.js';

const SHOWN = 10;

/** `value`, settled: the last value once it has not changed for `ms`. */
function useSettled<T>(value: T, ms = 250): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

export function QueryHistory({ scope, datasets }: { scope: Scope; datasets?: Dataset[] }) {
  const [q, setQ] = useState('');
  const [dataset, setDataset] = useState('');
  const [column, setColumn] = useState('');
  // (as text: a settled value compares by its content)
  const key = useSettled(JSON.stringify({ q: q.trim(), dataset, column: column.trim() }));
  const lists = useAsync((signal) => {
    const search = JSON.parse(key) as { q: string; dataset: string; column: string };
    return Promise.all([queryHistory({ ...search, limit: SHOWN }, signal), queryHistory({ ...search, sort: 'most_run', limit: SHOWN }, signal)]);
  }, [key]);
  const searching = key !== JSON.stringify({ q: '', dataset: '', column: '' });
  const queryHref = (ds: string, spec: QuerySpec) => `${pathOf({ page: 'query', dataset: ds, ...scope })}${specToSearch(spec)}`;

  if (lists.error) return <LocalRecent scope={scope} queryHref={queryHref} />;
  return (
    <section class="panel stack" aria-labelledby="history-h">
      <div class="row">
        <h2 id="history-h" style={{ margin: 0 }}>
          Query history
        </h2>
        <span class="small muted">every query the team ran in this environment</span>
      </div>
      <form class="row" role="search" aria-label="Search the query history" onSubmit={(e) => e.preventDefault()}>
        <input type="search" placeholder="Search queries (ops, columns, values, who)" aria-label="Search text" value={q} style={{ flex: '1 1 260px' }} onInput={(e) => setQ((e.target as HTMLInputElement).value)} />
        <select aria-label="Dataset" value={dataset} onChange={(e) => setDataset((e.target as HTMLSelectElement).value)}>
          <option value="">Any dataset</option>
          <option value="__all__">All datasets (environment-wide)</option>
          {(datasets ?? []).map((d) => (
            <option key={d.slug} value={d.slug}>
              {d.name}
            </option>
          ))}
        </select>
        <input type="search" placeholder="Column" aria-label="Column" value={column} style={{ width: '160px' }} onInput={(e) => setColumn((e.target as HTMLInputElement).value)} />
      </form>
      {lists.data === undefined ? (
        <Spinner label="Loading the query history" />
      ) : (
        <div class="grid cols-2">
          <HistoryList id="history-recent-h" title="Recent" entries={lists.data[0]} scope={scope} queryHref={queryHref} empty={searching ? 'No query matches.' : 'Queries anyone runs here appear here.'} />
          <HistoryList id="history-most-run-h" title="Most run" entries={lists.data[1]} scope={scope} queryHref={queryHref} empty={searching ? 'No query matches.' : 'Nothing run yet.'} />
        </div>
      )}
    </section>
  );
}

function HistoryList(p: { id: string; title: string; entries: HistoryEntry[]; scope: Scope; empty: string; queryHref: (ds: string, spec: QuerySpec) => string }) {
  return (
    <section aria-labelledby={p.id} data-testid={p.id.replace(/-h$/, '')}>
      <h3 id={p.id} style={{ margin: '0 0 8px' }}>
        {p.title}
      </h3>
      {p.entries.length === 0 ? (
        <p class="muted">{p.empty}</p>
      ) : (
        <ul class="stack history-list" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {p.entries.map((e) => (
            <li key={e.id} data-entry={e.id} data-result={e.result_id}>
              <div class="row" style={{ flexWrap: 'nowrap' }}>
                <Link href={p.queryHref(e.dataset, e.query)} class="mono">
                  {describeQuery(e.query)}
                </Link>
                {e.count !== undefined && (
                  <span class="badge" title={`run ${e.count} times`}>
                    ×{e.count}
                  </span>
                )}
              </div>
              <div class="small muted">
                {e.dataset === '__all__' ? 'all datasets' : e.dataset} · {describeRange(e.query)} · {e.count !== undefined ? 'last run' : 'run'} by {e.run_by.key_name}{' '}
                {ago(e.run_at)}
                {e.duration_ms !== undefined && ` · took ${formatDuration(e.duration_ms)}`}
                {e.error && ' · failed'} · <Link href={pathOf({ page: 'query', dataset: e.dataset, resultId: e.result_id, ...p.scope })}>result</Link>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The queries run in this browser, when the server's history cannot be read. */
function LocalRecent({ scope, queryHref }: { scope: Scope; queryHref: (ds: string, spec: QuerySpec) => string }) {
  const recent = listRecent(scope);
  return (
    <section class="panel" aria-labelledby="recent-h">
      <h2 id="recent-h">Recent queries</h2>
      <p class="small muted">Run in this browser (the team's query history could not be read).</p>
      {recent.length === 0 ? (
        <p class="muted">Queries you run appear here.</p>
      ) : (
        <ul class="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {recent.map((r) => (
            <li key={r.resultId}>
              <Link href={queryHref(r.dataset, r.spec)} class="mono">
                {describeQuery(r.spec)}
              </Link>
              <div class="small muted">
                {r.dataset === '__all__' ? 'all datasets' : r.dataset} · {describeRange(r.spec)} · run {ago(new Date(r.at).toISOString())} ·{' '}
                <Link href={pathOf({ page: 'query', dataset: r.dataset, resultId: r.resultId, ...scope })}>result</Link>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
