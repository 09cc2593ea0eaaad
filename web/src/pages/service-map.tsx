// The service map: which service calls which over a window (POST /1/maps/dependencies/requests,
// then its answer), drawn as a graph: nodes sized by their traffic, edges by their calls and
// coloured by their error share (error_count, a Waggle extension). Clicking an edge (or its row
// in the table) opens the query of the calls it stands for: the child service's spans, by name,
// with their count, errors and latency.
import { useMemo, useState } from 'preact/hooks';
import { request } from '../api/client.js';
import type { QuerySpec } from '../api/types.js';
import { ErrorNotice, Loaded, PageHead, useAsync } from '../components/ui.js';
import { formatNumber } from '../format.js';
import { specToSearch } from '../query-url.js';
import { Link, navigate } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { edgeColor, edgeWidth, layoutServiceMap, type MapEdge } from '../service-map-layout.js';

const RANGES: [string, number][] = [['1 hour', 3600], ['2 hours', 7200], ['24 hours', 86_400], ['7 days', 7 * 86_400]];

interface MapAnswer {
  status: 'pending' | 'ready' | 'error';
  request_id: string;
  dependencies: { parent_node: { name: string }; child_node: { name: string }; call_count: number; error_count?: number }[] | null;
  links: { next: string | null };
  error?: string;
}

async function loadMap(range: number, signal: AbortSignal): Promise<MapEdge[]> {
  const created = await request<MapAnswer>('POST', '/1/maps/dependencies/requests?limit=500', { time_range: range }, { signal });
  let page = await request<MapAnswer>('GET', `/1/maps/dependencies/requests/${encodeURIComponent(created.request_id)}?page[size]=100`, undefined, { signal });
  while (page.status === 'pending') {
    await new Promise((r) => setTimeout(r, 250));
    page = await request<MapAnswer>('GET', `/1/maps/dependencies/requests/${encodeURIComponent(created.request_id)}?page[size]=100`, undefined, { signal });
  }
  if (page.status === 'error') throw new Error(page.error ?? 'the service map could not be computed');
  const edges: MapEdge[] = [];
  for (;;) {
    for (const d of page.dependencies ?? []) edges.push({ parent: d.parent_node.name, child: d.child_node.name, calls: d.call_count, errors: d.error_count ?? 0 });
    if (!page.links.next) return edges;
    page = await request<MapAnswer>('GET', page.links.next, undefined, { signal });
  }
}

/** The query of an edge's calls: the child service's spans over the same window. */
export function edgeQuery(e: MapEdge, range: number): QuerySpec {
  return {
    time_range: range,
    calculations: [{ op: 'COUNT' }, { op: 'P99', column: 'duration_ms' }],
    filters: [{ column: 'service.name', op: '=', value: e.child }],
    breakdowns: ['name', 'error'],
    orders: [{ op: 'COUNT', order: 'descending' }],
    limit: 100,
  };
}

export function ServiceMapPage({ scope }: { scope: Scope }) {
  const [range, setRange] = useState(7200);
  const map = useAsync((signal) => loadMap(range, signal), [range]);
  const open = (e: MapEdge) => navigate(`${pathOf({ page: 'query', dataset: '__all__', ...scope })}${specToSearch(edgeQuery(e, range))}`);
  return (
    <div class="stack">
      <PageHead title="Service map" sub="Which service calls which, from the spans of every dataset">
        <div class="segmented" role="group" aria-label="Time range">
          {RANGES.map(([label, s]) => (
            <button key={s} aria-pressed={range === s} onClick={() => setRange(s)}>{label}</button>
          ))}
        </div>
      </PageHead>
      <Loaded async={map} label="Computing the service map">
        {(edges) =>
          edges.length === 0 ? (
            <div class="panel empty">No calls between services in this window: spans need a trace id, span id, parent id and service name.</div>
          ) : (
            <>
              <section class="panel service-map" aria-label="Service map graph"><MapGraph edges={edges} onEdge={open} /></section>
              <section class="panel flush">
                <table data-testid="service-map-edges">
                  <thead>
                    <tr><th>Caller</th><th>Called</th><th class="num">Calls</th><th class="num">Errors</th><th><span class="sr-only">Query</span></th></tr>
                  </thead>
                  <tbody>
                    {edges.map((e) => (
                      <tr key={`${e.parent}\u0000${e.child}`} data-edge={`${e.parent}->${e.child}`}>
                        <td>{e.parent}</td>
                        <td>{e.child}</td>
                        <td class="num">{formatNumber(e.calls)}</td>
                        <td class="num" style={{ color: e.errors > 0 ? 'var(--danger)' : undefined }}>{formatNumber(e.errors)}{e.calls > 0 && e.errors > 0 ? ` (${formatNumber((100 * e.errors) / e.calls)} %)` : ''}</td>
                        <td><Link href={`${pathOf({ page: 'query', dataset: '__all__', ...scope })}${specToSearch(edgeQuery(e, range))}`}>Query</Link></td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </section>
            </>
          )
        }
      </Loaded>
      {map.error !== undefined && map.data !== undefined && <ErrorNotice error={map.error} />}
    </div>
  );
}

function MapGraph({ edges, onEdge }: { edges: MapEdge[]; onEdge: (e: MapEdge) => void }) {
  const { nodes, width, height } = useMemo(() => layoutServiceMap(edges), [edges]);
  const at = new Map(nodes.map((n) => [n.name, n]));
  const most = Math.max(...edges.map((e) => e.calls));
  const path = (e: MapEdge) => {
    const a = at.get(e.parent)!;
    const b = at.get(e.child)!;
    if (a === b) return `M ${a.x - 6} ${a.y - a.r} C ${a.x - 40} ${a.y - a.r - 50}, ${a.x + 40} ${a.y - a.r - 50}, ${a.x + 6} ${a.y - a.r}`;
    const bend = b.x <= a.x ? 60 : -20; // calls forward arc slightly above; calls back to an earlier column curve below
    return `M ${a.x} ${a.y} C ${(a.x + b.x) / 2} ${a.y + bend}, ${(a.x + b.x) / 2} ${b.y + bend}, ${b.x} ${b.y}`;
  };
  return (
    <svg viewBox={`0 -40 ${Math.max(width, 300)} ${height + 80}`} width="100%" style={{ maxHeight: '560px' }} role="img" aria-label={`${nodes.length} services, ${edges.length} edges`}>
      {edges.map((e) => (
        <path
          key={`${e.parent}\u0000${e.child}`}
          class="edge"
          d={path(e)}
          fill="none"
          stroke={edgeColor(e)}
          stroke-width={edgeWidth(e.calls, most)}
          stroke-opacity="0.75"
          onClick={() => onEdge(e)}
        >
          <title>{`${e.parent} → ${e.child}: ${formatNumber(e.calls)} calls, ${formatNumber(e.errors)} errors`}</title>
        </path>
      ))}
      {nodes.map((n) => (
        <g key={n.name} class="node" data-service={n.name}>
          <circle cx={n.x} cy={n.y} r={n.r} />
          <text x={n.x} y={n.y + n.r + 15} text-anchor="middle">{n.name.length > 28 ? `${n.name.slice(0, 27)}…` : n.name}</text>
          <title>{`${n.name}: ${formatNumber(n.traffic)} calls in and out`}</title>
        </g>
      ))}
    </svg>
  );
}
