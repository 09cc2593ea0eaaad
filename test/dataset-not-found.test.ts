// A dataset that a /1/ path names and that does not exist: every configuration route that looks
// one up answers the same 404 problem, `Dataset not found`, as Honeycomb's own client test
// (terraform-provider-honeycombio, client/errors_test.go) expects it. The routes are read from the
// served OpenAPI document, so a route added later is checked too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectDatasetNotFound, expectLegacy } from './problems.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';

/** Bodies that pass a route's schema, where an empty object would not (so the 404 is what is left). */
const BODIES: Record<string, unknown> = {
  'PUT /1/datasets/{datasetSlug}': { description: '', expand_json_depth: 0 },
  'POST /1/columns/{datasetSlug}': { key_name: 'a' },
  'POST /1/derived_columns/{datasetSlug}': { alias: 'a', expression: 'INT(1)' },
  'PUT /1/derived_columns/{datasetSlug}/{derivedColumnId}': { alias: 'a', expression: 'INT(1)' },
  'POST /1/query_annotations/{datasetSlug}': { name: 'a', query_id: 'abc' },
  'PUT /1/query_annotations/{datasetSlug}/{queryAnnotationId}': { name: 'a', query_id: 'abc' },
  'POST /1/query_results/{datasetSlug}': { query_id: 'abc' },
  'POST /1/signals/{datasetSlug}': { service_name: 'a', kind: 'presence' },
  'PUT /1/signals/{datasetSlug}/{signalId}': { service_name: 'a', kind: 'presence' },
  'POST /1/marker_settings/{datasetSlug}': { type: 'deploy', color: '#000000' },
  'PUT /1/marker_settings/{datasetSlug}/{markerSettingId}': { type: 'deploy', color: '#000000' },
};
/** Ingest routes create the dataset they name (checked below with a key that may not). */
const INGEST = /^\/1\/(batch|events|kinesis_events)\//;

describe('Dataset not found', () => {
  let t: TestApp;
  let routes: { method: string; path: string }[];
  beforeAll(async () => {
    t = await makeApp();
    const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    routes = Object.entries<Record<string, unknown>>(doc.paths)
      .filter(([path]) => path.startsWith('/1/') && path.includes('{datasetSlug}') && !INGEST.test(path))
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path })));
  });
  afterAll(() => t.close());

  const call = (r: { method: string; path: string }, segment: string, headers: Record<string, string>) => {
    const url = r.path.replace('{datasetSlug}', segment).replace(/\{\w+\}/g, 'abc123');
    const body = BODIES[`${r.method} ${r.path}`] ?? (r.method === 'GET' || r.method === 'DELETE' ? undefined : {});
    return t.app.inject({
      method: r.method as 'GET',
      url,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
  };

  it('is read from a document that lists the dataset routes of every area', () => {
    const areas = new Set(routes.map((r) => r.path.split('/')[2]));
    for (const area of ['datasets', 'dataset_definitions', 'columns', 'derived_columns', 'queries', 'query_annotations', 'query_results', 'triggers', 'markers', 'marker_settings', 'slos', 'burn_alerts', 'signals']) {
      expect(areas, area).toContain(area);
    }
    expect(routes.length).toBeGreaterThan(40);
  });

  it('is documented: the 404 of a dataset route offers the problem form, ingest routes the legacy one', async () => {
    const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    expect(Object.keys(doc.paths['/1/markers/{datasetSlug}'].get.responses['404'].content).sort()).toEqual(['application/json', 'application/problem+json']);
    expect(Object.keys(doc.paths['/1/boards/{boardId}'].get.responses['404'].content)).toEqual(['application/json']);
    expect(Object.keys(doc.paths['/1/batch/{datasetSlug}'].post.responses['404'].content)).toEqual(['application/json']);
    expect(Object.keys(doc.paths['/1/batch/{datasetSlug}'].post.responses['400'].content)).toEqual(['application/json']);
  });

  it('answers the not-found problem "Dataset not found" on every route, for an unknown name and for names no dataset can have', async () => {
    for (const r of routes) {
      for (const segment of ['no-such-dataset', '%00', 'a%2Fb', '...', '%ED%A0%80', 'x%E0%A4%A']) {
        const res = await call(r, segment, t.config);
        expect(res.statusCode, `${r.method} ${r.path} with ${segment}: ${res.body}`).toBe(404);
        expectDatasetNotFound(res);
      }
    }
  });

  it("answers the same for another environment's dataset, even when this one has one of that name elsewhere", async () => {
    await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'prod-only' } });
    const staging = await secondEnvironment(t, 'Staging');
    for (const r of routes) {
      const res = await call(r, 'prod-only', staging.headers);
      expect(res.statusCode, `${r.method} ${r.path}: ${res.body}`).toBe(404);
      expectDatasetNotFound(res);
    }
  });

  it('ingest routes answer it in their legacy {error} dialect to a key that may not create datasets', async () => {
    const { team, environment } = await initialTenancy(t);
    const key = await addKey(t, team, environment, { keyType: 'ingest', permissions: { create_datasets: false } });
    const headers = { ...key.headers, 'content-type': 'application/json' };
    expectLegacy(await t.app.inject({ method: 'POST', url: '/1/batch/not-made', headers, payload: '[{"data":{"a":1}}]' }), 404, 'Dataset not found');
    expectLegacy(await t.app.inject({ method: 'POST', url: '/1/events/not-made', headers, payload: '{"a":1}' }), 404, 'Dataset not found');
  });

  it('other missing resources keep the legacy {error} 404', async () => {
    await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'here' } });
    expectLegacy(await t.app.inject({ method: 'GET', url: '/1/boards/nope', headers: t.config }), 404, 'board not found');
    expectLegacy(await t.app.inject({ method: 'GET', url: '/1/queries/here/nope', headers: t.config }), 404, 'query not found');
    expectLegacy(await t.app.inject({ method: 'GET', url: '/1/no-such-route', headers: t.config }), 404, 'no such route: GET /1/no-such-route');
  });
});
