// POST /1/derived_columns/<dataset>/validate (a Waggle extension, the web UI's live check): the
// same verdicts a create would give, with the field's type, storing nothing; `id` lets an edit
// keep its alias; permissions and tenancy as the calculated-field routes; hostile input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, sendJson, type TestApp } from './helpers.js';
import { ingest } from './query-helpers.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
  await ingest(t, 'shop', [{ data: { duration_ms: 12.5, status: 200, region: 'eu' } }]);
});
afterAll(() => t.close());

const check = (body: unknown, ds = 'shop', headers = t.config) => sendJson(t, 'POST', `/1/derived_columns/${ds}/validate`, body, headers);
const problem = (res: { statusCode: number; body: string }) => {
  expect(res.statusCode, res.body).toBe(422);
  return json(res).type_detail as { field: string; code: string; description: string }[];
};

describe('POST /1/derived_columns/{dataset}/validate', () => {
  it("answers the field's type and stores nothing", async () => {
    for (const [expression, type] of [
      ['MUL($duration_ms, 2)', 'float'],
      ['IF(GTE($status, 500), "error", "ok")', 'string'],
      ['GTE($status, 500)', 'boolean'],
      ['INT($duration_ms)', 'integer'],
    ]) {
      const res = await check({ alias: 'x', expression });
      expect(res.statusCode, `${expression}: ${res.body}`).toBe(200);
      expect(json(res)).toEqual({ type });
    }
    expect(json(await t.app.inject({ method: 'GET', url: '/1/derived_columns/shop', headers: t.config }))).toEqual([]);
  });

  it('answers the 422 a create would, naming the position', async () => {
    const body = { alias: 'bad', expression: 'MUL($duration_ms, ' };
    const fromCheck = problem(await check(body));
    const fromCreate = problem(await sendJson(t, 'POST', '/1/derived_columns/shop', body));
    expect(fromCheck).toEqual(fromCreate);
    expect(fromCheck[0].field).toBe('expression');
    expect(fromCheck[0].description).toMatch(/^at position \d+: /);
    expect(problem(await check({ alias: 'bad', expression: 'NOSUCH(1)' }))[0].description).toMatch(/at position 0: .*NOSUCH/);
    expect(problem(await check({ alias: 'bad', expression: '   ' }))[0].field).toBe('expression');
  });

  it('finds a cycle through stored fields; with `id` an edit is checked as a replacement', async () => {
    const a = json(await sendJson(t, 'POST', '/1/derived_columns/shop', { alias: 'a', expression: 'MUL($duration_ms, 2)' }));
    await sendJson(t, 'POST', '/1/derived_columns/shop', { alias: 'b', expression: 'MUL($a, 2)' });
    expect(problem(await check({ alias: 'a', expression: 'MUL($b, 2)', id: a.id }))[0].description).toMatch(/cycle|itself|refer/i);
    expect(json(await check({ alias: 'a', expression: 'MUL($duration_ms, 3)', id: a.id }))).toEqual({ type: 'float' });
  });

  it('refuses bad bodies with the documented 422 and unknown datasets with 404', async () => {
    for (const body of [{}, { alias: '', expression: '1' }, { alias: 'x' }, { alias: 'x', expression: 5 }, { alias: 'x', expression: 'x'.repeat(5000) }]) {
      expect((await check(body)).statusCode, JSON.stringify(body).slice(0, 80)).toBe(422);
    }
    expect((await check({ alias: 'x', expression: '1' }, 'nope')).statusCode).toBe(404);
    expect(json(await check({ alias: 'x', expression: '1' }, '__all__'))).toEqual({ type: 'integer' });
  });

  it("needs Manage Queries and Columns, and never reads another environment's dataset", async () => {
    const { team, environment } = await initialTenancy(t);
    const limited = await addKey(t, team, environment, { permissions: { create_datasets: true } });
    expect((await check({ alias: 'x', expression: '1' }, 'shop', limited.headers)).statusCode).toBe(403);
    const staging = await secondEnvironment(t);
    expect((await check({ alias: 'x', expression: '1' }, 'shop', staging.headers)).statusCode).toBe(404);
    expect((await check({ alias: 'x', expression: '1' }, 'shop', {})).statusCode).toBe(401);
  });
});
