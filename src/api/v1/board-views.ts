// /1/boards/{boardId}/views: list, create (201), get, full-replacement PUT and DELETE (204).
// Registered by registerBoards (boards.ts); same permission (`manage_boards`). The board must be
// a board of the key's environment (404 `board not found` otherwise), and a view is found only
// under its own board (404 `board view not found`).
//
// Decisions (also in docs/boards.md):
// - `name`: required, 1..255 characters, not blank; unique within its board (exact,
//   case-sensitive match): a duplicate on create or PUT → 409 (problem+json, `conflict`).
// - `filters`: required array of 1 … 100 `{column, operation, value}`: `column` a
//   non-empty string; `operation` one of the 16 filter operations (FILTER_OPS, shared with
//   queries); `value`: none (absent or null) for `exists` / `does-not-exist`; a non-empty array
//   of at most 1,000 strings, numbers or booleans for `in` / `not-in` (the Terraform client turns
//   "500,503" into numbers); one string, number or boolean for every other operation. Unknown fields are
//   ignored and not echoed; a filter without a value is answered without `value`.
// - At most 50 views per board: creating the 51st → 409 `a board can have at most 50 views`.
//   Honeycomb documents the limit but not its status; of the statuses its create operation
//   documents (400, 404, 409, 422), 409 is the one that means "conflicts with the current state
//   of the target resource" — the request itself is valid. The count is checked before the
//   insert (not atomically): two concurrent creates on a board with 49 views may both succeed.
// - The body's schema (ViewRequest) validates it, the value each operation takes included
//   (`if`/`then`); a `null` name, filters or filter value is dropped first (nullIsNone), so a
//   required one is `missing`. What it cannot say is checked by the handlers: the board and view
//   of the path (404 before a body's 422), the name's uniqueness and the view count (409).
// - PUT is a full replacement of `name` and `filters`; a body `id` is read-only and ignored.
// - Views are stored as objects of kind `board_view` whose scope is the board id and whose
//   unique key is the name; deleting a board deletes them (deleteBoardViews, src/domain/boards.ts).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envOf } from '../../http/auth.js';
import { ApiError, notFound } from '../../errors.js';
import { shortId } from '../../domain/ids.js';
import { FILTER_OPS, type FilterOp } from '../../query/spec.js';
import { MAX_FILTER_VALUES, MAX_ITEMS } from '../../query/validate.js';
import { type ConfigStore, type Environment, type StoredObject } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { sendCreated, sendDeleted, findOwned, orConflict } from '../resource.js';
import { BoardParams } from './schemas.js';
import { getBoardObject, listBoardViews, type BoardViewFilter, type Scalar, type StoredBoardView } from '../../domain/boards.js';
import { NOT_BLANK, isObject } from '../../validation.js';
import { BOARD_VIEW_KIND } from '../../domain/kinds.js';

export const MAX_VIEWS_PER_BOARD = 50;
export const MAX_VIEW_NAME_LENGTH = 255;
/** As a query's filters (100), each `in` / `not-in` with at most 1,000 values. */
export const MAX_VIEW_FILTERS = MAX_ITEMS;
const NO_VALUE_OPS: readonly string[] = ['exists', 'does-not-exist'];
const LIST_OPS: readonly string[] = ['in', 'not-in'];

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
/** What `value` an operation takes (see the header), as JSON Schema `if`/`then`. */
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

/** A view body as its schema (ViewRequest) has checked it: name and filters, unknown fields dropped. */
function viewBody(input: Static<typeof ViewRequest>): StoredBoardView {
  const filters = input.filters.map(({ column, operation, value }) => ({ column, operation, ...(value === undefined ? {} : { value }) }));
  return { name: input.name, filters };
}

const viewResponse = (o: StoredObject<StoredBoardView>): Static<typeof BoardViewResponse> => ({ id: o.id, name: o.body.name, filters: o.body.filters });

const duplicateName = (name: string) => new ApiError(409, `a view named ${JSON.stringify(name)} already exists on this board`);

/** The board's views, in creation order. */
async function getView(store: ConfigStore, env: Environment, boardId: string, viewId: string): Promise<StoredObject<StoredBoardView>> {
  await getBoardObject(store, env, boardId);
  const obj = await findOwned<StoredBoardView>(store, BOARD_VIEW_KIND, viewId, 'board view', env);
  if (obj.scope !== boardId) throw notFound('board view');
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
      return (await listBoardViews(store, env, boardId)).map(viewResponse);
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
      const body = viewBody(request.body as Static<typeof ViewRequest>);
      const existing = await listBoardViews(store, env, board.id);
      if (existing.length >= MAX_VIEWS_PER_BOARD) throw new ApiError(409, `a board can have at most ${MAX_VIEWS_PER_BOARD} views`);
      if (existing.some((v) => v.body.name === body.name)) throw duplicateName(body.name);
      const view = await orConflict(
        store.createObject<StoredBoardView>({
          id: shortId(),
          kind: BOARD_VIEW_KIND,
          teamId: env.teamId,
          environmentId: env.id,
          datasetId: null,
          scope: board.id,
          uniqueKey: body.name,
          body,
        }),
        () => duplicateName(body.name),
      );
      return sendCreated(reply, viewResponse(view));
    },
  );

  app.get(
    '/1/boards/:boardId/views/:viewId',
    { schema: { tags, security, params: ViewParams, response: { 200: BoardViewResponse } }, config: { auth } },
    async (request) => viewResponse(await getView(store, envOf(request), request.params.boardId, request.params.viewId)),
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
      const body = viewBody(request.body as Static<typeof ViewRequest>);
      const updated = await orConflict(store.updateObject<StoredBoardView>(BOARD_VIEW_KIND, viewId, { body, uniqueKey: body.name }), () => duplicateName(body.name));
      if (!updated) throw notFound('board view');
      return viewResponse(updated);
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
