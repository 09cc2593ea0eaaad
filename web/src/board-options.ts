// What a board's query panel can be set to (the API's chart types and query styles,
// docs/boards.md), and a query panel as the UI adds it.
import type { BoardPanel } from './api/types.js';

export const CHART_TYPES = [
  ['default', 'Default (line)'],
  ['line', 'Line'],
  ['stacked', 'Stacked'],
  ['tsbar', 'Bars over time'],
  ['stat', 'Single number'],
  ['cbar', 'Bar chart'],
  ['cpie', 'Pie chart'],
] as const;
export const QUERY_STYLES = [
  ['graph', 'Graph'],
  ['table', 'Table'],
  ['combo', 'Graph and table'],
] as const;

/** A query panel of a saved query and its annotation, drawn as `chartType` in `style`. */
export const queryPanel = (queryId: string, annotationId: string, chartType: string, style: string): BoardPanel => ({
  type: 'query',
  query_panel: {
    query_id: queryId,
    query_annotation_id: annotationId,
    query_style: style,
    visualization_settings: { charts: [{ chart_index: 0, chart_type: chartType }] },
  },
});

/** A panel's title from the query's description: at most 320 characters (the API's limit for an annotation's name). */
export const panelTitle = (described: string) => (described.length > 120 ? `${described.slice(0, 119)}…` : described);
