// Board views: a named set of filters on a board (/1/boards/{boardId}/views, src/api/v1/board-views.ts).
// The stored shape, the limits, the lookups, what a view body becomes and how a view is answered.
//
// Decisions (also in docs/boards.md):
// - `name`: required, 1..255 characters, not blank; unique within its board (exact,
//   case-sensitive match): a duplicate on create or PUT → 409 (problem+json, `conflict`).
// - `filters`: required array of 1 … 100 `{column, operation, value}`: `column` a
//   non-empty string; `operation` one of the 16 filter operations (FILTER_OPS, shared with
//   queries); `value`: none (absent or null) for `exists` / `does-not-exist` (NO_VALUE_OPS); a
//   non-empty array of at most 1,000 strings, numbers or booleans for `in` / `not-in` (LIST_OPS;
//   the Terraform client turns "500,503" into numbers); one string, number or boolean for every
//   other operation. Unknown fields are ignored and not echoed; a filter without a value is
//   answered without `value`.
// - At most 50 views per board: creating the 51st → 409 `a board can have at most 50 views`.
//   Honeycomb documents the limit but not its status; of the statuses its create operation
//   documents (400, 404, 409, 422), 409 is the one that means "conflicts with the current state
//   of the target resource" — the request itself is valid. The count is checked before the
//   insert (not atomically): two concurrent creates on a board with 49 views may both succeed.
// - PUT is a full replacement of `name` and `filters`; a body `id` is read-only and ignored.
// - A view is found only under its own board of the key's environment (404 `board view not
//   found` otherwise; the board's own 404 first: src/api/v1/board-views.ts).
// - Views are stored as objects of kind `board_view` whose scope is the board id and whose
//   unique key is the name; deleting a board deletes them (deleteBoardViews).
import { ApiError } from '../errors.js';
import { shortId } from './ids.js';
import type { FilterOp } from '../query/spec.js';
import { MAX_ITEMS } from '../query/validate.js';
import type { ConfigStore, Environment, NewObject, StoredObject } from '../stores/config/types.js';
import { BOARD_VIEW_KIND } from './kinds.js';

export const MAX_VIEWS_PER_BOARD = 50;
export const MAX_VIEW_NAME_LENGTH = 255;
/** As a query's filters (100), each `in` / `not-in` with at most 1,000 values. */
export const MAX_VIEW_FILTERS = MAX_ITEMS;
/** The operations whose filter takes no value. */
export const NO_VALUE_OPS: readonly string[] = ['exists', 'does-not-exist'];
/** The operations whose filter takes a list of values. */
export const LIST_OPS: readonly string[] = ['in', 'not-in'];

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
/** A view body as its route schema has checked it (unknown members may still be there). */
export interface BoardViewInput {
  name: string;
  filters: BoardViewFilter[];
}

/** The board's views, in creation order. */
export async function listBoardViews(store: ConfigStore, env: Environment, boardId: string): Promise<StoredObject<StoredBoardView>[]> {
  const all = await store.listObjects<StoredBoardView>(BOARD_VIEW_KIND, { environmentId: env.id });
  return all.filter((o) => o.scope === boardId);
}

/** Deletes every view of the board (called when the board is deleted). */
export async function deleteBoardViews(store: ConfigStore, env: Environment, boardId: string): Promise<void> {
  for (const view of await listBoardViews(store, env, boardId)) await store.deleteObject(BOARD_VIEW_KIND, view.id);
}

/** Whether the view (one the environment owns) is a view of board `boardId`: else it is not found under that board. */
export const isViewOf = (view: StoredObject<StoredBoardView>, boardId: string): boolean => view.scope === boardId;

/** What is stored for a checked body: name and filters, unknown members dropped. */
export function boardViewBody(input: BoardViewInput): StoredBoardView {
  const filters = input.filters.map(({ column, operation, value }) => ({ column, operation, ...(value === undefined ? {} : { value }) }));
  return { name: input.name, filters };
}

/** The 409 of a second view of one name on a board. */
export const duplicateViewName = (name: string) => new ApiError(409, `a view named ${JSON.stringify(name)} already exists on this board`);

/**
 * The new view `body` on the environment's board `boardId` (one the caller has found) as the store
 * takes it; 409 when the board has MAX_VIEWS_PER_BOARD views already or one of that name (a
 * concurrent create of the same name is the store's unique key: duplicateViewName).
 */
export async function newBoardView(store: ConfigStore, env: Environment, boardId: string, body: StoredBoardView): Promise<NewObject<StoredBoardView>> {
  const existing = await listBoardViews(store, env, boardId);
  if (existing.length >= MAX_VIEWS_PER_BOARD) throw new ApiError(409, `a board can have at most ${MAX_VIEWS_PER_BOARD} views`);
  if (existing.some((v) => v.body.name === body.name)) throw duplicateViewName(body.name);
  return {
    id: shortId(),
    kind: BOARD_VIEW_KIND,
    teamId: env.teamId,
    environmentId: env.id,
    datasetId: null,
    scope: boardId,
    uniqueKey: body.name,
    body,
  };
}

/** A view as the API answers it. */
export const boardViewAnswer = (o: StoredObject<StoredBoardView>) => ({ id: o.id, name: o.body.name, filters: o.body.filters });
