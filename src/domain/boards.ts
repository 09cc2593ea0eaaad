// Boards and their views: the stored shapes, the board limits, and the lookups both the board and
// the board-view routes use (src/api/v1/boards.ts, src/api/v1/board-views.ts). Another
// environment's board is not found, like a missing one.
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
// - The body is validated by hand (not by the route's schema, which is there for the OpenAPI
//   document) so that every problem is one 422 naming fields like `panels.2.query_panel.query_id`.
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
// - Deleting a board deletes its views. The list is in creation order.
import { notFound } from '../errors.js';
import { belongsTo } from './scope.js';
import type { FilterOp } from '../query/spec.js';
import type { ConfigStore, Environment, StoredObject } from '../stores/config/types.js';
import { BOARD_KIND, BOARD_VIEW_KIND, QUERY_ANNOTATION_KIND, QUERY_KIND, SLO_KIND } from './kinds.js';
import { checkTags, tagsMember, type Tag } from './tags.js';
import { bodyObject, isObject, Problems, textLength, type Json } from '../validation.js';
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

function checkPosition(p: Problems, v: unknown, at: string): Position | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) return p.type(at, 'an object', v) || undefined;
  const out: Position = { x_coordinate: 0, y_coordinate: 0, height: 0, width: 0 };
  let ok = true;
  for (const k of Object.keys(out) as (keyof Position)[]) {
    const x = v[k];
    if (x === undefined || x === null) continue;
    if (p.integer(`${at}.${k}`, x, 0)) out[k] = x;
    else ok = false;
  }
  return ok ? out : undefined;
}

/** The visualization settings sent, defaults filled in; undefined when none were sent. */
function checkVisualization(p: Problems, v: unknown, at: string): VisualizationSettings | undefined {
  if (v === undefined || v === null) return undefined;
  const out = Object.fromEntries(VISUALIZATION_FLAGS.map((f) => [f, false])) as unknown as VisualizationSettings;
  if (!isObject(v)) return p.type(at, 'an object', v) || out;
  for (const f of VISUALIZATION_FLAGS) {
    const x = v[f];
    if (x !== undefined && x !== null && p.bool(`${at}.${f}`, x)) out[f] = x;
  }
  if (v.charts !== undefined && v.charts !== null) {
    if (p.array(`${at}.charts`, v.charts, MAX_CHARTS)) {
      out.charts = v.charts.map((c, i) => {
        const ca = `${at}.charts.${i}`;
        const chart: Chart = { chart_index: 0, chart_type: 'default', log_scale: false, omit_missing_values: false };
        if (!isObject(c)) return p.type(ca, 'an object', c) || chart;
        if (c.chart_index !== undefined && c.chart_index !== null && p.integer(`${ca}.chart_index`, c.chart_index, 0)) chart.chart_index = c.chart_index;
        if (c.chart_type !== undefined && c.chart_type !== null && p.enumOf(`${ca}.chart_type`, c.chart_type, CHART_TYPES)) chart.chart_type = c.chart_type;
        for (const f of ['log_scale', 'omit_missing_values'] as const) {
          const x = c[f];
          if (x !== undefined && x !== null && p.bool(`${ca}.${f}`, x)) chart[f] = x;
        }
        return chart;
      });
    }
  }
  return out;
}

function checkPanel(p: Problems, v: unknown, at: string): DraftPanel | undefined {
  if (!isObject(v)) return p.type(at, 'an object', v) || undefined;
  const position = checkPosition(p, v.position, `${at}.position`);
  if (v.type === undefined || v.type === null) return p.missing(`${at}.type`) || undefined;
  if (!p.enumOf(`${at}.type`, v.type, PANEL_TYPES)) return undefined;
  const sub = `${v.type}_panel`;
  const body = v[sub];
  const sa = `${at}.${sub}`;
  if (body === undefined || body === null) return p.add(sa, 'missing', `is required for a ${v.type} panel`) || undefined;
  if (!isObject(body)) return p.type(sa, 'an object', body) || undefined;
  const withPos = <T extends object>(panel: T) => (position ? { ...panel, position } : panel);
  switch (v.type) {
    case 'query': {
      const idOk = p.string(`${sa}.query_id`, body.query_id);
      const annOk = p.string(`${sa}.query_annotation_id`, body.query_annotation_id);
      let style: (typeof QUERY_STYLES)[number] = 'graph';
      if (body.query_style !== undefined && body.query_style !== null && p.enumOf(`${sa}.query_style`, body.query_style, QUERY_STYLES)) {
        style = body.query_style;
      }
      const visualization_settings = checkVisualization(p, body.visualization_settings, `${sa}.visualization_settings`);
      if (!idOk || !annOk) return undefined;
      return withPos({
        type: 'query' as const,
        query_panel: {
          query_id: body.query_id as string,
          query_annotation_id: body.query_annotation_id as string,
          query_style: style,
          ...(visualization_settings ? { visualization_settings } : {}),
        },
      });
    }
    case 'slo':
      if (!p.string(`${sa}.slo_id`, body.slo_id)) return undefined;
      return withPos({ type: 'slo' as const, slo_panel: { slo_id: body.slo_id as string } });
    case 'text': {
      const content = body.content;
      const f = `${sa}.content`;
      if (content === undefined || content === null) return p.missing(f) || undefined;
      if (typeof content !== 'string') return p.type(f, 'a string', content) || undefined;
      if (textLength(content) > MAX_TEXT_PANEL_LENGTH) {
        return p.add(f, 'invalid', `must be at most ${MAX_TEXT_PANEL_LENGTH} characters, not ${textLength(content)}`) || undefined;
      }
      return withPos({ type: 'text' as const, text_panel: { content } });
    }
  }
  return undefined;
}

function checkPresetFilters(p: Problems, v: unknown): PresetFilter[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!p.array('preset_filters', v, MAX_PRESET_FILTERS)) return undefined;
  const out: PresetFilter[] = [];
  v.forEach((f, i) => {
    const at = `preset_filters.${i}`;
    if (!isObject(f)) return p.type(at, 'an object', f);
    const c = p.string(`${at}.column`, f.column);
    const a = p.string(`${at}.alias`, f.alias);
    if (c && a) out.push({ column: f.column as string, alias: f.alias as string });
  });
  return out;
}

/** Checks the board body's own rules (no store lookups); problems go to `p`. */
function checkBoard(p: Problems, input: Json): DraftBoard {
  const name = input.name;
  p.string('name', name, { max: MAX_BOARD_NAME_LENGTH, notBlank: true });
  let description = '';
  if (input.description !== undefined && input.description !== null) {
    if (typeof input.description !== 'string') p.type('description', 'a string', input.description);
    else if (textLength(input.description) > MAX_BOARD_DESCRIPTION_LENGTH) {
      p.add('description', 'invalid', `must be at most ${MAX_BOARD_DESCRIPTION_LENGTH} characters, not ${textLength(input.description)}`);
    } else description = input.description;
  }
  if (input.type === undefined || input.type === null) p.missing('type');
  else if (typeof input.type !== 'string') p.type('type', 'a string', input.type);
  else if (input.type !== 'flexible') p.add('type', 'invalid', 'must be flexible (classic boards are not supported)');
  for (const classic of ['queries', 'slos'] as const) {
    const v = input[classic];
    if (v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0)) {
      p.add(classic, 'invalid', 'is a classic board field and is not supported; use panels');
    }
  }
  let layout: DraftBoard['layout'] = 'manual';
  if (input.layout_generation !== undefined && input.layout_generation !== null) {
    if (p.enumOf('layout_generation', input.layout_generation, LAYOUT_GENERATIONS)) layout = input.layout_generation;
  }
  const panels: DraftPanel[] = [];
  if (input.panels !== undefined && input.panels !== null) {
    if (p.array('panels', input.panels, MAX_PANELS)) {
      input.panels.forEach((v, i) => {
        const panel = checkPanel(p, v, `panels.${i}`);
        if (panel) panels.push(panel);
      });
    }
  }
  const t = checkTags(input.tags);
  p.addAll(t.problems);
  const preset_filters = checkPresetFilters(p, input.preset_filters);
  return { name: name as string, description, panels, layout, tags: t.tags, preset_filters };
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

/** Validates a board body and resolves it into what is stored; throws one 422 with every problem. */
export async function validateBoard(
  store: ConfigStore,
  env: Environment,
  input: unknown,
  current?: StoredBoard,
): Promise<StoredBoard> {
  const body = bodyObject(input);
  const p = new Problems();
  const draft = checkBoard(p, body);
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
