// /1/maps/dependencies/requests: dependency edges computed from generated traces with a known
// topology (several datasets, a trace crossing datasets, custom dataset definitions, cycles,
// self-calls, missing parents, spans in skipped datasets, span events, sample rates, the time
// window), filters, limit, cursor pagination at page boundaries, validation, permissions,
// tenancy, the pending state, and the contract.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { loadSettings } from '../src/settings.js';
import { expectContract } from './contract.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';
import { allPermissions } from '../src/domain/keys.js';
import { ingest } from './query-helpers.js';

const CREATE = '/1/maps/dependencies/requests';
const GET = '/1/maps/dependencies/requests/{requestId}';

type Edge = [parent: string, child: string, calls: number];
type Res = { statusCode: number; headers: Record<string, unknown>; body: string };

interface Span {
  trace: string;
  id?: string;
  parent?: string;
  service?: string;
  samplerate?: number;
  /** Seconds before now (default 600). */
  age?: number;
  extra?: Record<string, unknown>;
}

/** The field names of the span definitions, per dataset. */
const DEFAULT_FIELDS = { trace: 'trace.trace_id', id: 'trace.span_id', parent: 'trace.parent_id', service: 'service.name' };
const CUSTOM_FIELDS = { trace: 'tid', id: 'sid', parent: 'pid', service: 'svc' };

describe('/1/maps/dependencies/requests', { timeout: 60_000 }, () => {
  let t: TestApp;
  let nowS: number;

  const events = (fields: typeof DEFAULT_FIELDS, spans: Span[]) =>
    spans.map((s) => {
      const data: Record<string, unknown> = { [fields.trace]: s.trace, ...s.extra };
      if (s.id !== undefined) data[fields.id] = s.id;
      if (s.parent !== undefined) data[fields.parent] = s.parent;
      if (s.service !== undefined) data[fields.service] = s.service;
      return { time: new Date((nowS - (s.age ?? 600)) * 1000).toISOString(), ...(s.samplerate ? { samplerate: s.samplerate } : {}), data };
    });

  const create = (payload?: unknown, query = '', headers: Record<string, string> = t.config) =>
    t.app.inject({
      method: 'POST',
      url: `${CREATE}${query}`,
      headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
    });
  const get = (id: string, query = '', headers: Record<string, string> = t.config) =>
    t.app.inject({ method: 'GET', url: `${CREATE}/${id}${query}`, headers });

  /** Polls until the request is no longer pending; returns the last response. */
  async function settle(id: string, query = '', headers = t.config): Promise<Res> {
    for (let i = 0; i < 2000; i++) {
      const res = await get(id, query, headers);
      expect(res.statusCode, res.body).toBe(200);
      if (json(res).status !== 'pending') return res;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error('map dependency request never settled');
  }

  /** Creates a request, checks the create response and returns its id. */
  async function request(payload?: unknown, query = '', headers = t.config): Promise<string> {
    const res = await create(payload, query, headers);
    expect([200, 201], res.body).toContain(res.statusCode);
    expectContract(CREATE, 'post', res);
    const body = json(res);
    expect(res.statusCode).toBe(body.status === 'pending' ? 201 : 200);
    expect(body.status).not.toBe('error');
    expect(String(res.headers.location)).toMatch(new RegExp(`^http://[^/]+/1/maps/dependencies/requests/${body.request_id}$`));
    expect(Date.parse(String(res.headers['last-modified']))).not.toBeNaN();
    return body.request_id;
  }

  /** Every edge of a request, read with the largest page size. */
  async function edges(payload?: unknown, query = ''): Promise<Edge[]> {
    const id = await request(payload, query);
    const res = await settle(id, '?page[size]=100');
    expectContract(GET, 'get', res);
    const body = json(res);
    expect(body.status, res.body).toBe('ready');
    expect(body.links.next).toBeNull();
    return body.dependencies.map((d: any) => {
      expect(d.parent_node.type).toBe('service');
      expect(d.child_node.type).toBe('service');
      return [d.parent_node.name, d.child_node.name, d.call_count];
    });
  }

  beforeAll(async () => {
    t = await makeApp();
    nowS = Math.floor(t.clock.ms / 1000);

    // `api-spans` maps the span definitions to other field names.
    let res = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'api-spans' } });
    expect(res.statusCode, res.body).toBe(201);
    res = await t.app.inject({
      method: 'PATCH',
      url: '/1/dataset_definitions/api-spans',
      headers: t.config,
      payload: { trace_id: { name: 'tid' }, span_id: { name: 'sid' }, parent_id: { name: 'pid' }, service_name: { name: 'svc' } },
    });
    expect(res.statusCode, res.body).toBe(200);
    // A dataset without events (and so without a table) is skipped quietly.
    res = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'empty' } });
    expect(res.statusCode, res.body).toBe(201);

    const web: Span[] = [];
    const api: Span[] = [];
    const db: Span[] = [];
    // Five traces crossing three datasets: frontend → api → db, api → api (self-call),
    // api → frontend (closing the cycle frontend → api → frontend).
    for (let i = 0; i < 5; i++) {
      const trace = `main-${i}`;
      web.push({ trace, id: 's1', service: 'frontend' });
      api.push({ trace, id: 's2', parent: 's1', service: 'api' });
      db.push({ trace, id: 's3', parent: 's2', service: 'db' });
      // Errors as numbers: one of the api → api calls (1), the others not (0 or absent).
      api.push({ trace, id: 's4', parent: 's2', service: 'api', ...(i < 2 ? { extra: { error: i === 0 ? 1 : 0 } } : {}) });
      web.push({ trace, id: 's5', parent: 's4', service: 'frontend' });
    }
    // Two traces with two db calls each: api → db gets 4 more (9 in all).
    for (let i = 0; i < 2; i++) {
      api.push({ trace: `db-${i}`, id: 'a', service: 'api' });
      // Errors as booleans, then text (the column becomes a string): api → db has 1.
      db.push({ trace: `db-${i}`, id: 'b', parent: 'a', service: 'db', extra: { error: i === 0 } }, { trace: `db-${i}`, id: 'c', parent: 'a', service: 'db', extra: { error: i === 0 ? '' : 'false' } });
    }
    // Sampled: one stored child stands for 10 calls, another for 1 (worker → queue: 11).
    web.push({ trace: 'sampled', id: 'w', service: 'worker' });
    // An error message on the span that stands for 10 calls: worker → queue has 10 errors.
    db.push({ trace: 'sampled', id: 'q1', parent: 'w', service: 'queue', samplerate: 10, extra: { error: 'timeout' } }, { trace: 'sampled', id: 'q2', parent: 'w', service: 'queue' });

    // Nothing below makes an edge in the default window.
    web.push(
      { trace: 'orphan', id: 'o1', parent: 'nowhere', service: 'frontend' }, // parent never stored
      { trace: 'cross', id: 'x1', parent: 's1', service: 'db' }, // s1 exists, but in other traces
      { trace: 'main-0', id: 'n1', parent: 's1' }, // no service name
      { trace: 'main-0', id: 'n2', parent: 's1', service: '' }, // empty service name
      { trace: 'main-0', parent: 's1', service: 'frontend', extra: { 'meta.annotation_type': 'span_event' } }, // a span event, not a span
      { trace: 'main-0', id: 'e1', parent: 's1', service: 'frontend', extra: { 'meta.annotation_type': '' } }, // kept: frontend → frontend
      { trace: 'logs-1', id: 'k2', parent: 'k1', service: 'frontend' }, // parent in a skipped dataset
      // Three hours ago, outside the default two hours: frontend → legacy.
      { trace: 'old', id: 'o1', service: 'frontend', age: 3 * 3600 },
      { trace: 'old', id: 'o2', parent: 'o1', service: 'legacy', age: 3 * 3600 },
    );
    // `logs` has no service.name column, so it is skipped: its spans are neither parents nor children.
    const logs = [
      { time: new Date((nowS - 600) * 1000).toISOString(), data: { 'trace.trace_id': 'logs-1', 'trace.span_id': 'k1', 'trace.parent_id': null, svc: 'logger' } },
      { time: new Date((nowS - 600) * 1000).toISOString(), data: { 'trace.trace_id': 'main-0', 'trace.span_id': 'k9', 'trace.parent_id': 's1', svc: 'logger' } },
    ];
    await ingest(t, 'web', events(DEFAULT_FIELDS, web));
    await ingest(t, 'api-spans', events(CUSTOM_FIELDS, api));
    await ingest(t, 'db', events(DEFAULT_FIELDS, db));
    await ingest(t, 'logs', logs);
  });
  afterAll(() => t.close());

  /** The default window's edges: call count descending, then parent and child name. */
  const ALL: Edge[] = [
    ['worker', 'queue', 11],
    ['api', 'db', 9],
    ['api', 'api', 5],
    ['api', 'frontend', 5],
    ['frontend', 'api', 5],
    ['frontend', 'frontend', 1],
  ];

  it('computes the edges and call counts of the known topology across datasets', async () => {
    expect(await edges()).toEqual(ALL);
    // An empty body and a body of nulls are the same request.
    expect(await edges({})).toEqual(ALL);
    expect(await edges({ time_range: null, filters: null, start_time: null })).toEqual(ALL);
  });

  it('counts the calls whose child span is an error (error_count, a Waggle extension), sample-weighted, whatever the field\'s type', async () => {
    const id = await request();
    const res = await settle(id, '?page[size]=100');
    expectContract(GET, 'get', res);
    const counts = json(res).dependencies.map((d: any) => [d.parent_node.name, d.child_node.name, d.error_count]);
    expect(counts).toEqual([
      ['worker', 'queue', 10],
      ['api', 'db', 1],
      ['api', 'api', 1],
      ['api', 'frontend', 0],
      ['frontend', 'api', 0],
      ['frontend', 'frontend', 0],
    ]);
  });

  it('reads the window given by start_time, end_time and time_range', async () => {
    const old = nowS - 3 * 3600;
    const legacy: Edge[] = [['frontend', 'legacy', 1]];
    expect(await edges({ start_time: old - 60, end_time: old + 60 })).toEqual(legacy);
    expect(await edges({ end_time: old + 60, time_range: 120 })).toEqual(legacy);
    expect(await edges({ start_time: old - 60, time_range: 120 })).toEqual(legacy);
    // The window is [start, end): an end exactly at the spans' time excludes them.
    expect(await edges({ start_time: old - 60, end_time: old })).toEqual([]);
    // Four hours back reaches both.
    expect(await edges({ time_range: 4 * 3600 })).toEqual([...ALL.slice(0, 5), ['frontend', 'frontend', 1], ['frontend', 'legacy', 1]]);
    // A window with no spans at all.
    expect(await edges({ end_time: nowS - 86_400 })).toEqual([]);
  });

  it('keeps the edges touching a filtered service, at either end', async () => {
    expect(await edges({ filters: [{ name: 'db' }] })).toEqual([['api', 'db', 9]]);
    expect(await edges({ filters: [{ name: 'frontend', type: 'service' }] })).toEqual([
      ['api', 'frontend', 5],
      ['frontend', 'api', 5],
      ['frontend', 'frontend', 1],
    ]);
    expect(await edges({ filters: [{ name: 'queue' }, { name: 'db' }, { name: 'db' }] })).toEqual([
      ['worker', 'queue', 11],
      ['api', 'db', 9],
    ]);
    expect(await edges({ filters: [{ name: 'nobody' }] })).toEqual([]);
    // Service names are bound, never pasted into SQL.
    expect(await edges({ filters: [{ name: "db' OR 1=1 --" }] })).toEqual([]);
    expect(await edges({ filters: [] })).toEqual(ALL);
  });

  it('caps the edges at limit, keeping the first in order', async () => {
    expect(await edges(undefined, '?limit=2')).toEqual(ALL.slice(0, 2));
    expect(await edges(undefined, '?limit=1')).toEqual(ALL.slice(0, 1));
    expect(await edges({ filters: [{ name: 'frontend' }] }, '?limit=2')).toEqual([
      ['api', 'frontend', 5],
      ['frontend', 'api', 5],
    ]);
    expect(await edges(undefined, '?limit=64000')).toEqual(ALL);
  });

  it('pages with page[size] and page[after] until links.next is null', async () => {
    const id = await request();
    /** Follows links.next from the first page; returns each page's edges. */
    const walk = async (size: number | undefined) => {
      const pages: Edge[][] = [];
      let url: string | null = `${CREATE}/${id}${size === undefined ? '' : `?page[size]=${size}`}`;
      await settle(id);
      while (url) {
        const res = await t.app.inject({ method: 'GET', url, headers: t.config });
        expect(res.statusCode, res.body).toBe(200);
        expectContract(GET, 'get', res);
        expect(res.headers['cache-control']).toBe('private, max-age=86400');
        const body = json(res);
        pages.push(body.dependencies.map((d: any) => [d.parent_node.name, d.child_node.name, d.call_count]));
        url = body.links.next;
        if (url) expect(url).toMatch(new RegExp(`^/1/maps/dependencies/requests/${id}\\?page\\[after\\]=[A-Za-z0-9_-]+&page\\[size\\]=${size ?? 20}$`));
        expect(pages.length).toBeLessThan(20);
      }
      return pages;
    };
    expect(await walk(1)).toEqual(ALL.map((e) => [e]));
    // An exact multiple: the last full page has no next (no empty page after it).
    expect(await walk(3)).toEqual([ALL.slice(0, 3), ALL.slice(3)]);
    expect(await walk(6)).toEqual([ALL]);
    expect(await walk(4)).toEqual([ALL.slice(0, 4), ALL.slice(4)]);
    expect(await walk(100)).toEqual([ALL]);
    // Default page size 20.
    expect(await walk(undefined)).toEqual([ALL]);

    // Exact multiple of a limited request: 4 edges in pages of 2.
    const limited = await request(undefined, '?limit=4');
    await settle(limited);
    const first = json(await get(limited, '?page[size]=2'));
    expect(first.dependencies).toHaveLength(2);
    const second = json(await t.app.inject({ method: 'GET', url: first.links.next, headers: t.config }));
    expect(second.dependencies.map((d: any) => d.call_count)).toEqual([5, 5]);
    expect(second.links.next).toBeNull();

    // A cursor of another request, a made-up one, or past the end → 422; sizes out of range → 422.
    const cursorOfLimited = new URL(first.links.next, 'http://x').searchParams.get('page[after]')!;
    const bad = [
      `?page[after]=${cursorOfLimited}`,
      '?page[after]=bm9wZQ',
      `?page[after]=${Buffer.from(`${id}:7`).toString('base64url')}`,
      '?page[size]=0',
      '?page[size]=101',
      '?page[size]=abc',
      '?page[size]=1.5',
      '?page[size]=-1',
    ];
    for (const q of bad) {
      const res = await get(id, q);
      expect(res.statusCode, q).toBe(422);
      expectContract(GET, 'get', res);
      expect(json(res).type_detail[0].field, q).toMatch(/^page\[(after|size)\]$/);
    }
  });

  it('answers the create with 201 pending or 200 ready, and never changes a ready request', async () => {
    const res = await create();
    const body = json(res);
    expect(Object.keys(body).sort()).toEqual(['request_id', 'status']);
    expect(res.statusCode).toBe(body.status === 'pending' ? 201 : 200);
    const ready = await settle(body.request_id);
    expect(Date.parse(String(ready.headers['last-modified']))).not.toBeNaN();
    const before = json(ready);
    expect(before).toEqual({ request_id: body.request_id, status: 'ready', dependencies: expect.any(Array), links: { next: null } });
    // More spans later do not change it.
    await ingest(t, 'web', events(DEFAULT_FIELDS, [{ trace: 'later', id: 'l1', service: 'late' }, { trace: 'later', id: 'l2', parent: 'l1', service: 'late' }]));
    expect(json(await get(body.request_id))).toEqual(before);
    const fresh = await edges({ filters: [{ name: 'late' }] });
    expect(fresh).toEqual([['late', 'late', 1]]);
  });

  it('answers 201 pending with Location when the map is not done within the wait (WAGGLE_SERVICE_MAP_WAIT_MS=0), then 200 ready', async () => {
    const t2 = await makeApp({ settings: { serviceMapWaitMs: 0 } });
    try {
      const s = nowS;
      await ingest(t2, 'web', [
        { time: new Date((s - 60) * 1000).toISOString(), data: { 'trace.trace_id': 'x', 'trace.span_id': 'p', 'service.name': 'front' } },
        { time: new Date((s - 60) * 1000).toISOString(), data: { 'trace.trace_id': 'x', 'trace.span_id': 'c', 'trace.parent_id': 'p', 'service.name': 'back' } },
      ]);
      const res = await t2.app.inject({ method: 'POST', url: CREATE, headers: t2.config });
      expect(res.statusCode, res.body).toBe(201);
      expectContract(CREATE, 'post', res);
      const body = json(res);
      expect(body).toEqual({ request_id: expect.any(String), status: 'pending' });
      expect(String(res.headers.location)).toMatch(new RegExp(`/1/maps/dependencies/requests/${body.request_id}$`));
      let ready: any;
      for (let i = 0; i < 500; i++) {
        const got = await t2.app.inject({ method: 'GET', url: `${CREATE}/${body.request_id}`, headers: t2.config });
        ready = json(got);
        if (ready.status !== 'pending') break;
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(ready.status).toBe('ready');
      expect(ready.dependencies.map((d: any) => [d.parent_node.name, d.child_node.name, d.call_count])).toEqual([['front', 'back', 1]]);
    } finally {
      await t2.close();
    }
  });

  it('reads WAGGLE_SERVICE_MAP_WAIT_MS (default 200, 0 … 60000)', () => {
    expect(loadSettings({}).serviceMapWaitMs).toBe(200);
    expect(loadSettings({ WAGGLE_SERVICE_MAP_WAIT_MS: '0' }).serviceMapWaitMs).toBe(0);
    expect(() => loadSettings({ WAGGLE_SERVICE_MAP_WAIT_MS: '60001' })).toThrow(/WAGGLE_SERVICE_MAP_WAIT_MS/);
  });

  it('reports a stored pending request as pending, then computes it (as after a restart)', async () => {
    const { team, environment } = await initialTenancy(t);
    const id = 'pendingReq01';
    await t.store.createObject({
      id,
      kind: 'map_dependency_request',
      teamId: team.id,
      environmentId: environment.id,
      datasetId: null,
      scope: environment.id,
      uniqueKey: null,
      body: { id, start: nowS - 7200, end: nowS, limit: 10_000, services: ['db'], status: 'pending' },
    });
    const res = await get(id);
    expect(res.statusCode).toBe(200);
    expectContract(GET, 'get', res);
    const body = json(res);
    // The first GET answers the stored state (and starts the computation): pending.
    expect(body.status).toBe('pending');
    expect(body.dependencies).toBeNull();
    expect(body.links).toEqual({ next: null });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Date.parse(String(res.headers['last-modified']))).not.toBeNaN();
    const done = json(await settle(id));
    expect(done.status).toBe('ready');
    expect(done.dependencies.map((d: any) => [d.parent_node.name, d.child_node.name, d.call_count])).toEqual([['api', 'db', 9]]);

    // A run that fails (here: a corrupt stored window) ends in status error: no dependencies, an
    // error text, not cacheable.
    const broken = 'brokenReq001';
    await t.store.createObject({
      id: broken,
      kind: 'map_dependency_request',
      teamId: team.id,
      environmentId: environment.id,
      datasetId: null,
      scope: environment.id,
      uniqueKey: null,
      body: { id: broken, start: 'bogus' as unknown as number, end: nowS, limit: 10_000, services: [], status: 'pending' },
    });
    const failed = await settle(broken);
    expectContract(GET, 'get', failed);
    expect(json(failed)).toEqual({ request_id: broken, status: 'error', dependencies: null, links: { next: null }, error: 'computing the dependencies failed' });
    expect(failed.headers['cache-control']).toBe('no-store');
  });

  it('validates limit, the body and the time fields', async () => {
    const cases: [unknown, string, string, string][] = [
      // payload, query, field, code
      [undefined, '?limit=0', 'limit', 'invalid'],
      [undefined, '?limit=64001', 'limit', 'invalid'],
      [undefined, '?limit=abc', 'limit', 'invalid'],
      [undefined, '?limit=1.5', 'limit', 'invalid'],
      [undefined, '?limit=-1', 'limit', 'invalid'],
      [{ time_range: '3600' }, '', 'time_range', 'incorrect_type'],
      [{ time_range: 0 }, '', 'time_range', 'invalid'],
      [{ time_range: 1.5 }, '', 'time_range', 'incorrect_type'],
      [{ start_time: 'yesterday' }, '', 'start_time', 'incorrect_type'],
      [{ end_time: true }, '', 'end_time', 'incorrect_type'],
      [{ filters: {} }, '', 'filters', 'incorrect_type'],
      [{ filters: ['db'] }, '', 'filters.0', 'incorrect_type'],
      [{ filters: [{ type: 'service' }] }, '', 'filters.0.name', 'missing'],
      [{ filters: [{ name: 5 }] }, '', 'filters.0.name', 'incorrect_type'],
      [{ filters: [{ name: '' }] }, '', 'filters.0.name', 'missing'],
      [{ filters: [{ name: 'db', type: 'host' }] }, '', 'filters.0.type', 'invalid'],
      [{ time_range: 60, start_time: nowS - 120, end_time: nowS }, '', 'time_range', 'invalid'],
      [{ start_time: nowS, end_time: nowS }, '', 'start_time', 'invalid'],
      [{ start_time: nowS, end_time: nowS - 60 }, '', 'start_time', 'invalid'],
      [[], '', 'body', 'incorrect_type'],
      ['"text"', '', 'body', 'incorrect_type'],
    ];
    for (const [payload, query, field, code] of cases) {
      const res = await create(payload, query);
      const what = `${JSON.stringify(payload)} ${query}`;
      expect(res.statusCode, what).toBe(422);
      expect(String(res.headers['content-type']), what).toMatch(/^application\/problem\+json/);
      expectContract(CREATE, 'post', res);
      expect(json(res).type_detail.map((d: any) => [d.field, d.code]), what).toContainEqual([field, code]);
    }
    const broken = await create('{"time_range":', '');
    expect(broken.statusCode).toBe(400);
    expectContract(CREATE, 'post', broken);
    // Unknown fields are ignored; a form content type is read as JSON too (curl -d).
    expect(await edges({ filters: [{ name: 'db', colour: 'red' }], dataset: 'web' })).toEqual([['api', 'db', 9]]);
    const form = await t.app.inject({
      method: 'POST',
      url: CREATE,
      headers: { ...t.config, 'content-type': 'application/x-www-form-urlencoded' },
      payload: JSON.stringify({ filters: [{ name: 'db' }] }),
    });
    expect([200, 201]).toContain(form.statusCode);
  });

  it('refuses times past 9999-12-31T23:59:59Z (2^63, say) with a 422 on the field, and stores no request', async () => {
    const MAX = 253_402_300_799;
    const cases: [string, string, string][] = [
      // raw body, field, code
      ['{"time_range":9223372036854775808}', 'time_range', 'invalid'],
      ['{"start_time":9223372036854775808}', 'start_time', 'invalid'],
      ['{"end_time":9223372036854775808}', 'end_time', 'invalid'],
      ['{"start_time":1,"end_time":9223372036854775807}', 'end_time', 'invalid'],
      ['{"end_time":18446744073709551616,"time_range":60}', 'end_time', 'invalid'],
      [`{"start_time":${MAX + 1}}`, 'start_time', 'invalid'],
      [`{"time_range":${MAX + 1}}`, 'time_range', 'invalid'],
      ['{"time_range":1e400}', 'time_range', 'incorrect_type'],
      // Each in range, but the window they make ends past it.
      [`{"start_time":${MAX - 10},"time_range":60}`, 'time_range', 'invalid'],
      [`{"start_time":${MAX - 10}}`, 'time_range', 'invalid'],
    ];
    const stored = async () => (await t.store.listObjects('map_dependency_request', {})).length;
    const before = await stored();
    for (const [payload, field, code] of cases) {
      const res = await create(payload, '');
      expect(res.statusCode, payload).toBe(422);
      expectContract(CREATE, 'post', res);
      const body = json(res);
      expect(body.error).toBe('The provided input is invalid.');
      expect(body.type_detail.map((d: any) => [d.field, d.code]), payload).toContainEqual([field, code]);
    }
    expect(await stored()).toBe(before);
    // The last second itself is a window's end like any other.
    for (const ok of [{ start_time: MAX - 60, end_time: MAX }, { end_time: MAX, time_range: MAX - 1 }, { start_time: MAX - 60, time_range: 60 }]) {
      const res = await create(ok, '');
      expect([200, 201], `${JSON.stringify(ok)}: ${res.body}`).toContain(res.statusCode);
    }
  });

  it('needs Read Service Maps; another environment’s request is not found', async () => {
    const id = await request();
    const { team, environment } = await initialTenancy(t);
    const noMaps = await addKey(t, team, environment, { permissions: { ...allPermissions('configuration'), read_service_maps: false } });
    const onlyMaps = await addKey(t, team, environment, { permissions: { read_service_maps: true } });

    for (const res of [await create(undefined, '', noMaps.headers), await get(id, '', noMaps.headers)]) {
      expect(res.statusCode, res.body).toBe(403);
      expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    }
    expectContract(CREATE, 'post', await create(undefined, '', noMaps.headers));
    expectContract(GET, 'get', await get(id, '', noMaps.headers));
    // Read Service Maps alone is enough.
    const own = await request(undefined, '', onlyMaps.headers);
    expect(json(await settle(own, '', onlyMaps.headers)).status).toBe('ready');
    expect(json(await settle(id, '', onlyMaps.headers)).status).toBe('ready');

    // No key, an ingest key → 401.
    expect((await t.app.inject({ method: 'POST', url: CREATE })).statusCode).toBe(401);
    expect((await create(undefined, '', t.ingest)).statusCode).toBe(401);
    expect((await get(id, '', t.ingest)).statusCode).toBe(401);

    // Another environment: its own (empty) map, and this environment's ids are 404.
    const staging = await secondEnvironment(t, 'Staging Maps');
    const theirs = await request(undefined, '', staging.headers);
    const theirRes = await settle(theirs, '', staging.headers);
    expect(json(theirRes)).toEqual({ request_id: theirs, status: 'ready', dependencies: [], links: { next: null } });
    const foreign = await get(id, '', staging.headers);
    expect(foreign.statusCode).toBe(404);
    expectContract(GET, 'get', foreign);
    expect((await get(theirs)).statusCode).toBe(404);
    expect((await get('noSuchRequest')).statusCode).toBe(404);
  });
});
