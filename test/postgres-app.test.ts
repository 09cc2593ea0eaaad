// The HTTP app on the PostgreSQL config store, end to end: the same requests a client makes,
// with every row going through PostgreSQL (a fresh schema, dropped afterwards). Skipped, with a
// notice, when WAGGLE_TEST_POSTGRES names no server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../src/stores/config/store.js';
import { expectContract } from './contract.js';
import { json, makeApp, type TestApp } from './helpers.js';
import { createTestSchema, postgresUrl, warnPostgresSkipped, type TestSchema } from './postgres.js';

if (!postgresUrl) warnPostgresSkipped('the HTTP app on the PostgreSQL store (test/postgres-app.test.ts: "app on PostgreSQL")');

describe.skipIf(!postgresUrl)('app on PostgreSQL', () => {
  let schema: TestSchema;
  let t: TestApp;
  let teamSlug: string;

  beforeAll(async () => {
    schema = await createTestSchema(postgresUrl!, 'app');
    t = await makeApp({ store: openPostgresStore(schema.url, schema.name) });
    teamSlug = t.init.team.slug;
  });
  afterAll(async () => {
    try {
      await t?.close();
    } finally {
      await schema?.drop();
    }
  });

  it('runs on the PostgreSQL store', () => {
    expect(t.store.kind).toBe('postgres');
  });

  it('GET /1/auth answers for the initial configuration key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/1/auth', headers: t.config });
    expect(res.statusCode).toBe(200);
    expectContract('/1/auth', 'get', res);
    const body = json(res);
    expect(body.type).toBe('configuration');
    expect(body.environment.slug).toBe('production');
    expect(body.team.slug).toBe(teamSlug);
    expect(body.api_key_access.createDatasets).toBe(true);
  });

  it('datasets: create (201, then 200), list, get, PUT, DELETE (202)', async () => {
    const payload = { name: 'PG Dataset', description: 'on postgres', expand_json_depth: 2 };
    const created = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload });
    expect(created.statusCode).toBe(201);
    expectContract('/1/datasets', 'post', created);
    const ds = json(created);
    expect(ds).toMatchObject({
      name: 'PG Dataset',
      slug: 'pg-dataset',
      description: 'on postgres',
      expand_json_depth: 2,
      settings: { delete_protected: true },
      last_written_at: null,
    });

    const again = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'pg dataset' } });
    expect(again.statusCode).toBe(200);
    expect(json(again)).toEqual(ds);

    const list = await t.app.inject({ method: 'GET', url: '/1/datasets', headers: t.config });
    expect(list.statusCode).toBe(200);
    expectContract('/1/datasets', 'get', list);
    expect(json(list)).toEqual([ds]);

    const put = await t.app.inject({
      method: 'PUT',
      url: '/1/datasets/pg-dataset',
      headers: t.config,
      payload: { description: 'changed', expand_json_depth: 5, settings: { delete_protected: true } },
    });
    expect(put.statusCode).toBe(200);
    expectContract('/1/datasets/{datasetSlug}', 'put', put);
    expect(json(put)).toEqual({ ...ds, description: 'changed', expand_json_depth: 5, settings: { delete_protected: true } });

    const got = await t.app.inject({ method: 'GET', url: '/1/datasets/pg-dataset', headers: t.config });
    expect(got.statusCode).toBe(200);
    expect(json(got)).toEqual(json(put));

    // Delete protection is a boolean read back from PostgreSQL: it must hold.
    const refused = await t.app.inject({ method: 'DELETE', url: '/1/datasets/pg-dataset', headers: t.config });
    expect(refused.statusCode).toBe(409);
    const unprotect = await t.app.inject({
      method: 'PUT',
      url: '/1/datasets/pg-dataset',
      headers: t.config,
      payload: { description: 'changed', expand_json_depth: 5, settings: { delete_protected: false } },
    });
    expect(json(unprotect).settings.delete_protected).toBe(false);

    const del = await t.app.inject({ method: 'DELETE', url: '/1/datasets/pg-dataset', headers: t.config });
    expect(del.statusCode).toBe(202);
    const gone = await t.app.inject({ method: 'GET', url: '/1/datasets/pg-dataset', headers: t.config });
    expect(gone.statusCode).toBe(404);
    expect(json(await t.app.inject({ method: 'GET', url: '/1/datasets', headers: t.config }))).toEqual([]);
  });

  it('/2/: lists environments, creates an API key, and the new key works at once', async () => {
    const envs = await t.app.inject({ method: 'GET', url: `/2/teams/${teamSlug}/environments`, headers: t.mgmt });
    expect(envs.statusCode).toBe(200);
    expectContract('/2/teams/{teamSlug}/environments', 'get', envs);
    const data = json(envs).data;
    expect(data).toHaveLength(1);
    expect(data[0].attributes).toMatchObject({ slug: 'production', settings: { delete_protected: true } });
    const environmentId: string = data[0].id;

    const created = await t.app.inject({
      method: 'POST',
      url: `/2/teams/${teamSlug}/api-keys`,
      headers: t.mgmt,
      payload: {
        data: {
          type: 'api-keys',
          attributes: { key_type: 'configuration', name: 'pg key', permissions: { create_datasets: true, run_queries: true } },
          relationships: { environment: { data: { id: environmentId, type: 'environments' } } },
        },
      },
    });
    expect(created.statusCode).toBe(201);
    expectContract('/2/teams/{teamSlug}/api-keys', 'post', created);
    const key = json(created).data;
    expect(key.attributes.disabled).toBe(false);
    expect(key.attributes.permissions).toMatchObject({ create_datasets: true, run_queries: true, send_events: false });
    expect(typeof key.attributes.secret).toBe('string');

    const asNewKey = { 'x-honeycomb-team': key.attributes.secret as string };
    const auth = await t.app.inject({ method: 'GET', url: '/1/auth', headers: asNewKey });
    expect(auth.statusCode).toBe(200);
    expect(json(auth)).toMatchObject({
      id: key.id,
      type: 'configuration',
      api_key_access: { createDatasets: true, queries: true, events: false },
    });
    const ds = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: asNewKey, payload: { name: 'made-by-new-key' } });
    expect(ds.statusCode).toBe(201);

    const listed = await t.app.inject({ method: 'GET', url: `/2/teams/${teamSlug}/api-keys`, headers: t.mgmt });
    expect(listed.statusCode).toBe(200);
    expect(json(listed).data.map((k: { id: string }) => k.id)).toContain(key.id);

    // Disabling goes through PostgreSQL too, and takes effect on the next request.
    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/2/teams/${teamSlug}/api-keys/${key.id}`,
      headers: t.mgmt,
      payload: { data: { id: key.id, type: 'api-keys', attributes: { disabled: true } } },
    });
    expect(patched.statusCode).toBe(200);
    expect(json(patched).data.attributes.disabled).toBe(true);
    const refused = await t.app.inject({ method: 'GET', url: '/1/auth', headers: asNewKey });
    expect(refused.statusCode).toBe(401);
  });
});
