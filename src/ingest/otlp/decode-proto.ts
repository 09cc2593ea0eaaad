// OTLP protobuf requests → the model (model.ts). Field numbers from opentelemetry-proto
// (opentelemetry/proto/{common,resource,trace,logs,metrics}/v1/*.proto, collector/*/v1/*.proto).
// Each loop switches on the whole tag (field number << 3 | wire type): a known field sent with
// another wire type is skipped as unknown, as protobuf decoders do.
import {
  ArrayValue,
  Bytes,
  KvList,
  emptyScope,
  splitNanos,
  type ExponentialBuckets,
  type ExponentialHistogramPoint,
  type HistogramPoint,
  type KeyValue,
  type LogRecord,
  type Metric,
  type NumberPoint,
  type OtlpRequest,
  type ResourceItems,
  type Scope,
  type ScopeItems,
  type Span,
  type SpanEvent,
  type SpanLink,
  type SummaryPoint,
  type Value,
} from './model.js';
import { Reader, WIRE_FIXED64, WIRE_VARINT, WireError } from './wire.js';

/** Attribute values nested deeper than this (arrays and maps within each other) refuse the request. */
export const MAX_VALUE_DEPTH = 1000;

function anyValue(r: Reader, depth: number): Value {
  if (depth > MAX_VALUE_DEPTH) throw new WireError(`attribute values are nested more than ${MAX_VALUE_DEPTH} deep`);
  let v: Value = null;
  while (!r.done) {
    const tag = r.uint32();
    switch (tag) {
      case 0x0a:
        v = r.string();
        break;
      case 0x10:
        v = r.uint32() !== 0;
        break;
      case 0x18:
        v = r.int64();
        break;
      case 0x21:
        v = r.double();
        break;
      case 0x2a: {
        const a = r.message();
        const values: Value[] = [];
        while (!a.done) {
          const t = a.uint32();
          if (t === 0x0a) values.push(anyValue(a.message(), depth + 1));
          else a.skip(t & 7);
        }
        v = new ArrayValue(values);
        break;
      }
      case 0x32:
        v = new KvList(keyValues(r.message(), depth + 1));
        break;
      case 0x3a:
        v = new Bytes(r.base64());
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return v;
}

/** A KeyValueList or any message that is only `repeated KeyValue` at field 1. */
function keyValues(r: Reader, depth: number): KeyValue[] {
  const out: KeyValue[] = [];
  while (!r.done) {
    const tag = r.uint32();
    if (tag === 0x0a) out.push(keyValue(r.message(), depth));
    else r.skip(tag & 7);
  }
  return out;
}

function keyValue(r: Reader, depth = 0): KeyValue {
  let key = '';
  let value: Value = null;
  while (!r.done) {
    const tag = r.uint32();
    if (tag === 0x0a) key = r.string();
    else if (tag === 0x12) value = anyValue(r.message(), depth);
    else r.skip(tag & 7);
  }
  return { key, value };
}

function scope(r: Reader): Scope {
  const s = emptyScope();
  while (!r.done) {
    const tag = r.uint32();
    if (tag === 0x0a) s.name = r.string();
    else if (tag === 0x12) s.version = r.string();
    else if (tag === 0x1a) s.attributes.push(keyValue(r.message()));
    else r.skip(tag & 7);
  }
  return s;
}

/**
 * The envelope every signal shares: request { 1: Resource* } → Resource* { 1: resource,
 * 2: Scope*, 3: schema_url } → Scope* { 1: scope, 2: item, 3: schema_url }.
 */
function request<T>(body: Buffer, item: (r: Reader) => T): OtlpRequest<T> {
  const out: OtlpRequest<T> = [];
  const r = Reader.of(body);
  while (!r.done) {
    const tag = r.uint32();
    if (tag !== 0x0a) {
      r.skip(tag & 7);
      continue;
    }
    const rr = r.message();
    const res: ResourceItems<T> = { attributes: [], schemaUrl: '', scopes: [] };
    while (!rr.done) {
      const t = rr.uint32();
      if (t === 0x0a) {
        const resource = rr.message();
        while (!resource.done) {
          const rt = resource.uint32();
          if (rt === 0x0a) res.attributes.push(keyValue(resource.message()));
          else resource.skip(rt & 7);
        }
      } else if (t === 0x12) {
        const sr = rr.message();
        const sc: ScopeItems<T> = { scope: emptyScope(), schemaUrl: '', items: [] };
        while (!sr.done) {
          const st = sr.uint32();
          if (st === 0x0a) sc.scope = scope(sr.message());
          else if (st === 0x12) sc.items.push(item(sr.message()));
          else if (st === 0x1a) sc.schemaUrl = sr.string();
          else sr.skip(st & 7);
        }
        res.scopes.push(sc);
      } else if (t === 0x1a) res.schemaUrl = rr.string();
      else rr.skip(t & 7);
    }
    out.push(res);
  }
  return out;
}

// --- traces

function spanEvent(r: Reader): SpanEvent {
  const e: SpanEvent = { timeUs: 0, timeNs: 0, name: '', attributes: [] };
  while (!r.done) {
    const tag = r.uint32();
    if (tag === 0x09) [e.timeUs, e.timeNs] = splitNanos(...r.fixed64Halves());
    else if (tag === 0x12) e.name = r.string();
    else if (tag === 0x1a) e.attributes.push(keyValue(r.message()));
    else r.skip(tag & 7);
  }
  return e;
}

function spanLink(r: Reader): SpanLink {
  const l: SpanLink = { traceId: '', spanId: '', attributes: [] };
  while (!r.done) {
    const tag = r.uint32();
    if (tag === 0x0a) l.traceId = r.hex();
    else if (tag === 0x12) l.spanId = r.hex();
    else if (tag === 0x22) l.attributes.push(keyValue(r.message()));
    else r.skip(tag & 7);
  }
  return l;
}

function span(r: Reader): Span {
  const s: Span = {
    traceId: '',
    spanId: '',
    traceState: '',
    parentSpanId: '',
    name: '',
    kind: 0,
    startUs: 0,
    startNs: 0,
    endUs: 0,
    endNs: 0,
    attributes: [],
    events: [],
    links: [],
    statusCode: 0,
    statusMessage: '',
  };
  while (!r.done) {
    const tag = r.uint32();
    switch (tag) {
      case 0x0a:
        s.traceId = r.hex();
        break;
      case 0x12:
        s.spanId = r.hex();
        break;
      case 0x1a:
        s.traceState = r.string();
        break;
      case 0x22:
        s.parentSpanId = r.hex();
        break;
      case 0x2a:
        s.name = r.string();
        break;
      case 0x30:
        s.kind = r.uint32();
        break;
      case 0x39:
        [s.startUs, s.startNs] = splitNanos(...r.fixed64Halves());
        break;
      case 0x41:
        [s.endUs, s.endNs] = splitNanos(...r.fixed64Halves());
        break;
      case 0x4a:
        s.attributes.push(keyValue(r.message()));
        break;
      case 0x5a:
        s.events.push(spanEvent(r.message()));
        break;
      case 0x6a:
        s.links.push(spanLink(r.message()));
        break;
      case 0x7a: {
        const st = r.message();
        while (!st.done) {
          const t = st.uint32();
          if (t === 0x12) s.statusMessage = st.string();
          else if (t === 0x18) s.statusCode = st.uint32();
          else st.skip(t & 7);
        }
        break;
      }
      default:
        r.skip(tag & 7);
    }
  }
  return s;
}

export const decodeTracesProto = (body: Buffer): OtlpRequest<Span> => request(body, span);

// --- logs

function logRecord(r: Reader): LogRecord {
  const l: LogRecord = {
    timeUs: 0,
    timeNs: 0,
    observedUs: 0,
    observedNs: 0,
    severityNumber: 0,
    severityText: '',
    body: undefined,
    attributes: [],
    flags: 0,
    traceId: '',
    spanId: '',
    eventName: '',
  };
  while (!r.done) {
    const tag = r.uint32();
    switch (tag) {
      case 0x09:
        [l.timeUs, l.timeNs] = splitNanos(...r.fixed64Halves());
        break;
      case 0x10:
        l.severityNumber = r.uint32() | 0;
        break;
      case 0x1a:
        l.severityText = r.string();
        break;
      case 0x2a:
        l.body = anyValue(r.message(), 0);
        break;
      case 0x32:
        l.attributes.push(keyValue(r.message()));
        break;
      case 0x45:
        l.flags = r.fixed32();
        break;
      case 0x4a:
        l.traceId = r.hex();
        break;
      case 0x52:
        l.spanId = r.hex();
        break;
      case 0x59:
        [l.observedUs, l.observedNs] = splitNanos(...r.fixed64Halves());
        break;
      case 0x62:
        l.eventName = r.string();
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return l;
}

export const decodeLogsProto = (body: Buffer): OtlpRequest<LogRecord> => request(body, logRecord);

// --- metrics

const timeUsOf = (r: Reader) => splitNanos(...r.fixed64Halves())[0];
const sfixed64 = (r: Reader) => {
  const [lo, hi] = r.fixed64Halves();
  return (hi | 0) * 2 ** 32 + lo;
};
const readFixed64 = (r: Reader) => r.fixed64();
const readDouble = (r: Reader) => r.double();
const readUint64 = (r: Reader) => r.uint64();

function numberPoint(r: Reader): NumberPoint {
  const p: NumberPoint = { attributes: [], timeUs: 0, flags: 0, value: undefined };
  while (!r.done) {
    const tag = r.uint32();
    if (tag === 0x3a) p.attributes.push(keyValue(r.message()));
    else if (tag === 0x19) p.timeUs = timeUsOf(r);
    else if (tag === 0x21) p.value = r.double();
    else if (tag === 0x31) p.value = sfixed64(r);
    else if (tag === 0x40) p.flags = r.uint32();
    else r.skip(tag & 7);
  }
  return p;
}

function histogramPoint(r: Reader): HistogramPoint {
  const p: HistogramPoint = { attributes: [], timeUs: 0, flags: 0, count: 0, sum: undefined, bucketCounts: [], explicitBounds: [] };
  while (!r.done) {
    const tag = r.uint32();
    const field = tag >>> 3;
    if (tag === 0x4a) p.attributes.push(keyValue(r.message()));
    else if (tag === 0x19) p.timeUs = timeUsOf(r);
    else if (tag === 0x21) p.count = r.fixed64();
    else if (tag === 0x29) p.sum = r.double();
    else if (field === 6) r.repeated(tag & 7, WIRE_FIXED64, readFixed64, p.bucketCounts);
    else if (field === 7) r.repeated(tag & 7, WIRE_FIXED64, readDouble, p.explicitBounds);
    else if (tag === 0x50) p.flags = r.uint32();
    else r.skip(tag & 7);
  }
  return p;
}

function buckets(r: Reader): ExponentialBuckets {
  const b: ExponentialBuckets = { offset: 0, bucketCounts: [] };
  while (!r.done) {
    const tag = r.uint32();
    if (tag === 0x08) b.offset = r.sint32();
    else if (tag >>> 3 === 2) r.repeated(tag & 7, WIRE_VARINT, readUint64, b.bucketCounts);
    else r.skip(tag & 7);
  }
  return b;
}

function exponentialPoint(r: Reader): ExponentialHistogramPoint {
  const p: ExponentialHistogramPoint = {
    attributes: [],
    timeUs: 0,
    flags: 0,
    count: 0,
    sum: undefined,
    scale: 0,
    zeroCount: 0,
    positive: { offset: 0, bucketCounts: [] },
    negative: { offset: 0, bucketCounts: [] },
  };
  while (!r.done) {
    const tag = r.uint32();
    switch (tag) {
      case 0x0a:
        p.attributes.push(keyValue(r.message()));
        break;
      case 0x19:
        p.timeUs = timeUsOf(r);
        break;
      case 0x21:
        p.count = r.fixed64();
        break;
      case 0x29:
        p.sum = r.double();
        break;
      case 0x30:
        p.scale = r.sint32();
        break;
      case 0x39:
        p.zeroCount = r.fixed64();
        break;
      case 0x42:
        p.positive = buckets(r.message());
        break;
      case 0x4a:
        p.negative = buckets(r.message());
        break;
      case 0x50:
        p.flags = r.uint32();
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return p;
}

function summaryPoint(r: Reader): SummaryPoint {
  const p: SummaryPoint = { attributes: [], timeUs: 0, flags: 0, count: 0, sum: 0, quantiles: [] };
  while (!r.done) {
    const tag = r.uint32();
    if (tag === 0x3a) p.attributes.push(keyValue(r.message()));
    else if (tag === 0x19) p.timeUs = timeUsOf(r);
    else if (tag === 0x21) p.count = r.fixed64();
    else if (tag === 0x29) p.sum = r.double();
    else if (tag === 0x32) {
      const q = r.message();
      const v = { quantile: 0, value: 0 };
      while (!q.done) {
        const t = q.uint32();
        if (t === 0x09) v.quantile = q.double();
        else if (t === 0x11) v.value = q.double();
        else q.skip(t & 7);
      }
      p.quantiles.push(v);
    } else if (tag === 0x40) p.flags = r.uint32();
    else r.skip(tag & 7);
  }
  return p;
}

/** Gauge, Sum, Histogram, … : `repeated <Point> data_points = 1` (other fields unused). */
function points<P>(r: Reader, point: (r: Reader) => P): P[] {
  const out: P[] = [];
  while (!r.done) {
    const tag = r.uint32();
    if (tag === 0x0a) out.push(point(r.message()));
    else r.skip(tag & 7);
  }
  return out;
}

function metric(r: Reader): Metric {
  let m: Metric = { name: '', type: 'none', points: [] };
  let name = '';
  while (!r.done) {
    const tag = r.uint32();
    switch (tag) {
      case 0x0a:
        name = r.string();
        break;
      case 0x2a:
        m = { name: '', type: 'gauge', points: points(r.message(), numberPoint) };
        break;
      case 0x3a:
        m = { name: '', type: 'sum', points: points(r.message(), numberPoint) };
        break;
      case 0x4a:
        m = { name: '', type: 'histogram', points: points(r.message(), histogramPoint) };
        break;
      case 0x52:
        m = { name: '', type: 'exponential_histogram', points: points(r.message(), exponentialPoint) };
        break;
      case 0x5a:
        m = { name: '', type: 'summary', points: points(r.message(), summaryPoint) };
        break;
      default:
        r.skip(tag & 7);
    }
  }
  m.name = name;
  return m;
}

export const decodeMetricsProto = (body: Buffer): OtlpRequest<Metric> => request(body, metric);
