// /1/boards/{boardId}/views: list, create (201), get, full-replacement PUT, DELETE (204) through
// HTTP; 50 views per board (the 51st is a 409), name 1..255 and unique per board (409), filters
// with the 16 operations and their value rules; views go with their board; permissions and
// tenancy; every response checked against Honeycomb's contract.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, json, sendJson, type TestApp } from './helpers.js';
import { expectContract } from './contract.js';
import { expectProblem, expectValidation, expectLegacy, type Res } from './problems.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';
import { allPermissions } from '../src/domain/keys.js';
import { FILTER_OPS } from '../src/query/spec.js';

const COLLECTION = '/1/boards/{boardId}/views';
const ITEM = '/1/boards/{boardId}/views/{viewId}';

describe('/1/boards/{boardId}/views', () => {
  let t: TestApp;
  let other: Awaited<ReturnType<typeof secondEnvironment>>;
  let boardId: string;

  const url = (board: string, view?: string) => `/1/boards/${encodeURIComponent(board)}/views${view === undefined ? '' : `/${encodeURIComponent(view)}`}`;
  const create = (body: unknown, board = boardId, headers = t.config) => sendJson(t, 'POST', url(board), body, headers);
  const update = (id: string, body: unknown, board = boardId, headers = t.config) => sendJson(t, 'PUT', url(board, id), body, headers);
  const get = (id: string, board = boardId, headers = t.config) => t.app.inject({ method: 'GET', url: url(board, id), headers });
  const del = (id: string, board = boardId, headers = t.config) => t.app.inject({ method: 'DELETE', url: url(board, id), headers });
  const list = (board = boardId, headers = t.config) => t.app.inject({ method: 'GET', url: url(board), headers });

  const eq = (value: unknown = 'error') => [{ column: 'status', operation: '=', value }];
  const view = (name: string, filters: unknown = eq()) => ({ name, filters });

  async function newBoard(headers = t.config) {
    const res = await t.app.inject({ method: 'POST', url: '/1/boards', headers, payload: { name: 'b', type: 'flexible' } });
    expect(res.statusCode, res.body).toBe(201);
    return json(res).id as string;
  }
  async function created(body: unknown, board = boardId) {
    const res = await create(body, board);
    expect(res.statusCode, res.body).toBe(201);
    expectContract(COLLECTION, 'POST', res);
    return json(res);
  }
  let seq = 0;
  const unique = () => `view ${++seq}`;

  beforeAll(async () => {
    t = await makeApp();
    other = await secondEnvironment(t, 'Views Elsewhere');
  });
  // A fresh board per test, so that no test runs into another's 50-view limit.
  beforeEach(async () => {
    boardId = await newBoard();
  });
  afterAll(() => t.close());

  describe('lifecycle', () => {
    it('creates (201), gets, lists, replaces (200) and deletes (204)', async () => {
      const b = await newBoard();
      const v = await created(view('Errors View'), b);
      expect(Object.keys(v).sort()).toEqual(['filters', 'id', 'name']);
      expect(v).toMatchObject({ name: 'Errors View', filters: eq() });
      expect(v.id).toMatch(/^[A-Za-z0-9]{11}$/);

      const got = await get(v.id, b);
      expect(got.statusCode).toBe(200);
      expectContract(ITEM, 'GET', got);
      expect(json(got)).toEqual(v);

      const listed = await list(b);
      expect(listed.statusCode).toBe(200);
      expectContract(COLLECTION, 'GET', listed);
      expect(json(listed)).toEqual([v]);

      const filters = [
        { column: 'duration_ms', operation: '>', value: 1000 },
        { column: 'service', operation: 'in', value: ['api', 'web'] },
      ];
      const put = await update(v.id, { id: v.id, name: 'Slow', filters }, b);
      expect(put.statusCode, put.body).toBe(200);
      expectContract(ITEM, 'PUT', put);
      expect(json(put)).toEqual({ id: v.id, name: 'Slow', filters });
      expect(json(await get(v.id, b))).toEqual(json(put));

      const gone = await del(v.id, b);
      expect(gone.statusCode).toBe(204);
      expect(gone.body).toBe('');
      expectLegacy(await get(v.id, b), 404, 'board view not found');
      expectContract(ITEM, 'GET', await get(v.id, b));
      expectLegacy(await del(v.id, b), 404, 'board view not found');
      expectLegacy(await update(v.id, view('x'), b), 404, 'board view not found');
      expect(json(await list(b))).toEqual([]);
    });

    it('lists in creation order, only the board’s own views', async () => {
      const a = await newBoard();
      const b = await newBoard();
      const names = ['one', 'two', 'three'];
      for (const n of names) await created(view(n), a);
      await created(view('elsewhere'), b);
      expect(json(await list(a)).map((v: { name: string }) => v.name)).toEqual(names);
      expect(json(await list(b)).map((v: { name: string }) => v.name)).toEqual(['elsewhere']);
    });

    it('a view is found only under its own board', async () => {
      const a = await newBoard();
      const b = await newBoard();
      const v = await created(view('mine'), a);
      expectLegacy(await get(v.id, b), 404, 'board view not found');
      expectLegacy(await update(v.id, view('x'), b), 404, 'board view not found');
      expectLegacy(await del(v.id, b), 404, 'board view not found');
      expect((await get(v.id, a)).statusCode).toBe(200);
    });

    it('PUT is a full replacement; a body id is ignored', async () => {
      const v = await created(view(unique(), [
        { column: 'a', operation: 'exists' },
        { column: 'b', operation: '!=', value: 'x' },
      ]));
      const res = await update(v.id, { id: 'other', name: v.name, filters: [{ column: 'c', operation: 'does-not-exist' }] });
      expect(res.statusCode, res.body).toBe(200);
      expect(json(res)).toEqual({ id: v.id, name: v.name, filters: [{ column: 'c', operation: 'does-not-exist' }] });
      expectValidation(await update(v.id, { name: v.name }), 'filters', 'missing');
      expectValidation(await update(v.id, { filters: eq() }), 'name', 'missing');
      expectValidation(await update(v.id, view('x', [])), 'filters');
      expect(json(await get(v.id)).filters).toEqual([{ column: 'c', operation: 'does-not-exist' }]);
    });

    it('unknown fields are ignored and not echoed', async () => {
      const v = await created({ name: unique(), filters: [{ column: 'a', operation: '=', value: 1, extra: true }], extra: 1 });
      expect(v.extra).toBeUndefined();
      expect(v.filters).toEqual([{ column: 'a', operation: '=', value: 1 }]);
    });

    it('an empty body is a 400, a body that is not an object a 422', async () => {
      expectProblem(await t.app.inject({ method: 'POST', url: url(boardId), headers: t.config }), 400, 'unparseable');
      expectValidation(await create([view('x')]), 'body', 'incorrect_type');
    });
  });

  describe('limits and conflicts', () => {
    it('50 views per board; the 51st is a 409; deleting one makes room again', async () => {
      const b = await newBoard();
      const ids: string[] = [];
      for (let i = 1; i <= 50; i++) {
        const res = await create(view(`v${i}`), b);
        expect(res.statusCode, `view ${i}: ${res.body}`).toBe(201);
        ids.push(json(res).id);
      }
      const listed = await list(b);
      expect(json(listed)).toHaveLength(50);
      expectContract(COLLECTION, 'GET', listed);
      const res = await create(view('v51'), b);
      const body = expectProblem(res, 409, 'conflict');
      expectContract(COLLECTION, 'POST', res);
      expect(body.error).toBe('a board can have at most 50 views');
      expect(json(await list(b))).toHaveLength(50);
      // Another board is not affected, and updates are not creations.
      expect((await create(view('v51'), await newBoard())).statusCode).toBe(201);
      expect((await update(ids[0], view('v1 renamed'), b)).statusCode).toBe(200);
      expect((await del(ids[1], b)).statusCode).toBe(204);
      expect((await create(view('v51'), b)).statusCode).toBe(201);
      expectProblem(await create(view('v52'), b), 409, 'conflict');
    });

    it('409 on a duplicate name within a board, on create and on PUT', async () => {
      const b = await newBoard();
      const a = await created(view('Errors'), b);
      const c = await created(view('Slow'), b);
      const dup = await create(view('Errors', [{ column: 'x', operation: 'exists' }]), b);
      expect(expectProblem(dup, 409, 'conflict').error).toBe('a view named "Errors" already exists on this board');
      expectContract(COLLECTION, 'POST', dup);
      const renamed = await update(c.id, view('Errors'), b);
      expectProblem(renamed, 409, 'conflict');
      expectContract(ITEM, 'PUT', renamed);
      expect(json(await get(c.id, b)).name).toBe('Slow');
      // Keeping one's own name is no conflict; names are case-sensitive; other boards are separate.
      expect((await update(a.id, view('Errors', [{ column: 'y', operation: 'exists' }]), b)).statusCode).toBe(200);
      expect((await create(view('errors'), b)).statusCode).toBe(201);
      expect((await create(view('Errors'), await newBoard())).statusCode).toBe(201);
      // A deleted view's name is free again.
      expect((await del(a.id, b)).statusCode).toBe(204);
      expect((await create(view('Errors'), b)).statusCode).toBe(201);
    });
  });

  describe('validation', () => {
    it('name: required, 1..255 characters, not blank', async () => {
      expect((await created(view('n'.repeat(255)))).name).toBe('n'.repeat(255));
      await created(view('🐝'.repeat(255)));
      expectValidation(await create(view('n'.repeat(256))), 'name');
      expectValidation(await create(view('🐝'.repeat(256))), 'name');
      expectValidation(await create(view('')), 'name', 'missing');
      expectValidation(await create(view('  ')), 'name', 'missing');
      expectValidation(await create({ filters: eq() }), 'name', 'missing');
      expectValidation(await create(view(5 as unknown as string)), 'name', 'incorrect_type');
      const v = await created(view(unique()));
      expectValidation(await update(v.id, view('n'.repeat(256))), 'name');
      expect((await update(v.id, view('m'.repeat(255)))).statusCode).toBe(200);
    });

    it('filters: required, at least one, objects', async () => {
      expectValidation(await create({ name: unique() }), 'filters', 'missing');
      expectValidation(await create(view(unique(), null)), 'filters', 'missing');
      expectValidation(await create(view(unique(), [])), 'filters');
      expectValidation(await create(view(unique(), { column: 'a', operation: 'exists' })), 'filters', 'incorrect_type');
      expectValidation(await create(view(unique(), ['a = 1'])), 'filters.0', 'incorrect_type');
    });

    it('filter column and operation are required; operation is one of the 16', async () => {
      expect(FILTER_OPS).toHaveLength(16);
      expectValidation(await create(view(unique(), [{ operation: 'exists' }])), 'filters.0.column', 'missing');
      expectValidation(await create(view(unique(), [{ column: '', operation: 'exists' }])), 'filters.0.column', 'missing');
      expectValidation(await create(view(unique(), [{ column: 1, operation: 'exists' }])), 'filters.0.column', 'incorrect_type');
      expectValidation(await create(view(unique(), [{ column: 'a' }])), 'filters.0.operation', 'missing');
      for (const operation of ['==', 'like', 'EXISTS', 'starts_with']) {
        expectValidation(await create(view(unique(), [{ column: 'a', operation, value: 'x' }])), 'filters.0.operation');
      }
      expectValidation(await create(view(unique(), [{ column: 'a', operation: 1 }])), 'filters.0.operation', 'incorrect_type');
    });

    it('every one of the 16 operations with a value of its kind', async () => {
      const value = (op: string) => (op === 'exists' || op === 'does-not-exist' ? undefined : op === 'in' || op === 'not-in' ? ['a', 2, true] : 'x');
      const filters = FILTER_OPS.map((operation) => ({ column: `c ${operation}`, operation, ...(value(operation) === undefined ? {} : { value: value(operation) }) }));
      const v = await created(view(unique(), filters));
      expect(v.filters).toEqual(filters);
      expect(json(await get(v.id)).filters).toEqual(filters);
    });

    it('exists / does-not-exist take no value (null is none)', async () => {
      for (const operation of ['exists', 'does-not-exist']) {
        const v = await created(view(unique(), [{ column: 'a', operation, value: null }]));
        expect(v.filters).toEqual([{ column: 'a', operation }]);
        for (const value of ['x', 0, false, [], ['x']]) {
          expectValidation(await create(view(unique(), [{ column: 'a', operation, value }])), 'filters.0.value');
        }
      }
    });

    it('in / not-in take a non-empty array of strings, numbers or booleans', async () => {
      for (const operation of ['in', 'not-in']) {
        expect((await created(view(unique(), [{ column: 'a', operation, value: ['api', 'web'] }]))).filters[0].value).toEqual(['api', 'web']);
        expect((await created(view(unique(), [{ column: 'a', operation, value: [500, 503.5, false] }]))).filters[0].value).toEqual([500, 503.5, false]);
        expectValidation(await create(view(unique(), [{ column: 'a', operation }])), 'filters.0.value', 'missing');
        expectValidation(await create(view(unique(), [{ column: 'a', operation, value: 'api' }])), 'filters.0.value', 'incorrect_type');
        expectValidation(await create(view(unique(), [{ column: 'a', operation, value: [] }])), 'filters.0.value');
        expectValidation(await create(view(unique(), [{ column: 'a', operation, value: ['a', { b: 1 }] }])), 'filters.0.value.1', 'incorrect_type');
        expectValidation(await create(view(unique(), [{ column: 'a', operation, value: [null] }])), 'filters.0.value.0', 'incorrect_type');
        expectValidation(await create(view(unique(), [{ column: 'a', operation, value: [['a']] }])), 'filters.0.value.0', 'incorrect_type');
      }
    });

    it('every other operation takes one string, number or boolean', async () => {
      const scalarOps = FILTER_OPS.filter((op) => !['exists', 'does-not-exist', 'in', 'not-in'].includes(op));
      expect(scalarOps).toHaveLength(12);
      for (const operation of scalarOps) {
        const b = await newBoard();
        for (const value of ['error', 1000, 0.5, true, '']) {
          expect((await created(view(unique(), [{ column: 'a', operation, value }]), b)).filters[0].value).toEqual(value);
        }
        expectValidation(await create(view(unique(), [{ column: 'a', operation }])), 'filters.0.value', 'missing');
        expectValidation(await create(view(unique(), [{ column: 'a', operation, value: null }])), 'filters.0.value', 'missing');
        expectValidation(await create(view(unique(), [{ column: 'a', operation, value: ['x'] }])), 'filters.0.value', 'incorrect_type');
        expectValidation(await create(view(unique(), [{ column: 'a', operation, value: { x: 1 } }])), 'filters.0.value', 'incorrect_type');
      }
    });

    it('every bad filter is named in one 422', async () => {
      const res = await create(view('', [
        { column: 'a', operation: 'exists' },
        { column: 'b', operation: 'in', value: 'x' },
        { column: 'c', operation: 'nope' },
      ]));
      const body = expectValidation(res, 'name', 'missing');
      expect(body.type_detail.map((d: { field: string }) => d.field)).toEqual(['name', 'filters.1.value', 'filters.2.operation']);
    });
  });

  describe('boards, permissions and tenancy', () => {
    it('an unknown board is a 404 on every route', async () => {
      expectLegacy(await list('nope'), 404, 'board not found');
      expectLegacy(await create(view('x'), 'nope'), 404, 'board not found');
      expectLegacy(await get('v', 'nope'), 404, 'board not found');
      expectLegacy(await update('v', view('x'), 'nope'), 404, 'board not found');
      expectLegacy(await del('v', 'nope'), 404, 'board not found');
      expectContract(COLLECTION, 'GET', await list('nope'));
    });

    it('deleting a board deletes its views', async () => {
      const b = await newBoard();
      const views = [await created(view('a'), b), await created(view('b'), b)];
      const keep = await created(view('a'));
      expect((await t.app.inject({ method: 'DELETE', url: `/1/boards/${b}`, headers: t.config })).statusCode).toBe(204);
      for (const v of views) {
        expectLegacy(await get(v.id, b), 404, 'board not found');
        expect(await t.store.getObject('board_view', v.id)).toBeUndefined();
      }
      expect((await get(keep.id)).statusCode).toBe(200);
    });

    it('another environment’s board and views are a 404, and its views stay its own', async () => {
      const theirs = await newBoard(other.headers);
      const theirView = await create(view('theirs'), theirs, other.headers);
      expect(theirView.statusCode).toBe(201);
      const vid = json(theirView).id;
      expectLegacy(await list(theirs), 404, 'board not found');
      expectLegacy(await create(view('x'), theirs), 404, 'board not found');
      expectLegacy(await get(vid, theirs), 404, 'board not found');
      expectLegacy(await update(vid, view('x'), theirs), 404, 'board not found');
      expectLegacy(await del(vid, theirs), 404, 'board not found');
      // Their view id under our board is not found either.
      expectLegacy(await get(vid, boardId), 404, 'board view not found');
      expect(json(await get(vid, theirs, other.headers)).name).toBe('theirs');
    });

    it('403 without Manage Public Boards on every route', async () => {
      const v = await created(view(unique()));
      const { team, environment } = await initialTenancy(t);
      const key = await addKey(t, team, environment, { permissions: { ...allPermissions('configuration'), manage_boards: false } });
      const h = key.headers;
      const check = (res: Res, path: string, method: string) => {
        expectLegacy(res, 403);
        expectContract(path, method, res);
      };
      check(await list(boardId, h), COLLECTION, 'GET');
      check(await create(view('x'), boardId, h), COLLECTION, 'POST');
      check(await get(v.id, boardId, h), ITEM, 'GET');
      check(await update(v.id, view('x'), boardId, h), ITEM, 'PUT');
      check(await del(v.id, boardId, h), ITEM, 'DELETE');
      expect((await get(v.id)).statusCode).toBe(200);
      expectLegacy(await list(boardId, {}), 401);
    });
  });
});
