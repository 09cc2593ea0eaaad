// The real OpenTelemetry JS exporters (protobuf and JSON over HTTP, and gRPC) sending traces,
// logs and metrics into a listening server, and everything downstream working on that data:
// queries by trace.trace_id, the service map from service.name and parent/child spans, a
// trigger and an SLO on an OpenTelemetry dataset.
import { Metadata } from '@grpc/grpc-js';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as LogsGrpc } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as LogsJson } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as LogsProto } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPMetricExporter as MetricsGrpc } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPMetricExporter as MetricsJson } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as MetricsProto } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as TraceGrpc } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as TraceJson } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as TraceProto } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGrpcServer, type GrpcServer } from '../src/http/grpc.js';
import { json, makeApp, type TestApp } from './helpers.js';
import { fresh, stored } from './ingest-helpers.js';
import { runQuery } from './query-helpers.js';

let t: TestApp;
let base: string;
let grpc: GrpcServer;

beforeAll(async () => {
  t = await makeApp({ settings: { evaluationTickMs: 0 } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  grpc = await startGrpcServer(t.app, '127.0.0.1', 0);
});
afterAll(async () => {
  await grpc?.stop();
  await t.close();
});

type Transport = 'proto' | 'json' | 'grpc';
const TRANSPORTS: Transport[] = ['proto', 'json', 'grpc'];

const headers = () => ({ 'x-honeycomb-team': t.init.keys.ingest });
function metadata(extra: Record<string, string> = {}): Metadata {
  const m = new Metadata();
  for (const [k, v] of Object.entries({ ...headers(), ...extra })) m.set(k, v);
  return m;
}

function traceExporter(transport: Transport) {
  if (transport === 'grpc') return new TraceGrpc({ url: `http://127.0.0.1:${grpc.port}`, metadata: metadata(), compression: 'gzip' as never }); // CompressionAlgorithm.GZIP
  const Exporter = transport === 'proto' ? TraceProto : TraceJson;
  return new Exporter({ url: `${base}/v1/traces`, headers: headers() });
}

/** Exports with the real exporter and resolves with its result code (0: success). */
const exportWith = <T>(exporter: { export(items: T, cb: (r: { code: number; error?: Error }) => void): void }, items: T) =>
  new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(items, resolve));

/** Spans of two services: frontend GET /cart → client span → backend handler (error on the last of three). */
function makeTrace(frontend: string, backend: string): { spans: ReadableSpan[]; traceId: string } {
  const memory = new InMemorySpanExporter();
  const tracerOf = (service: string): Tracer =>
    new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': service }), spanProcessors: [new SimpleSpanProcessor(memory)] }).getTracer('@opentelemetry/instrumentation-http', '0.1.0');
  const fe = tracerOf(frontend);
  const be = tracerOf(backend);
  const root = fe.startSpan('GET /cart', { kind: SpanKind.SERVER, attributes: { 'http.route': '/cart' } }, ROOT_CONTEXT);
  const rootCtx = trace.setSpan(ROOT_CONTEXT, root);
  for (let i = 0; i < 3; i++) {
    const client = fe.startSpan('GET backend', { kind: SpanKind.CLIENT }, rootCtx);
    const server = be.startSpan('handle', { kind: SpanKind.SERVER, attributes: { attempt: i } }, trace.setSpan(ROOT_CONTEXT, client));
    if (i === 2) {
      server.recordException(new Error('database down'));
      server.setStatus({ code: SpanStatusCode.ERROR, message: 'db' });
    }
    server.end();
    client.end();
  }
  root.end();
  return { spans: memory.getFinishedSpans(), traceId: root.spanContext().traceId };
}

describe.each(TRANSPORTS)('traces through the %s exporter', (transport) => {
  const frontend = fresh('frontend');
  const backend = fresh('backend');
  let traceId: string;

  beforeAll(async () => {
    const made = makeTrace(frontend, backend);
    traceId = made.traceId;
    const exporter = traceExporter(transport);
    const result = await exportWith(exporter, made.spans);
    expect(result.error?.message).toBeUndefined();
    expect(result.code).toBe(0);
    await exporter.shutdown();
    t.clock.ms = Date.now() + 1000; // the app's clock past the spans
  });

  it('stores the spans, queryable by trace.trace_id', async () => {
    const fe = await stored(t, frontend);
    const be = await stored(t, backend);
    expect(fe).toHaveLength(4);
    expect(be).toHaveLength(4); // three server spans and one exception event
    const result = await runQuery(t, frontend, {
      calculations: [{ op: 'COUNT' }],
      filters: [{ column: 'trace.trace_id', op: '=', value: traceId }],
      breakdowns: ['name', 'span.kind'],
      orders: [{ column: 'name' }],
      time_range: 600,
    });
    expect(result.data.results.map((r: { data: Record<string, unknown> }) => r.data)).toEqual([
      { name: 'GET /cart', 'span.kind': 'server', COUNT: 1 },
      { name: 'GET backend', 'span.kind': 'client', COUNT: 3 },
    ]);
    const events = be.filter((r) => r.fields['meta.annotation_type'] === 'span_event');
    expect(events.map((r) => [r.fields.name, r.fields['exception.message'], r.fields.error])).toEqual([['exception', 'database down', true]]);
    const failed = be.find((r) => r.fields.error === true && r.fields.name === 'handle')!;
    expect(failed.fields['exception.message']).toBe('database down');
    expect(failed.fields['trace.trace_id']).toBe(traceId);
  });

  it('builds the service map from service.name and parent/child spans', async () => {
    const create = await t.app.inject({ method: 'POST', url: '/1/maps/dependencies/requests', headers: { ...t.config, 'content-type': 'application/json' }, payload: '{}' });
    expect([200, 201]).toContain(create.statusCode);
    let body = json(create);
    for (let i = 0; i < 400 && body.status === 'pending'; i++) {
      await new Promise((r) => setTimeout(r, 10));
      body = json(await t.app.inject({ method: 'GET', url: `/1/maps/dependencies/requests/${body.request_id}`, headers: t.config }));
    }
    expect(body.status).toBe('ready');
    body = json(await t.app.inject({ method: 'GET', url: `/1/maps/dependencies/requests/${body.request_id}?page[size]=100`, headers: t.config }));
    const edges = body.dependencies.map((d: { parent_node: { name: string }; child_node: { name: string }; call_count: number }) => [d.parent_node.name, d.child_node.name, d.call_count]);
    expect(edges).toContainEqual([frontend, backend, 3]);
    expect(edges).toContainEqual([frontend, frontend, 3]);
  });
});

describe('a trigger and an SLO on an OpenTelemetry dataset', () => {
  const frontend = fresh('frontend');
  const backend = fresh('backend');

  beforeAll(async () => {
    const exporter = traceExporter('proto');
    expect((await exportWith(exporter, makeTrace(frontend, backend).spans)).code).toBe(0);
    await exporter.shutdown();
    t.clock.ms = Date.now() + 1000;
  });

  it('a trigger on error spans fires', async () => {
    const recipient = json(await t.app.inject({ method: 'POST', url: '/1/recipients', headers: t.config, payload: { type: 'email', details: { email_address: 'oncall@example.com' } } }));
    const res = await t.app.inject({
      method: 'POST',
      url: `/1/triggers/${backend}`,
      headers: t.config,
      payload: {
        name: 'backend errors',
        query: { calculations: [{ op: 'COUNT' }], filters: [{ column: 'error', op: '=', value: true }, { column: 'meta.annotation_type', op: 'does-not-exist' }], time_range: 300 },
        frequency: 300,
        threshold: { op: '>=', value: 1 },
        recipients: [{ id: recipient.id }],
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const trigger = json(res);
    await t.app.jobs.scheduler.tick();
    const sent = (t.app.jobs.notifier.sent ?? []).filter((n) => n.alert.id === trigger.id);
    expect(sent.map((n) => n.status)).toEqual(['triggered']);
    const state = json(await t.app.inject({ method: 'GET', url: `/1/triggers/${backend}/${trigger.id}`, headers: t.config }));
    expect(state.triggered).toBe(true);
  });

  it('an SLO over the spans counts the error span against the budget', async () => {
    const dc = await t.app.inject({ method: 'POST', url: `/1/derived_columns/${backend}`, headers: t.config, payload: { alias: 'sli_ok', expression: 'IF(NOT(EXISTS($meta.annotation_type)), NOT(EXISTS($error)))' } });
    expect(dc.statusCode, dc.body).toBe(201);
    const created = await t.app.inject({ method: 'POST', url: `/1/slos/${backend}`, headers: t.config, payload: { name: 'backend ok', sli: { alias: 'sli_ok' }, time_period_days: 1, target_per_million: 990000 } });
    expect(created.statusCode, created.body).toBe(201);
    const res = await t.app.inject({ method: 'GET', url: `/1/slos/${backend}/${json(created).id}?detailed=true`, headers: t.config });
    expect(res.statusCode, res.body).toBe(200);
    // Three server spans, one failed; the exception event is not an SLI event.
    expect(json(res).compliance).toBeCloseTo((100 * 2) / 3, 6);
  });
});

describe.each(TRANSPORTS)('logs through the %s exporter', (transport) => {
  it('stores log records in the service’s dataset', async () => {
    const service = fresh('logsvc');
    const memory = new InMemoryLogRecordExporter();
    const provider = new LoggerProvider({ resource: resourceFromAttributes({ 'service.name': service }), processors: [new SimpleLogRecordProcessor({ exporter: memory })] });
    const logger = provider.getLogger('app-logger', '2.0');
    logger.emit({ severityNumber: SeverityNumber.WARN, severityText: 'WARN', body: 'disk almost full', attributes: { 'disk.free_mb': 120 } });
    logger.emit({ severityNumber: SeverityNumber.ERROR, body: { message: 'failed', code: 7 } });
    await provider.forceFlush();
    const exporter =
      transport === 'grpc'
        ? new LogsGrpc({ url: `http://127.0.0.1:${grpc.port}`, metadata: metadata() })
        : new (transport === 'proto' ? LogsProto : LogsJson)({ url: `${base}/v1/logs`, headers: headers() });
    expect((await exportWith(exporter, memory.getFinishedLogRecords())).code).toBe(0);
    await exporter.shutdown();
    const rows = await stored(t, service);
    expect(rows.map((r) => [r.fields.severity, r.fields.severity_text, r.fields.body, r.fields['disk.free_mb'], r.fields['body.message'], r.fields['library.name']])).toEqual([
      ['warn', 'WARN', 'disk almost full', 120, undefined, 'app-logger'],
      ['error', undefined, '{"code":7,"message":"failed"}\n', undefined, 'failed', 'app-logger'],
    ]);
  });
});

describe.each(TRANSPORTS)('metrics through the %s exporter', (transport) => {
  it('stores data points as events of the dataset header, metric names as fields', async () => {
    const dataset = fresh('metrics');
    const exporter: PushMetricExporter =
      transport === 'grpc'
        ? new MetricsGrpc({ url: `http://127.0.0.1:${grpc.port}`, metadata: metadata({ 'x-honeycomb-dataset': dataset }) })
        : new (transport === 'proto' ? MetricsProto : MetricsJson)({ url: `${base}/v1/metrics`, headers: { ...headers(), 'x-honeycomb-dataset': dataset } });
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': 'shop' }), readers: [reader] });
    const meter = provider.getMeter('shop-meter');
    meter.createCounter('orders').add(3, { region: 'eu' });
    const latency = meter.createHistogram('latency_ms');
    for (const v of [5, 20, 80]) latency.record(v, { region: 'eu' });
    await reader.forceFlush();
    await exporter.shutdown(); // (shutting the provider down would export the cumulative values again)
    const rows = await stored(t, dataset);
    expect(rows).toHaveLength(1);
    const f = rows[0].fields;
    expect(f).toMatchObject({ 'service.name': 'shop', region: 'eu', orders: 3, 'latency_ms.count': 3, 'latency_ms.sum': 105, 'latency_ms.avg': 35, 'meta.signal_type': 'metric' });
    // The default buckets (0, 5, 10, 25, 50, 75, 100, …) hold 5, 20 and 80.
    expect([f['latency_ms.p25'], f['latency_ms.p50'], f['latency_ms.p75'], f['latency_ms.p99']]).toEqual([0, 10, 75, 75]);
  });
});
