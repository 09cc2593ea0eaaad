// Service map dependencies: which service calls which, computed from the stored spans of every
// dataset of an environment, in one statement (the event engine's: events.dialect.serviceMap).
//
//   spans    one SELECT per usable dataset, UNION ALL: trace id, span id, parent id and service
//            name (read through the dataset's definitions, as text) and the sample rate of every
//            span whose event time is in the window [start, end). Span events and links (a
//            non-empty `annotation_type` field) are not spans and are left out.
//   parents  spans with a trace id, span id and service, one row per (trace id, span id); should
//            one span id appear twice in a trace, the smallest service name wins, so a duplicate
//            never counts a call twice.
//   edges    child JOIN parent ON same trace id AND child.parent_id = parent.span_id, grouped by
//            (parent service, child service); the call count is the sum of the child spans'
//            sample rates (each stored span stands for `samplerate` calls, as COUNT does), the
//            error count the same sum over the child spans that are errors (the dataset's `error`
//            definition, as the trace view reads it: true, a non-zero number, or any text but
//            "", "false" and "0"; a dataset without that field has none).
//
// Rules that follow from the join: a span whose parent is not stored (or lies outside the
// window, or in a skipped dataset) makes no edge; roots make none; spans without a service name
// (NULL or "") are neither parents nor children; self-calls (A → A) and cycles are ordinary edges.
// A trace may cross datasets: ids are compared as text, whatever dataset holds the span.
//
// A dataset takes part when its definitions `trace_id`, `span_id`, `parent_id` and
// `service_name` each name a column it has (calculated fields are not evaluated here); any other
// dataset is skipped. Every identifier is quoted by quoteIdent/tableName; service names given as
// filters and the limit are bound parameters.
import type { ConfigStore, Column, Dataset, Environment } from '../stores/config/types.js';
import { tableName, type EventStore } from '../stores/events/types.js';
import { isStored, type TableShape } from '../stores/events/placement.js';
import { readField } from '../query/fields.js';
import { SAMPLERATE_COLUMN, TIME_COLUMN, type SqlDialect } from '../stores/events/engine.js';
import type { EngineDialect } from '../stores/events/statements.js';
import { DEFINITION_DEFAULTS } from '../query/definitions.js';

/** The definition keys a dataset needs to contribute spans. */
export const SPAN_DEFINITIONS = ['trace_id', 'span_id', 'parent_id', 'service_name'] as const;

export interface DependencyOptions {
  /** Window in Unix seconds, [start, end). */
  start: number;
  end: number;
  /** Most edges returned. */
  limit: number;
  /** When non-empty, only edges with the parent or the child in one of these services. */
  services: string[];
}

export interface Dependency {
  parent: string;
  child: string;
  calls: number;
  /** The calls whose child span is an error (sample-weighted, as `calls`). */
  errors: number;
}

/** One dataset's registered span fields (plus the annotation type when present). */
export interface SpanSource {
  dataset: Dataset;
  traceId: Column;
  spanId: Column;
  parentId: Column;
  service: Column;
  annotationType?: Column;
  error?: Column;
}

/** The definition's field name, or the default when the dataset maps none. */
function fieldName(ds: Dataset, key: string): string {
  return ds.definitions[key] || DEFINITION_DEFAULTS[key];
}

/** The span fields of a dataset, or undefined when it lacks any of them (or has no events table). */
export function spanSource(dataset: Dataset, columns: Column[], shape: TableShape): SpanSource | undefined {
  const byName = new Map(columns.map((c) => [c.keyName, c]));
  const col = (key: string) => {
    const c = byName.get(fieldName(dataset, key));
    return c && isStored(shape, c.physical) ? c : undefined;
  };
  const [traceId, spanId, parentId, service] = SPAN_DEFINITIONS.map(col);
  if (!traceId || !spanId || !parentId || !service) return undefined;
  return { dataset, traceId, spanId, parentId, service, annotationType: col('annotation_type'), error: col('error') };
}

/** The usable datasets of an environment, in slug order. */
export async function spanSources(store: ConfigStore, events: EventStore, env: Environment): Promise<SpanSource[]> {
  const datasets = (await store.listDatasets(env.id)).slice().sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  const found = await Promise.all(
    datasets.map(async (ds) => {
      const shape = await events.shape(ds.id);
      if (!shape) return undefined; // no events table yet
      return spanSource(ds, await store.listColumns(ds.id), shape);
    }),
  );
  return found.filter((s): s is SpanSource => s !== undefined);
}

/** SQL of one timestamp computed here (never user text). */
function timestampSql(d: SqlDialect, unixSeconds: number): string {
  if (!Number.isFinite(unixSeconds)) throw new Error(`not a time: ${String(unixSeconds)}`);
  return d.timestamp(unixSeconds * 1_000_000);
}

/** The statement computing the edges, ordered by call count (descending), then parent and child name. */
export function dependencySql(d: EngineDialect, sources: SpanSource[], opts: DependencyOptions): { sql: string; params: unknown[] } {
  const quoteIdent = d.quoteIdent;
  const params: unknown[] = [];
  const bind = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const text = (c: Column) => readField(d, c, 'string');
  const time = quoteIdent(TIME_COLUMN);
  const w = quoteIdent(SAMPLERATE_COLUMN);
  const isError = (c: Column | undefined): string => {
    if (!c) return d.bool(false);
    const v = readField(d, c, c.type);
    if (c.type === 'boolean') return `COALESCE(${v}, ${d.bool(false)})`;
    if (c.type === 'integer' || c.type === 'float') return `COALESCE(${v} <> 0, ${d.bool(false)})`;
    return `COALESCE(${v} NOT IN ('', 'false', '0'), ${d.bool(false)})`;
  };
  const selects = sources.map((s) => {
    const where = [`${time} >= ${timestampSql(d, opts.start)}`, `${time} < ${timestampSql(d, opts.end)}`];
    if (s.annotationType) where.push(`coalesce(${text(s.annotationType)}, '') = ''`);
    return (
      `SELECT ${text(s.traceId)} AS trace_id, ${text(s.spanId)} AS span_id, ${text(s.parentId)} AS parent_id, ` +
      `${text(s.service)} AS service, ${w} AS w, CASE WHEN ${isError(s.error)} THEN ${w} ELSE 0 END AS e ` +
      `FROM ${quoteIdent(tableName(s.dataset.id))} WHERE ${where.join(' AND ')}`
    );
  });
  const spans =
    selects.length > 0
      ? selects.join('\nUNION ALL\n')
      : `SELECT ${d.nullOf('string')} AS trace_id, ${d.nullOf('string')} AS span_id, ${d.nullOf('string')} AS parent_id, ` +
        `${d.nullOf('string')} AS service, ${d.nullOf('integer')} AS w, ${d.nullOf('integer')} AS e WHERE ${d.bool(false)}`;
  const services = [...new Set(opts.services)];
  const list = services.length > 0 ? services.map((n) => bind(n)).join(', ') : undefined;
  return { sql: d.serviceMap.dependencies(spans, list, bind(opts.limit)), params };
}

/** Computes the edges; rejects with QueryTimeout past `timeoutMs`. */
export async function computeDependencies(
  store: ConfigStore,
  events: EventStore,
  env: Environment,
  opts: DependencyOptions,
  timeoutMs: number,
): Promise<Dependency[]> {
  const sources = await spanSources(store, events, env);
  if (sources.length === 0) return [];
  const { sql, params } = dependencySql(events.dialect, sources, opts);
  const rows = await events.analyse(sql, params, timeoutMs);
  return rows.map((r) => ({ parent: String(r.parent), child: String(r.child), calls: Number(r.calls), errors: Number(r.errors ?? 0) }));
}
