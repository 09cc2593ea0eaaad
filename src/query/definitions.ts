// A dataset's definitions (which field holds the span id, the service name, …): each key's
// default field, for the queries, traces and evaluations that read them and the datasets that
// start with them.

/** The definition keys, each mapped by default to the field name Honeycomb auto-detects. */
export const DEFINITION_DEFAULTS: Record<string, string> = {
  span_id: 'trace.span_id',
  trace_id: 'trace.trace_id',
  parent_id: 'trace.parent_id',
  name: 'name',
  service_name: 'service.name',
  duration_ms: 'duration_ms',
  span_kind: 'meta.span_type',
  annotation_type: 'meta.annotation_type',
  link_span_id: 'trace.link.span_id',
  link_trace_id: 'trace.link.trace_id',
  error: 'error',
  status: 'response.status_code',
  route: 'http.route',
  user: 'user.id',
  log_severity: 'severity',
  log_message: 'body',
};
export const DEFINITION_KEYS = Object.keys(DEFINITION_DEFAULTS);
