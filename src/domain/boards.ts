// Boards: the stored shape, the board limits, and the lookup both the board and the board-view
// routes use (src/api/v1/boards.ts, src/api/v1/board-views.ts; the views themselves are
// src/domain/board-views.ts). Another environment's board is not found, like a missing one.
// Also what a board body may say (validateBoard) and how a board is answered (boardAnswer).
//
// Decisions (also in docs/boards.md):
// - Flexible boards only: `type` is required and must be `flexible` (422 otherwise).
// - Classic fields: `style`, `column_layout` and a query panel's `graph_settings` are accepted and
//   ignored (cosmetic; never stored or echoed). `queries` and `slos` must be absent, null or
//   empty (the Terraform client sends `"queries": null, "slos": null` with every flexible
//   board); a non-empty one is a 422, because silently dropping a client's queries would lose
//   data. Read-only fields in the body (`id`, `links`, a query panel's `dataset`) and unknown
//   fields are ignored.
// - The route's schema validates the body (src/api/v1/boards.ts; one 422 naming every field,
//   e.g. `panels.2.query_panel.query_id`), after `null` members are dropped (dropNulls: null is
//   none, so a required one is `missing`). By hand after it, only what a schema cannot say:
//   unique tag keys and the objects the panels name.
// - Panels (array order is display order) are a union on `type`:
//   query: `query_panel.query_id` and `query_panel.query_annotation_id` are required; the query
//     must be a query of this environment (any dataset, or `__all__`), and the annotation an
//     annotation of that query in this environment (422 otherwise; another environment's query
//     or annotation is "not found" the same way). `query_style` graph|table|combo (default
//     graph). `visualization_settings` is stored and returned only when sent (not null): its
//     booleans default false; `charts` items get
//     `chart_index` 0, `chart_type` `default`, `log_scale`/`omit_missing_values` false. The
//     response adds `dataset`: the query's dataset slug, "" for an environment-wide query.
//   slo: `slo_panel.slo_id` is required and must name an SLO (store kind `slo`) of this
//     environment.
//   text: `text_panel.content` is required, a string of at most 10,000 characters (Markdown).
//   References are checked on every create and PUT; they are not re-checked when a query,
//   annotation or SLO is deleted later.
// - `position {x_coordinate, y_coordinate, height, width}`: integers ≥ 0; an omitted or null
//   field is 0 (height/width 0 = "size automatically", kept as sent).
// - `layout_generation` (write-only, never returned) `manual` (default) or `auto`:
//   auto  every panel is placed by the grid below, positions sent are ignored;
//   manual panels with a `position` keep it; panels without one are placed by the grid, starting
//         on the first row below every positioned panel (so with no positions at all, manual
//         is the same as auto, as the OpenAPI document says).
//   The grid: 12 columns, each panel 6 wide (two per row, left to right in panel order); height
//   6 for query and SLO panels, 4 for text panels; a row is as tall as its tallest panel.
//   Responses always carry every panel's `position`.
// - List lengths are checked before their items: at most 100 panels, 100 charts per query
//   panel, 5 preset filters, 10 tags (422 naming the list and its limit).
// - `tags`: the Tag rules of src/domain/tags.ts (≤ 10). `null` = none; a board without tags
//   answers without `tags`.
// - `preset_filters`: ≤ 5 of `{column, alias}` (both non-empty strings). On PUT an omitted (or
//   null) `preset_filters` keeps the board's, `[]` removes them all — the one exception to the
//   full replacement; every other omitted field takes its default (description "", no panels,
//   no tags).
// - `name` 1..255 characters, not blank; `description` at most 1024. Lengths count code points.
// - `links.board_url` is `<public base URL>/<team>/environments/<env>/board/<id>` (src/http/public-url.ts).
// - No query annotations are created: Honeycomb's `source: board` annotations are what its UI
//   makes when a query is saved to a board, and through the API every query panel already names
//   an existing annotation. (createQueryAnnotation(…, 'board') is there should that change.)
// - Deleting a board deletes its views (deleteBoardViews, src/domain/board-views.ts). The list is
//   in creation order.
import { notFound } from '../errors.js';
import { belongsTo } from './scope.js';
import type { ConfigStore, Environment, NewObject, StoredObject } from '../stores/config/types.js';
import { shortId } from './ids.js';
import { BOARD_KIND, QUERY_ANNOTATION_KIND, QUERY_KIND, SLO_KIND } from './kinds.js';
import { duplicateTagKeys, storedTags, tagsMember, type Tag } from './tags.js';
import { isObject, Problems } from '../validation.js';
import type { StoredQueryAnnotation } from './query-annotations.js';

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

// ---- bodies and answers ----------------------------------------------------------------------

/** A panel as validated, before references are resolved and positions laid out. */
type DraftPanel =
  | { type: 'query'; query_panel: Omit<Extract<Panel, { type: 'query' }>['query_panel'], 'dataset'>; position?: Position }
  | { type: 'slo'; slo_panel: { slo_id: string }; position?: Position }
  | { type: 'text'; text_panel: { content: string }; position?: Position };

interface DraftBoard {
  name: string;
  description: string;
  panels: DraftPanel[];
  layout: (typeof LAYOUT_GENERATIONS)[number];
  tags: Tag[];
  /** undefined: not sent (kept on PUT). */
  preset_filters?: PresetFilter[];
}

/** A body's panel as the route schema (src/api/v1/boards.ts) has checked it, nulls dropped. */
export interface PanelInput {
  type: (typeof PANEL_TYPES)[number];
  position?: Partial<Position>;
  query_panel?: {
    query_id: string;
    query_annotation_id: string;
    query_style?: (typeof QUERY_STYLES)[number];
    visualization_settings?: Partial<Record<(typeof VISUALIZATION_FLAGS)[number], boolean>> & { charts?: Partial<Chart>[] };
  };
  slo_panel?: { slo_id: string };
  text_panel?: { content: string };
}
/** A board body as the route schema has checked it; `null` members were dropped before (null is none). */
export interface BoardInput {
  name: string;
  description?: string;
  type: 'flexible';
  panels?: PanelInput[];
  layout_generation?: (typeof LAYOUT_GENERATIONS)[number];
  tags?: Tag[];
  preset_filters?: PresetFilter[];
}

/**
 * `null` is none (see the header): drops every object member that is `null`, at any depth (list
 * items are kept). A loop over a stack, not recursion: a hostile body nests 20,000 deep.
 */
export function dropNulls(v: unknown): void {
  const todo: unknown[] = [v];
  while (todo.length > 0) {
    const x = todo.pop();
    if (Array.isArray(x)) for (const item of x) todo.push(item);
    else if (isObject(x)) {
      for (const [k, m] of Object.entries(x)) {
        if (m === null) delete x[k];
        else todo.push(m);
      }
    }
  }
}

const position = (v: Partial<Position>): Position => ({
  x_coordinate: v.x_coordinate ?? 0,
  y_coordinate: v.y_coordinate ?? 0,
  height: v.height ?? 0,
  width: v.width ?? 0,
});

/** The visualization settings sent, defaults filled in. */
function visualization(v: NonNullable<PanelInput['query_panel']>['visualization_settings'] & object): VisualizationSettings {
  const out = Object.fromEntries(VISUALIZATION_FLAGS.map((f) => [f, v[f] ?? false])) as unknown as VisualizationSettings;
  if (v.charts) {
    out.charts = v.charts.map((c) => ({
      chart_index: c.chart_index ?? 0,
      chart_type: c.chart_type ?? 'default',
      log_scale: c.log_scale ?? false,
      omit_missing_values: c.omit_missing_values ?? false,
    }));
  }
  return out;
}

function panelDraft(v: PanelInput): DraftPanel {
  const pos = v.position ? { position: position(v.position) } : {};
  switch (v.type) {
    case 'query': {
      const q = v.query_panel!;
      return {
        type: 'query',
        query_panel: {
          query_id: q.query_id,
          query_annotation_id: q.query_annotation_id,
          query_style: q.query_style ?? 'graph',
          ...(q.visualization_settings ? { visualization_settings: visualization(q.visualization_settings) } : {}),
        },
        ...pos,
      };
    }
    case 'slo':
      return { type: 'slo', slo_panel: { slo_id: v.slo_panel!.slo_id }, ...pos };
    case 'text':
      return { type: 'text', text_panel: { content: v.text_panel!.content }, ...pos };
  }
}

/** The board of a checked body; what its schema cannot say (tag keys unique) goes to `p`. */
function boardDraft(p: Problems, input: BoardInput): DraftBoard {
  p.addAll(duplicateTagKeys(input.tags));
  return {
    name: input.name,
    description: input.description ?? '',
    panels: (input.panels ?? []).map(panelDraft),
    layout: input.layout_generation ?? 'manual',
    tags: storedTags(input.tags),
    preset_filters: input.preset_filters?.map(({ column, alias }) => ({ column, alias })),
  };
}

/**
 * Resolves each panel's references in the environment (422 problems for unknown ones) and
 * returns the query panels' dataset slugs, by panel index.
 */
async function checkReferences(p: Problems, store: ConfigStore, env: Environment, panels: DraftPanel[]): Promise<Map<number, string>> {
  const datasets = new Map<number, string>();
  let slugs: Map<string, string> | undefined;
  const slugOf = async (datasetId: string) => {
    slugs ??= new Map((await store.listDatasets(env.id)).map((d) => [d.id, d.slug]));
    return slugs.get(datasetId);
  };
  for (const [i, panel] of panels.entries()) {
    const at = `panels.${i}.${panel.type}_panel`;
    if (panel.type === 'query') {
      const { query_id, query_annotation_id } = panel.query_panel;
      const query = await store.getObject(QUERY_KIND, query_id);
      const slug = belongsTo(query, env) ? (query.datasetId === null ? '' : await slugOf(query.datasetId)) : undefined;
      if (slug === undefined) p.add(`${at}.query_id`, 'invalid', `no query ${JSON.stringify(query_id)} in this environment`);
      else datasets.set(i, slug);
      const annotation = await store.getObject<StoredQueryAnnotation>(QUERY_ANNOTATION_KIND, query_annotation_id);
      if (!belongsTo(annotation, env)) {
        p.add(`${at}.query_annotation_id`, 'invalid', `no query annotation ${JSON.stringify(query_annotation_id)} in this environment`);
      } else if (annotation.body.query_id !== query_id) {
        p.add(`${at}.query_annotation_id`, 'invalid', `must be an annotation of query ${JSON.stringify(query_id)}`);
      }
    } else if (panel.type === 'slo') {
      const slo = await store.getObject(SLO_KIND, panel.slo_panel.slo_id);
      if (!belongsTo(slo, env)) p.add(`${at}.slo_id`, 'invalid', `no SLO ${JSON.stringify(panel.slo_panel.slo_id)} in this environment`);
    }
  }
  return datasets;
}

/**
 * Positions for every panel (see the header): with `auto`, all from the grid; with `manual`,
 * sent positions are kept and the others placed by the grid below the lowest positioned panel.
 */
export function layOutPanels(panels: { type: (typeof PANEL_TYPES)[number]; position?: Position }[], layout: 'auto' | 'manual'): Position[] {
  const keep = (panel: { position?: Position }) => layout === 'manual' && panel.position !== undefined;
  let y = 0;
  for (const panel of panels) {
    if (keep(panel)) y = Math.max(y, panel.position!.y_coordinate + (panel.position!.height || GRID.height[panel.type]));
  }
  let x = 0;
  let rowHeight = 0;
  return panels.map((panel) => {
    if (keep(panel)) return panel.position!;
    const height = GRID.height[panel.type];
    if (x + GRID.width > GRID.columns) {
      y += rowHeight;
      x = 0;
      rowHeight = 0;
    }
    const position = { x_coordinate: x, y_coordinate: y, height, width: GRID.width };
    x += GRID.width;
    rowHeight = Math.max(rowHeight, height);
    return position;
  });
}

/**
 * Resolves a board body its route schema has checked into what is stored; throws one 422 with
 * every problem the schema cannot see (tag keys, the objects panels name).
 */
export async function validateBoard(
  store: ConfigStore,
  env: Environment,
  input: BoardInput,
  current?: StoredBoard,
): Promise<StoredBoard> {
  const p = new Problems();
  const draft = boardDraft(p, input);
  p.throwIfAny();
  const datasets = await checkReferences(p, store, env, draft.panels);
  p.throwIfAny();
  const positions = layOutPanels(draft.panels, draft.layout);
  const panels: Panel[] = draft.panels.map((d, i) => {
    const position = positions[i];
    switch (d.type) {
      case 'query': {
        const { query_id, query_annotation_id, query_style, visualization_settings } = d.query_panel;
        return {
          type: 'query',
          query_panel: {
            query_id,
            query_annotation_id,
            query_style,
            dataset: datasets.get(i) ?? '',
            ...(visualization_settings ? { visualization_settings } : {}),
          },
          position,
        };
      }
      case 'slo':
        return { type: 'slo', slo_panel: d.slo_panel, position };
      case 'text':
        return { type: 'text', text_panel: d.text_panel, position };
    }
  });
  return {
    name: draft.name,
    description: draft.description,
    type: 'flexible',
    panels,
    tags: draft.tags,
    preset_filters: draft.preset_filters ?? current?.preset_filters ?? [],
  };
}

/** A new board of the environment as the store takes it. */
export function newBoard(env: Environment, body: StoredBoard): NewObject<StoredBoard> {
  return { id: shortId(), kind: BOARD_KIND, teamId: env.teamId, environmentId: env.id, datasetId: null, scope: env.id, uniqueKey: null, body };
}

/** A board as the API answers it, in Honeycomb's key order; `boardUrl` is its `links.board_url`. */
export function boardAnswer(o: StoredObject<StoredBoard>, boardUrl: string) {
  const b = o.body;
  return {
    id: o.id,
    name: b.name,
    description: b.description,
    type: b.type,
    links: { board_url: boardUrl },
    panels: b.panels,
    ...tagsMember(b.tags),
    preset_filters: b.preset_filters,
  };
}
