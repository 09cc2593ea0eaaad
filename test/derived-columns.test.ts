// /1/derived_columns: CRUD, `?alias=`, 409s, 404s, `__all__`, validation at and past every
// boundary, expression errors (with positions) and cycles, hostile input, permissions and
// tenancy isolation. Success responses are checked against Honeycomb's OpenAPI contract.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectContract, expectSchema } from './contract.js';
import { expectProblem, expectLegacy, expectDatasetNotFound, type Res } from './problems.js';
import { addKey, initialTenancy, secondEnvironment, secondTeam } from './tenancy-fixtures.js';
import { listCalculatedFields } from '../src/api/v1/derived-columns.js';
import { tableName } from '../src/stores/events/types.js';

const COLLECTION = '/1/derived_columns/{datasetSlug}';
const ITEM = '/1/derived_columns/{datasetSlug}/{derivedColumnId}';
const FIELDS = ['alias', 'created_at', 'description', 'expression', 'id', 'updated_at'];

// Not the shared one of ./problems.js: `code` is checked only when given (some refusals here are
// incorrect_type, some invalid); the shared expectValidation always checks a code.
function expectValidation(res: Res, field: string, code?: string) {
  const body = expectProblem(res, 422, 'validation-failed');
  expectSchema('ValidationError', body);
  const entry = body.type_detail.find((d: { field: string }) => d.field === field);
  expect(entry, `type_detail for ${field} in ${res.body}`).toBeDefined();
  if (code) expect(entry.code).toBe(code);
  // The problem alone, as Honeycomb's; `detail` names the field.
  expect(entry.description.startsWith(`${field}:`), entry.description).toBe(false);
  expect(body.detail).toContain(`${field}: ${entry.description}`);
  return entry;
}

describe('/1/derived_columns', () => {
  let t: TestApp;
  let n = 0;
  const fresh = (prefix = 'dc') => `${prefix}-${++n}`;

  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(() => t.close());

  const makeDataset = async (name: string, headers = t.config) => {
    const res = await t.app.inject({ method: 'POST', url: '/1/datasets', headers, payload: { name } });
    expect(res.statusCode, res.body).toBe(201);
    return json(res);
  };
  const list = (ds: string, headers = t.config, query = '') => t.app.inject({ method: 'GET', url: `/1/derived_columns/${ds}${query}`, headers });
  const byAlias = (ds: string, alias: string, headers = t.config) => list(ds, headers, `?alias=${encodeURIComponent(alias)}`);
  const create = (ds: string, payload: unknown, headers = t.config) =>
    t.app.inject({ method: 'POST', url: `/1/derived_columns/${ds}`, headers, payload: payload as object });
  const get = (ds: string, id: string, headers = t.config) => t.app.inject({ method: 'GET', url: `/1/derived_columns/${ds}/${id}`, headers });
  const put = (ds: string, id: string, payload: unknown, headers = t.config) =>
    t.app.inject({ method: 'PUT', url: `/1/derived_columns/${ds}/${id}`, headers, payload: payload as object });
  const del = (ds: string, id: string, headers = t.config) => t.app.inject({ method: 'DELETE', url: `/1/derived_columns/${ds}/${id}`, headers });
  const created = async (ds: string, payload: Record<string, unknown>) => {
    const res = await create(ds, payload);
    expect(res.statusCode, res.body).toBe(201);
    expectContract(COLLECTION, 'post', res);
    return json(res);
  };

  describe('CRUD', () => {
    it('creates (201), gets, lists, looks up by alias, replaces and deletes (204), each matching the contract', async () => {
      const ds = fresh();
      await makeDataset(ds);
      const res = await create(ds, { alias: 'is_slow', expression: 'GT($duration_ms, 500)', description: 'slow requests' });
      expect(res.statusCode, res.body).toBe(201);
      expect(String(res.headers['content-type'])).toMatch(/^application\/json\b/);
      expectContract(COLLECTION, 'post', res);
      const field = json(res);
      expect(Object.keys(field).sort()).toEqual(FIELDS);
      expect(field).toMatchObject({ alias: 'is_slow', expression: 'GT($duration_ms, 500)', description: 'slow requests' });
      expect(field.id).toMatch(/^[A-Za-z0-9]{11}$/);
      expect(field.created_at).toBe(field.updated_at);
      expect(Number.isNaN(Date.parse(field.created_at))).toBe(false);

      const one = await get(ds, field.id);
      expect(one.statusCode).toBe(200);
      expectContract(ITEM, 'get', one);
      expect(json(one)).toEqual(field);

      const all = await list(ds);
      expect(all.statusCode).toBe(200);
      expectContract(COLLECTION, 'get', all);
      expect(json(all)).toEqual([field]);

      const found = await byAlias(ds, 'is_slow');
      expect(found.statusCode).toBe(200);
      expectContract(COLLECTION, 'get', found);
      expect(json(found)).toEqual(field);

      t.clock.advance(5);
      const replaced = await put(ds, field.id, { alias: 'is_very_slow', expression: 'GT($duration_ms, 5000)' });
      expect(replaced.statusCode, replaced.body).toBe(200);
      expectContract(ITEM, 'put', replaced);
      const after = json(replaced);
      // Full replacement: the omitted description is "".
      expect(after).toMatchObject({ id: field.id, alias: 'is_very_slow', expression: 'GT($duration_ms, 5000)', description: '', created_at: field.created_at });
      expect(after.updated_at).not.toBe(field.updated_at);
      expect(json(await get(ds, field.id))).toEqual(after);
      expect((await byAlias(ds, 'is_slow')).statusCode).toBe(404);

      const gone = await del(ds, field.id);
      expect(gone.statusCode).toBe(204);
      expect(gone.body).toBe('');
      expectLegacy(await get(ds, field.id), 404);
      expect(json(await list(ds))).toEqual([]);
      expectLegacy(await del(ds, field.id), 404);
    });

    it('description defaults to ""; lists are in creation order; read-only fields in a body are ignored', async () => {
      const ds = fresh();
      await makeDataset(ds);
      const a = await created(ds, { alias: 'a', expression: '1', id: 'mine', created_at: '2000-01-01T00:00:00Z' });
      expect(a.description).toBe('');
      expect(a.id).not.toBe('mine');
      expect(a.created_at).not.toBe('2000-01-01T00:00:00Z');
      const b = await created(ds, { alias: 'b', expression: '2' });
      const c = await created(ds, { alias: 'c', expression: '3' });
      expect(json(await list(ds)).map((f: { id: string }) => f.id)).toEqual([a.id, b.id, c.id]);
    });

    it('?alias= with no match → 404; aliases are case-sensitive', async () => {
      const ds = fresh();
      await makeDataset(ds);
      await created(ds, { alias: 'Mixed', expression: '1' });
      expectLegacy(await byAlias(ds, 'mixed'), 404);
      expectLegacy(await byAlias(ds, 'nope'), 404);
      expect((await byAlias(ds, 'Mixed')).statusCode).toBe(200);
      // A different case is a different alias.
      await created(ds, { alias: 'mixed', expression: '2' });
    });

    it('the dataset path accepts the name, case-insensitively; an unknown dataset → 404', async () => {
      const name = `DC Name ${++n}`;
      await makeDataset(name);
      const f = await created(encodeURIComponent(name), { alias: 'x', expression: '1' });
      expect(json(await get(encodeURIComponent(name.toUpperCase()), f.id)).id).toBe(f.id);
      expectDatasetNotFound(await list('no-such-dataset'));
      expectDatasetNotFound(await create('no-such-dataset', { alias: 'x', expression: '1' }));
    });
  });

  describe('conflicts', () => {
    it('a duplicate alias in the same dataset → 409 (create and PUT); the same alias elsewhere is fine', async () => {
      const ds = fresh();
      const other = fresh();
      await makeDataset(ds);
      await makeDataset(other);
      const first = await created(ds, { alias: 'dup', expression: '1' });
      const body = expectProblem(await create(ds, { alias: 'dup', expression: '2' }), 409, 'conflict');
      expect(body.error).toBe('A resource by that name already exists.');
      await created(other, { alias: 'dup', expression: '2' });
      await created(ALL(), { alias: `dup-${n}`, expression: '2' });
      const second = await created(ds, { alias: 'second', expression: '2' });
      expectProblem(await put(ds, second.id, { alias: 'dup', expression: '2' }), 409, 'conflict');
      // Keeping its own alias is not a conflict.
      expect((await put(ds, first.id, { alias: 'dup', expression: '3' })).statusCode).toBe(200);
      expect(json(await list(ds))).toHaveLength(2);
    });

    it('a duplicate alias in __all__ → 409', async () => {
      const alias = `env-dup-${++n}`;
      await created(ALL(), { alias, expression: '1' });
      expectProblem(await create(ALL(), { alias, expression: '1' }), 409, 'conflict');
    });

    it('another calculated field reading it does not block DELETE (204); it reads null afterwards', async () => {
      const ds = fresh();
      await makeDataset(ds);
      const f = await created(ds, { alias: 'used', expression: '1' });
      await created(ds, { alias: 'user', expression: '$used + 1' });
      expect((await del(ds, f.id)).statusCode).toBe(204);
    });

    const postJson = (url: string, payload: unknown) => t.app.inject({ method: 'POST', url, headers: { ...t.config, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });

    it('a trigger whose query reads the field (filter, calculation, or an inline field) → 409 until the trigger is gone', async () => {
      const ds = fresh('inuse');
      await makeDataset(ds);
      const f = await created(ds, { alias: 'slow', expression: 'GT($duration_ms, 100)' });
      const g = await created(ds, { alias: 'ms', expression: '$duration_ms' });
      const h = await created(ds, { alias: 'unused', expression: '2' });
      const trigger = await postJson(`/1/triggers/${ds}`, {
        name: 'slow ones',
        query: {
          calculations: [{ op: 'MAX', column: 'doubled' }],
          filters: [{ column: 'slow', op: '=', value: true }],
          calculated_fields: [{ name: 'doubled', expression: 'MUL($ms, 2)' }],
          time_range: 900,
        },
        threshold: { op: '>', value: 10 },
      });
      expect(trigger.statusCode, trigger.body).toBe(201);
      for (const used of [f, g]) {
        const res = expectProblem(await del(ds, used.id), 409, 'conflict');
        expect(res.detail).toMatch(/trigger "slow ones"/);
      }
      expect((await del(ds, h.id)).statusCode).toBe(204);
      const tid = json(trigger).id;
      expect((await t.app.inject({ method: 'DELETE', url: `/1/triggers/${ds}/${tid}`, headers: t.config })).statusCode).toBe(204);
      expect((await del(ds, f.id)).statusCode).toBe(204);
      expect((await del(ds, g.id)).statusCode).toBe(204);
    });

    it('a board whose query panel breaks down by the field → 409 until the board is gone', async () => {
      const ds = fresh('inuse');
      await makeDataset(ds);
      const f = await created(ALL(), { alias: `region${++n}`, expression: 'CONCAT("r-", $host)' });
      const q = await postJson(`/1/queries/${ds}`, { calculations: [{ op: 'COUNT' }], breakdowns: [f.alias], time_range: 3600 });
      expect(q.statusCode, q.body).toBe(200);
      const a = await postJson(`/1/query_annotations/${ds}`, { name: 'by region', query_id: json(q).id });
      expect(a.statusCode, a.body).toBe(201);
      const b = await postJson('/1/boards', {
        name: 'Regions',
        type: 'flexible',
        panels: [{ type: 'query', query_panel: { query_id: json(q).id, query_annotation_id: json(a).id } }],
      });
      expect(b.statusCode, b.body).toBe(201);
      const res = expectProblem(await del(ALL(), f.id), 409, 'conflict');
      expect(res.detail).toMatch(/board "Regions"/);
      expect((await t.app.inject({ method: 'DELETE', url: `/1/boards/${json(b).id}`, headers: t.config })).statusCode).toBe(204);
      expect((await del(ALL(), f.id)).statusCode).toBe(204);
    });

    it('a dataset field shadowing an environment-wide one takes the use: the environment-wide one can go', async () => {
      const ds = fresh('inuse');
      await makeDataset(ds);
      const alias = `shadowed${++n}`;
      const envWide = await created(ALL(), { alias, expression: '1' });
      const own = await created(ds, { alias, expression: '2' });
      const trigger = await postJson(`/1/triggers/${ds}`, {
        name: 'shadow',
        query: { calculations: [{ op: 'SUM', column: alias }], time_range: 900 },
        threshold: { op: '>', value: 10 },
      });
      expect(trigger.statusCode, trigger.body).toBe(201);
      expectProblem(await del(ds, own.id), 409, 'conflict');
      expect((await del(ALL(), envWide.id)).statusCode).toBe(204);
    });
  });

  const ALL = () => '__all__';

  describe('__all__ (environment-wide)', () => {
    it('lists, gets, replaces and deletes environment-wide fields, separately from dataset fields', async () => {
      const ds = fresh();
      await makeDataset(ds);
      const envField = await created(ALL(), { alias: `env-${++n}`, expression: 'CONCAT("env", 1)' });
      const dsField = await created(ds, { alias: 'local', expression: '1' });
      const all = json(await list(ALL()));
      expect(all.map((f: { id: string }) => f.id)).toContain(envField.id);
      expect(all.map((f: { id: string }) => f.id)).not.toContain(dsField.id);
      expect(json(await list(ds)).map((f: { id: string }) => f.id)).toEqual([dsField.id]);
      const res = await get(ALL(), envField.id);
      expect(res.statusCode).toBe(200);
      expectContract(ITEM, 'get', res);
      // Each id only through its own scope.
      expectLegacy(await get(ds, envField.id), 404);
      expectLegacy(await get(ALL(), dsField.id), 404);
      expectLegacy(await put(ds, envField.id, { alias: 'x', expression: '1' }), 404);
      expectLegacy(await del(ALL(), dsField.id), 404);
      const replaced = await put(ALL(), envField.id, { alias: envField.alias, expression: '2', description: 'two' });
      expect(replaced.statusCode).toBe(200);
      expectContract(ITEM, 'put', replaced);
      expect((await del(ALL(), envField.id)).statusCode).toBe(204);
      expectLegacy(await get(ALL(), envField.id), 404);
    });

    it('listCalculatedFields gives environment-wide fields first, then the dataset’s (the planner’s view)', async () => {
      const ds = fresh();
      const dataset = await makeDataset(ds);
      void dataset;
      const alias = `shadowed-${++n}`;
      await created(ALL(), { alias, expression: '"env"' });
      await created(ds, { alias, expression: '"dataset"' });
      const { environment } = await initialTenancy(t);
      const record = (await t.store.getDataset(environment.id, ds))!;
      const fields = await listCalculatedFields(t.store, environment, record.id);
      const mine = fields.filter((f) => f.name === alias);
      expect(mine.map((f) => f.expression)).toEqual(['"env"', '"dataset"']);
      const envOnly = await listCalculatedFields(t.store, environment, null);
      expect(envOnly.filter((f) => f.name === alias).map((f) => f.expression)).toEqual(['"env"']);
    });
  });

  describe('validation at and past every boundary', () => {
    let ds: string;
    beforeAll(async () => {
      ds = fresh('valid');
      await makeDataset(ds);
    });

    it('alias: 1 and 255 characters are fine; "", 256 characters, blank, missing or not a string → 422', async () => {
      await created(ds, { alias: 'a', expression: '1' });
      await created(ds, { alias: 'b'.repeat(255), expression: '1' });
      expectValidation(await create(ds, { alias: '', expression: '1' }), 'alias');
      expectValidation(await create(ds, { alias: 'c'.repeat(256), expression: '1' }), 'alias');
      expectValidation(await create(ds, { alias: '   ', expression: '1' }), 'alias');
      expectValidation(await create(ds, { expression: '1' }), 'alias', 'missing');
      expectValidation(await create(ds, { alias: 5, expression: '1' }), 'alias');
    });

    it('expression: 1 and 4095 characters are fine; "", 4096, blank, missing or not a string → 422', async () => {
      await created(ds, { alias: 'one-char', expression: '1' });
      const long = `"${'x'.repeat(4093)}"`;
      expect(long).toHaveLength(4095);
      await created(ds, { alias: 'long', expression: long });
      expectValidation(await create(ds, { alias: 'e1', expression: '' }), 'expression');
      expectValidation(await create(ds, { alias: 'e2', expression: `"${'x'.repeat(4094)}"` }), 'expression');
      expectValidation(await create(ds, { alias: 'e3', expression: '  \n ' }), 'expression');
      expectValidation(await create(ds, { alias: 'e4' }), 'expression', 'missing');
      expectValidation(await create(ds, { alias: 'e5', expression: ['1'] }), 'expression');
    });

    it('description: 255 characters are fine; 256 or not a string → 422', async () => {
      await created(ds, { alias: 'd1', expression: '1', description: 'd'.repeat(255) });
      expectValidation(await create(ds, { alias: 'd2', expression: '1', description: 'd'.repeat(256) }), 'description');
      expectValidation(await create(ds, { alias: 'd3', expression: '1', description: null }), 'description');
    });

    it('PUT validates the same way and changes nothing when it fails', async () => {
      const f = await created(ds, { alias: 'put-me', expression: '1', description: 'keep' });
      expectValidation(await put(ds, f.id, { alias: '', expression: '1' }), 'alias');
      expectValidation(await put(ds, f.id, { alias: 'put-me' }), 'expression', 'missing');
      expectValidation(await put(ds, f.id, { alias: 'put-me', expression: 'SUM(' }), 'expression');
      expectValidation(await put(ds, f.id, { alias: 'put-me', expression: '1', description: 'x'.repeat(256) }), 'description');
      expect(json(await get(ds, f.id))).toEqual(f);
    });

    it('a body that is not JSON → 400; no body → 4xx without creating anything', async () => {
      const before = json(await list(ds)).length;
      const res = await t.app.inject({ method: 'POST', url: `/1/derived_columns/${ds}`, headers: { ...t.config, 'content-type': 'application/json' }, payload: '{"alias":' });
      expectProblem(res, 400, 'unparseable');
      const none = await t.app.inject({ method: 'POST', url: `/1/derived_columns/${ds}`, headers: t.config });
      expect(none.statusCode).toBeGreaterThanOrEqual(400);
      expect(none.statusCode).toBeLessThan(500);
      expect(json(await list(ds))).toHaveLength(before);
    });
  });

  describe('expressions are parsed and type-checked on create and update', () => {
    let ds: string;
    beforeAll(async () => {
      ds = fresh('expr');
      await makeDataset(ds);
      const res = await t.app.inject({ method: 'POST', url: `/1/batch/${ds}`, headers: t.ingest, payload: [{ data: { duration_ms: 12, name: 'x' } }] });
      expect(res.statusCode).toBe(200);
    });

    const refused: [string, RegExp][] = [
      ['SUM(1, 2', /^at position 8: unbalanced "\(": SUM\( at position 0 is never closed$/],
      ['((1)', /^at position 4: expected "\)" to close/],
      ['1)', /^at position 1: unbalanced "\)"/],
      ['FOO($a)', /^at position 0: unknown function FOO$/],
      ['SUB(1)', /at position 0: SUB takes 2 arguments, got 1/],
      ['"\\q"', /at position 1: unknown escape sequence \\q/],
      ['"\\u12"', /at position 1: invalid escape/],
      ['REG_MATCH($name, `(a)\\1`)', /at position 17: invalid regular expression \(RE2 syntax\).*backreferences/],
      ['REG_MATCH($name, `(?=x)`)', /lookahead/],
      ['REG_VALUE($name, $name)', /must be a string literal/],
      ['SWITCH($name, 1, "one")', /SWITCH case .* must be a string literal/],
      ['BUCKET($duration_ms, 0)', /greater than 0/],
      ['$a+$b', /at position 3: unexpected column \$b/],
      ['$"a\\"; DROP TABLE x; --', /unterminated column name/],
      ['"\'; DROP TABLE x; --', /unterminated string/],
      ['1; DROP TABLE x', /at position 1: unexpected character ";"/],
      ['('.repeat(3000), /nested too deeply/],
      ['NOT('.repeat(1000), /nested too deeply/],
      [Array(1000).fill('1').join('-'), /nested too deeply/],
      ['!'.repeat(4000) + 'true', /nested too deeply/],
    ];
    for (const [expression, message] of refused) {
      it(`refuses ${JSON.stringify(expression.slice(0, 40))}`, async () => {
        const entry = expectValidation(await create(ds, { alias: `bad-${++n}`, expression }), 'expression', 'invalid');
        expect(entry.description).toMatch(message);
      });
    }

    const accepted = [
      '$"a\\"; DROP TABLE x; --"',
      'CONCAT("\'); DROP TABLE x; --", $name)',
      '$`weird name with spaces`',
      'IF(GT($duration_ms, 10), "slow", "fast",)',
      'sum($duration_ms, "2.5", true)',
      '$not_yet_a_column * 2',
      'REG_VALUE($name, `^(\\w+)`)',
      '$duration_ms / 0',
      'FORMAT_TIME("%Y-%m-%d", EVENT_TIMESTAMP())',
      'BUCKET($duration_ms, 10, 0, 100)',
      Array(1000).fill('1').join('+'),
    ];
    for (const expression of accepted) {
      it(`accepts ${JSON.stringify(expression.slice(0, 40))}`, async () => {
        const f = await created(ds, { alias: `ok-${++n}`, expression });
        expect(f.expression).toBe(expression);
      });
    }

    it('the event table survives every injection attempt', async () => {
      const { environment } = await initialTenancy(t);
      const record = (await t.store.getDataset(environment.id, ds))!;
      const rows = await t.events.query(`SELECT count(*) AS n FROM ${tableName(record.id)}`);
      expect(Number(rows[0].n)).toBe(1);
    });
  });

  describe('cycles', () => {
    it('a field referencing itself, directly or through others, → 422; breaking the cycle by PUT works', async () => {
      const ds = fresh('cycle');
      await makeDataset(ds);
      const self = expectValidation(await create(ds, { alias: 'me', expression: '$me + 1' }), 'expression');
      expect(self.description).toMatch(/at position 0: calculated fields reference each other in a cycle: \$me → \$me/);
      const a = await created(ds, { alias: 'a', expression: '$b + 1' });
      const b = await created(ds, { alias: 'b', expression: '$c * 2' });
      const c = expectValidation(await create(ds, { alias: 'c', expression: 'IF(true, $a)' }), 'expression');
      expect(c.description).toMatch(/at position 9: calculated fields reference each other in a cycle: \$c → \$a → \$b → \$c/);
      await created(ds, { alias: 'c', expression: '3' });
      // PUT that would close the loop.
      const loop = expectValidation(await put(ds, b.id, { alias: 'b', expression: '$a' }), 'expression');
      expect(loop.description).toMatch(/cycle: \$b → \$a → \$b/);
      // Renaming a field can close a loop too: a reads $b; renaming c to b would make b read... nothing cyclic.
      expect((await put(ds, a.id, { alias: 'a', expression: '$b + $c' })).statusCode).toBe(200);
    });

    it('cycles through environment-wide and dataset fields are found from either side', async () => {
      const ds = fresh('cycle');
      await makeDataset(ds);
      const x = `x${++n}`;
      const y = `y${n}`;
      await created(ALL(), { alias: x, expression: `$${y}` });
      const res = expectValidation(await create(ds, { alias: y, expression: `$${x} + 1` }), 'expression');
      expect(res.description).toMatch(new RegExp(`cycle: \\$${y} → \\$${x} → \\$${y}`));
      // The other way round: the dataset field first, then the environment-wide one.
      const ds2 = fresh('cycle');
      await makeDataset(ds2);
      const p = `p${++n}`;
      const q = `q${n}`;
      await created(ds2, { alias: q, expression: `$${p}` });
      const env = expectValidation(await create(ALL(), { alias: p, expression: `$${q}` }), 'expression');
      expect(env.description).toMatch(/cycle/);
    });
  });

  describe('permissions and tenancy', () => {
    it('every route needs manage_columns: 403 without it, and nothing changes', async () => {
      const ds = fresh('perm');
      await makeDataset(ds);
      const f = await created(ds, { alias: 'kept', expression: '1' });
      const { team, environment } = await initialTenancy(t);
      const key = await addKey(t, team, environment, { permissions: { create_datasets: true, send_events: true, run_queries: true } });
      for (const res of [
        await list(ds, key.headers),
        await byAlias(ds, 'kept', key.headers),
        await create(ds, { alias: 'new', expression: '1' }, key.headers),
        await get(ds, f.id, key.headers),
        await put(ds, f.id, { alias: 'changed', expression: '2' }, key.headers),
        await del(ds, f.id, key.headers),
        await list(ALL(), key.headers),
      ]) {
        expectLegacy(res, 403);
      }
      expect(json(await list(ds))).toEqual([f]);
      const allowed = await addKey(t, team, environment, { permissions: { manage_columns: true } });
      expect((await list(ds, allowed.headers)).statusCode).toBe(200);
      expect((await create(ds, { alias: 'by-allowed', expression: '1' }, allowed.headers)).statusCode).toBe(201);
    });

    it('no key or an ingest key → 401', async () => {
      const ds = fresh('perm');
      await makeDataset(ds);
      expectLegacy(await t.app.inject({ method: 'GET', url: `/1/derived_columns/${ds}` }), 401);
      expectLegacy(await list(ds, t.ingest), 401);
      expectLegacy(await create(ds, { alias: 'x', expression: '1' }, t.ingest), 401);
    });

    it('another environment’s or team’s key sees nothing and changes nothing (404)', async () => {
      const ds = fresh('tenant');
      await makeDataset(ds);
      const f = await created(ds, { alias: 'private', expression: '1' });
      const envField = await created(ALL(), { alias: `private-env-${++n}`, expression: '1' });
      const staging = await secondEnvironment(t, `Staging ${n}`);
      const other = await secondTeam(t, `Other Team ${n}`);
      for (const headers of [staging.headers, other.headers]) {
        expectDatasetNotFound(await list(ds, headers));
        expectDatasetNotFound(await get(ds, f.id, headers));
        expectDatasetNotFound(await put(ds, f.id, { alias: 'stolen', expression: '2' }, headers));
        expectDatasetNotFound(await del(ds, f.id, headers));
        expectLegacy(await get(ALL(), envField.id, headers), 404);
        expectLegacy(await put(ALL(), envField.id, { alias: 'stolen', expression: '2' }, headers), 404);
        expectLegacy(await del(ALL(), envField.id, headers), 404);
        const theirAll = json(await list(ALL(), headers));
        expect(theirAll.map((x: { id: string }) => x.id)).not.toContain(envField.id);
      }
      // The same dataset name in the other environment is a different dataset with its own fields.
      await makeDataset(ds, staging.headers);
      expectLegacy(await get(ds, f.id, staging.headers), 404);
      expect(json(await list(ds, staging.headers))).toEqual([]);
      const theirs = await create(ds, { alias: 'private', expression: '2' }, staging.headers);
      expect(theirs.statusCode).toBe(201);
      expect(json(await get(ds, f.id))).toEqual(f);
      expect(json(await list(ds))).toEqual([f]);
    });

    it('a field id of another dataset of the same environment → 404', async () => {
      const a = fresh();
      const b = fresh();
      await makeDataset(a);
      await makeDataset(b);
      const f = await created(a, { alias: 'mine', expression: '1' });
      expectLegacy(await get(b, f.id), 404);
      expectLegacy(await put(b, f.id, { alias: 'mine', expression: '1' }), 404);
      expectLegacy(await del(b, f.id), 404);
      expect(json(await get(a, f.id))).toEqual(f);
    });
  });
});
