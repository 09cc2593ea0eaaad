// Boards and their views: the stored shapes, the board limits, and the lookups both the board and
// the board-view routes use (src/api/v1/boards.ts, src/api/v1/board-views.ts). Another
// environment's board is not found, like a missing one.
import { notFound } from '../errors.js';
import { belongsTo } from './scope.js';
import type { FilterOp } from '../query/spec.js';
import type { ConfigStore, Environment, StoredObject } from '../stores/config/types.js';
import { BOARD_KIND, BOARD_VIEW_KIND } from './kinds.js';
import type { Tag } from './tags.js';

export const MAX_PRESET_FILTERS = 5;
/** Lists without a documented Honeycomb maximum get one of ours (docs/api.md, "Limits"). */
export const MAX_PANELS = 100;
/** One chart per calculation, and a query has at most 100. */
export const MAX_CHARTS = 100;
export const MAX_TEXT_PANEL_LENGTH = 10_000;
export const MAX_BOARD_NAME_LENGTH = 255;
export const MAX_BOARD_DESCRIPTION_LENGTH = 1024;
export const QUERY_STYLES = ['graph', 'table', 'combo'] as const;
export const CHART_TYPES = ['default', 'line', 'stacked', 'stat', 'tsbar', 'cbar', 'cpie'] as const;
export const LAYOUT_GENERATIONS = ['auto', 'manual'] as const;
export const PANEL_TYPES = ['query', 'slo', 'text'] as const;
export const VISUALIZATION_FLAGS = ['hide_compare', 'hide_hovers', 'hide_markers', 'utc_xaxis', 'overlaid_charts'] as const;

/** The auto-layout grid (see the header). */
export const GRID = { columns: 12, width: 6, height: { query: 6, slo: 6, text: 4 } } as const;

export interface Position {
  x_coordinate: number;
  y_coordinate: number;
  height: number;
  width: number;
}
export interface Chart {
  chart_index: number;
  chart_type: (typeof CHART_TYPES)[number];
  log_scale: boolean;
  omit_missing_values: boolean;
}
export type VisualizationSettings = Record<(typeof VISUALIZATION_FLAGS)[number], boolean> & { charts?: Chart[] };
export type Panel =
  | {
      type: 'query';
      query_panel: {
        query_id: string;
        query_annotation_id: string;
        query_style: (typeof QUERY_STYLES)[number];
        dataset: string;
        /** Only when the client sent it. */
        visualization_settings?: VisualizationSettings;
      };
      position: Position;
    }
  | { type: 'slo'; slo_panel: { slo_id: string }; position: Position }
  | { type: 'text'; text_panel: { content: string }; position: Position };
export interface PresetFilter {
  column: string;
  alias: string;
}
/** What the object store holds for a board (panels as answered, positions laid out). */
export interface StoredBoard {
  name: string;
  description: string;
  type: 'flexible';
  panels: Panel[];
  tags: Tag[];
  preset_filters: PresetFilter[];
}

export async function getBoardObject(store: ConfigStore, env: Environment, id: string): Promise<StoredObject<StoredBoard>> {
  const obj = await store.getObject<StoredBoard>(BOARD_KIND, id);
  if (!belongsTo(obj, env)) throw notFound('board');
  return obj;
}

export type Scalar = string | number | boolean;
export interface BoardViewFilter {
  column: string;
  operation: FilterOp;
  value?: Scalar | Scalar[];
}
/** What the object store holds for a view. */
export interface StoredBoardView {
  name: string;
  filters: BoardViewFilter[];
}

export async function listBoardViews(store: ConfigStore, env: Environment, boardId: string): Promise<StoredObject<StoredBoardView>[]> {
  const all = await store.listObjects<StoredBoardView>(BOARD_VIEW_KIND, { environmentId: env.id });
  return all.filter((o) => o.scope === boardId);
}

/** Deletes every view of the board (called when the board is deleted). */
export async function deleteBoardViews(store: ConfigStore, env: Environment, boardId: string): Promise<void> {
  for (const view of await listBoardViews(store, env, boardId)) await store.deleteObject(BOARD_VIEW_KIND, view.id);
}
