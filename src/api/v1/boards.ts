// /1/boards: list (this environment's boards), create (201), get, full-replacement PUT and
// DELETE (204); board views live in board-views.ts, what both use in src/domain/boards.ts. Every route
// needs the configuration-key permission Manage Public Boards (`manage_boards`); another
// environment's board is a 404 like a missing one. What a body may say (the decisions) and how a
// board is answered: src/domain/boards.ts.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envOf } from '../../http/auth.js';
import { notFound } from '../../errors.js';
import type { Environment, StoredObject } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { sendCreated, sendDeleted } from '../resource.js';
import { BoardParams, TagsInput, tagsOutput } from './schemas.js';
import { CHART_TYPES, LAYOUT_GENERATIONS, MAX_BOARD_DESCRIPTION_LENGTH, MAX_BOARD_NAME_LENGTH, MAX_CHARTS, MAX_PANELS, MAX_PRESET_FILTERS, MAX_TEXT_PANEL_LENGTH, QUERY_STYLES, VISUALIZATION_FLAGS, boardAnswer, getBoardObject, newBoard, PANEL_TYPES, validateBoard, dropNulls, type BoardInput, type PanelInput, type StoredBoard } from '../../domain/boards.js';
import { deleteBoardViews } from '../../domain/board-views.js';
import { BOARD_KIND } from '../../domain/kinds.js';
import { NOT_BLANK } from '../../validation.js';

const tags = ['Boards'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_boards' } as const;

// ---- schemas ---------------------------------------------------------------------------------

const enumOf = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values] });
const PositionSchema = Type.Object({
  x_coordinate: Type.Integer({ minimum: 0 }),
  y_coordinate: Type.Integer({ minimum: 0 }),
  height: Type.Integer({ minimum: 0, description: '0: sized automatically' }),
  width: Type.Integer({ minimum: 0, description: '0: sized automatically' }),
});
const VisualizationSchema = Type.Object({
  ...Object.fromEntries(VISUALIZATION_FLAGS.map((f) => [f, Type.Optional(Type.Boolean({ default: false }))])),
  charts: Type.Optional(
    Type.Array(
      Type.Object({
        chart_index: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
        chart_type: Type.Optional(Type.Unsafe({ type: 'string', enum: [...CHART_TYPES], default: 'default' })),
        log_scale: Type.Optional(Type.Boolean({ default: false })),
        omit_missing_values: Type.Optional(Type.Boolean({ default: false })),
      }),
      { maxItems: MAX_CHARTS },
    ),
  ),
} as Record<string, TSchema>);
const withPosition = (props: Record<string, TSchema>) => Type.Object({ ...props, position: Type.Optional(PositionSchema) });
export const BoardPanelSchema = Type.Union([
  withPosition({
    type: Type.Literal('query'),
    query_panel: Type.Object({
      query_id: Type.String(),
      query_annotation_id: Type.String({ description: 'An annotation of query_id.' }),
      query_style: Type.Optional(Type.Unsafe({ type: 'string', enum: [...QUERY_STYLES], default: 'graph' })),
      dataset: Type.Optional(Type.String({ readOnly: true, description: "The query's dataset slug; empty for environment-wide queries." })),
      visualization_settings: Type.Optional(VisualizationSchema),
    }),
  }),
  withPosition({ type: Type.Literal('slo'), slo_panel: Type.Object({ slo_id: Type.String() }) }),
  withPosition({ type: Type.Literal('text'), text_panel: Type.Object({ content: Type.String({ maxLength: MAX_TEXT_PANEL_LENGTH }) }) }),
]);
const PresetFilterSchema = Type.Object({ column: Type.String({ minLength: 1 }), alias: Type.String({ minLength: 1 }) });

// ---- the request's schema: it validates a body (ajv), after its `null` members are dropped
// (dropNulls: null is none, an omitted member's default); by hand after it, only what it cannot
// say: unique tag keys and the objects the panels name (src/domain/boards.ts).

const PositionInput = Type.Partial(PositionSchema, { description: 'An omitted (or null) field is 0.' });
/** What a panel of each `type` carries, as JSON Schema `if`/`then`: a panel's problems name its fields, never a union's branches. */
const panelOf = (type: string, member: string, schema: TSchema) => ({
  if: { properties: { type: { const: type } }, required: ['type'] },
  then: { required: [member], properties: { [member]: schema } },
});
const PanelRequest = Type.Unsafe<PanelInput>({
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', enum: [...PANEL_TYPES] },
    position: PositionInput,
  },
  allOf: [
    panelOf('query', 'query_panel', Type.Object({
      query_id: Type.String({ minLength: 1 }),
      query_annotation_id: Type.String({ minLength: 1, description: 'An annotation of query_id.' }),
      query_style: Type.Optional(Type.Unsafe({ type: 'string', enum: [...QUERY_STYLES], default: 'graph' })),
      visualization_settings: Type.Optional(VisualizationSchema),
    })),
    panelOf('slo', 'slo_panel', Type.Object({ slo_id: Type.String({ minLength: 1 }) })),
    panelOf('text', 'text_panel', Type.Object({ content: Type.String({ maxLength: MAX_TEXT_PANEL_LENGTH }) })),
  ],
  description: 'A `query`, `slo` or `text` panel, with its `query_panel`, `slo_panel` or `text_panel`.',
});
/** A classic board's list: the Terraform client sends `null` with every flexible board; absent, null or empty. */
const classic = { const: [], description: 'A classic board field: absent, null or [] (use panels).' };
export const BoardSchema = Type.Object(
  {
    // Read-only members a client may send back as it got them (Terraform sends `links: {}`): ignored, whatever they hold.
    id: Type.Optional(Type.Unsafe<string>({ readOnly: true, description: 'Read-only: ignored in a request.' })),
    name: Type.String({ maxLength: MAX_BOARD_NAME_LENGTH, pattern: NOT_BLANK, description: 'Not blank.' }),
    description: Type.Optional(Type.String({ maxLength: MAX_BOARD_DESCRIPTION_LENGTH })),
    type: Type.Literal('flexible'),
    links: Type.Optional(Type.Unsafe<{ board_url: string }>({ readOnly: true, description: 'Read-only: ignored in a request.' })),
    panels: Type.Optional(Type.Array(PanelRequest, { maxItems: MAX_PANELS })),
    layout_generation: Type.Optional(Type.Unsafe({ type: 'string', enum: [...LAYOUT_GENERATIONS], default: 'manual', writeOnly: true })),
    tags: TagsInput,
    preset_filters: Type.Optional(
      Type.Array(PresetFilterSchema, { maxItems: MAX_PRESET_FILTERS, description: 'On PUT: omitted (or null) keeps the current ones, [] removes them.' }),
    ),
    queries: Type.Optional(Type.Unsafe<[]>(classic)),
    slos: Type.Optional(Type.Unsafe<[]>(classic)),
  },
  { description: 'A `null` member is the same as an omitted one.' },
);
const BoardResponse = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  type: Type.Literal('flexible'),
  links: Type.Object({ board_url: Type.String() }),
  panels: Type.Array(BoardPanelSchema),
  tags: tagsOutput('board'),
  preset_filters: Type.Array(PresetFilterSchema),
});

// ---- routes -----------------------------------------------------------------------------------

/** The board as answered; its `links.board_url` is under the public base URL (src/http/public-url.ts). */
function boardResponse(request: FastifyRequest, env: Environment, o: StoredObject<StoredBoard>): Static<typeof BoardResponse> {
  const team = request.auth?.team.slug ?? '';
  const url = `${request.publicBase}/${encodeURIComponent(team)}/environments/${encodeURIComponent(env.slug)}/board/${encodeURIComponent(o.id)}`;
  return boardAnswer(o, url) as Static<typeof BoardResponse>;
}

export function registerBoards(app: App, ctx: ApiContext): void {
  const { store } = ctx;
  // A path's 404 (the board) comes before a body's 422, as the handler's lookup would make it; then null is none.
  const boardFirst = async (request: FastifyRequest) => {
    const { boardId } = request.params as { boardId?: string };
    if (boardId !== undefined) await getBoardObject(store, envOf(request), boardId);
    dropNulls(request.body);
  };

  app.get(
    '/1/boards',
    {
      schema: { tags, security, description: "Lists the environment's boards, in creation order.", response: { 200: Type.Array(BoardResponse) } },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const boards = await store.listObjects<StoredBoard>(BOARD_KIND, { environmentId: env.id });
      return boards.map((o) => boardResponse(request, env, o));
    },
  );

  app.post(
    '/1/boards',
    {
      schema: {
        tags,
        security,
        body: BoardSchema,
        description: 'Creates a flexible board. Query panels must reference a query and one of its annotations in this environment.',
        response: { 201: BoardResponse },
      },
      preValidation: boardFirst,
      config: { auth },
    },
    async (request, reply) => {
      const env = envOf(request);
      const body = await validateBoard(store, env, request.body as BoardInput);
      const created = await store.createObject(newBoard(env, body));
      return sendCreated(reply, boardResponse(request, env, created));
    },
  );

  app.get(
    '/1/boards/:boardId',
    { schema: { tags, security, params: BoardParams, response: { 200: BoardResponse } }, config: { auth } },
    async (request) => {
      const env = envOf(request);
      return boardResponse(request, env, await getBoardObject(store, env, request.params.boardId));
    },
  );

  app.put(
    '/1/boards/:boardId',
    {
      schema: {
        tags,
        security,
        params: BoardParams,
        body: BoardSchema,
        description: 'Full replacement, except that an omitted `preset_filters` keeps the current ones (`[]` removes them).',
        response: { 200: BoardResponse },
      },
      preValidation: boardFirst,
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const { boardId } = request.params as Static<typeof BoardParams>;
      const current = await getBoardObject(store, env, boardId);
      const body = await validateBoard(store, env, request.body as BoardInput, current.body);
      const updated = await store.updateObject<StoredBoard>(BOARD_KIND, boardId, { body });
      if (!updated) throw notFound('board');
      return boardResponse(request, env, updated);
    },
  );

  app.delete(
    '/1/boards/:boardId',
    {
      schema: { tags, security, params: BoardParams, description: 'Deletes the board and its views.', response: { 204: Type.Null({ description: 'Deleted' }) } },
      config: { auth },
    },
    async (request, reply) => {
      const env = envOf(request);
      const { boardId } = request.params;
      await getBoardObject(store, env, boardId);
      await deleteBoardViews(store, env, boardId);
      if (!(await store.deleteObject(BOARD_KIND, boardId))) throw notFound('board');
      return sendDeleted(reply);
    },
  );

}
