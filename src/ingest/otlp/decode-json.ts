// OTLP/JSON requests → the model (model.ts), per the OTLP specification's JSON encoding
// (the proto3 JSON mapping with lowerCamelCase names): trace and span ids are hex strings,
// 64-bit integers are decimal strings or numbers, enums are integers or their names, bytes
// values are base64, unknown fields are ignored, `null` means "not set".
//
// Leniencies (docs/otlp.md): ids are also read as base64 when they are not hex (what protojson
// based senders produced), and upper-case hex is lowered.
import {
  ArrayValue,
  Bytes,
  KvList,
  emptyScope,
  type ExponentialBuckets,
  type ExponentialHistogramPoint,
  type HistogramPoint,
  type KeyValue,
  type LogRecord,
  type Metric,
  type NumberPoint,
  type OtlpRequest,
  type PointBase,
  type Scope,
  type Span,
  type SpanEvent,
  type SpanLink,
  type SummaryPoint,
  type Value,
} from './model.js';
import { MAX_VALUE_DEPTH } from './decode-proto.js';
import { WireError } from './wire.js';
import { wellFormed } from '../normalise.js';

type Obj = Record<string, unknown>;

const fail = (what: string, must: string): never => {
  throw new WireError(`${what} ${must}`);
};

function obj(v: unknown, what: string): Obj {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) fail(what, 'must be an object');
  return v as Obj;
}

function arr(v: unknown, what: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(what, 'must be an array');
  return v as unknown[];
}

/** A string; lone surrogates (JSON escapes without their partner) become U+FFFD, as on every ingest path. */
function str(v: unknown, what: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') fail(what, 'must be a string');
  return wellFormed(v as string);
}

const INTEGER = /^-?\d+$/;

/** An int64/uint64/int32 field: a number or a decimal string. */
function int(v: unknown, what: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && INTEGER.test(v)) return Number(v);
  return fail(what, 'must be an integer (a number or a decimal string)');
}

/** A double field: a number, or a string holding one (also "NaN", "Infinity", "-Infinity"). */
function double(v: unknown, what: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    if (!Number.isNaN(n) || v === 'NaN') return n;
  }
  return fail(what, 'must be a number');
}

/** An enum: its integer, or its name from `names` (index = value). */
function enumeration(v: unknown, what: string, names: readonly string[]): number {
  if (typeof v === 'string' && !INTEGER.test(v)) {
    const i = names.indexOf(v);
    return i >= 0 ? i : fail(what, `must be one of ${names.join(', ')} or an integer`);
  }
  return int(v, what);
}

/** fixed64 nanoseconds → [microseconds, nanoseconds left]. */
function nanos(v: unknown, what: string): [number, number] {
  if (v === undefined || v === null) return [0, 0];
  let digits: string;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) digits = BigInt(v).toString();
  else if (typeof v === 'string' && /^\d+$/.test(v)) digits = v.replace(/^0+(?=\d)/, '');
  else return fail(what, 'must be a non-negative integer of nanoseconds (a decimal string or a number)');
  if (digits.length > 20 || BigInt(digits) > 0xffffffffffffffffn) fail(what, 'is larger than 64 bits');
  if (digits.length <= 15) {
    const n = Number(digits);
    return [Math.floor(n / 1000), n % 1000];
  }
  return [Number(digits.slice(0, -3)), Number(digits.slice(-3))];
}

const HEX = /^(?:[0-9a-fA-F]{2})*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A trace or span id: hex (the specification), else base64 (lenient); stored as lowercase hex. */
function id(v: unknown, what: string): string {
  const s = str(v, what);
  if (HEX.test(s)) return s.toLowerCase();
  if (BASE64.test(s)) return Buffer.from(s, 'base64').toString('hex');
  return fail(what, 'must be a hex string');
}

function anyValue(v: unknown, what: string, depth: number): Value {
  if (depth > MAX_VALUE_DEPTH) fail(what, `is nested more than ${MAX_VALUE_DEPTH} deep`);
  const o = obj(v, what);
  // A oneof: the field that is set (protojson refuses two; the last wins here).
  let out: Value = null;
  for (const k in o) {
    const x = o[k];
    if (x === null || x === undefined) continue;
    switch (k) {
      case 'stringValue':
        out = str(x, `${what}.stringValue`);
        break;
      case 'boolValue':
        if (typeof x !== 'boolean') fail(`${what}.boolValue`, 'must be true or false');
        out = x as boolean;
        break;
      case 'intValue':
        out = int(x, `${what}.intValue`);
        break;
      case 'doubleValue':
        out = double(x, `${what}.doubleValue`);
        break;
      case 'bytesValue': {
        const b = str(x, `${what}.bytesValue`);
        if (!BASE64.test(b)) fail(`${what}.bytesValue`, 'must be base64');
        out = new Bytes(b);
        break;
      }
      case 'arrayValue':
        out = new ArrayValue(arr(obj(x, `${what}.arrayValue`).values, `${what}.arrayValue.values`).map((e) => anyValue(e, `${what}.arrayValue.values[]`, depth + 1)));
        break;
      case 'kvlistValue':
        out = new KvList(keyValues(obj(x, `${what}.kvlistValue`).values, `${what}.kvlistValue.values`, depth + 1));
        break;
    }
  }
  return out;
}

function keyValues(v: unknown, what: string, depth = 0): KeyValue[] {
  return arr(v, what).map((kv) => {
    const o = obj(kv, `${what}[]`);
    return { key: str(o.key, `${what}[].key`), value: anyValue(o.value, `${what}[].value`, depth) };
  });
}

function scope(v: unknown): Scope {
  const o = obj(v, 'scope');
  if (v === undefined || v === null) return emptyScope();
  return { name: str(o.name, 'scope.name'), version: str(o.version, 'scope.version'), attributes: keyValues(o.attributes, 'scope.attributes') };
}

/** The envelope every signal shares (names differ per signal). */
function request<T>(body: unknown, names: { resources: string; scopes: string; items: string }, item: (v: unknown) => T): OtlpRequest<T> {
  const root = obj(body, 'the request');
  return arr(root[names.resources], names.resources).map((rv) => {
    const r = obj(rv, names.resources);
    const resource = obj(r.resource, 'resource');
    return {
      attributes: keyValues(resource.attributes, 'resource.attributes'),
      schemaUrl: str(r.schemaUrl, 'schemaUrl'),
      scopes: arr(r[names.scopes], names.scopes).map((sv) => {
        const s = obj(sv, names.scopes);
        return { scope: scope(s.scope), schemaUrl: str(s.schemaUrl, 'schemaUrl'), items: arr(s[names.items], names.items).map(item) };
      }),
    };
  });
}

// --- traces

const SPAN_KINDS = ['SPAN_KIND_UNSPECIFIED', 'SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT', 'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER'];
const STATUS_CODES = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];

function spanEvent(v: unknown): SpanEvent {
  const o = obj(v, 'span event');
  const [timeUs, timeNs] = nanos(o.timeUnixNano, 'event.timeUnixNano');
  return { timeUs, timeNs, name: str(o.name, 'event.name'), attributes: keyValues(o.attributes, 'event.attributes') };
}

function spanLink(v: unknown): SpanLink {
  const o = obj(v, 'span link');
  return { traceId: id(o.traceId, 'link.traceId'), spanId: id(o.spanId, 'link.spanId'), attributes: keyValues(o.attributes, 'link.attributes') };
}

function span(v: unknown): Span {
  const o = obj(v, 'span');
  const [startUs, startNs] = nanos(o.startTimeUnixNano, 'span.startTimeUnixNano');
  const [endUs, endNs] = nanos(o.endTimeUnixNano, 'span.endTimeUnixNano');
  const status = obj(o.status, 'span.status');
  return {
    traceId: id(o.traceId, 'span.traceId'),
    spanId: id(o.spanId, 'span.spanId'),
    traceState: str(o.traceState, 'span.traceState'),
    parentSpanId: id(o.parentSpanId, 'span.parentSpanId'),
    name: str(o.name, 'span.name'),
    kind: enumeration(o.kind, 'span.kind', SPAN_KINDS),
    startUs,
    startNs,
    endUs,
    endNs,
    attributes: keyValues(o.attributes, 'span.attributes'),
    events: arr(o.events, 'span.events').map(spanEvent),
    links: arr(o.links, 'span.links').map(spanLink),
    statusCode: enumeration(status.code, 'span.status.code', STATUS_CODES),
    statusMessage: str(status.message, 'span.status.message'),
  };
}

export const decodeTracesJson = (body: unknown): OtlpRequest<Span> =>
  request(body, { resources: 'resourceSpans', scopes: 'scopeSpans', items: 'spans' }, span);

// --- logs

const SEVERITIES = ['SEVERITY_NUMBER_UNSPECIFIED', ...['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'].flatMap((s) => [s, `${s}2`, `${s}3`, `${s}4`].map((n) => `SEVERITY_NUMBER_${n}`))];

function logRecord(v: unknown): LogRecord {
  const o = obj(v, 'log record');
  const [timeUs, timeNs] = nanos(o.timeUnixNano, 'logRecord.timeUnixNano');
  const [observedUs, observedNs] = nanos(o.observedTimeUnixNano, 'logRecord.observedTimeUnixNano');
  return {
    timeUs,
    timeNs,
    observedUs,
    observedNs,
    severityNumber: enumeration(o.severityNumber, 'logRecord.severityNumber', SEVERITIES),
    severityText: str(o.severityText, 'logRecord.severityText'),
    body: o.body === undefined || o.body === null ? undefined : anyValue(o.body, 'logRecord.body', 0),
    attributes: keyValues(o.attributes, 'logRecord.attributes'),
    flags: int(o.flags, 'logRecord.flags') >>> 0,
    traceId: id(o.traceId, 'logRecord.traceId'),
    spanId: id(o.spanId, 'logRecord.spanId'),
    eventName: str(o.eventName, 'logRecord.eventName'),
  };
}

export const decodeLogsJson = (body: unknown): OtlpRequest<LogRecord> =>
  request(body, { resources: 'resourceLogs', scopes: 'scopeLogs', items: 'logRecords' }, logRecord);

// --- metrics

function pointBase(o: Obj): PointBase {
  return { attributes: keyValues(o.attributes, 'dataPoint.attributes'), timeUs: nanos(o.timeUnixNano, 'dataPoint.timeUnixNano')[0], flags: int(o.flags, 'dataPoint.flags') };
}

function numberPoint(v: unknown): NumberPoint {
  const o = obj(v, 'data point');
  const value = o.asDouble !== undefined && o.asDouble !== null ? double(o.asDouble, 'dataPoint.asDouble')
    : o.asInt !== undefined && o.asInt !== null ? int(o.asInt, 'dataPoint.asInt') : undefined;
  return { ...pointBase(o), value };
}

const optionalDouble = (v: unknown, what: string) => (v === undefined || v === null ? undefined : double(v, what));

function histogramPoint(v: unknown): HistogramPoint {
  const o = obj(v, 'data point');
  return {
    ...pointBase(o),
    count: int(o.count, 'dataPoint.count'),
    sum: optionalDouble(o.sum, 'dataPoint.sum'),
    bucketCounts: arr(o.bucketCounts, 'dataPoint.bucketCounts').map((c) => int(c, 'dataPoint.bucketCounts[]')),
    explicitBounds: arr(o.explicitBounds, 'dataPoint.explicitBounds').map((b) => double(b, 'dataPoint.explicitBounds[]')),
  };
}

function buckets(v: unknown, what: string): ExponentialBuckets {
  const o = obj(v, what);
  return { offset: int(o.offset, `${what}.offset`), bucketCounts: arr(o.bucketCounts, `${what}.bucketCounts`).map((c) => int(c, `${what}.bucketCounts[]`)) };
}

function exponentialPoint(v: unknown): ExponentialHistogramPoint {
  const o = obj(v, 'data point');
  return {
    ...pointBase(o),
    count: int(o.count, 'dataPoint.count'),
    sum: optionalDouble(o.sum, 'dataPoint.sum'),
    scale: int(o.scale, 'dataPoint.scale'),
    zeroCount: int(o.zeroCount, 'dataPoint.zeroCount'),
    positive: buckets(o.positive, 'dataPoint.positive'),
    negative: buckets(o.negative, 'dataPoint.negative'),
  };
}

function summaryPoint(v: unknown): SummaryPoint {
  const o = obj(v, 'data point');
  return {
    ...pointBase(o),
    count: int(o.count, 'dataPoint.count'),
    sum: double(o.sum, 'dataPoint.sum'),
    quantiles: arr(o.quantileValues, 'dataPoint.quantileValues').map((q) => {
      const qo = obj(q, 'quantileValue');
      return { quantile: double(qo.quantile, 'quantileValue.quantile'), value: double(qo.value, 'quantileValue.value') };
    }),
  };
}

function metric(v: unknown): Metric {
  const o = obj(v, 'metric');
  const name = str(o.name, 'metric.name');
  const pointsOf = <P>(data: unknown, what: string, point: (v: unknown) => P): P[] => arr(obj(data, what).dataPoints, `${what}.dataPoints`).map(point);
  const set = (k: string) => o[k] !== undefined && o[k] !== null;
  if (set('gauge')) return { name, type: 'gauge', points: pointsOf(o.gauge, 'gauge', numberPoint) };
  if (set('sum')) return { name, type: 'sum', points: pointsOf(o.sum, 'sum', numberPoint) };
  if (set('histogram')) return { name, type: 'histogram', points: pointsOf(o.histogram, 'histogram', histogramPoint) };
  if (set('exponentialHistogram')) return { name, type: 'exponential_histogram', points: pointsOf(o.exponentialHistogram, 'exponentialHistogram', exponentialPoint) };
  if (set('summary')) return { name, type: 'summary', points: pointsOf(o.summary, 'summary', summaryPoint) };
  return { name, type: 'none', points: [] };
}

export const decodeMetricsJson = (body: unknown): OtlpRequest<Metric> =>
  request(body, { resources: 'resourceMetrics', scopes: 'scopeMetrics', items: 'metrics' }, metric);
