// OTLP logs and metrics → events: the rules of docs/otlp.md (logs, metrics,
// dataset choice) that a user can observe, sent as protobuf and as JSON.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from './helpers.js';
import { fresh, stored, type StoredRow } from './ingest-helpers.js';
import { attrs, exported, nanos, otlp, statusOf, type Encoding, type Signal } from './otlp-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(async () => t.close());

const T0 = Date.UTC(2026, 10, 25, 12, 0, 0);
type Obj = Record<string, unknown>;

async function send(signal: Signal, dataset: string, req: Obj, encoding: Encoding, headers: Record<string, string> = {}): Promise<StoredRow[]> {
  const res = await otlp(t, signal, req, encoding, headers);
  expect(exported(res, signal)).toEqual({ rejected: 0, message: '' });
  return stored(t, dataset);
}

function logs(resource: Obj, records: Obj[], scope: Obj = { name: 'io.opentelemetry.logback', version: '2' }): Obj {
  return { resourceLogs: [{ resource: { attributes: attrs(resource) }, scopeLogs: [{ scope, logRecords: records }] }] };
}

function metrics(resource: Obj, list: Obj[]): Obj {
  return { resourceMetrics: [{ resource: { attributes: attrs(resource) }, scopeMetrics: [{ scope: { name: 'meter' }, metrics: list }] }] };
}

describe.each(['protobuf', 'json'] as Encoding[])('OTLP logs as %s', (encoding) => {
  it('stores log records with severity, body, trace correlation and attributes', async () => {
    const service = fresh('logs');
    const rows = await send(
      'logs',
      service,
      logs({ 'service.name': service, 'host.name': 'h', clash: 'resource' }, [
        {
          timeUnixNano: nanos(T0, 1500),
          observedTimeUnixNano: nanos(T0 + 5000),
          severityNumber: 9,
          severityText: 'INFO',
          body: { stringValue: 'hello' },
          attributes: attrs({ 'user.id': 'u1', clash: 'log', sampleRate: 5 }),
          flags: 1,
          traceId: '0000000000000000f798a1e7f33c8af6',
          spanId: 'eee19b7ec3c1b174',
          eventName: 'login',
        },
      ]),
      encoding,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].time).toBe(BigInt(T0) * 1000n + 1n);
    expect(rows[0].samplerate).toBe(5);
    expect(rows[0].fields).toEqual({
      severity: 'info',
      severity_code: 9,
      severity_text: 'INFO',
      'meta.signal_type': 'log',
      flags: 1,
      'trace.trace_id': 'f798a1e7f33c8af6',
      'meta.annotation_type': 'span_event',
      'trace.parent_id': 'eee19b7ec3c1b174',
      'event.name': 'login',
      body: 'hello',
      'service.name': service,
      'host.name': 'h',
      clash: 'log',
      'library.name': 'io.opentelemetry.logback',
      'library.version': '2',
      'telemetry.instrumentation_library': true,
      'user.id': 'u1',
    });
  });

  it('maps severity numbers, keeps body types, flattens map bodies and keeps them whole', async () => {
    const service = fresh('logs');
    const numbers = [0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25];
    const records: Obj[] = numbers.map((n) => ({ timeUnixNano: nanos(T0), severityNumber: n }));
    records.push(
      { timeUnixNano: nanos(T0), body: { intValue: '42' } },
      { timeUnixNano: nanos(T0), body: { boolValue: true } },
      { timeUnixNano: nanos(T0), body: { doubleValue: 1.5 } },
      { timeUnixNano: nanos(T0), body: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: '1' }] } } },
      { timeUnixNano: nanos(T0), body: { bytesValue: Buffer.from([1, 2]).toString('base64') } },
      { timeUnixNano: nanos(T0), body: { kvlistValue: { values: attrs({ msg: 'hi', nested: { level: 'x' }, a: 1 }) } } },
      { timeUnixNano: nanos(T0) },
    );
    const rows = await send('logs', service, logs({ 'service.name': service }, records), encoding);
    expect(rows.slice(0, numbers.length).map((r) => r.fields.severity)).toEqual([
      'unspecified', 'trace', 'trace', 'debug', 'debug', 'info', 'info', 'warn', 'warn', 'error', 'error', 'fatal', 'fatal', 'unspecified',
    ]);
    expect(rows.slice(0, numbers.length).map((r) => r.fields.severity_code)).toEqual(numbers);
    const bodies = rows.slice(numbers.length);
    // One dataset's body column holds them all: widened to string (docs/ingest.md).
    expect(bodies.map((r) => r.fields.body)).toEqual(['42', 'true', '1.5', '["a",1]\n', '"AQI="\n', '{"a":1,"msg":"hi","nested":{"level":"x"}}\n', undefined]);
    expect(bodies[5].fields['body.msg']).toBe('hi');
    expect(bodies[5].fields['body.nested.level']).toBe('x');
    for (const r of rows) {
      expect(r.fields).not.toHaveProperty('trace.trace_id');
      expect(r.fields).not.toHaveProperty('meta.annotation_type');
      expect(r.fields).not.toHaveProperty('severity_text');
      expect(r.fields.flags).toBe(0);
    }
  });

  it('stores scalar bodies with their own type', async () => {
    for (const [body, value] of [[{ intValue: '42' }, 42], [{ boolValue: true }, true], [{ doubleValue: 1.5 }, 1.5]] as const) {
      const service = fresh('logs');
      const rows = await send('logs', service, logs({ 'service.name': service }, [{ timeUnixNano: nanos(T0), body }]), encoding);
      expect(rows[0].fields.body).toBe(value);
    }
  });

  it('takes the time, else the observed time', async () => {
    const service = fresh('logs');
    const rows = await send('logs', service, logs({ 'service.name': service }, [{ observedTimeUnixNano: nanos(T0 + 7) }]), encoding);
    expect(rows[0].time).toBe(BigInt(T0 + 7) * 1000n);
  });

  it('chooses the dataset: service.name, else x-honeycomb-dataset, else unknown_log_source', async () => {
    const header = fresh('hdr');
    const svc = fresh('logs');
    await send('logs', svc, logs({ 'service.name': ` ${svc} ` }, [{ timeUnixNano: nanos(T0) }]), encoding, { 'x-honeycomb-dataset': header });
    expect(await stored(t, svc)).toHaveLength(1);
    await send('logs', header, logs({ 'service.name': 'unknown_service:java' }, [{ timeUnixNano: nanos(T0) }]), encoding, { 'x-honeycomb-dataset': header });
    await send('logs', header, logs({}, [{ timeUnixNano: nanos(T0) }]), encoding, { 'x-honeycomb-dataset': header });
    expect(await stored(t, header)).toHaveLength(2);
    const before = (await stored(t, 'unknown_log_source')).length;
    await send('logs', 'unknown_log_source', logs({}, [{ timeUnixNano: nanos(T0) }]), encoding, { 'x-honeycomb-dataset': '  ' });
    expect((await stored(t, 'unknown_log_source')).length).toBe(before + 1);
  });

  it('needs no dataset header with a Classic key (401 only for the key itself)', async () => {
    const s = statusOf(await otlp(t, 'logs', logs({}, [{ timeUnixNano: nanos(T0) }]), encoding, { 'x-honeycomb-team': 'b'.repeat(32) }), 401);
    expect(s.message).toBe('unknown API key - check your credentials');
  });
});

describe.each(['protobuf', 'json'] as Encoding[])('OTLP metrics as %s', (encoding) => {
  const point = (o: Obj) => ({ timeUnixNano: nanos(T0, 5), ...o });

  it('groups data points by second, resource and attributes, with each metric’s name as a field', async () => {
    const ds = fresh('metrics');
    const resource = { 'service.name': 'api', 'host.name': 'h1' };
    const req = metrics(resource, [
      { name: 'cpu', gauge: { dataPoints: [point({ asDouble: 0.5, attributes: attrs({ core: 0 }) }), point({ asDouble: 0.75, attributes: attrs({ core: 1 }) })] } },
      { name: 'requests', sum: { dataPoints: [point({ asInt: '10', attributes: attrs({ core: 0 }) }), point({ timeUnixNano: nanos(T0 + 1500), asInt: '12', attributes: attrs({ core: 0 }) })], isMonotonic: true, aggregationTemporality: 2 } },
      { name: 'temp', gauge: { dataPoints: [point({ asDouble: 40.5, attributes: attrs({ core: 0 }), timeUnixNano: nanos(T0 + 999) })] } },
    ]);
    const rows = await send('metrics', ds, req, encoding, { 'x-honeycomb-dataset': ds });
    const view = rows.map((r) => ({ t: r.time, sr: r.samplerate, ...r.fields }));
    expect(view).toEqual([
      { t: BigInt(T0) * 1000n, sr: 1, 'service.name': 'api', 'host.name': 'h1', core: 0, cpu: 0.5, requests: 10, temp: 40.5, 'meta.signal_type': 'metric', 'meta.annotation_type': 'metric_event' },
      { t: BigInt(T0) * 1000n, sr: 1, 'service.name': 'api', 'host.name': 'h1', core: 1, cpu: 0.75, 'meta.signal_type': 'metric', 'meta.annotation_type': 'metric_event' },
      { t: BigInt(T0 + 1000) * 1000n, sr: 1, 'service.name': 'api', 'host.name': 'h1', core: 0, requests: 12, 'meta.signal_type': 'metric', 'meta.annotation_type': 'metric_event' },
    ]);
  });

  it('turns histograms, exponential histograms and summaries into count, sum, avg and percentile fields', async () => {
    const ds = fresh('metrics');
    const req = metrics({ 'service.name': 'api' }, [
      {
        name: 'latency',
        histogram: {
          dataPoints: [point({ count: '10', sum: 55, bucketCounts: ['1', '2', '3', '4'], explicitBounds: [1, 5, 10] })],
          aggregationTemporality: 2,
        },
      },
      {
        name: 'size',
        exponentialHistogram: {
          dataPoints: [point({ count: '8', sum: 40, scale: 0, zeroCount: '1', positive: { offset: 1, bucketCounts: ['3', '4'] }, negative: { offset: 0, bucketCounts: [] } })],
        },
      },
      {
        name: 'rpc',
        summary: {
          dataPoints: [point({ count: '4', sum: 10, quantileValues: [{ quantile: 0, value: 1 }, { quantile: 0.5, value: 2 }, { quantile: 0.99, value: 3.5 }, { quantile: 0.999, value: 3.9 }, { quantile: 1, value: 4 }] })],
        },
      },
      { name: 'nosum', histogram: { dataPoints: [point({ count: '0', bucketCounts: [], explicitBounds: [] })] } },
    ]);
    const rows = await send('metrics', ds, req, encoding, { 'x-honeycomb-dataset': ds });
    expect(rows).toHaveLength(1);
    const f = rows[0].fields;
    expect([f['latency.count'], f['latency.sum'], f['latency.avg']]).toEqual([10, 55, 5.5]);
    // cumulative shares 0.1, 0.3, 0.6, 1.0 over bounds 1, 5, 10 (+overflow)
    expect(['p001', 'p01', 'p05', 'p10', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99', 'p999'].map((p) => f[`latency.${p}`])).toEqual([1, 1, 1, 1, 1, 5, 10, 10, 10, 10, 10]);
    expect([f['size.count'], f['size.sum'], f['size.avg']]).toEqual([8, 40, 5]);
    // zero bucket (bound 0) 1/8, then (2, 4] 3/8 → 0.5, then (4, 8] → 1
    expect(['p10', 'p25', 'p50', 'p75', 'p99'].map((p) => f[`size.${p}`])).toEqual([0, 0, 4, 4, 4]);
    expect([f['rpc.count'], f['rpc.sum'], f['rpc.avg'], f['rpc.min'], f['rpc.p50'], f['rpc.p99'], f['rpc.p999'], f['rpc.max']]).toEqual([4, 10, 2.5, 1, 2, 3.5, 3.9, 4]);
    expect(f['nosum.count']).toBe(0);
    expect(Object.keys(f).filter((k) => k.startsWith('nosum.'))).toEqual(['nosum.count']);
  });

  it('lets resource attributes win over data-point attributes and metric values, and skips points without a recorded value', async () => {
    const ds = fresh('metrics');
    const req = metrics({ 'service.name': 'api', clash: 'resource', sampleRate: 5 }, [
      { name: 'clash', gauge: { dataPoints: [point({ asInt: '1', attributes: attrs({ clash: 'point', 'meta.signal_type': 'x' }) })] } },
      { name: 'missing', gauge: { dataPoints: [point({ asInt: '3', flags: 1 })] } },
    ]);
    const rows = await send('metrics', ds, req, encoding, { 'x-honeycomb-dataset': ds });
    expect(rows).toHaveLength(1);
    expect(rows[0].fields.clash).toBe('resource');
    expect(rows[0].fields['meta.signal_type']).toBe('x');
    expect(rows[0].fields.sampleRate).toBe(5); // metrics have no sample rate: an ordinary field
    expect(rows[0].samplerate).toBe(1);
    expect(rows[0].fields).not.toHaveProperty('missing');
  });

  it('goes to x-honeycomb-dataset, else unknown_metrics; a Classic key must name one', async () => {
    const before = (await stored(t, 'unknown_metrics')).length;
    await send('metrics', 'unknown_metrics', metrics({}, [{ name: 'm', gauge: { dataPoints: [point({ asInt: '1' })] } }]), encoding);
    expect((await stored(t, 'unknown_metrics')).length).toBe(before + 1);
    const s = statusOf(await otlp(t, 'metrics', metrics({}, []), encoding, { 'x-honeycomb-team': 'c'.repeat(32) }), 401);
    expect(s).toEqual({ code: 16, message: "missing 'x-honeycomb-dataset' header" });
  });
});
