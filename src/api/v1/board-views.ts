// /1/boards/{boardId}/views: list, create (201), get, full-replacement PUT and DELETE (204).
// Registered by registerBoards (boards.ts); same permission (`manage_boards`). The board must be
// a board of the key's environment (404 `board not found` otherwise), and a view is found only
// under its own board (404 `board view not found`). What a view may say, its limits and its
// answer (the decisions, also in docs/boards.md): src/domain/board-views.ts.
//
// - The body's schema (ViewRequest) validates it, the value each operation takes included
//   (`if`/`then`); a `null` name, filters or filter value is dropped first (nullIsNone), so a
//   required one is `missing`. What it cannot say is checked by the handlers: the board and view
//   of the path (404 before a body's 422), the name's uniqueness and the view count (409).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envOf } from '../../http/auth.js';
import { notFound } from '../../errors.js';
import { FILTER_OPS, type FilterOp } from '../../query/spec.js';
import { MAX_FILTER_VALUES } from '../../query/validate.js';
import { type ConfigStore, type Environment, type StoredObject } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { sendCreated, sendDeleted, findOwned, orConflict } from '../resource.js';
import { BoardParams } from './schemas.js';
import { getBoardObject } from '../../domain/boards.js';
import {
  LIST_OPS,
  MAX_VIEW_FILTERS,
  MAX_VIEW_NAME_LENGTH,
  MAX_VIEWS_PER_BOARD,
  NO_VALUE_OPS,
  boardViewAnswer,
  boardViewBody,
  duplicateViewName,
  isViewOf,
  listBoardViews,
  newBoardView,
  type StoredBoardView,
} from '../../domain/board-views.js';
import { NOT_BLANK, isObject } from '../../validation.js';
import { BOARD_VIEW_KIND } from '../../domain/kinds.js';

const tags = ['Boards'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_boards' } as const;

const ScalarSchema = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);
const FilterSchema = Type.Object({
  column: Type.String({ minLength: 1 }),
  operation: Type.Unsafe<FilterOp>({ type: 'string', enum: [...FILTER_OPS] }),
  value: Type.Optional(
    Type.Union([ScalarSchema, Type.Array(ScalarSchema, { minItems: 1, maxItems: MAX_FILTER_VALUES })], {
      description: 'None for exists/does-not-exist; an array for in/not-in; one value otherwise.',
    }),
  ),
});
const SCALAR_TYPES = ['string', 'number', 'boolean'];
/** What `value` an operation takes (src/domain/board-views.ts), as JSON Schema `if`/`then`. */
const valueOf = (ops: readonly string[], then: Record<string, unknown>) => ({
  if: { properties: { operation: { enum: [...ops] } }, required: ['operation'] },
  then,
});
/**
 * A request's filter: one JSON type list for `value` (not a union, so a wrong value gets one
 * problem), and what each operation takes by `if`/`then`. A `null` value was dropped before
 * (nullIsNone): none.
 */
const FilterRequest = Type.Unsafe<Static<typeof FilterSchema>>({
  type: 'object',
  required: ['column', 'operation'],
  properties: {
    column: { type: 'string', minLength: 1 },
    operation: { type: 'string', enum: [...FILTER_OPS] },
    value: {
      type: [...SCALAR_TYPES, 'array'],
      items: { type: SCALAR_TYPES },
      minItems: 1,
      maxItems: MAX_FILTER_VALUES,
      description: 'None (absent or null) for exists/does-not-exist; a non-empty array for in/not-in; one value otherwise.',
    },
  },
  allOf: [
    valueOf(NO_VALUE_OPS, { properties: { value: false } }),
    valueOf(LIST_OPS, { required: ['value'], properties: { value: { type: 'array' } } }),
    valueOf(FILTER_OPS.filter((op) => !NO_VALUE_OPS.includes(op) && !LIST_OPS.includes(op)), {
      required: ['value'],
      properties: { value: { type: SCALAR_TYPES } },
    }),
  ],
});
const ViewRequest = Type.Object({
  id: Type.Optional(Type.Unsafe<string>({ readOnly: true, description: 'Read-only: ignored in a request.' })),
  name: Type.String({ maxLength: MAX_VIEW_NAME_LENGTH, pattern: NOT_BLANK, description: 'Not blank.' }),
  filters: Type.Array(FilterRequest, { minItems: 1, maxItems: MAX_VIEW_FILTERS }),
});
const BoardViewResponse = Type.Object({ id: Type.String(), name: Type.String(), filters: Type.Array(FilterSchema) });
const ViewParams = Type.Object({ boardId: Type.String(), viewId: Type.String() });
const conflictResponse = {
  description: 'A view of that name exists on the board, or the board has 50 views already',
  content: {
    'application/problem+json': {
      schema: Type.Object({
        error: Type.String(),
        status: Type.Number(),
        type: Type.String(),
        title: Type.String(),
        detail: Type.Optional(Type.String()),
        instance: Type.Optional(Type.String()),
      }),
    },
  },
};

/**
 * "null is none": a `null` name, filters or filter value is dropped before the schema sees the
 * body, so that a required one is `missing` (as an absent one) and an optional one none.
 */
function nullIsNone(request: FastifyRequest): void {
  const body = request.body;
  if (!isObject(body)) return;
  for (const k of ['name', 'filters'] as const) if (body[k] === null) delete body[k];
  if (Array.isArray(body.filters)) for (const f of body.filters) if (isObject(f) && f.value === null) delete f.value;
}

/** The view `viewId` of the environment's board `boardId`: 404 for the board first, then for the view. */
async function getView(store: ConfigStore, env: Environment, boardId: string, viewId: string): Promise<StoredObject<StoredBoardView>> {
  await getBoardObject(store, env, boardId);
  const obj = await findOwned<StoredBoardView>(store, BOARD_VIEW_KIND, viewId, 'board view', env);
  if (!isViewOf(obj, boardId)) throw notFound('board view');
  return obj;
}

export function registerBoardViews(app: App, { store }: ApiContext): void {
  // A path's 404 (the board, the view) comes before a body's 422, as the handler's lookups would make it.
  const boardFirst = async (request: FastifyRequest) => {
    const { boardId, viewId } = request.params as { boardId: string; viewId?: string };
    const env = envOf(request);
    if (viewId === undefined) await getBoardObject(store, env, boardId);
    else await getView(store, env, boardId, viewId);
    nullIsNone(request);
  };

  app.get(
    '/1/boards/:boardId/views',
    {
      schema: { tags, security, params: BoardParams, description: "The board's views (at most 50), in creation order.", response: { 200: Type.Array(BoardViewResponse, { maxItems: MAX_VIEWS_PER_BOARD }) } },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const { boardId } = request.params;
      await getBoardObject(store, env, boardId);
      return (await listBoardViews(store, env, boardId)).map(boardViewAnswer);
    },
  );

  app.post(
    '/1/boards/:boardId/views',
    {
      schema: {
        tags,
        security,
        params: BoardParams,
        body: ViewRequest,
        description: 'Creates a view. 409 when the board already has a view of that name, or 50 views.',
        response: { 201: BoardViewResponse, 409: conflictResponse },
      },
      preValidation: boardFirst,
      config: { auth },
    },
    async (request, reply) => {
      const env = envOf(request);
      const { boardId } = request.params as Static<typeof BoardParams>;
      const board = await getBoardObject(store, env, boardId);
      const body = boardViewBody(request.body as Static<typeof ViewRequest>);
      const view = await orConflict(store.createObject(await newBoardView(store, env, board.id, body)), () => duplicateViewName(body.name));
      return sendCreated(reply, boardViewAnswer(view));
    },
  );

  app.get(
    '/1/boards/:boardId/views/:viewId',
    { schema: { tags, security, params: ViewParams, response: { 200: BoardViewResponse } }, config: { auth } },
    async (request) => boardViewAnswer(await getView(store, envOf(request), request.params.boardId, request.params.viewId)),
  );

  app.put(
    '/1/boards/:boardId/views/:viewId',
    {
      schema: {
        tags,
        security,
        params: ViewParams,
        body: ViewRequest,
        description: 'Full replacement of name and filters. 409 when another view of the board has that name.',
        response: { 200: BoardViewResponse, 409: conflictResponse },
      },
      preValidation: boardFirst,
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const { boardId, viewId } = request.params as Static<typeof ViewParams>;
      await getView(store, env, boardId, viewId);
      const body = boardViewBody(request.body as Static<typeof ViewRequest>);
      const updated = await orConflict(store.updateObject<StoredBoardView>(BOARD_VIEW_KIND, viewId, { body, uniqueKey: body.name }), () => duplicateViewName(body.name));
      if (!updated) throw notFound('board view');
      return boardViewAnswer(updated);
    },
  );

  app.delete(
    '/1/boards/:boardId/views/:viewId',
    { schema: { tags, security, params: ViewParams, response: { 204: Type.Null({ description: 'Deleted' }) } }, config: { auth } },
    async (request, reply) => {
      const { boardId, viewId } = request.params;
      await getView(store, envOf(request), boardId, viewId);
      if (!(await store.deleteObject(BOARD_VIEW_KIND, viewId))) throw notFound('board view');
      return sendDeleted(reply);
    },
  );
}
