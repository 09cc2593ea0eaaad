// Home: the environment's datasets (last write, columns), the team's query history (recent and
// most-run, searchable: components/query-history.tsx), and,
// before any event has arrived, how to send the first ones (with this server's address).
import { useState } from 'preact/hooks';
import { BASE } from '../api/client.js';
import { Empty, PageHead, Spinner } from '../components/ui.js';
import { QueryHistory } from '../components/query-history.js';
import { ago } from '../format.js';
import { Link } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { useSession } from '../session.js';

export function HomePage({ scope }: { scope: Scope }) {
  const { session, datasets } = useSession();
  const written = (datasets ?? []).filter((d) => d.last_written_at);
  return (
    <div class="stack">
      <PageHead title={session.environment.name} sub={`${session.team.name} · environment ${session.environment.slug}`}>
        <Link class="button primary" href={pathOf({ page: 'query', dataset: '__all__', ...scope })}>
          New query
        </Link>
      </PageHead>
      {datasets === undefined ? (
        <Spinner label="Loading datasets" />
      ) : written.length === 0 ? (
        <FirstEvents />
      ) : null}
      {datasets && datasets.length > 0 && (
        <section class="panel flush" aria-labelledby="datasets-h">
          <div style={{ padding: '12px 16px 0' }}>
            <h2 id="datasets-h">Datasets</h2>
          </div>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Last write</th>
                  <th class="num">Columns</th>
                  <th>Explore</th>
                </tr>
              </thead>
              <tbody>
                {[...datasets]
                  .sort((a, b) => String(b.last_written_at ?? '').localeCompare(String(a.last_written_at ?? '')) || a.name.localeCompare(b.name))
                  .map((d) => (
                    <tr key={d.slug}>
                      <td>
                        <Link href={pathOf({ page: 'query', dataset: d.slug, ...scope })}>{d.name}</Link>
                        {d.description && <div class="small muted">{d.description}</div>}
                      </td>
                      <td title={d.last_written_at ?? ''}>{ago(d.last_written_at)}</td>
                      <td class="num">{d.regular_columns_count ?? 0}</td>
                      <td>
                        <span class="row">
                          <Link href={pathOf({ page: 'query', dataset: d.slug, ...scope })}>Query</Link>
                          <Link href={pathOf({ page: 'events', dataset: d.slug, ...scope })}>Events</Link>
                          <Link href={pathOf({ page: 'dataset-settings', dataset: d.slug, ...scope })}>Settings</Link>
                        </span>
                      </td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      <QueryHistory scope={scope} datasets={datasets} />
    </div>
  );
}

function FirstEvents() {
  const host = `${location.origin}${BASE}`;
  const [tab, setTab] = useState<'curl' | 'libhoney' | 'otel'>('curl');
  const snippets = {
    curl: `curl ${host}/1/events/my-service \\
  -H "X-Honeycomb-Team: $WAGGLE_INGEST_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"service.name": "checkout", "duration_ms": 153.2, "status": 200}'`,
    libhoney: `import Libhoney from "libhoney";

const hny = new Libhoney({
  writeKey: process.env.WAGGLE_INGEST_KEY,
  dataset: "my-service",
  apiHost: "${host}",
});
hny.sendNow({ "service.name": "checkout", duration_ms: 153.2, status: 200 });`,
    otel: `# Any OpenTelemetry SDK or Collector exporting OTLP/HTTP:
export OTEL_EXPORTER_OTLP_ENDPOINT="${host}"
export OTEL_EXPORTER_OTLP_HEADERS="x-honeycomb-team=$WAGGLE_INGEST_KEY"
export OTEL_SERVICE_NAME="checkout"`,
  };
  return (
    <section class="panel snippets" aria-labelledby="first-h">
      <h2 id="first-h">Send your first events</h2>
      <p class="muted">
        No events have arrived in this environment yet. Use the ingest key <code>waggle serve</code> printed on its first start (or make one with{' '}
        <code>waggle keys create</code>) and send events to <code>{host}</code>:
      </p>
      <div class="tabs" role="tablist">
        {(['curl', 'libhoney', 'otel'] as const).map((t) => (
          <button key={t} role="tab" aria-selected={tab === t} onClick={() => setTab(t)}>
            {{ curl: 'curl', libhoney: 'libhoney (Node.js)', otel: 'OpenTelemetry' }[t]}
          </button>
        ))}
      </div>
      <pre role="tabpanel">{snippets[tab]}</pre>
      <Empty>Events appear here within seconds of being sent.</Empty>
    </section>
  );
}
