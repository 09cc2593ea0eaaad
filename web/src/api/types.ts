// What the API answers, as the UI reads it. The query spec and its enumerations are the
// server's own (src/query/spec.ts), so the builder offers exactly what the API accepts.
export type { Calculation, Filter, FilterOp, Having, HavingOp, InlineCalculatedField, Order, QueryOp, QuerySpec } from '../../../src/query/spec.js';
export { FILTER_OPS, HAVING_OPS, QUERY_OPS, calculationKey } from '../../../src/query/spec.js';
import type { QuerySpec } from '../../../src/query/spec.js';

export interface SignedIn {
  team: { name: string; slug: string };
  environment: { name: string; slug: string };
  api_key_access: Record<string, boolean>;
}

export interface Dataset {
  name: string;
  slug: string;
  description: string;
  last_written_at: string | null;
  regular_columns_count: number | null;
  created_at: string;
}

export interface Column {
  id: string;
  key_name: string;
  type: 'string' | 'integer' | 'float' | 'boolean';
  description: string;
  hidden: boolean;
  last_written: string | null;
}

export interface CalculatedField {
  id: string;
  alias: string;
  expression: string;
  description: string;
}

/** GET /1/datasets/<slug>: what the settings page edits. */
export interface DatasetDetail extends Dataset {
  expand_json_depth: number;
  settings: { delete_protected?: boolean };
}

export type ResultValue = string | number | boolean;
export interface ResultRow {
  data: Record<string, ResultValue>;
}
export interface SeriesRow extends ResultRow {
  time: string;
}
export interface QueryData {
  series: SeriesRow[];
  results: ResultRow[];
  total_by_aggregate?: ResultRow;
  other_by_aggregate?: ResultRow;
  /** Waggle's time comparison (docs/queries.md): the same query over the window shifted back. */
  comparison?: QueryData & { offset_seconds: number; start_time: number; end_time: number };
}
export interface QueryResult {
  id: string;
  complete: boolean;
  query: QuerySpec & { id: string };
  links: { query_url: string };
  data?: QueryData;
  error?: string;
}

export interface Marker {
  id: string;
  start_time: number;
  end_time?: number;
  message: string;
  type: string;
  url: string;
  color?: string;
}
export interface MarkerSetting {
  id: string;
  type: string;
  color: string;
}

export interface BoardPanel {
  type: 'query' | 'slo' | 'text';
  position?: { x_coordinate: number; y_coordinate: number; width: number; height: number };
  query_panel?: { query_id: string; query_annotation_id: string; query_style?: string; dataset?: string; visualization_settings?: { charts?: { chart_index?: number; chart_type?: string; log_scale?: boolean }[] } & Record<string, unknown> };
  slo_panel?: { slo_id: string };
  text_panel?: { content: string };
}
export interface Board {
  id: string;
  name: string;
  description: string;
  panels: BoardPanel[];
  tags?: { key: string; value: string }[];
  preset_filters?: { column: string; alias: string }[];
  links: { board_url: string };
}
export interface BoardView {
  id: string;
  name: string;
  filters: { column: string; operation: string; value?: unknown }[];
}
export interface QueryAnnotation {
  id: string;
  name: string;
  description?: string;
  query_id: string;
}

export interface Slo {
  id: string;
  name: string;
  description: string;
  sli: { alias: string };
  time_period_days: number;
  target_per_million: number;
  dataset_slugs?: string[];
  compliance?: number;
  budget_remaining?: number;
  burn_rate?: number;
  status?: 'no_events' | 'no_alerts' | 'triggered' | 'normal';
  reset_at?: string | null;
}
export interface BurnAlert {
  id: string;
  alert_type: 'exhaustion_time' | 'budget_rate';
  description: string;
  triggered: boolean;
  exhaustion_minutes?: number;
  budget_rate_window_minutes?: number;
  budget_rate_decrease_threshold_per_million?: number;
}
export interface SloHistoryPoint {
  timestamp: number;
  compliance: number;
  budget_remaining: number;
}

export interface RecipientRef {
  id?: string;
  type: string;
  target?: string;
}
export interface Trigger {
  id: string;
  dataset_slug: string;
  name: string;
  description: string;
  query: QuerySpec;
  threshold: { op: string; value: number; exceeded_limit?: number };
  frequency: number;
  alert_type: string;
  disabled: boolean;
  triggered: boolean;
  last_evaluation?: { at: string; value?: number; breaching: boolean; no_data: boolean; error?: string } | null;
  baseline_details?: { offset_minutes?: number; type?: string };
  evaluation_schedule_type?: string;
  recipients: RecipientRef[];
}
export interface TriggerStateChange {
  at: string;
  status: 'triggered' | 'resolved';
  value?: number;
  threshold: { op: string; value: number };
  reason?: string;
  result_id?: string;
  result_url?: string;
}
export interface TriggerDelivery {
  id: string;
  created_at: string;
  status: 'triggered' | 'resolved';
  recipient: { id: string; type: string; target: string };
  state: string;
  attempt_count: number;
  http_status?: number;
  finished_at?: string;
  error?: string;
}
export interface TriggerHistory {
  triggered: boolean;
  triggered_at?: string;
  state_changes: TriggerStateChange[];
  deliveries: TriggerDelivery[];
}
export interface Recipient {
  id: string;
  type: string;
  details: Record<string, unknown>;
  created_at: string;
}
export interface Delivery {
  id: string;
  created_at: string;
  source: string;
  status: 'triggered' | 'resolved';
  alert: { id: string; name: string };
  recipient: { id: string; type: string; target: string };
  state: string;
  attempt_count: number;
  attempts: { at: string; duration_ms: number; outcome: string; http_status?: number; error?: string }[];
  error?: string;
}

export interface Share {
  selection: number;
  baseline: number;
}
export interface ColumnDifference {
  column: string;
  type: string;
  score: number;
  kind: 'values' | 'histogram';
  values?: (Share & { value: string | null })[];
  bins?: (Share & { lower: number; upper: number })[];
  missing?: Share;
}
export interface BubbleUpAnswer {
  selection: { events: number; rows: number; sampled: number };
  /** `start_time` / `end_time`: the "past" baseline's time range. */
  baseline: { kind: 'rest' | 'past'; start_time?: number; end_time?: number; events: number; rows: number; sampled: number };
  columns: ColumnDifference[];
}
/** What BubbleUp compares the selection with: the rest of the query's events, or the same selection earlier. */
export type BubbleUpBaseline = { kind: 'rest' } | { kind: 'past'; offset_seconds: number };
export interface BubbleUpSelection {
  start_time: number;
  end_time: number;
  column?: string;
  lower?: number;
  upper?: number;
}

export type FieldValue = string | number | boolean;
export interface RawEvent {
  time: string;
  data: Record<string, FieldValue>;
}
export interface TraceSpan {
  dataset: string;
  time: string;
  span_id: string | null;
  parent_id: string | null;
  name: string | null;
  service_name: string | null;
  duration_ms: number | null;
  error: boolean;
  kind: 'span' | 'span_event' | 'link';
  link?: { trace_id: string | null; span_id: string | null };
  data: Record<string, FieldValue>;
}
/** GET /1/traces/{ds}/{id}/typical: a trace of the same root span nearest the median. */
export interface TypicalTrace {
  trace_id: string;
  duration_ms: number;
  root: { dataset: string; service_name: string | null; name: string; duration_ms: number | null };
  median_ms: number;
  roots: number;
  start_time: number;
  end_time: number;
}
export interface Trace {
  trace_id: string;
  truncated: boolean;
  spans: TraceSpan[];
}
/** A query run in the web UI, from the team's query history (Waggle extension, docs/queries.md). */
export interface HistoryEntry {
  id: string;
  run_at: string;
  dataset: string;
  query: QuerySpec;
  query_id: string;
  result_id: string;
  result_url: string;
  run_by: { key_id: string; key_name: string };
  duration_ms?: number;
  error?: string;
  /** `sort=most_run`: the runs of this spec kept. */
  count?: number;
}

/** GET /1/query_results/{ds}/{id}/bands (Waggle extension): each series' expected band from its history. */
export interface BandsAnswer {
  seasonality: 'day' | 'week';
  period_seconds: number;
  periods: number;
  sensitivity: string;
  granularity: number;
  series: {
    group: Record<string, ResultValue>;
    calculation: string;
    outside: number;
    points: { time: string; value: number | null; expected: number | null; lower: number | null; upper: number | null; outside: boolean }[];
  }[];
}
