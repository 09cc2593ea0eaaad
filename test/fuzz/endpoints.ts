// The fuzz suite's map of the API: every route with a valid request (path, headers, body), made
// against fixtures created once per app (a dataset with events, one of each resource), so that
// the fuzzer mutates requests that would otherwise succeed and reaches the code behind the checks.
import { expect } from 'vitest';
import { json, sendJson, type TestApp } from '../helpers.js';
import { toProtobuf, type Signal } from '../otlp-helpers.js';

/** The error dialect a route answers in (docs/api.md, docs/otlp.md, docs/ingest.md). */
export type Dialect = 'v1' | 'ingest' | 'kinesis' | 'v2' | 'otlp';

/** How a body goes on the wire once mutated. */
export type Encoding = 'json' | 'protobuf' | 'none';

export interface Endpoint {
  /** `METHOD /path/{param}` as the router has it. */
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The path template; `{x}` are path parameters filled from the fixtures (or `prepare`). */
  path: string;
  dialect: Dialect;
  encoding: Encoding;
  /** A valid body, a fresh copy each call; undefined: none is sent. */
  body?: (f: Fixtures) => unknown;
  /** A query string (without `?`) sent as it is. */
  query?: string;
  /** Signal of an OTLP route. */
  signal?: Signal;
  /** Creates what the request consumes (a DELETE's target) and answers its path parameters. */
  prepare?: (t: TestApp, f: Fixtures) => Promise<Record<string, string>>;
  /** The route can change columns: the two stores are compared after it succeeds. */
  changesColumns?: boolean;
}

/** Ids of the resources the requests name; one of each, created by `makeFixtures`. */
export interface Fixtures {
  dataset: string;
  team: string;
  recipient: string;
  board: string;
  view: string;
  trigger: string;
  slo: string;
  burnAlert: string;
  marker: string;
  markerSetting: string;
  derivedColumn: string;
  column: string;
  query: string;
  /** A query a trigger can run (one calculation, no orders). */
  triggerQuery: string;
  queryAnnotation: string;
  queryResult: string;
  signal: string;
  mapRequest: string;
  traceId: string;
  /** A trace with a typical one to compare it with (GET /1/traces/{ds}/{id}/typical). */
  slowTraceId: string;
  /** An environment and a key of it for /2/ PATCHes (never the ones the fuzzer authenticates with). */
  env2: string;
  apiKey2: string;
  nowS: number;
  /** The configuration key, for the web UI's sign-in body. */
  configKey: string;
  /** A signed-in web UI session cookie (`waggle_session=…`). */
  cookie: string;
}

export const DATASET = 'fuzz';

let counter = 0;
/** A name part no earlier request used (a counter, so a seed replays the same names). */
const unique = () => `${++counter}`;

async function created(res: { statusCode: number; body: string }, what: string): Promise<any> {
  expect([200, 201], `${what}: ${res.body}`).toContain(res.statusCode);
  return json(res);
}

const post = (t: TestApp, url: string, body: unknown, headers = t.config) => sendJson(t, 'POST', url, body, headers);

/** A query as the query builder sends it. */
const querySpec = () => ({
  time_range: 7200,
  granularity: 60,
  calculations: [{ op: 'COUNT' }, { op: 'P99', column: 'duration_ms' }],
  filters: [{ column: 'status', op: '>=', value: 200 }, { column: 'region', op: 'in', value: ['eu', 'us'] }],
  filter_combination: 'AND',
  breakdowns: ['region'],
  orders: [{ op: 'COUNT', order: 'descending' }],
  havings: [{ calculate_op: 'COUNT', op: '>', value: 0 }],
  limit: 100,
});

const event = (i: number, nowS: number) => ({
  time: new Date((nowS - 60 * (i % 100)) * 1000).toISOString(),
  samplerate: 1,
  data: {
    'service.name': i % 2 ? 'checkout' : 'cart',
    'trace.trace_id': `t${i % 10}`,
    'trace.span_id': `s${i}`,
    'trace.parent_id': i % 10 === 0 ? undefined : `s${i - 1}`,
    name: 'GET /cart',
    duration_ms: 10 + (i % 50) * 7.5,
    status: i % 17 === 0 ? 500 : 200,
    region: i % 3 ? 'eu' : 'us',
    ok: i % 17 !== 0,
    error: i % 17 === 0,
  },
});

const otlpBody = (signal: Signal, nowS: number) => {
  const ns = `${nowS}000000000`;
  const resource = { attributes: [{ key: 'service.name', value: { stringValue: 'fuzz-svc' } }] };
  const attrs = [{ key: 'http.status_code', value: { intValue: '200' } }, { key: 'region', value: { stringValue: 'eu' } }];
  if (signal === 'traces') {
    return {
      resourceSpans: [{
        resource,
        scopeSpans: [{
          scope: { name: 'fuzz', version: '1' },
          spans: [{
            traceId: '0102030405060708090a0b0c0d0e0f10', spanId: '0102030405060708', name: 'GET /x', kind: 2,
            startTimeUnixNano: ns, endTimeUnixNano: ns, attributes: attrs, status: { code: 1 },
            events: [{ timeUnixNano: ns, name: 'ev', attributes: attrs }],
            links: [{ traceId: '1102030405060708090a0b0c0d0e0f10', spanId: '1102030405060708' }],
          }],
        }],
      }],
    };
  }
  if (signal === 'logs') {
    return { resourceLogs: [{ resource, scopeLogs: [{ scope: { name: 'fuzz' }, logRecords: [{ timeUnixNano: ns, severityNumber: 9, severityText: 'INFO', body: { stringValue: 'hello' }, attributes: attrs }] }] }] };
  }
  return {
    resourceMetrics: [{
      resource,
      scopeMetrics: [{
        scope: { name: 'fuzz' },
        metrics: [
          { name: 'requests', sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [{ timeUnixNano: ns, asInt: '5', attributes: attrs }] } },
          { name: 'latency', histogram: { aggregationTemporality: 2, dataPoints: [{ timeUnixNano: ns, count: '2', sum: 3.5, bucketCounts: ['1', '1'], explicitBounds: [1], attributes: attrs }] } },
          { name: 'temp', gauge: { dataPoints: [{ timeUnixNano: ns, asDouble: 21.5 }] } },
        ],
      }],
    }],
  };
};

/** Creates the fixtures: a dataset with events and one of each resource that paths name. */
export async function makeFixtures(t: TestApp): Promise<Fixtures> {
  const nowS = Math.floor(t.clock.ms / 1000);
  const ds = DATASET;
  await created(await post(t, '/1/datasets', { name: ds }), 'dataset');
  const batch = await t.app.inject({ method: 'POST', url: `/1/batch/${ds}`, headers: { ...t.ingest, 'content-type': 'application/json' }, payload: JSON.stringify(Array.from({ length: 200 }, (_, i) => event(i, nowS))) });
  expect(batch.statusCode, batch.body).toBe(200);
  const roots = ['fuzz-slow', 'fuzz-typical'].map((id, i) => ({ time: new Date((nowS - 30) * 1000).toISOString(), data: { 'trace.trace_id': id, 'trace.span_id': `${id}-root`, 'service.name': 'fuzz-root', name: 'GET /compare', duration_ms: 500 - i * 400 } }));
  const rootsBatch = await t.app.inject({ method: 'POST', url: `/1/batch/${ds}`, headers: { ...t.ingest, 'content-type': 'application/json' }, payload: JSON.stringify(roots) });
  expect(rootsBatch.statusCode, rootsBatch.body).toBe(200);
  const recipient = (await created(await post(t, '/1/recipients', { type: 'webhook', details: hookDetails() }), 'recipient')).id;
  const board = (await created(await post(t, '/1/boards', { name: 'Fuzz', type: 'flexible' }), 'board')).id;
  const view = (await created(await post(t, `/1/boards/${board}/views`, { name: 'v', filters: [{ column: 'region', operation: '=', value: 'eu' }] }), 'view')).id;
  const query = (await created(await post(t, `/1/queries/${ds}`, querySpec()), 'query')).id;
  const derivedColumn = (await created(await post(t, `/1/derived_columns/${ds}`, { alias: 'slow', expression: 'GT($duration_ms, 100)' }), 'derived column')).id;
  const ok = (await created(await post(t, `/1/derived_columns/${ds}`, { alias: 'sli_ok', expression: 'LT($status, 500)' }), 'sli')).id;
  void ok;
  const slo = (await created(await post(t, `/1/slos/${ds}`, { name: 'S', sli: { alias: 'sli_ok' }, time_period_days: 7, target_per_million: 990000 }), 'slo')).id;
  const triggerQuery = (await created(await post(t, `/1/queries/${ds}`, { time_range: 900, calculations: [{ op: 'COUNT' }], filters: [{ column: 'status', op: '>=', value: 500 }] }), 'trigger query')).id;
  const trigger = (await created(await post(t, `/1/triggers/${ds}`, triggerBody(triggerQuery, recipient)), 'trigger')).id;
  const burnAlert = (await created(await post(t, `/1/burn_alerts/${ds}`, { alert_type: 'exhaustion_time', slo: { id: slo }, exhaustion_minutes: 60, recipients: [{ id: recipient }] }), 'burn alert')).id;
  const marker = (await created(await post(t, `/1/markers/${ds}`, { message: 'deploy', type: 'deploy', start_time: nowS - 60 }), 'marker')).id;
  const markerSetting = (await created(await post(t, `/1/marker_settings/${ds}`, { type: 'deploy', color: '#F96E11' }), 'marker setting')).id;
  const column = (await created(await post(t, `/1/columns/${ds}`, { key_name: 'declared', type: 'string', description: 'd' }), 'column')).id;
  const queryAnnotation = (await created(await post(t, `/1/query_annotations/${ds}`, { name: 'qa', query_id: query }), 'query annotation')).id;
  const queryResult = (await created(await post(t, `/1/query_results/${ds}`, { query_id: query }), 'query result')).id;
  const signal = (await created(await post(t, `/1/signals/${ds}`, { service_name: 'checkout', kind: 'error_rate' }), 'signal')).id;
  const mapRequest = (await created(await post(t, '/1/maps/dependencies/requests', mapBody(nowS)), 'map request')).request_id;
  const team = t.init.team.slug;
  const env2 = (await created(await t.app.inject({ method: 'POST', url: `/2/teams/${team}/environments`, headers: t.mgmt, payload: { data: { type: 'environments', attributes: { name: 'fuzz-env' } } } }), 'environment')).data.id;
  const apiKey2 = (await created(await t.app.inject({ method: 'POST', url: `/2/teams/${team}/api-keys`, headers: t.mgmt, payload: apiKeyBody(env2) }), 'api key')).data.id;
  return {
    dataset: ds, team, recipient, board, view, trigger, slo, burnAlert, marker, markerSetting,
    derivedColumn, column, query, triggerQuery, queryAnnotation, queryResult, signal, mapRequest, traceId: 't1', slowTraceId: 'fuzz-slow', env2, apiKey2, nowS,
    configKey: t.init.keys.configuration, cookie: await signIn(t),
  };
}

/** The origin of an injected request: what the web UI's requests carry (src/http/session.ts). */
export const OWN_ORIGIN = 'http://localhost';

async function signIn(t: TestApp): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/1/ui/session', headers: { origin: OWN_ORIGIN, 'content-type': 'application/json' }, payload: JSON.stringify({ key: t.init.keys.configuration }) });
  const cookie = /waggle_session=([^;]+)/.exec([res.headers['set-cookie'] ?? []].flat().join('\n'))?.[1];
  expect(cookie, res.body).toBeDefined();
  return `waggle_session=${cookie}`;
}

const hookDetails = () => ({
  webhook_name: 'hook', webhook_url: 'http://127.0.0.1:9/hook',
  webhook_payloads: { template_variables: [{ name: 'severity', default_value: 'warn' }], payload_templates: { trigger: { body: '{"name": {{ .Name | toJson }}, "severity": "{{ .Vars.severity }}"}' } } },
});

const triggerBody = (queryId: string, recipient: string) => ({
  name: 'errors', description: 'd', query_id: queryId, frequency: 300, threshold: { op: '>', value: 10, exceeded_limit: 1 },
  alert_type: 'on_change', disabled: false, recipients: [{ id: recipient }], tags: [{ key: 'team', value: 'blue' }],
  evaluation_schedule_type: 'window', evaluation_schedule: { window: { days_of_week: ['monday', 'friday'], start_time: '09:00', end_time: '17:00' } },
});
const triggerWithQuery = (recipients: unknown[] = [{ type: 'webhook', target: 'hook' }]) => ({
  name: 'inline', frequency: 900, threshold: { op: '>=', value: 1 },
  query: { time_range: 900, calculations: [{ op: 'COUNT' }], filters: [{ column: 'status', op: '=', value: 500 }] },
  recipients,
});
const mapBody = (nowS: number) => ({ start_time: nowS - 3600, end_time: nowS, filters: [{ name: 'checkout' }], limit: 100 });
const apiKeyBody = (env: string) => ({
  data: { type: 'api-keys', attributes: { key_type: 'configuration', name: 'fuzz key', disabled: false, permissions: { create_datasets: true, manage_columns: true } }, relationships: { environment: { data: { id: env, type: 'environments' } } } },
});
const bubbleBody = (f: Fixtures) => ({
  query: { time_range: 7200, calculations: [{ op: 'HEATMAP', column: 'duration_ms' }], filters: [{ column: 'region', op: 'exists' }] },
  selection: { start_time: f.nowS - 1800, end_time: f.nowS, column: 'duration_ms', lower: 100, upper: 300 },
  baseline: { kind: 'past', offset_seconds: 86_400 },
});
const boardBody = (f: Fixtures) => ({
  name: 'Fuzz board', description: 'd', type: 'flexible',
  panels: [
    { type: 'query', query_panel: { query_id: f.query, query_annotation_id: f.queryAnnotation, query_style: 'graph', visualization_settings: { charts: [{ chart_index: 0, chart_type: 'line', log_scale: false }] } }, position: { x_coordinate: 0, y_coordinate: 0, width: 6, height: 4 } },
    { type: 'slo', slo_panel: { slo_id: f.slo } },
    { type: 'text', text_panel: { content: '# Title\n*text*' } },
  ],
  preset_filters: [{ column: 'region', alias: 'Region' }],
  tags: [{ key: 'team', value: 'blue' }],
});
const sloBody = () => ({ name: 'Checkout', description: 'd', sli: { alias: 'sli_ok' }, time_period_days: 14, target_per_million: 999000, tags: [{ key: 'team', value: 'blue' }] });
const budgetRateBody = (f: Fixtures) => ({
  alert_type: 'budget_rate', slo: { id: f.slo }, budget_rate_window_minutes: 60, budget_rate_decrease_threshold_per_million: 1000,
  description: 'fast burn', recipients: [{ id: f.recipient, details: { variables: [{ name: 'severity', value: 'critical' }] } }],
});
const kinesisBody = (f: Fixtures) => ({
  requestId: 'b9c2ff2a-8e3e-4c55-9a2b-3f7b9a9a0c11',
  timestamp: f.nowS * 1000,
  // `data` is base64 of JSON on the wire; kept as an object here so that mutations reach the
  // event inside, and encoded by `wireBody`.
  records: [{ data: { time: new Date(f.nowS * 1000).toISOString(), a: 1, b: 'x', nested: { c: true } } }, { data: { a: 2 } }],
});

/** Every route, each with a valid request. */
export const ENDPOINTS: Endpoint[] = [
  { name: 'GET /1/auth', method: 'GET', path: '/1/auth', dialect: 'v1', encoding: 'none' },
  { name: 'GET /1/datasets', method: 'GET', path: '/1/datasets', dialect: 'v1', encoding: 'none' },
  { name: 'POST /1/datasets', method: 'POST', path: '/1/datasets', dialect: 'v1', encoding: 'json', body: () => ({ name: 'Fuzz Made', description: 'd', expand_json_depth: 2 }) },
  { name: 'GET /1/datasets/{ds}', method: 'GET', path: '/1/datasets/{dataset}', dialect: 'v1', encoding: 'none' },
  { name: 'PUT /1/datasets/{ds}', method: 'PUT', path: '/1/datasets/{dataset}', dialect: 'v1', encoding: 'json', body: () => ({ description: 'fuzzed', expand_json_depth: 3, settings: { delete_protected: true } }) },
  {
    name: 'DELETE /1/datasets/{ds}', method: 'DELETE', path: '/1/datasets/{dataset}', dialect: 'v1', encoding: 'none', changesColumns: true,
    prepare: async (t) => {
      const name = `doomed-${unique()}`;
      await created(await post(t, '/1/datasets', { name }), 'doomed dataset');
      const res = await t.app.inject({ method: 'PUT', url: `/1/datasets/${name}`, headers: t.config, payload: { settings: { delete_protected: false } } });
      expect(res.statusCode, res.body).toBe(200);
      return { dataset: name };
    },
  },
  { name: 'GET /1/dataset_definitions/{ds}', method: 'GET', path: '/1/dataset_definitions/{dataset}', dialect: 'v1', encoding: 'none' },
  { name: 'PATCH /1/dataset_definitions/{ds}', method: 'PATCH', path: '/1/dataset_definitions/{dataset}', dialect: 'v1', encoding: 'json', body: () => ({ duration_ms: { name: 'duration_ms', column_type: 'column' }, name: { name: 'name', column_type: 'column' }, trace_id: { name: 'trace.trace_id' } }) },
  { name: 'GET /1/derived_columns/{ds}', method: 'GET', path: '/1/derived_columns/{dataset}', dialect: 'v1', encoding: 'none', query: 'alias=slow' },
  { name: 'POST /1/derived_columns/{ds}', method: 'POST', path: '/1/derived_columns/{dataset}', dialect: 'v1', encoding: 'json', body: () => ({ alias: 'fuzzed_dc', description: 'd', expression: 'IF(EQUALS($region, "eu"), MUL($duration_ms, 2), COALESCE($status, 0))' }) },
  { name: 'POST /1/derived_columns/{ds}/validate', method: 'POST', path: '/1/derived_columns/{dataset}/validate', dialect: 'v1', encoding: 'json', body: () => ({ alias: 'checked', expression: 'MUL($duration_ms, 2)' }) },
  { name: 'GET /1/derived_columns/{ds}/{id}', method: 'GET', path: '/1/derived_columns/{dataset}/{derivedColumn}', dialect: 'v1', encoding: 'none' },
  { name: 'PUT /1/derived_columns/{ds}/{id}', method: 'PUT', path: '/1/derived_columns/{dataset}/{derivedColumn}', dialect: 'v1', encoding: 'json', body: () => ({ alias: 'slow', expression: 'GT($duration_ms, 150)', description: 'd' }) },
  {
    name: 'DELETE /1/derived_columns/{ds}/{id}', method: 'DELETE', path: '/1/derived_columns/{dataset}/{derivedColumn}', dialect: 'v1', encoding: 'none',
    prepare: async (t, f) => ({ derivedColumn: (await created(await post(t, `/1/derived_columns/${f.dataset}`, { alias: `gone_${unique()}`, expression: '1' }), 'dc')).id }),
  },
  { name: 'GET /1/deliveries', method: 'GET', path: '/1/deliveries', dialect: 'v1', encoding: 'none', query: 'limit=10' },
  { name: 'GET /1/query_history', method: 'GET', path: '/1/query_history', dialect: 'v1', encoding: 'none', query: 'dataset={dataset}&column=duration_ms&q=COUNT&sort=most_run&limit=10' },
  { name: 'GET /1/columns/{ds}', method: 'GET', path: '/1/columns/{dataset}', dialect: 'v1', encoding: 'none', query: 'key_name=region' },
  { name: 'POST /1/columns/{ds}', method: 'POST', path: '/1/columns/{dataset}', dialect: 'v1', encoding: 'json', changesColumns: true, body: () => ({ key_name: 'fuzz.col', type: 'integer', description: 'd', hidden: false }) },
  { name: 'GET /1/columns/{ds}/{id}', method: 'GET', path: '/1/columns/{dataset}/{column}', dialect: 'v1', encoding: 'none' },
  { name: 'PUT /1/columns/{ds}/{id}', method: 'PUT', path: '/1/columns/{dataset}/{column}', dialect: 'v1', encoding: 'json', changesColumns: true, body: () => ({ key_name: 'declared', type: 'float', description: 'changed', hidden: true }) },
  {
    name: 'DELETE /1/columns/{ds}/{id}', method: 'DELETE', path: '/1/columns/{dataset}/{column}', dialect: 'v1', encoding: 'none', changesColumns: true,
    prepare: async (t, f) => ({ column: (await created(await post(t, `/1/columns/${f.dataset}`, { key_name: `gone.${unique()}`, type: 'string' }), 'col')).id }),
  },
  { name: 'POST /1/queries/{ds}', method: 'POST', path: '/1/queries/{dataset}', dialect: 'v1', encoding: 'json', body: querySpec },
  { name: 'GET /1/queries/{ds}/{id}', method: 'GET', path: '/1/queries/{dataset}/{query}', dialect: 'v1', encoding: 'none' },
  { name: 'GET /1/query_annotations/{ds}', method: 'GET', path: '/1/query_annotations/{dataset}', dialect: 'v1', encoding: 'none', query: 'include_board_annotations=true' },
  { name: 'POST /1/query_annotations/{ds}', method: 'POST', path: '/1/query_annotations/{dataset}', dialect: 'v1', encoding: 'json', body: (f) => ({ name: 'n', description: 'd', query_id: f.query }) },
  { name: 'GET /1/query_annotations/{ds}/{id}', method: 'GET', path: '/1/query_annotations/{dataset}/{queryAnnotation}', dialect: 'v1', encoding: 'none' },
  { name: 'PUT /1/query_annotations/{ds}/{id}', method: 'PUT', path: '/1/query_annotations/{dataset}/{queryAnnotation}', dialect: 'v1', encoding: 'json', body: (f) => ({ name: 'qa', description: 'changed', query_id: f.query }) },
  {
    name: 'DELETE /1/query_annotations/{ds}/{id}', method: 'DELETE', path: '/1/query_annotations/{dataset}/{queryAnnotation}', dialect: 'v1', encoding: 'none',
    prepare: async (t, f) => ({ queryAnnotation: (await created(await post(t, `/1/query_annotations/${f.dataset}`, { name: 'gone', query_id: f.query }), 'qa')).id }),
  },
  { name: 'POST /1/query_results/{ds}', method: 'POST', path: '/1/query_results/{dataset}', dialect: 'v1', encoding: 'json', body: (f) => ({ query_id: f.query, disable_series: false, limit: 100 }) },
  { name: 'GET /1/query_results/{ds}/{id}', method: 'GET', path: '/1/query_results/{dataset}/{queryResult}', dialect: 'v1', encoding: 'none' },
  { name: 'GET /1/query_results/{ds}/{id}/bands', method: 'GET', path: '/1/query_results/{dataset}/{queryResult}/bands', dialect: 'v1', encoding: 'none', query: 'seasonality=day&periods=2' },
  { name: 'GET /1/boards', method: 'GET', path: '/1/boards', dialect: 'v1', encoding: 'none' },
  { name: 'POST /1/boards', method: 'POST', path: '/1/boards', dialect: 'v1', encoding: 'json', body: boardBody },
  { name: 'GET /1/boards/{id}', method: 'GET', path: '/1/boards/{board}', dialect: 'v1', encoding: 'none' },
  { name: 'PUT /1/boards/{id}', method: 'PUT', path: '/1/boards/{board}', dialect: 'v1', encoding: 'json', body: boardBody },
  {
    name: 'DELETE /1/boards/{id}', method: 'DELETE', path: '/1/boards/{board}', dialect: 'v1', encoding: 'none',
    prepare: async (t) => ({ board: (await created(await post(t, '/1/boards', { name: 'gone', type: 'flexible' }), 'board')).id }),
  },
  { name: 'GET /1/boards/{id}/views', method: 'GET', path: '/1/boards/{board}/views', dialect: 'v1', encoding: 'none' },
  { name: 'POST /1/boards/{id}/views', method: 'POST', path: '/1/boards/{board}/views', dialect: 'v1', encoding: 'json', body: () => ({ name: 'view', filters: [{ column: 'status', operation: 'in', value: [200, 500] }, { column: 'region', operation: 'exists' }] }) },
  { name: 'GET /1/boards/{id}/views/{id}', method: 'GET', path: '/1/boards/{board}/views/{view}', dialect: 'v1', encoding: 'none' },
  { name: 'PUT /1/boards/{id}/views/{id}', method: 'PUT', path: '/1/boards/{board}/views/{view}', dialect: 'v1', encoding: 'json', body: () => ({ name: 'v', filters: [{ column: 'region', operation: '!=', value: 'us' }] }) },
  {
    name: 'DELETE /1/boards/{id}/views/{id}', method: 'DELETE', path: '/1/boards/{board}/views/{view}', dialect: 'v1', encoding: 'none',
    prepare: async (t, f) => ({ view: (await created(await post(t, `/1/boards/${f.board}/views`, { name: `gone-${unique()}`, filters: [{ column: 'region', operation: 'exists' }] }), 'view')).id }),
  },
  { name: 'GET /1/burn_alerts/{ds}', method: 'GET', path: '/1/burn_alerts/{dataset}', dialect: 'v1', encoding: 'none', query: 'slo_id={slo}' },
  { name: 'POST /1/burn_alerts/{ds}', method: 'POST', path: '/1/burn_alerts/{dataset}', dialect: 'v1', encoding: 'json', body: budgetRateBody },
  { name: 'GET /1/burn_alerts/{ds}/{id}', method: 'GET', path: '/1/burn_alerts/{dataset}/{burnAlert}', dialect: 'v1', encoding: 'none' },
  { name: 'PUT /1/burn_alerts/{ds}/{id}', method: 'PUT', path: '/1/burn_alerts/{dataset}/{burnAlert}', dialect: 'v1', encoding: 'json', body: (f) => ({ alert_type: 'exhaustion_time', slo: { id: f.slo }, exhaustion_minutes: 120, recipients: [{ id: f.recipient }] }) },
  {
    name: 'DELETE /1/burn_alerts/{ds}/{id}', method: 'DELETE', path: '/1/burn_alerts/{dataset}/{burnAlert}', dialect: 'v1', encoding: 'none',
    prepare: async (t, f) => ({ burnAlert: (await created(await post(t, `/1/burn_alerts/${f.dataset}`, { alert_type: 'exhaustion_time', slo: { id: f.slo }, exhaustion_minutes: 30, recipients: [{ id: f.recipient }] }), 'ba')).id }),
  },
  { name: 'POST /1/bubbleup/{ds}', method: 'POST', path: '/1/bubbleup/{dataset}', dialect: 'v1', encoding: 'json', body: bubbleBody },
  { name: 'POST /1/batch/{ds}', method: 'POST', path: '/1/batch/{dataset}', dialect: 'ingest', encoding: 'json', changesColumns: true, body: (f) => [event(1, f.nowS), event(17, f.nowS), { data: { fresh: 'x', n: 1 } }] },
  { name: 'POST /1/events/{ds}', method: 'POST', path: '/1/events/{dataset}', dialect: 'ingest', encoding: 'json', changesColumns: true, body: (f) => event(3, f.nowS).data },
  { name: 'POST /1/kinesis_events/{ds}', method: 'POST', path: '/1/kinesis_events/{dataset}', dialect: 'kinesis', encoding: 'json', changesColumns: true, body: kinesisBody },
  { name: 'GET /1/recipients', method: 'GET', path: '/1/recipients', dialect: 'v1', encoding: 'none' },
  { name: 'POST /1/recipients', method: 'POST', path: '/1/recipients', dialect: 'v1', encoding: 'json', body: () => ({ type: 'webhook', details: { webhook_name: `h-${unique()}`, webhook_url: 'http://127.0.0.1:9/x', webhook_secret: 's', webhook_headers: [{ header: 'X-A', value: 'b' }] } }) },
  { name: 'GET /1/recipients/{id}', method: 'GET', path: '/1/recipients/{recipient}', dialect: 'v1', encoding: 'none' },
  { name: 'PUT /1/recipients/{id}', method: 'PUT', path: '/1/recipients/{recipient}', dialect: 'v1', encoding: 'json', body: () => ({ type: 'webhook', details: hookDetails() }) },
  {
    name: 'DELETE /1/recipients/{id}', method: 'DELETE', path: '/1/recipients/{recipient}', dialect: 'v1', encoding: 'none',
    prepare: async (t) => ({ recipient: (await created(await post(t, '/1/recipients', { type: 'email', details: { email_address: `${unique()}@example.com` } }), 'recipient')).id }),
  },
  { name: 'POST /1/recipients/{id}/test', method: 'POST', path: '/1/recipients/{recipient}/test', dialect: 'v1', encoding: 'none' },
  { name: 'GET /1/recipients/{id}/triggers', method: 'GET', path: '/1/recipients/{recipient}/triggers', dialect: 'v1', encoding: 'none' },
  { name: 'POST /1/reporting/slos/historical', method: 'POST', path: '/1/reporting/slos/historical', dialect: 'v1', encoding: 'json', body: (f) => ({ ids: [f.slo], start_time: f.nowS - 3600, end_time: f.nowS }) },
  { name: 'POST /1/raw_events/{ds}', method: 'POST', path: '/1/raw_events/{dataset}', dialect: 'v1', encoding: 'json', body: () => ({ query: { time_range: 7200, filters: [{ column: 'status', op: '=', value: 500 }] }, limit: 5 }) },
  { name: 'GET /1/triggers/{ds}', method: 'GET', path: '/1/triggers/{dataset}', dialect: 'v1', encoding: 'none' },
  { name: 'POST /1/triggers/{ds}', method: 'POST', path: '/1/triggers/{dataset}', dialect: 'v1', encoding: 'json', body: () => triggerWithQuery() },
  { name: 'GET /1/triggers/{ds}/{id}', method: 'GET', path: '/1/triggers/{dataset}/{trigger}', dialect: 'v1', encoding: 'none' },
  { name: 'PUT /1/triggers/{ds}/{id}', method: 'PUT', path: '/1/triggers/{dataset}/{trigger}', dialect: 'v1', encoding: 'json', body: (f) => triggerBody(f.triggerQuery, f.recipient) },
  {
    name: 'DELETE /1/triggers/{ds}/{id}', method: 'DELETE', path: '/1/triggers/{dataset}/{trigger}', dialect: 'v1', encoding: 'none',
    prepare: async (t, f) => ({ trigger: (await created(await post(t, `/1/triggers/${f.dataset}`, triggerWithQuery([{ id: f.recipient }])), 'trigger')).id }),
  },
  { name: 'GET /1/traces/{ds}/{trace}', method: 'GET', path: '/1/traces/{dataset}/{traceId}', dialect: 'v1', encoding: 'none' },
  { name: 'GET /1/traces/{ds}/{trace}/typical', method: 'GET', path: '/1/traces/{dataset}/{slowTraceId}/typical', dialect: 'v1', encoding: 'none' },
  { name: 'POST /1/maps/dependencies/requests', method: 'POST', path: '/1/maps/dependencies/requests', dialect: 'v1', encoding: 'json', body: (f) => mapBody(f.nowS) },
  { name: 'GET /1/maps/dependencies/requests/{id}', method: 'GET', path: '/1/maps/dependencies/requests/{mapRequest}', dialect: 'v1', encoding: 'none' },
  { name: 'GET /1/markers/{ds}', method: 'GET', path: '/1/markers/{dataset}', dialect: 'v1', encoding: 'none' },
  { name: 'POST /1/markers/{ds}', method: 'POST', path: '/1/markers/{dataset}', dialect: 'v1', encoding: 'json', body: (f) => ({ message: 'deploy #2', type: 'deploy', start_time: f.nowS - 120, end_time: f.nowS, url: 'https://example.com/d' }) },
  { name: 'PUT /1/markers/{ds}/{id}', method: 'PUT', path: '/1/markers/{dataset}/{marker}', dialect: 'v1', encoding: 'json', body: (f) => ({ message: 'changed', type: 'deploy', start_time: f.nowS - 60 }) },
  {
    name: 'DELETE /1/markers/{ds}/{id}', method: 'DELETE', path: '/1/markers/{dataset}/{marker}', dialect: 'v1', encoding: 'none',
    prepare: async (t, f) => ({ marker: (await created(await post(t, `/1/markers/${f.dataset}`, { message: 'gone' }), 'marker')).id }),
  },
  { name: 'GET /1/marker_settings/{ds}', method: 'GET', path: '/1/marker_settings/{dataset}', dialect: 'v1', encoding: 'none' },
  { name: 'POST /1/marker_settings/{ds}', method: 'POST', path: '/1/marker_settings/{dataset}', dialect: 'v1', encoding: 'json', body: () => ({ type: `t${unique()}`, color: '#00FF00' }) },
  { name: 'PUT /1/marker_settings/{ds}/{id}', method: 'PUT', path: '/1/marker_settings/{dataset}/{markerSetting}', dialect: 'v1', encoding: 'json', body: () => ({ type: 'deploy', color: '#123456' }) },
  {
    name: 'DELETE /1/marker_settings/{ds}/{id}', method: 'DELETE', path: '/1/marker_settings/{dataset}/{markerSetting}', dialect: 'v1', encoding: 'none',
    prepare: async (t, f) => ({ markerSetting: (await created(await post(t, `/1/marker_settings/${f.dataset}`, { type: `gone${unique()}`, color: '#000000' }), 'ms')).id }),
  },
  { name: 'GET /1/signals/{ds}', method: 'GET', path: '/1/signals/{dataset}', dialect: 'v1', encoding: 'none' },
  { name: 'POST /1/signals/{ds}', method: 'POST', path: '/1/signals/{dataset}', dialect: 'v1', encoding: 'json', body: (f) => ({ service_name: 'cart', kind: 'presence', training_period_hours: 1, recipients: [{ id: f.recipient }], name: 'alive', enabled: false }) },
  { name: 'GET /1/signals/{ds}/{id}', method: 'GET', path: '/1/signals/{dataset}/{signal}', dialect: 'v1', encoding: 'none' },
  { name: 'PUT /1/signals/{ds}/{id}', method: 'PUT', path: '/1/signals/{dataset}/{signal}', dialect: 'v1', encoding: 'json', body: () => ({ service_name: 'checkout', kind: 'error_rate', name: 'errs' }) },
  {
    name: 'DELETE /1/signals/{ds}/{id}', method: 'DELETE', path: '/1/signals/{dataset}/{signal}', dialect: 'v1', encoding: 'none',
    prepare: async (t, f) => ({ signal: (await created(await post(t, `/1/signals/${f.dataset}`, { service_name: `svc${unique()}`, kind: 'error_rate' }), 'signal')).id }),
  },
  { name: 'GET /1/signals/{ds}/{id}/anomalies', method: 'GET', path: '/1/signals/{dataset}/{signal}/anomalies', dialect: 'v1', encoding: 'none' },
  { name: 'GET /1/slos/{ds}', method: 'GET', path: '/1/slos/{dataset}', dialect: 'v1', encoding: 'none' },
  { name: 'POST /1/slos/{ds}', method: 'POST', path: '/1/slos/{dataset}', dialect: 'v1', encoding: 'json', body: sloBody },
  { name: 'GET /1/slos/{ds}/{id}', method: 'GET', path: '/1/slos/{dataset}/{slo}', dialect: 'v1', encoding: 'none', query: 'detailed=true' },
  { name: 'PUT /1/slos/{ds}/{id}', method: 'PUT', path: '/1/slos/{dataset}/{slo}', dialect: 'v1', encoding: 'json', body: () => ({ name: 'S', sli: { alias: 'sli_ok' }, time_period_days: 7, target_per_million: 990000 }) },
  {
    name: 'DELETE /1/slos/{ds}/{id}', method: 'DELETE', path: '/1/slos/{dataset}/{slo}', dialect: 'v1', encoding: 'none',
    prepare: async (t, f) => ({ slo: (await created(await post(t, `/1/slos/${f.dataset}`, sloBody()), 'slo')).id }),
  },
  { name: 'POST /1/slos/{ds}/{id}/reset', method: 'POST', path: '/1/slos/{dataset}/{slo}/reset', dialect: 'v1', encoding: 'json', body: () => ({}) },
  { name: 'POST /1/ui/session', method: 'POST', path: '/1/ui/session', dialect: 'v1', encoding: 'json', body: (f) => ({ key: f.configKey }) },
  { name: 'GET /2/auth', method: 'GET', path: '/2/auth', dialect: 'v2', encoding: 'none' },
  { name: 'GET /2/teams/{t}/environments', method: 'GET', path: '/2/teams/{team}/environments', dialect: 'v2', encoding: 'none', query: 'page[size]=10' },
  { name: 'POST /2/teams/{t}/environments', method: 'POST', path: '/2/teams/{team}/environments', dialect: 'v2', encoding: 'json', body: () => ({ data: { type: 'environments', attributes: { name: `env ${unique()}`, description: 'd', color: 'blue' } } }) },
  { name: 'GET /2/teams/{t}/environments/{id}', method: 'GET', path: '/2/teams/{team}/environments/{env2}', dialect: 'v2', encoding: 'none' },
  { name: 'PATCH /2/teams/{t}/environments/{id}', method: 'PATCH', path: '/2/teams/{team}/environments/{env2}', dialect: 'v2', encoding: 'json', body: (f) => ({ data: { id: f.env2, type: 'environments', attributes: { description: 'changed', color: 'green', settings: { delete_protected: true } } } }) },
  {
    name: 'DELETE /2/teams/{t}/environments/{id}', method: 'DELETE', path: '/2/teams/{team}/environments/{env2}', dialect: 'v2', encoding: 'none',
    prepare: async (t, f) => {
      const res = await t.app.inject({ method: 'POST', url: `/2/teams/${f.team}/environments`, headers: t.mgmt, payload: { data: { type: 'environments', attributes: { name: `gone ${unique()}` } } } });
      const id = (await created(res, 'env')).data.id;
      const off = await t.app.inject({ method: 'PATCH', url: `/2/teams/${f.team}/environments/${id}`, headers: t.mgmt, payload: { data: { id, type: 'environments', attributes: { settings: { delete_protected: false } } } } });
      expect(off.statusCode, off.body).toBe(200);
      return { env2: id };
    },
  },
  { name: 'GET /2/teams/{t}/api-keys', method: 'GET', path: '/2/teams/{team}/api-keys', dialect: 'v2', encoding: 'none', query: 'filter[type]=configuration' },
  { name: 'POST /2/teams/{t}/api-keys', method: 'POST', path: '/2/teams/{team}/api-keys', dialect: 'v2', encoding: 'json', body: (f) => apiKeyBody(f.env2) },
  { name: 'GET /2/teams/{t}/api-keys/{id}', method: 'GET', path: '/2/teams/{team}/api-keys/{apiKey2}', dialect: 'v2', encoding: 'none' },
  { name: 'PATCH /2/teams/{t}/api-keys/{id}', method: 'PATCH', path: '/2/teams/{team}/api-keys/{apiKey2}', dialect: 'v2', encoding: 'json', body: (f) => ({ data: { id: f.apiKey2, type: 'api-keys', attributes: { name: 'renamed', disabled: false, permissions: { run_queries: true } } } }) },
  {
    name: 'DELETE /2/teams/{t}/api-keys/{id}', method: 'DELETE', path: '/2/teams/{team}/api-keys/{apiKey2}', dialect: 'v2', encoding: 'none',
    prepare: async (t, f) => ({ apiKey2: (await created(await t.app.inject({ method: 'POST', url: `/2/teams/${f.team}/api-keys`, headers: t.mgmt, payload: apiKeyBody(f.env2) }), 'key')).data.id }),
  },
  ...(['traces', 'logs', 'metrics'] as const).flatMap((signal): Endpoint[] => [
    { name: `POST /v1/${signal} (JSON)`, method: 'POST', path: `/v1/${signal}`, dialect: 'otlp', encoding: 'json', signal, changesColumns: true, body: (f) => otlpBody(signal, f.nowS) },
    { name: `POST /v1/${signal} (protobuf)`, method: 'POST', path: `/v1/${signal}`, dialect: 'otlp', encoding: 'protobuf', signal, changesColumns: true, body: (f) => otlpBody(signal, f.nowS) },
  ]),
];

/** Kinesis records hold base64 of JSON: records whose `data` is still an object are encoded. */
export function kinesisWire(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || !Array.isArray((body as { records?: unknown }).records)) return body;
  const records = (body as { records: unknown[] }).records.map((r) =>
    r !== null && typeof r === 'object' && !Array.isArray(r) && 'data' in r && typeof (r as { data: unknown }).data === 'object' && (r as { data: unknown }).data !== null
      ? { ...r, data: Buffer.from(JSON.stringify((r as { data: unknown }).data)).toString('base64') }
      : r,
  );
  return { ...body, records };
}

/** An OTLP protobuf body of a (possibly mutated) OTLP/JSON object; the unmutated one when protobufjs cannot encode it. */
export function otlpProtobuf(signal: Signal, body: unknown, fallback: unknown): Buffer {
  try {
    return toProtobuf(signal, body);
  } catch {
    return toProtobuf(signal, fallback);
  }
}
