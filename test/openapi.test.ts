// The served OpenAPI document is generated from the schemas that validate requests; our real
// responses must match it as well as Honeycomb's contract.
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';

describe('GET /openapi.json', () => {
  let t: TestApp;
  let doc: any;
  beforeAll(async () => {
    t = await makeApp();
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = json(res);
  });
  afterAll(() => t.close());

  it('is OpenAPI 3.1 with every route of the foundation and its security', () => {
    expect(doc.openapi).toBe('3.1.0');
    for (const p of [
      '/1/auth', '/1/datasets', '/1/datasets/{datasetSlug}', '/1/dataset_definitions/{datasetSlug}', '/2/auth',
      '/2/teams/{teamSlug}/environments', '/2/teams/{teamSlug}/environments/{ID}',
      '/2/teams/{teamSlug}/api-keys', '/2/teams/{teamSlug}/api-keys/{ID}',
    ]) {
      expect(doc.paths[p], p).toBeDefined();
      for (const op of Object.values(doc.paths[p]) as any[]) {
        expect(op.security?.length, p).toBeGreaterThan(0);
        expect(op.responses['401'], p).toBeDefined();
      }
    }
    expect(doc.paths['/healthz']).toBeUndefined();
    expect(doc.paths['/2/teams/{teamSlug}/environments'].post.requestBody.content['application/vnd.api+json']).toBeDefined();
    expect(doc.paths['/1/datasets'].post.responses['422'].content['application/problem+json']).toBeDefined();
  });

  it('describes the responses the server really sends', async () => {
    const ajv = new Ajv2020.default({ strict: false });
    const check = (path: string, method: string, res: { statusCode: number; headers: any; body: string }) => {
      const media = String(res.headers['content-type']).split(';')[0];
      const schema = doc.paths[path][method].responses[String(res.statusCode)]?.content?.[media]?.schema;
      expect(schema, `${method} ${path} ${res.statusCode} ${media}`).toBeDefined();
      const validate = ajv.compile(schema);
      expect(validate(JSON.parse(res.body)), JSON.stringify(validate.errors)).toBe(true);
    };
    const created = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'docs' } });
    check('/1/datasets', 'post', created);
    check('/1/datasets', 'post', await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 7 } }));
    check('/1/datasets/{datasetSlug}', 'get', await t.app.inject({ method: 'GET', url: '/1/datasets/nope', headers: t.config }));
    check('/1/dataset_definitions/{datasetSlug}', 'get', await t.app.inject({ method: 'GET', url: '/1/dataset_definitions/docs', headers: t.config }));
    check('/2/auth', 'get', await t.app.inject({ method: 'GET', url: '/2/auth', headers: t.mgmt }));
    check('/2/teams/{teamSlug}/environments', 'get', await t.app.inject({ method: 'GET', url: `/2/teams/${t.init.team.slug}/environments`, headers: t.mgmt }));
    check('/2/teams/{teamSlug}/environments', 'post', await t.app.inject({
      method: 'POST', url: `/2/teams/${t.init.team.slug}/environments`, headers: t.mgmt, payload: { data: { type: 'environments', attributes: {} } },
    }));
  });
});
