// /1/boards: create (201), list, get, full-replacement PUT, DELETE (204) through HTTP; every
// board rule at and past its boundary (name, description, text content, tags, preset filters),
// each panel type with missing parts, references across environments, layout, classic fields,
// permissions and tenancy; every response checked against Honeycomb's contract.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, sendJson, type TestApp } from './helpers.js';
import { expectContract } from './contract.js';
import { expectProblem, expectValidation, expectLegacy, type Res } from './problems.js';
import { addKey, initialTenancy, secondEnvironment, secondTeam } from './tenancy-fixtures.js';
import { allPermissions } from '../src/domain/keys.js';
import type { Environment, Team } from '../src/stores/config/types.js';

const COLLECTION = '/1/boards';
const ITEM = '/1/boards/{boardId}';
const BOARD_FIELDS = ['description', 'id', 'links', 'name', 'panels', 'preset_filters', 'tags', 'type'];
const VIS_DEFAULTS = { hide_compare: false, hide_hovers: false, hide_markers: false, utc_xaxis: false, overlaid_charts: false };

describe('/1/boards', () => {
  let t: TestApp;
  let team: Team;
  let env: Environment;
  const DS = 'boards-ds';
  let queryId: string; // on DS
  let annotationId: string; // of queryId
  let secondAnnotationId: string; // of queryId too
  let allQueryId: string; // environment-wide
  let allAnnotationId: string;
  let otherQueryId: string; // on DS, no annotation of it used
  let otherAnnotationId: string; // of otherQueryId
  let sloId: string;
  let other: Awaited<ReturnType<typeof secondEnvironment>>;
  let otherEnvQueryId: string;
  let otherEnvAnnotationId: string;
  let otherEnvSloId: string;

  const create = (body: unknown, headers = t.config) => sendJson(t, 'POST', '/1/boards', body, headers);
  const update = (id: string, body: unknown, headers = t.config) => sendJson(t, 'PUT', `/1/boards/${encodeURIComponent(id)}`, body, headers);
  const get = (id: string, headers = t.config) => t.app.inject({ method: 'GET', url: `/1/boards/${encodeURIComponent(id)}`, headers });
  const del = (id: string, headers = t.config) => t.app.inject({ method: 'DELETE', url: `/1/boards/${encodeURIComponent(id)}`, headers });
  const list = (headers = t.config) => t.app.inject({ method: 'GET', url: '/1/boards', headers });

  const board = (extra: Record<string, unknown> = {}) => ({ name: 'Board', type: 'flexible', ...extra });
  const queryPanel = (extra: Record<string, unknown> = {}, q = queryId, a = annotationId) => ({
    type: 'query',
    query_panel: { query_id: q, query_annotation_id: a, ...extra },
  });
  const textPanel = (content = 'hello') => ({ type: 'text', text_panel: { content } });
  const sloPanel = (id = sloId) => ({ type: 'slo', slo_panel: { slo_id: id } });

  async function created(body: unknown) {
    const res = await create(body);
    expect(res.statusCode, res.body).toBe(201);
    expectContract(COLLECTION, 'POST', res);
    return json(res);
  }
  async function updated(id: string, body: unknown) {
    const res = await update(id, body);
    expect(res.statusCode, res.body).toBe(200);
    expectContract(ITEM, 'PUT', res);
    return json(res);
  }

  async function newQuery(ds: string, headers: Record<string, string>) {
    const res = await t.app.inject({ method: 'POST', url: `/1/queries/${ds}`, headers, payload: { calculations: [{ op: 'COUNT' }], time_range: 3600 } });
    expect(res.statusCode, res.body).toBe(200);
    return json(res).id as string;
  }
  async function newAnnotation(ds: string, query_id: string, headers: Record<string, string>) {
    const res = await t.app.inject({ method: 'POST', url: `/1/query_annotations/${ds}`, headers, payload: { name: 'a', query_id } });
    expect(res.statusCode, res.body).toBe(201);
    return json(res).id as string;
  }
  /** SLOs have no API yet: an SLO is an object of kind `slo` in its environment's store. */
  async function newSlo(e: Environment) {
    const id = `slo${Math.random().toString(36).slice(2, 10)}`;
    await t.store.createObject({ id, kind: 'slo', teamId: e.teamId, environmentId: e.id, datasetId: null, scope: e.id, uniqueKey: null, body: { name: 'slo' } });
    return id;
  }

  beforeAll(async () => {
    t = await makeApp();
    ({ team, environment: env } = await initialTenancy(t));
    expect((await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: DS } })).statusCode).toBe(201);
    queryId = await newQuery(DS, t.config);
    annotationId = await newAnnotation(DS, queryId, t.config);
    secondAnnotationId = await newAnnotation(DS, queryId, t.config);
    allQueryId = await newQuery('__all__', t.config);
    allAnnotationId = await newAnnotation('__all__', allQueryId, t.config);
    otherQueryId = await newQuery(DS, t.config);
    otherAnnotationId = await newAnnotation(DS, otherQueryId, t.config);
    sloId = await newSlo(env);

    other = await secondEnvironment(t, 'Boards Elsewhere');
    expect((await t.app.inject({ method: 'POST', url: '/1/datasets', headers: other.headers, payload: { name: DS } })).statusCode).toBe(201);
    otherEnvQueryId = await newQuery(DS, other.headers);
    otherEnvAnnotationId = await newAnnotation(DS, otherEnvQueryId, other.headers);
    otherEnvSloId = await newSlo(other.environment);
  });
  afterAll(() => t.close());

  describe('lifecycle', () => {
    it('creates (201), gets, lists, replaces (200) and deletes (204)', async () => {
      const b = await created(
        board({
          name: 'Service health',
          description: 'Key metrics',
          panels: [
            queryPanel({}, queryId, annotationId),
            { ...textPanel('# Notes'), position: { x_coordinate: 6, y_coordinate: 0, height: 3, width: 6 } },
          ],
          tags: [{ key: 'team', value: 'backend' }],
          preset_filters: [{ column: 'app.service', alias: 'Service' }],
        }),
      );
      expect(Object.keys(b).sort()).toEqual(BOARD_FIELDS);
      expect(b).toMatchObject({
        name: 'Service health',
        description: 'Key metrics',
        type: 'flexible',
        tags: [{ key: 'team', value: 'backend' }],
        preset_filters: [{ column: 'app.service', alias: 'Service' }],
      });
      expect(b.id).toMatch(/^[A-Za-z0-9]{11}$/);
      expect(b.layout_generation).toBeUndefined();
      expect(b.panels).toEqual([
        {
          type: 'query',
          query_panel: { query_id: queryId, query_annotation_id: annotationId, query_style: 'graph', dataset: DS },
          // Manual layout: the panel without a position is placed below the positioned one.
          position: { x_coordinate: 0, y_coordinate: 3, height: 6, width: 6 },
        },
        { type: 'text', text_panel: { content: '# Notes' }, position: { x_coordinate: 6, y_coordinate: 0, height: 3, width: 6 } },
      ]);

      const got = await get(b.id);
      expect(got.statusCode).toBe(200);
      expectContract(ITEM, 'GET', got);
      expect(json(got)).toEqual(b);

      const listed = await list();
      expect(listed.statusCode).toBe(200);
      expectContract(COLLECTION, 'GET', listed);
      expect(json(listed).find((x: { id: string }) => x.id === b.id)).toEqual(b);

      const u = await updated(b.id, board({ name: 'Renamed', panels: [textPanel('only')] }));
      expect(u).toMatchObject({ id: b.id, name: 'Renamed', description: '', preset_filters: [{ column: 'app.service', alias: 'Service' }] });
      expect(u).not.toHaveProperty('tags');
      expect(u.panels).toEqual([{ type: 'text', text_panel: { content: 'only' }, position: { x_coordinate: 0, y_coordinate: 0, height: 4, width: 6 } }]);
      expect(json(await get(b.id))).toEqual(u);

      const gone = await del(b.id);
      expect(gone.statusCode).toBe(204);
      expect(gone.body).toBe('');
      expectLegacy(await get(b.id), 404, 'board not found');
      expectContract(ITEM, 'GET', await get(b.id));
      expectLegacy(await del(b.id), 404, 'board not found');
      expectLegacy(await update(b.id, board()), 404, 'board not found');
      expect(json(await list()).some((x: { id: string }) => x.id === b.id)).toBe(false);
    });

    it('a minimal board: defaults for everything but name and type', async () => {
      const b = await created(board());
      expect(b).toMatchObject({ name: 'Board', description: '', type: 'flexible', panels: [], preset_filters: [] });
      // No tags: the member is absent, not [] (as Honeycomb answers).
      expect(b).not.toHaveProperty('tags');
      expect(json(await get(b.id))).not.toHaveProperty('tags');
    });

    it('lists only this environment’s boards, in creation order', async () => {
      const mine: string[] = [];
      for (const name of ['first', 'second', 'third']) mine.push((await created(board({ name }))).id);
      const theirs = await create(board({ name: 'theirs' }), other.headers);
      expect(theirs.statusCode).toBe(201);
      const ids = json(await list()).map((x: { id: string }) => x.id);
      expect(ids.filter((id: string) => mine.includes(id))).toEqual(mine);
      expect(ids).not.toContain(json(theirs).id);
      expect(json(await list(other.headers)).map((x: { id: string }) => x.id)).toEqual([json(theirs).id]);
    });

    it('links.board_url is built from the request host, team, environment and id', async () => {
      const b = await created(board());
      expect(b.links.board_url).toMatch(new RegExp(`^http://localhost(:\\d+)?/${team.slug}/environments/${env.slug}/board/${b.id}$`));
      const res = await t.app.inject({ method: 'GET', url: `/1/boards/${b.id}`, headers: { ...t.config, host: 'waggle.example.com:8443' } });
      expect(json(res).links.board_url).toBe(`http://waggle.example.com:8443/${team.slug}/environments/${env.slug}/board/${b.id}`);
    });

    it('stores hostile text verbatim', async () => {
      const name = `'); DROP TABLE objects; -- <script>🐝</script>`;
      const b = await created(board({ name, description: '"\\\u0000', panels: [textPanel('<img src=x onerror=alert(1)> 🐝')] }));
      expect(json(await get(b.id))).toMatchObject({ name, description: '"\\\u0000', panels: [{ text_panel: { content: '<img src=x onerror=alert(1)> 🐝' } }] });
    });
  });

  describe('request edges', () => {
    it('an empty body is a 400, a body that is not an object a 422', async () => {
      expectProblem(await t.app.inject({ method: 'POST', url: '/1/boards', headers: t.config }), 400, 'unparseable');
      expectProblem(await sendJson(t, 'POST', '/1/boards', '{"name":'), 400, 'unparseable');
      expectValidation(await create([board()]), 'body', 'incorrect_type');
      expectValidation(await create('"board"'), 'body', 'incorrect_type');
      // Nested 20,000 deep (null members are dropped before the schema runs: without recursion).
      expectValidation(await sendJson(t, 'POST', '/1/boards', `${'['.repeat(20000)}${']'.repeat(20000)}`), 'body', 'incorrect_type');
      expect((await sendJson(t, 'POST', '/1/boards', `{"name":"x","type":"flexible","panels":${'[{"a":'.repeat(5000)}null${'}]'.repeat(5000)}}`)).statusCode).toBe(422);
      const b = await created(board());
      expectProblem(await t.app.inject({ method: 'PUT', url: `/1/boards/${b.id}`, headers: t.config }), 400, 'unparseable');
    });

    it('every problem of a body is reported in one 422', async () => {
      const res = await create({ name: '', type: 'classic', panels: [{ type: 'query', query_panel: {} }, textPanel('x'.repeat(10_001))], tags: [{ key: 'A', value: 'b' }] });
      const body = expectValidation(res, 'name', 'missing');
      expect(body.type_detail.map((d: { field: string }) => d.field).sort()).toEqual([
        'name', 'panels.0.query_panel.query_annotation_id', 'panels.0.query_panel.query_id', 'panels.1.text_panel.content', 'tags.0.key', 'type',
      ]);
    });

    it('ignores read-only and unknown fields; `id` in a body does not change the id', async () => {
      const b = await created(board({ id: 'mine', links: { board_url: 'x' }, extra: 1, panels: [queryPanel({ dataset: 'fake', extra: 2 })] }));
      expect(b.id).not.toBe('mine');
      expect(b.extra).toBeUndefined();
      expect(b.links.board_url).not.toBe('x');
      expect(b.panels[0].query_panel.dataset).toBe(DS);
      expect(b.panels[0].query_panel.extra).toBeUndefined();
      const u = await updated(b.id, board({ id: 'someone-else', name: 'n2' }));
      expect(u.id).toBe(b.id);
      expectLegacy(await get('someone-else'), 404);
    });
  });

  describe('name, description, type', () => {
    it('name: required, 1..255 characters, not blank', async () => {
      await created(board({ name: 'x' }));
      expect((await created(board({ name: 'n'.repeat(255) }))).name).toBe('n'.repeat(255));
      // Characters, not bytes or UTF-16 units.
      await created(board({ name: '🐝'.repeat(255) }));
      expectValidation(await create(board({ name: 'n'.repeat(256) })), 'name');
      expectValidation(await create(board({ name: '🐝'.repeat(256) })), 'name');
      expectValidation(await create(board({ name: '' })), 'name', 'missing');
      expectValidation(await create(board({ name: '   ' })), 'name', 'missing');
      expectValidation(await create({ type: 'flexible' }), 'name', 'missing');
      expectValidation(await create(board({ name: null })), 'name', 'missing');
      expectValidation(await create(board({ name: 5 })), 'name', 'incorrect_type');
    });

    it('description: at most 1024 characters; null or omitted is ""', async () => {
      expect((await created(board({ description: 'd'.repeat(1024) }))).description).toBe('d'.repeat(1024));
      expect((await created(board({ description: null }))).description).toBe('');
      expectValidation(await create(board({ description: 'd'.repeat(1025) })), 'description');
      expectValidation(await create(board({ description: 7 })), 'description', 'incorrect_type');
    });

    it('type: required, and only flexible', async () => {
      expectValidation(await create({ name: 'x' }), 'type', 'missing');
      expectValidation(await create(board({ type: 'classic' })), 'type');
      expectValidation(await create(board({ type: 'Flexible' })), 'type');
      expectValidation(await create(board({ type: 1 })), 'type', 'incorrect_type');
      const b = await created(board());
      expectValidation(await update(b.id, { name: 'x' }), 'type', 'missing');
      expectValidation(await update(b.id, board({ type: 'classic' })), 'type');
    });

    it('classic fields: style, column_layout and graph_settings are ignored; queries/slos only when null or empty', async () => {
      const b = await created(
        board({ style: 'visual', column_layout: 'single', queries: null, slos: null, panels: [queryPanel({ graph_settings: { log_scale: true } })] }),
      );
      expect(b.style).toBeUndefined();
      expect(b.column_layout).toBeUndefined();
      expect(b.queries).toBeUndefined();
      expect(b.panels[0].query_panel.graph_settings).toBeUndefined();
      await created(board({ queries: [], slos: [] }));
      expectValidation(await create(board({ queries: [{ query_id: queryId }] })), 'queries');
      expectValidation(await create(board({ slos: [sloId] })), 'slos');
      expectValidation(await create(board({ queries: 'x' })), 'queries');
      expectValidation(await update(b.id, board({ slos: [sloId] })), 'slos');
    });
  });

  describe('panels', () => {
    it('panels must be an array of objects with a known type', async () => {
      expect((await created(board({ panels: null }))).panels).toEqual([]);
      expectValidation(await create(board({ panels: {} })), 'panels', 'incorrect_type');
      expectValidation(await create(board({ panels: ['text'] })), 'panels.0', 'incorrect_type');
      expectValidation(await create(board({ panels: [{ text_panel: { content: 'x' } }] })), 'panels.0.type', 'missing');
      expectValidation(await create(board({ panels: [{ type: 'heatmap' }] })), 'panels.0.type');
      expectValidation(await create(board({ panels: [{ type: 7 }] })), 'panels.0.type', 'incorrect_type');
    });

    it('query panel: query_panel, query_id and query_annotation_id are required', async () => {
      expectValidation(await create(board({ panels: [{ type: 'query' }] })), 'panels.0.query_panel', 'missing');
      expectValidation(await create(board({ panels: [{ type: 'query', query_panel: 'x' }] })), 'panels.0.query_panel', 'incorrect_type');
      // A panel of another type's body does not count.
      expectValidation(await create(board({ panels: [{ type: 'query', text_panel: { content: 'x' } }] })), 'panels.0.query_panel', 'missing');
      expectValidation(await create(board({ panels: [{ type: 'query', query_panel: { query_annotation_id: annotationId } }] })), 'panels.0.query_panel.query_id', 'missing');
      expectValidation(await create(board({ panels: [{ type: 'query', query_panel: { query_id: queryId } }] })), 'panels.0.query_panel.query_annotation_id', 'missing');
      expectValidation(await create(board({ panels: [queryPanel({ query_id: 5 })] })), 'panels.0.query_panel.query_id', 'incorrect_type');
      expectValidation(await create(board({ panels: [queryPanel({ query_annotation_id: '' })] })), 'panels.0.query_panel.query_annotation_id', 'missing');
    });

    it('query panel: the query and its annotation must exist in this environment, the annotation of that query', async () => {
      expectValidation(await create(board({ panels: [queryPanel({}, 'nope', annotationId)] })), 'panels.0.query_panel.query_id');
      expectValidation(await create(board({ panels: [queryPanel({}, queryId, 'nope')] })), 'panels.0.query_panel.query_annotation_id');
      // An annotation of another query.
      expectValidation(await create(board({ panels: [queryPanel({}, queryId, otherAnnotationId)] })), 'panels.0.query_panel.query_annotation_id');
      expectValidation(await create(board({ panels: [queryPanel({}, allQueryId, annotationId)] })), 'panels.0.query_panel.query_annotation_id');
      // An annotation id is not a query id.
      expectValidation(await create(board({ panels: [queryPanel({}, annotationId, annotationId)] })), 'panels.0.query_panel.query_id');
      // Any annotation of the query will do.
      expect((await created(board({ panels: [queryPanel({}, queryId, secondAnnotationId)] }))).panels[0].query_panel.query_annotation_id).toBe(secondAnnotationId);
    });

    it('references into another environment are refused (query, annotation, SLO), both ways', async () => {
      expectValidation(await create(board({ panels: [queryPanel({}, otherEnvQueryId, otherEnvAnnotationId)] })), 'panels.0.query_panel.query_id');
      const both = expectValidation(await create(board({ panels: [queryPanel({}, otherEnvQueryId, otherEnvAnnotationId)] })), 'panels.0.query_panel.query_annotation_id');
      expect(both.type_detail).toHaveLength(2);
      expectValidation(await create(board({ panels: [queryPanel({}, queryId, otherEnvAnnotationId)] })), 'panels.0.query_panel.query_annotation_id');
      expectValidation(await create(board({ panels: [sloPanel(otherEnvSloId)] })), 'panels.0.slo_panel.slo_id');
      // The other environment sees its own and not ours.
      expect((await create(board({ panels: [queryPanel({}, otherEnvQueryId, otherEnvAnnotationId), sloPanel(otherEnvSloId)] }), other.headers)).statusCode).toBe(201);
      expectValidation(await create(board({ panels: [queryPanel()] }), other.headers), 'panels.0.query_panel.query_id');
      expectValidation(await create(board({ panels: [sloPanel()] }), other.headers), 'panels.0.slo_panel.slo_id');
      // And PUT checks them too.
      const b = await created(board({ panels: [queryPanel()] }));
      expectValidation(await update(b.id, board({ panels: [queryPanel({}, otherEnvQueryId, otherEnvAnnotationId)] })), 'panels.0.query_panel.query_id');
    });

    it('query panel: dataset is the query’s dataset slug, empty for environment-wide queries (read-only)', async () => {
      const b = await created(board({ panels: [queryPanel(), queryPanel({ dataset: DS }, allQueryId, allAnnotationId)] }));
      expect(b.panels.map((p: any) => p.query_panel.dataset)).toEqual([DS, '']);
    });

    it('query panel: query_style graph|table|combo (default graph)', async () => {
      const b = await created(board({ panels: ['graph', 'table', 'combo', null].map((s) => queryPanel({ query_style: s })) }));
      expect(b.panels.map((p: any) => p.query_panel.query_style)).toEqual(['graph', 'table', 'combo', 'graph']);
      expectValidation(await create(board({ panels: [queryPanel({ query_style: 'list' })] })), 'panels.0.query_panel.query_style');
      expectValidation(await create(board({ panels: [queryPanel({ query_style: 1 })] })), 'panels.0.query_panel.query_style', 'incorrect_type');
    });

    it('query panel: visualization_settings only when it was set', async () => {
      const b = await created(board({ panels: [queryPanel(), queryPanel({ visualization_settings: null }), queryPanel({ visualization_settings: {} })] }));
      expect(b.panels[0].query_panel).not.toHaveProperty('visualization_settings');
      expect(b.panels[1].query_panel).not.toHaveProperty('visualization_settings');
      expect(b.panels[2].query_panel.visualization_settings).toEqual(VIS_DEFAULTS);
      expect(json(await get(b.id)).panels).toEqual(b.panels);
      // A PUT without it drops it.
      const u = await updated(b.id, board({ panels: [queryPanel()] }));
      expect(u.panels[0].query_panel).not.toHaveProperty('visualization_settings');
    });

    it('query panel: visualization_settings with defaults, charts with their enum', async () => {
      const vs = {
        hide_compare: true, hide_hovers: true, hide_markers: false, utc_xaxis: true, overlaid_charts: true,
        charts: ['default', 'line', 'stacked', 'stat', 'tsbar', 'cbar', 'cpie'].map((chart_type, i) => ({ chart_index: i, chart_type, log_scale: i % 2 === 0, omit_missing_values: true })),
      };
      const b = await created(board({ panels: [queryPanel({ visualization_settings: vs }), queryPanel({ visualization_settings: { utc_xaxis: true, charts: [{}] } })] }));
      expect(b.panels[0].query_panel.visualization_settings).toEqual(vs);
      expect(b.panels[1].query_panel.visualization_settings).toEqual({
        ...VIS_DEFAULTS, utc_xaxis: true, charts: [{ chart_index: 0, chart_type: 'default', log_scale: false, omit_missing_values: false }],
      });
      const at = 'panels.0.query_panel.visualization_settings';
      expectValidation(await create(board({ panels: [queryPanel({ visualization_settings: 'x' })] })), at, 'incorrect_type');
      expectValidation(await create(board({ panels: [queryPanel({ visualization_settings: { hide_markers: 'yes' } })] })), `${at}.hide_markers`, 'incorrect_type');
      expectValidation(await create(board({ panels: [queryPanel({ visualization_settings: { charts: {} } })] })), `${at}.charts`, 'incorrect_type');
      expectValidation(await create(board({ panels: [queryPanel({ visualization_settings: { charts: [{ chart_type: 'pie' }] } })] })), `${at}.charts.0.chart_type`);
      expectValidation(await create(board({ panels: [queryPanel({ visualization_settings: { charts: [{ chart_index: -1 }] } })] })), `${at}.charts.0.chart_index`);
      expectValidation(await create(board({ panels: [queryPanel({ visualization_settings: { charts: [{ chart_index: 1.5 }] } })] })), `${at}.charts.0.chart_index`, 'incorrect_type');
      expectValidation(await create(board({ panels: [queryPanel({ visualization_settings: { charts: [{ log_scale: 1 }] } })] })), `${at}.charts.0.log_scale`, 'incorrect_type');
      expectValidation(await create(board({ panels: [queryPanel({ visualization_settings: { charts: [3] } })] })), `${at}.charts.0`, 'incorrect_type');
    });

    it('slo panel: slo_panel and slo_id required; the SLO must exist in this environment', async () => {
      const b = await created(board({ panels: [sloPanel()] }));
      expect(b.panels[0]).toEqual({ type: 'slo', slo_panel: { slo_id: sloId }, position: { x_coordinate: 0, y_coordinate: 0, height: 6, width: 6 } });
      expectValidation(await create(board({ panels: [{ type: 'slo' }] })), 'panels.0.slo_panel', 'missing');
      expectValidation(await create(board({ panels: [{ type: 'slo', slo_panel: {} }] })), 'panels.0.slo_panel.slo_id', 'missing');
      expectValidation(await create(board({ panels: [{ type: 'slo', slo_panel: { slo_id: 9 } }] })), 'panels.0.slo_panel.slo_id', 'incorrect_type');
      expectValidation(await create(board({ panels: [sloPanel('no-such-slo')] })), 'panels.0.slo_panel.slo_id');
      // An object of another kind with that id is not an SLO.
      expectValidation(await create(board({ panels: [sloPanel(queryId)] })), 'panels.0.slo_panel.slo_id');
    });

    it('text panel: content required, at most 10,000 characters', async () => {
      expect((await created(board({ panels: [textPanel('x'.repeat(10_000))] }))).panels[0].text_panel.content).toHaveLength(10_000);
      await created(board({ panels: [textPanel('🐝'.repeat(10_000))] }));
      await created(board({ panels: [textPanel('')] }));
      expectValidation(await create(board({ panels: [textPanel('x'.repeat(10_001))] })), 'panels.0.text_panel.content');
      expectValidation(await create(board({ panels: [textPanel('🐝'.repeat(10_001))] })), 'panels.0.text_panel.content');
      expectValidation(await create(board({ panels: [{ type: 'text' }] })), 'panels.0.text_panel', 'missing');
      expectValidation(await create(board({ panels: [{ type: 'text', text_panel: {} }] })), 'panels.0.text_panel.content', 'missing');
      expectValidation(await create(board({ panels: [{ type: 'text', text_panel: { content: 1 } }] })), 'panels.0.text_panel.content', 'incorrect_type');
    });

    it('panels keep their order; problems name the panel index', async () => {
      const b = await created(board({ panels: [textPanel('a'), sloPanel(), queryPanel(), textPanel('b')] }));
      expect(b.panels.map((p: any) => p.type)).toEqual(['text', 'slo', 'query', 'text']);
      expectValidation(await create(board({ panels: [textPanel('a'), textPanel('b'), { type: 'slo', slo_panel: {} }] })), 'panels.2.slo_panel.slo_id', 'missing');
    });
  });

  describe('positions and layout_generation', () => {
    const pos = (x: number, y: number, height: number, width: number) => ({ x_coordinate: x, y_coordinate: y, height, width });

    it('manual (the default): positions are kept as sent, 0 height/width included', async () => {
      const panels = [
        { ...textPanel(), position: pos(0, 0, 0, 0) },
        { ...queryPanel(), position: pos(3, 7, 5, 9) },
        { ...sloPanel(), position: pos(0, 100, 1, 12) },
      ];
      const b = await created(board({ panels }));
      expect(b.panels.map((p: any) => p.position)).toEqual([pos(0, 0, 0, 0), pos(3, 7, 5, 9), pos(0, 100, 1, 12)]);
      const m = await created(board({ panels, layout_generation: 'manual' }));
      expect(m.panels.map((p: any) => p.position)).toEqual(b.panels.map((p: any) => p.position));
    });

    it('auto: a 12-column grid, two 6-wide panels per row, heights 6 (query, slo) and 4 (text); sent positions ignored', async () => {
      const b = await created(
        board({
          layout_generation: 'auto',
          panels: [queryPanel(), { ...textPanel(), position: pos(9, 9, 9, 9) }, textPanel(), textPanel(), sloPanel()],
        }),
      );
      expect(b.panels.map((p: any) => p.position)).toEqual([pos(0, 0, 6, 6), pos(6, 0, 4, 6), pos(0, 6, 4, 6), pos(6, 6, 4, 6), pos(0, 10, 6, 6)]);
      expect(b.layout_generation).toBeUndefined();
      // Write-only and not remembered: a later manual PUT keeps what is sent.
      const u = await updated(b.id, board({ panels: [{ ...textPanel(), position: pos(1, 2, 3, 4) }] }));
      expect(u.panels[0].position).toEqual(pos(1, 2, 3, 4));
    });

    it('manual without any position lays out like auto; panels without one go below the positioned ones', async () => {
      const a = await created(board({ panels: [queryPanel(), textPanel(), sloPanel()] }));
      expect(a.panels.map((p: any) => p.position)).toEqual([pos(0, 0, 6, 6), pos(6, 0, 4, 6), pos(0, 6, 6, 6)]);
      const m = await created(board({ panels: [textPanel(), { ...queryPanel(), position: pos(0, 2, 5, 12) }, textPanel(), { ...textPanel(), position: pos(0, 0, 0, 12) }] }));
      // Lowest bottom: max(2+5, 0+default text height 4) = 7.
      expect(m.panels.map((p: any) => p.position)).toEqual([pos(0, 7, 4, 6), pos(0, 2, 5, 12), pos(6, 7, 4, 6), pos(0, 0, 0, 12)]);
    });

    it('position fields: integers ≥ 0; omitted or null are 0', async () => {
      const b = await created(board({ panels: [{ ...textPanel(), position: { x_coordinate: 2, height: null } }, { ...textPanel(), position: null }] }));
      expect(b.panels[0].position).toEqual(pos(2, 0, 0, 0));
      expect(b.panels[1].position).toEqual(pos(0, 4, 4, 6));
      for (const k of ['x_coordinate', 'y_coordinate', 'height', 'width']) {
        expectValidation(await create(board({ panels: [{ ...textPanel(), position: { [k]: -1 } }] })), `panels.0.position.${k}`);
        expectValidation(await create(board({ panels: [{ ...textPanel(), position: { [k]: 1.5 } }] })), `panels.0.position.${k}`, 'incorrect_type');
        expectValidation(await create(board({ panels: [{ ...textPanel(), position: { [k]: '1' } }] })), `panels.0.position.${k}`, 'incorrect_type');
      }
      expectValidation(await create(board({ panels: [{ ...textPanel(), position: [0, 0] }] })), 'panels.0.position', 'incorrect_type');
    });

    it('layout_generation: auto or manual only', async () => {
      await created(board({ layout_generation: null }));
      expectValidation(await create(board({ layout_generation: 'grid' })), 'layout_generation');
      expectValidation(await create(board({ layout_generation: true })), 'layout_generation', 'incorrect_type');
    });
  });

  describe('tags', () => {
    const tagged = (tags: unknown) => create(board({ tags }));
    const nTags = (n: number) => Array.from({ length: n }, (_, i) => ({ key: 'k'.repeat(i + 1), value: `v${i}` }));

    it('at most 10', async () => {
      expect((await created(board({ tags: nTags(10) }))).tags).toEqual(nTags(10));
      expectValidation(await tagged(nTags(11)), 'tags');
      const b = await created(board({ tags: nTags(1) }));
      expectValidation(await update(b.id, board({ tags: nTags(11) })), 'tags');
    });

    it('keys: lowercase letters only, 1..32 characters', async () => {
      expect((await created(board({ tags: [{ key: 'k'.repeat(32), value: 'v' }] }))).tags[0].key).toHaveLength(32);
      for (const key of ['k'.repeat(33), '', 'Team', 'TEAM', 'team1', 'updated_by', 'team-a', 'team a', 'é', 'tëam']) {
        expectValidation(await tagged([{ key, value: 'v' }]), 'tags.0.key');
      }
      expectValidation(await tagged([{ value: 'v' }]), 'tags.0.key', 'missing');
      expectValidation(await tagged([{ key: null, value: 'v' }]), 'tags.0.key', 'missing');
      expectValidation(await tagged([{ key: 3, value: 'v' }]), 'tags.0.key', 'incorrect_type');
    });

    it('values: a lowercase letter first, then lowercase letters, digits, "/" and "-"; 1..128 characters', async () => {
      const ok = ['v', 'a1/b-c', 'service/user-service', 'x'.repeat(128), 'a-', 'a/'];
      const b = await created(board({ tags: ok.map((value, i) => ({ key: 'k'.repeat(i + 1), value })) }));
      expect(b.tags.map((x: { value: string }) => x.value)).toEqual(ok);
      for (const value of ['x'.repeat(129), '', '1abc', '-abc', '/abc', 'Backend', 'backEnd', 'back_end', 'back end', 'back.end', 'bäck']) {
        expectValidation(await tagged([{ key: 'team', value }]), 'tags.0.value');
      }
      expectValidation(await tagged([{ key: 'team' }]), 'tags.0.value', 'missing');
      expectValidation(await tagged([{ key: 'team', value: 5 }]), 'tags.0.value', 'incorrect_type');
    });

    it('shape: an array of objects; null is none; a key only once; unknown fields dropped', async () => {
      expect(await created(board({ tags: null }))).not.toHaveProperty('tags');
      expect(await created(board({ tags: [] }))).not.toHaveProperty('tags');
      expectValidation(await tagged({ team: 'a' }), 'tags', 'incorrect_type');
      expectValidation(await tagged(['team:a']), 'tags.0', 'incorrect_type');
      expectValidation(await tagged([{ key: 'team', value: 'a' }, { key: 'team', value: 'b' }]), 'tags.1.key');
      const b = await created(board({ tags: [{ key: 'team', value: 'a', color: 'red' }] }));
      expect(b.tags).toEqual([{ key: 'team', value: 'a' }]);
      // Every bad tag is named.
      const res = expectValidation(await tagged([{ key: 'A', value: 'a' }, { key: 'b', value: 'B' }]), 'tags.0.key');
      expect(res.type_detail.map((d: { field: string }) => d.field)).toEqual(['tags.0.key', 'tags.1.value']);
    });
  });

  describe('preset_filters', () => {
    const filters = (n: number) => Array.from({ length: n }, (_, i) => ({ column: `col${i}`, alias: `Alias ${i}` }));

    it('at most 5, each {column, alias} non-empty strings', async () => {
      expect((await created(board({ preset_filters: filters(5) }))).preset_filters).toEqual(filters(5));
      expectValidation(await create(board({ preset_filters: filters(6) })), 'preset_filters');
      expectValidation(await create(board({ preset_filters: [{ alias: 'a' }] })), 'preset_filters.0.column', 'missing');
      expectValidation(await create(board({ preset_filters: [{ column: 'c' }] })), 'preset_filters.0.alias', 'missing');
      expectValidation(await create(board({ preset_filters: [{ column: '', alias: 'a' }] })), 'preset_filters.0.column', 'missing');
      expectValidation(await create(board({ preset_filters: [{ column: 'c', alias: 1 }] })), 'preset_filters.0.alias', 'incorrect_type');
      expectValidation(await create(board({ preset_filters: ['c'] })), 'preset_filters.0', 'incorrect_type');
      expectValidation(await create(board({ preset_filters: { column: 'c', alias: 'a' } })), 'preset_filters', 'incorrect_type');
      const extra = await created(board({ preset_filters: [{ column: 'c', alias: 'a', other: 1 }] }));
      expect(extra.preset_filters).toEqual([{ column: 'c', alias: 'a' }]);
    });

    it('on PUT: omitted (or null) keeps them, [] removes them, a list replaces them; 6 fails', async () => {
      const b = await created(board({ preset_filters: filters(2) }));
      expect((await updated(b.id, board({ name: 'kept' }))).preset_filters).toEqual(filters(2));
      expect((await updated(b.id, board({ preset_filters: null }))).preset_filters).toEqual(filters(2));
      expect(json(await get(b.id)).preset_filters).toEqual(filters(2));
      expect((await updated(b.id, board({ preset_filters: filters(5) }))).preset_filters).toEqual(filters(5));
      expectValidation(await update(b.id, board({ preset_filters: filters(6) })), 'preset_filters');
      expect(json(await get(b.id)).preset_filters).toEqual(filters(5));
      expect((await updated(b.id, board({ preset_filters: [] }))).preset_filters).toEqual([]);
      expect((await updated(b.id, board())).preset_filters).toEqual([]);
    });
  });

  describe('full-replacement PUT', () => {
    it('every omitted field but preset_filters takes its default', async () => {
      const b = await created(
        board({ description: 'd', panels: [queryPanel(), textPanel()], tags: [{ key: 'team', value: 'a' }], preset_filters: [{ column: 'c', alias: 'a' }] }),
      );
      const u = await updated(b.id, board({ name: 'bare' }));
      const { tags: _tags, ...untagged } = b;
      expect(u).toEqual({ ...untagged, name: 'bare', description: '', panels: [] });
      expect(json(await get(b.id))).toEqual(u);
    });

    it('panels are replaced as a whole: added, removed, re-ordered', async () => {
      const b = await created(board({ panels: [textPanel('a'), textPanel('b')] }));
      const u = await updated(b.id, board({ panels: [textPanel('b'), sloPanel(), textPanel('a')] }));
      expect(u.panels.map((p: any) => p.text_panel?.content ?? p.type)).toEqual(['b', 'slo', 'a']);
    });

    it('a failed PUT changes nothing', async () => {
      const b = await created(board({ description: 'keep', tags: [{ key: 'team', value: 'a' }] }));
      expectValidation(await update(b.id, board({ name: 'new', panels: [queryPanel({}, 'nope')] })), 'panels.0.query_panel.query_id');
      expect(json(await get(b.id))).toEqual(b);
    });
  });

  describe('query annotations', () => {
    it('creating and updating boards with query panels creates no board-source annotations', async () => {
      const count = async () => {
        const res = await t.app.inject({ method: 'GET', url: `/1/query_annotations/${DS}?include_board_annotations=true`, headers: t.config });
        expect(res.statusCode).toBe(200);
        return json(res) as { source: string }[];
      };
      const before = await count();
      const b = await created(board({ panels: [queryPanel(), queryPanel({}, queryId, secondAnnotationId)] }));
      await updated(b.id, board({ panels: [queryPanel({}, otherQueryId, otherAnnotationId)] }));
      const after = await count();
      expect(after).toHaveLength(before.length);
      expect(after.some((a) => a.source === 'board')).toBe(false);
    });
  });

  describe('permissions and tenancy', () => {
    it('401 without a valid key', async () => {
      expectLegacy(await t.app.inject({ method: 'GET', url: '/1/boards' }), 401);
      expectLegacy(await create(board(), { 'x-honeycomb-team': 'nope' }), 401);
      expectLegacy(await list(t.ingest), 401);
    });

    it('403 without Manage Public Boards on every route, whatever else the key may do', async () => {
      const b = await created(board());
      const key = await addKey(t, team, env, { permissions: { ...allPermissions('configuration'), manage_boards: false } });
      const h = key.headers;
      const check = (res: Res, path: string, method: string) => {
        expectLegacy(res, 403);
        expectContract(path, method, res);
      };
      check(await list(h), COLLECTION, 'GET');
      check(await create(board(), h), COLLECTION, 'POST');
      check(await get(b.id, h), ITEM, 'GET');
      check(await update(b.id, board(), h), ITEM, 'PUT');
      check(await del(b.id, h), ITEM, 'DELETE');
      // 403 even for a board that does not exist: the key is refused before any lookup.
      expectLegacy(await get('nope', h), 403);
      expect((await get(b.id)).statusCode).toBe(200);
    });

    it('Manage Public Boards alone suffices, query panels included', async () => {
      const key = await addKey(t, team, env, { permissions: { manage_boards: true } });
      const res = await create(board({ panels: [queryPanel(), sloPanel()] }), key.headers);
      expect(res.statusCode, res.body).toBe(201);
      const id = json(res).id;
      expect((await get(id, key.headers)).statusCode).toBe(200);
      expect((await update(id, board(), key.headers)).statusCode).toBe(200);
      expect((await del(id, key.headers)).statusCode).toBe(204);
    });

    it('another environment’s or team’s board is a 404 for get, PUT and DELETE, and unlisted', async () => {
      const b = await created(board({ name: 'private' }));
      const otherTeam = await secondTeam(t, 'Boards Other Team');
      for (const h of [other.headers, otherTeam.headers]) {
        expectLegacy(await get(b.id, h), 404, 'board not found');
        expectLegacy(await update(b.id, board({ name: 'stolen' }), h), 404, 'board not found');
        expectLegacy(await del(b.id, h), 404, 'board not found');
        expect(json(await list(h)).some((x: { id: string }) => x.id === b.id)).toBe(false);
      }
      expect(json(await get(b.id)).name).toBe('private');
    });
  });
});
