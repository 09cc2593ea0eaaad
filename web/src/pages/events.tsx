// The raw event browser (Honeycomb's "Explore data"): the newest events of a dataset that pass
// the query's filters, every field of each. The query comes from the address, as on the query
// page, so "Events" there opens the same filters here.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { latestEvents } from '../api/endpoints.js';
import type { QuerySpec, RawEvent } from '../api/types.js';
import { TimePicker } from '../components/time-picker.js';
import { ErrorNotice, FieldName, PageHead, Spinner, useAsync } from '../components/ui.js';
import { describeQuery } from '../describe.js';
import { formatTimestamp } from '../format.js';
import { searchToSpec, specToSearch } from '../query-url.js';
import { Link, navigate, useLocation } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { TRACE_ID_COLUMN } from './query.js';

const COLUMNS_SHOWN = 8;

export function EventsPage({ scope, dataset }: { scope: Scope; dataset: string }) {
  const loc = useLocation();
  const parsed = searchToSpec(loc.search);
  const spec: QuerySpec = parsed && !('error' in parsed) ? parsed : { time_range: 7200 };
  const limit = Number(loc.search.get('limit') ?? 100);
  const key = `${loc.search.toString()}`;
  const events = useAsync((signal) => latestEvents(dataset, { filters: spec.filters, filter_combination: spec.filter_combination, calculated_fields: spec.calculated_fields, time_range: spec.time_range, start_time: spec.start_time, end_time: spec.end_time }, limit, signal), [dataset, key]);
  const here = pathOf({ page: 'events', dataset, ...scope });
  // The columns chosen (`&col=` each, in order; none: the most common 8).
  const chosen = loc.search.getAll('col');
  const withCols = (cols: string[]) => cols.map((c) => `&col=${encodeURIComponent(c)}`).join('');
  const go = (s: QuerySpec, l = limit, cols = chosen) => navigate(`${here}${specToSearch(s)}&limit=${l}${withCols(cols)}`);
  const choose = (cols: string[]) => navigate(`${here}${specToSearch(spec)}&limit=${limit}${withCols(cols)}`, { replace: true });
  return (
    <div class="stack">
      <PageHead title="Events" sub={`${dataset === '__all__' ? 'All datasets' : dataset} · newest first`}>
        <Link class="button" href={`${pathOf({ page: 'query', dataset, ...scope })}${specToSearch(spec)}`}>
          Open in query builder
        </Link>
      </PageHead>
      <div class="row">
        <TimePicker spec={spec} onChange={(s) => go(s)} />
        <span class="small muted">{spec.filters?.length ? `where ${describeQuery({ ...spec, calculations: [] }).split(' where ')[1]}` : 'all events'}</span>
        <span class="spacer" />
        <label class="row small muted">
          Show
          <select value={String(limit)} onChange={(e) => go(spec, Number((e.target as HTMLSelectElement).value))}>
            {[50, 100, 500, 1000].map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      </div>
      {events.error ? <ErrorNotice error={events.error} /> : !events.data ? <Spinner label="Reading events" /> : <EventTable events={events.data.events} scope={scope} chosen={chosen} onChoose={choose} />}
    </div>
  );
}

/** The columns shown by default: the 8 most common fields of the events (ties by name). */
export function defaultColumns(events: RawEvent[], n = COLUMNS_SHOWN): string[] {
  return fieldsByFrequency(events).slice(0, n);
}

/** Every field of the events, the most common first (ties by name). */
export function fieldsByFrequency(events: RawEvent[]): string[] {
  const counts = new Map<string, number>();
  for (const e of events) for (const k of Object.keys(e.data)) counts.set(k, (counts.get(k) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([k]) => k);
}

function EventTable({ events, scope, chosen, onChoose }: { events: RawEvent[]; scope: Scope; chosen: string[]; onChoose: (cols: string[]) => void }) {
  const [open, setOpen] = useState<number | null>(null);
  if (events.length === 0) return <div class="panel empty">No events in this time range pass these filters.</div>;
  const cols = chosen.length > 0 ? chosen : defaultColumns(events);
  // (a chosen column none of these events has is still offered, to unchoose it)
  const all = [...new Set([...fieldsByFrequency(events), ...cols])];
  const toggle = (c: string) => onChoose(cols.includes(c) ? cols.filter((x) => x !== c) : [...cols, c]);
  return (
    <div class="stack">
      <details class="column-picker">
        <summary class="small">
          Columns: {cols.length} of {all.length}
        </summary>
        <div class="column-choices" data-testid="column-choices">
          {all.map((c) => (
            <label key={c} class="small mono" title={c}>
              <input type="checkbox" checked={cols.includes(c)} onChange={() => toggle(c)} /> <span class="n">{c}</span>
            </label>
          ))}
        </div>
        <button type="button" class="ghost small" onClick={() => onChoose([])}>
          The most common {COLUMNS_SHOWN}
        </button>
      </details>
      <div class="panel flush">
        <div class="table-wrap" style={{ maxHeight: 'none' }}>
          <table data-testid="events-table" class="events-table">
            <thead>
              <tr>
                <th>
                  <span class="sr-only">Details</span>
                </th>
                <th>Time</th>
                {cols.map((c) => (
                  <th key={c} class="mono cell" title={c}>
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {events.map((e, i) => (
                <Fragment key={i}>
                  <tr>
                    <td>
                      <button class="icon" aria-expanded={open === i} aria-label={`All fields of event ${i + 1}`} onClick={() => setOpen(open === i ? null : i)}>
                        {open === i ? '▾' : '▸'}
                      </button>
                    </td>
                    <td class="time">{formatTimestamp(e.time)}</td>
                    {cols.map((c) => {
                      const v = e.data[c];
                      const text = v === undefined || v === null ? '' : String(v);
                      return (
                        <td key={c} class="mono cell" title={text}>
                          {c === TRACE_ID_COLUMN && typeof v === 'string' ? (
                            <Link href={pathOf({ page: 'trace', dataset: '__all__', traceId: v, ...scope })} title={`Open trace ${v}`}>
                              {text}
                            </Link>
                          ) : (
                            text
                          )}
                        </td>
                      );
                    })}
                  </tr>
                  {open === i && (
                    <tr>
                      <td colSpan={cols.length + 2}>
                        <Fields event={e} scope={scope} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      </div>
    </div>
  );
}

export function Fields({ event, scope }: { event: { time: string; data: Record<string, unknown> }; scope: Scope }) {
  const keys = Object.keys(event.data).sort();
  const trace = event.data[TRACE_ID_COLUMN];
  return (
    <div>
      {typeof trace === 'string' && (
        <p>
          <Link href={pathOf({ page: 'trace', dataset: '__all__', traceId: trace, ...scope })}>Open trace {trace}</Link>
        </p>
      )}
      <div class="kv">
        <div class="k">time</div>
        <div class="v">{event.time}</div>
        {keys.map((k) => (
          <Fragment key={k}>
            <div class="k" title={k}>
              <FieldName name={k} />
            </div>
            <div class="v">{String(event.data[k])}</div>
          </Fragment>
        ))}
      </div>
    </div>
  );
}
