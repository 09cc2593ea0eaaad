// /1/dataset_definitions/{dataset}: created with the dataset, PATCH changes only the keys sent,
// null or an empty name reverts a key to its default.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, json, deleteDataset, type TestApp } from './helpers.js';
import { expectContract, expectSchema } from './contract.js';
import { addKey, initialTenancy, secondEnvironment, secondTeam } from './tenancy-fixtures.js';
import { DEFINITION_DEFAULTS } from '../src/query/definitions.js';
import { PROBLEM_BASE, expectDatasetNotFound } from './problems.js';

const PATH = '/1/dataset_definitions/{datasetSlug}';
const KEYS = [
  'span_id', 'trace_id', 'parent_id', 'name', 'service_name', 'duration_ms', 'span_kind', 'annotation_type',
  'link_span_id', 'link_trace_id', 'error', 'status', 'route', 'user', 'log_severity', 'log_message',
];
const defaults = () => Object.fromEntries(KEYS.map((k) => [k, { name: DEFINITION_DEFAULTS[k], column_type: 'column' }]));

type Res = { statusCode: number; headers: Record<string, unknown>; body: string };

function expect422(res: Res, field?: string) {
  expect(res.statusCode).toBe(422);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json\b/);
  const body = json(res);
  expect(typeof body.error).toBe('string');
  expect(body.type).toBe(`${PROBLEM_BASE}/validation-failed`);
  expectSchema('ValidationError', body);
  if (field) {
    const fields = body.type_detail.map((d: { field: string }) => d.field);
    expect(fields.some((f: string) => f === field || f.startsWith(`${field}.`)), `${field} in ${res.body}`).toBe(true);
  }
  return body;
}

describe('/1/dataset_definitions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(() => t.close());

  beforeEach(async () => {
    const { environment } = await initialTenancy(t);
    for (const ds of await t.store.listDatasets(environment.id)) await t.store.deleteDataset(environment.id, ds.slug);
    const res = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'Traces' } });
    expect(res.statusCode).toBe(201);
  });

  const get = (slug = 'traces', headers = t.config) =>
    t.app.inject({ method: 'GET', url: `/1/dataset_definitions/${slug}`, headers });
  const patch = (payload: unknown, slug = 'traces', headers = t.config) =>
    t.app.inject({ method: 'PATCH', url: `/1/dataset_definitions/${slug}`, headers, payload: payload as object });

  it('GET returns all 16 keys with their defaults', async () => {
    const res = await get();
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json\b/);
    expectContract(PATH, 'get', res);
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual([...KEYS].sort());
    expect(body).toEqual(defaults());
    expect(body.span_id).toEqual({ name: 'trace.span_id', column_type: 'column' });
    expect(body.duration_ms).toEqual({ name: 'duration_ms', column_type: 'column' });
  });

  it('GET finds the dataset by name in any casing or URL-encoded', async () => {
    await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'My Spans' } });
    for (const seg of ['my-spans', 'My%20Spans', 'MY%20SPANS']) {
      const res = await get(seg);
      expect(res.statusCode, seg).toBe(200);
      expect(json(res)).toEqual(defaults());
    }
  });

  it('PATCH changes only the keys sent, and the change persists', async () => {
    const res = await patch({ span_id: { name: 'my_span_id' }, duration_ms: { name: 'elapsed' } });
    expect(res.statusCode).toBe(200);
    expectContract(PATH, 'patch', res);
    const expected = { ...defaults(), span_id: { name: 'my_span_id', column_type: 'column' }, duration_ms: { name: 'elapsed', column_type: 'column' } };
    expect(json(res)).toEqual(expected);
    expect(json(await get())).toEqual(expected);

    // A later PATCH of another key keeps the earlier change.
    const second = await patch({ log_message: { name: 'msg' } });
    expect(json(second)).toEqual({ ...expected, log_message: { name: 'msg', column_type: 'column' } });
  });

  it('PATCH with an empty object changes nothing', async () => {
    await patch({ route: { name: 'path' } });
    const res = await patch({});
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual({ ...defaults(), route: { name: 'path', column_type: 'column' } });
  });

  it('null or an empty name reverts a key to its default, leaving the others', async () => {
    await patch({ span_id: { name: 'a' }, trace_id: { name: 'b' }, user: { name: 'c' } });
    const res = await patch({ span_id: null, trace_id: { name: '' } });
    expect(res.statusCode).toBe(200);
    expectContract(PATH, 'patch', res);
    expect(json(res)).toEqual({ ...defaults(), user: { name: 'c', column_type: 'column' } });
  });

  it('reverting every key (as Terraform does on destroy) restores all defaults', async () => {
    await patch(Object.fromEntries(KEYS.map((k) => [k, { name: `custom_${k}` }])));
    const res = await patch(Object.fromEntries(KEYS.map((k) => [k, { name: '' }])));
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual(defaults());
  });

  it('ignores column_type sent on PATCH (read-only)', async () => {
    const res = await patch({ span_id: { name: 'sid', column_type: 'derived_column' } });
    expect(res.statusCode).toBe(200);
    expect(json(res).span_id).toEqual({ name: 'sid', column_type: 'column' });
  });

  it("reports column_type derived_column for a key naming a calculated field the dataset sees", async () => {
    const mk = (ds: string, alias: string) =>
      t.app.inject({ method: 'POST', url: `/1/derived_columns/${ds}`, headers: t.config, payload: { alias, expression: 'INT(1)' } });
    expect((await mk('traces', 'own_duration')).statusCode).toBe(201);
    expect((await mk('__all__', 'env_route')).statusCode).toBe(201);
    const res = await patch({ duration_ms: { name: 'own_duration' }, route: { name: 'env_route' }, user: { name: 'plain' } });
    expect(res.statusCode, res.body).toBe(200);
    expectContract(PATH, 'patch', res);
    const body = json(res);
    expect(body.duration_ms).toEqual({ name: 'own_duration', column_type: 'derived_column' });
    expect(body.route).toEqual({ name: 'env_route', column_type: 'derived_column' });
    expect(body.user).toEqual({ name: 'plain', column_type: 'column' });
    expect(json(await get())).toEqual(body);
    // Another dataset's calculated field is not seen here.
    await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'Other' } });
    expect((await mk('other', 'elsewhere')).statusCode).toBe(201);
    expect(json(await patch({ error: { name: 'elsewhere' } })).error).toEqual({ name: 'elsewhere', column_type: 'column' });
    // Once the calculated field is gone the key reads as a column again.
    const id = json(await t.app.inject({ method: 'GET', url: '/1/derived_columns/traces?alias=own_duration', headers: t.config })).id;
    await t.app.inject({ method: 'DELETE', url: `/1/derived_columns/traces/${id}`, headers: t.config });
    expect(json(await get()).duration_ms).toEqual({ name: 'own_duration', column_type: 'column' });
  });

  it('accepts a 255-character name', async () => {
    const res = await patch({ name: { name: 'n'.repeat(255) } });
    expect(res.statusCode).toBe(200);
    expect(json(res).name.name).toHaveLength(255);
  });

  it('422s for an unknown key, changing nothing', async () => {
    expect422(await patch({ not_a_definition: { name: 'x' } }), 'not_a_definition');
    expect422(await patch({ span_id: { name: 'ok' }, bogus: { name: 'x' } }));
    expect(json(await get())).toEqual(defaults());
  });

  it('422s for a definition of the wrong type, changing nothing', async () => {
    for (const value of ['trace.span_id', 5, true, [{ name: 'x' }]]) {
      expect422(await patch({ span_id: value }), 'span_id');
    }
    for (const name of [5, null, true, { x: 1 }]) {
      expect422(await patch({ span_id: { name } }), 'span_id');
    }
    expect422(await patch({ span_id: {} }), 'span_id');
    expect422(await patch({ span_id: { name: 'x', column_type: 'metric' } }), 'span_id');
    expect(json(await get())).toEqual(defaults());
  });

  it('422s for a name over 255 characters', async () => {
    expect422(await patch({ trace_id: { name: 't'.repeat(256) } }), 'trace_id');
    expect(json(await get()).trace_id).toEqual({ name: 'trace.trace_id', column_type: 'column' });
  });

  it('400s (problem+json) for malformed JSON', async () => {
    const res = await t.app.inject({
      method: 'PATCH', url: '/1/dataset_definitions/traces', headers: { ...t.config, 'content-type': 'application/json' },
      payload: '{"span_id": {',
    });
    expect(res.statusCode).toBe(400);
    expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json\b/);
    const body = json(res);
    expect(body.type).toBe(`${PROBLEM_BASE}/unparseable`);
    expectSchema('DetailedError', body);
  });

  it('404s for an unknown dataset and for __all__', async () => {
    for (const slug of ['nope', '__all__']) {
      const g = await get(slug);
      expectDatasetNotFound(g);
      expectContract(PATH, 'get', g);
      const p = await patch({ span_id: { name: 'x' } }, slug);
      expectDatasetNotFound(p);
      expectContract(PATH, 'patch', p);
    }
  });

  it('a deleted dataset takes its definitions with it; re-creating starts from defaults', async () => {
    await patch({ span_id: { name: 'custom' } });
    expect((await deleteDataset(t, 'traces')).statusCode).toBe(202);
    expect((await get()).statusCode).toBe(404);
    await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'Traces' } });
    expect(json(await get())).toEqual(defaults());
  });

  it('keys of another environment or team get 404, and change nothing', async () => {
    const staging = await secondEnvironment(t, 'Staging');
    const other = await secondTeam(t, 'Other Team');
    for (const headers of [staging.headers, other.headers]) {
      expectDatasetNotFound(await get('traces', headers));
      expectDatasetNotFound(await patch({ span_id: { name: 'x' } }, 'traces', headers));
    }
    expect(json(await get())).toEqual(defaults());

    // Their own dataset of the same name has its own definitions.
    await t.app.inject({ method: 'POST', url: '/1/datasets', headers: staging.headers, payload: { name: 'Traces' } });
    expect((await patch({ span_id: { name: 'staging_span' } }, 'traces', staging.headers)).statusCode).toBe(200);
    expect(json(await get()).span_id).toEqual({ name: 'trace.span_id', column_type: 'column' });
    expect(json(await get('traces', staging.headers)).span_id).toEqual({ name: 'staging_span', column_type: 'column' });
  });

  it('a key without create_datasets may GET but gets 403 on PATCH', async () => {
    const { team, environment } = await initialTenancy(t);
    const limited = await addKey(t, team, environment, { permissions: { send_events: true, manage_columns: true } });
    const g = await get('traces', limited.headers);
    expect(g.statusCode).toBe(200);
    expect(json(g)).toEqual(defaults());
    const p = await patch({ span_id: { name: 'x' } }, 'traces', limited.headers);
    expect(p.statusCode).toBe(403);
    expect(String(p.headers['content-type'])).toMatch(/^application\/json\b/);
    expect(Object.keys(json(p))).toEqual(['error']);
    expect(json(await get()).span_id.name).toBe('trace.span_id');
  });

  it('ingest keys and missing keys get 401', async () => {
    for (const headers of [t.ingest, {}]) {
      const g = await get('traces', headers);
      expect(g.statusCode).toBe(401);
      expectContract(PATH, 'get', g);
      const p = await patch({ span_id: { name: 'x' } }, 'traces', headers);
      expect(p.statusCode).toBe(401);
      expectContract(PATH, 'patch', p);
    }
    expect(json(await get()).span_id.name).toBe('trace.span_id');
  });
});
