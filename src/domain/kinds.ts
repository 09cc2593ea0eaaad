// The kind of every object the configuration store holds (`objects.kind`), in one place: a kind
// is part of the stored data, so a name here never changes once released.

// Resources of the API
export const BOARD_KIND = 'board';
export const BOARD_VIEW_KIND = 'board_view';
export const BURN_ALERT_KIND = 'burn_alert';
export const CALCULATED_FIELD_KIND = 'derived_column';
export const MAP_REQUEST_KIND = 'map_dependency_request';
export const MARKER_KIND = 'marker';
export const MARKER_SETTING_KIND = 'marker_setting';
export const QUERY_KIND = 'query';
export const QUERY_ANNOTATION_KIND = 'query_annotation';
/** A query run in the web UI (src/domain/query-history.ts). */
export const QUERY_HISTORY_KIND = 'query_history';
export const QUERY_RESULT_KIND = 'query_result';
export const RECIPIENT_KIND = 'recipient';
export const SIGNAL_KIND = 'signal';
export const SLO_KIND = 'slo';
export const TRIGGER_KIND = 'trigger';

// State kept by background evaluation and delivery
export const ANOMALY_KIND = 'signal_anomaly';
export const BURN_ALERT_STATE_KIND = 'burn_alert_state';
export const DELIVERY_KIND = 'delivery';
export const SIGNAL_STATE_KIND = 'signal_state';
export const TRIGGER_STATE_KIND = 'trigger_state';
/** The versions of a dataset's service seen lately (src/ingest/deploy-markers.ts). */
export const DEPLOY_VERSIONS_KIND = 'deploy_versions';

// The web UI's sign-in
export const SESSION_KIND = 'ui_session';
export const SECRET_KIND = 'ui_session_secret';
