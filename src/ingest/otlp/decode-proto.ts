// OTLP protobuf requests → the model (model.ts), reading the wire format
// (https://protobuf.dev/programming-guides/encoding/) for just these messages. Field numbers
// are opentelemetry-proto's (opentelemetry/proto/{common,resource,trace,logs,metrics}/v1/*.proto,
// collector/*/v1/*.proto).
//
// One cursor (`buf`, `pos`) per decode, in module variables: decoding is synchronous, and
// reading through plain functions of it, without an object per nested message, made this about
// twice as fast (docs/otlp.md, "Decoding", has the figures against protobufjs). Each message
// loop switches on the whole tag (field number << 3 | wire type): a known field sent with
// another wire type is skipped as unknown, as protobuf decoders do. Every read is bounded by the
// end of the message it is in; anything malformed throws WireError (400).
//
// Over 500 lines: one reader for every OTLP message (traces, logs, metrics), plain functions over one
// cursor for speed (above), so they stay in one module.
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
  type ResourceItems,
  type Scope,
  type ScopeItems,
  type Span,
  type SpanEvent,
  type SpanLink,
  type SummaryPoint,
  type Value,
} from './model.js';
import { WireError } from './wire.js';

/** Attribute values nested deeper than this (arrays and maps within each other) refuse the request. */
export const MAX_VALUE_DEPTH = 1000;

let buf: Buffer = Buffer.alloc(0);
let pos = 0;
/** The last fixed64 time read: whole microseconds and the nanoseconds left. */
let timeUs = 0;
let timeNs = 0;

const truncated = () => new WireError('the message ends inside a field');

/** A varint of up to 32 significant bits (tags, lengths, enums, int32, uint32, bool); longer ones keep their low 32 bits. */
function varint(end: number): number {
  let b = buf[pos++];
  if (b < 0x80) {
    if (pos > end) throw truncated();
    return b;
  }
  let v = b & 0x7f;
  for (let shift = 7; ; shift += 7) {
    if (pos >= end) throw truncated();
    b = buf[pos++];
    if (shift < 28) v |= (b & 0x7f) << shift;
    else if (shift === 28) v = (v >>> 0) + (b & 0x0f) * 2 ** 28;
    if (b < 0x80) return v >>> 0;
    if (shift >= 63) throw new WireError('a varint is too long');
  }
}

/** A varint as a 64-bit integer (signed: int64; else uint64), as a number (exact up to 2^53). */
function varint64(end: number, signed: boolean): number {
  let lo = 0;
  let hi = 0;
  for (let shift = 0; ; shift += 7) {
    if (pos >= end) throw truncated();
    const b = buf[pos++];
    if (shift < 28) lo |= (b & 0x7f) << shift;
    else if (shift === 28) {
      lo |= (b & 0x0f) << 28;
      hi |= (b & 0x7f) >>> 4;
    } else hi |= (b & 0x7f) << (shift - 32);
    if (b < 0x80) break;
    if (shift >= 63) throw new WireError('a varint is too long');
  }
  lo >>>= 0;
  if (signed && hi & 0x80000000) return -((~hi >>> 0) * 2 ** 32 + (~lo >>> 0) + 1);
  return (hi >>> 0) * 2 ** 32 + lo;
}

function sint32(end: number): number {
  const v = varint(end);
  return (v >>> 1) ^ -(v & 1);
}

function need(n: number, end: number): number {
  const at = pos;
  if (at + n > end) throw truncated();
  pos = at + n;
  return at;
}

const u32 = (at: number) => (buf[at] | (buf[at + 1] << 8) | (buf[at + 2] << 16) | (buf[at + 3] << 24)) >>> 0;

function fixed32(end: number): number {
  return u32(need(4, end));
}

function double(end: number): number {
  return buf.readDoubleLE(need(8, end));
}

/** A fixed64 count, as a number (exact up to 2^53). */
function fixed64(end: number): number {
  const at = need(8, end);
  return u32(at + 4) * 2 ** 32 + u32(at);
}

function sfixed64(end: number): number {
  const at = need(8, end);
  return (u32(at + 4) | 0) * 2 ** 32 + u32(at);
}

/** A fixed64 of nanoseconds into `timeUs` and `timeNs` (every product exact: hi * 2^32 = hi * 4,294,967 * 1000 + hi * 296). */
function nanos(end: number): void {
  const at = need(8, end);
  const lo = u32(at);
  const hi = u32(at + 4);
  const rest = hi * 296 + lo;
  timeUs = hi * 4_294_967 + Math.floor(rest / 1000);
  timeNs = rest % 1000;
}

/** A length-delimited field's length, checked against `end`; returns the field's end (pos is at its start). */
function delimited(end: number): number {
  const len = varint(end);
  const fieldEnd = pos + len;
  if (fieldEnd > end) throw truncated();
  return fieldEnd;
}

// Short strings repeat from span to span (attribute keys; most values: methods, routes, hosts,
// status texts), so a direct-mapped cache keeps the last string decoded for each hash of its
// bytes: a hit is a hash and a comparison in JavaScript, no native call and no new string, and
// a string that has been a Map key before keeps its hash (the column builder looks every field
// name up). Bounded: CACHE_SLOTS strings of at most CACHED_BYTES bytes per thread.
const CACHE_SLOTS = 4096;
const CACHED_BYTES = 40;
const cachedText: string[] = new Array<string>(CACHE_SLOTS).fill('');
const cachedLength = new Uint8Array(CACHE_SLOTS);
const cachedBytes = new Uint8Array(CACHE_SLOTS * CACHED_BYTES);

/** A string (invalid UTF-8 becomes U+FFFD, as when a JSON body is read). Buffer's native slice was
 * the fastest way measured to make a new one (against decoding ASCII in JavaScript: cons strings,
 * flattened later). */
function string(end: number): string {
  const e = delimited(end);
  const start = pos;
  pos = e;
  const n = e - start;
  if (n === 0) return '';
  if (n > CACHED_BYTES) return buf.toString('utf8', start, e);
  // The slot: a hash of the length and the first and last four bytes (where strings of one
  // pattern differ: numbered hosts, ids); the comparison below reads every byte.
  let h = Math.imul(n, 0x9e3779b1);
  if (n >= 4) h = Math.imul(h ^ u32(start), 0x85ebca6b) ^ Math.imul(u32(e - 4), 0xc2b2ae35);
  else for (let i = start; i < e; i++) h = Math.imul(h ^ buf[i], 0x01000193);
  h ^= h >>> 16;
  const slot = (h ^ (h >>> 8)) & (CACHE_SLOTS - 1);
  const at = slot * CACHED_BYTES - start;
  if (cachedLength[slot] === n) {
    let i = start;
    while (i < e && cachedBytes[at + i] === buf[i]) i++;
    if (i === e) return cachedText[slot];
  }
  const text = buf.toString('utf8', start, e);
  for (let i = start; i < e; i++) cachedBytes[at + i] = buf[i];
  cachedLength[slot] = n;
  cachedText[slot] = text;
  return text;
}

/** A bytes field as lowercase hex (trace and span ids). */
function hex(end: number): string {
  const e = delimited(end);
  const start = pos;
  pos = e;
  return start === e ? '' : buf.toString('hex', start, e);
}

function base64(end: number): string {
  const e = delimited(end);
  const s = buf.toString('base64', pos, e);
  pos = e;
  return s;
}

/** Skips a field of the given wire type. */
function skip(wireType: number, end: number): void {
  switch (wireType) {
    case 0:
      varint64(end, false);
      return;
    case 1:
      need(8, end);
      return;
    case 2:
      pos = delimited(end);
      return;
    case 5:
      need(4, end);
      return;
    default:
      throw new WireError(`unsupported wire type ${wireType}`);
  }
}

/** Checks that a nested message ended exactly at its end. */
function done(end: number): void {
  if (pos !== end) throw truncated();
}

/** A packed (or one unpacked) repeated numeric field into `out`. */
function repeated(tag: number, elementWire: number, end: number, read: (end: number) => number, out: number[]): void {
  const wire = tag & 7;
  if (wire === 2) {
    const e = delimited(end);
    while (pos < e) out.push(read(e));
    done(e);
  } else if (wire === elementWire) out.push(read(end));
  else skip(wire, end);
}

// --- common

function anyValue(end: number, depth: number): Value {
  if (depth > MAX_VALUE_DEPTH) throw new WireError(`attribute values are nested more than ${MAX_VALUE_DEPTH} deep`);
  let v: Value = null;
  while (pos < end) {
    const tag = varint(end);
    switch (tag) {
      case 0x0a:
        v = string(end);
        break;
      case 0x10:
        v = varint64(end, false) !== 0;
        break;
      case 0x18:
        v = varint64(end, true);
        break;
      case 0x21:
        v = double(end);
        break;
      case 0x2a: {
        const e = delimited(end);
        const values: Value[] = [];
        while (pos < e) {
          const t = varint(e);
          if (t === 0x0a) {
            const ve = delimited(e);
            values.push(anyValue(ve, depth + 1));
            done(ve);
          } else skip(t & 7, e);
        }
        done(e);
        v = new ArrayValue(values);
        break;
      }
      case 0x32: {
        const e = delimited(end);
        const values: KeyValue[] = [];
        while (pos < e) {
          const t = varint(e);
          if (t === 0x0a) values.push(keyValue(delimited(e), depth + 1));
          else skip(t & 7, e);
        }
        done(e);
        v = new KvList(values);
        break;
      }
      case 0x3a:
        v = new Bytes(base64(end));
        break;
      default:
        skip(tag & 7, end);
    }
  }
  return v;
}

/** A KeyValue ending at `end`; leaves pos at `end`. */
function keyValue(end: number, depth = 0): KeyValue {
  let key = '';
  let value: Value = null;
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x0a) key = string(end);
    else if (tag === 0x12) {
      const e = delimited(end);
      value = anyValue(e, depth);
      done(e);
    } else skip(tag & 7, end);
  }
  done(end);
  return { key, value };
}

function scope(end: number): Scope {
  const s = emptyScope();
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x0a) s.name = string(end);
    else if (tag === 0x12) s.version = string(end);
    else if (tag === 0x1a) s.attributes.push(keyValue(delimited(end)));
    else skip(tag & 7, end);
  }
  done(end);
  return s;
}

/**
 * The envelope every signal shares: request { 1: Resource* } → Resource* { 1: resource,
 * 2: Scope*, 3: schema_url } → Scope* { 1: scope, 2: item, 3: schema_url }.
 */
function request<T>(body: Buffer, item: (end: number) => T): OtlpRequest<T> {
  buf = body;
  pos = 0;
  const out: OtlpRequest<T> = [];
  try {
    const end = body.length;
    while (pos < end) {
      const tag = varint(end);
      if (tag !== 0x0a) {
        skip(tag & 7, end);
        continue;
      }
      const re = delimited(end);
      const res: ResourceItems<T> = { attributes: [], schemaUrl: '', scopes: [] };
      while (pos < re) {
        const t = varint(re);
        if (t === 0x0a) {
          const e = delimited(re);
          while (pos < e) {
            const rt = varint(e);
            if (rt === 0x0a) res.attributes.push(keyValue(delimited(e)));
            else skip(rt & 7, e);
          }
          done(e);
        } else if (t === 0x12) {
          const se = delimited(re);
          const sc: ScopeItems<T> = { scope: emptyScope(), schemaUrl: '', items: [] };
          while (pos < se) {
            const st = varint(se);
            if (st === 0x0a) sc.scope = scope(delimited(se));
            else if (st === 0x12) {
              const ie = delimited(se);
              sc.items.push(item(ie));
              done(ie);
            } else if (st === 0x1a) sc.schemaUrl = string(se);
            else skip(st & 7, se);
          }
          done(se);
          res.scopes.push(sc);
        } else if (t === 0x1a) res.schemaUrl = string(re);
        else skip(t & 7, re);
      }
      done(re);
      out.push(res);
    }
    return out;
  } finally {
    buf = Buffer.alloc(0); // let go of the body
  }
}

// --- traces

function spanEvent(end: number): SpanEvent {
  const e: SpanEvent = { timeUs: 0, timeNs: 0, name: '', attributes: [] };
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x09) {
      nanos(end);
      e.timeUs = timeUs;
      e.timeNs = timeNs;
    } else if (tag === 0x12) e.name = string(end);
    else if (tag === 0x1a) e.attributes.push(keyValue(delimited(end)));
    else skip(tag & 7, end);
  }
  done(end);
  return e;
}

function spanLink(end: number): SpanLink {
  const l: SpanLink = { traceId: '', spanId: '', attributes: [] };
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x0a) l.traceId = hex(end);
    else if (tag === 0x12) l.spanId = hex(end);
    else if (tag === 0x22) l.attributes.push(keyValue(delimited(end)));
    else skip(tag & 7, end);
  }
  done(end);
  return l;
}

function span(end: number): Span {
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
  while (pos < end) {
    const tag = varint(end);
    switch (tag) {
      case 0x0a:
        s.traceId = hex(end);
        break;
      case 0x12:
        s.spanId = hex(end);
        break;
      case 0x1a:
        s.traceState = string(end);
        break;
      case 0x22:
        s.parentSpanId = hex(end);
        break;
      case 0x2a:
        s.name = string(end);
        break;
      case 0x30:
        s.kind = varint(end);
        break;
      case 0x39:
        nanos(end);
        s.startUs = timeUs;
        s.startNs = timeNs;
        break;
      case 0x41:
        nanos(end);
        s.endUs = timeUs;
        s.endNs = timeNs;
        break;
      case 0x4a:
        s.attributes.push(keyValue(delimited(end)));
        break;
      case 0x5a:
        s.events.push(spanEvent(delimited(end)));
        break;
      case 0x6a:
        s.links.push(spanLink(delimited(end)));
        break;
      case 0x7a: {
        const e = delimited(end);
        while (pos < e) {
          const t = varint(e);
          if (t === 0x12) s.statusMessage = string(e);
          else if (t === 0x18) s.statusCode = varint(e);
          else skip(t & 7, e);
        }
        done(e);
        break;
      }
      default:
        skip(tag & 7, end);
    }
  }
  return s;
}

export const decodeTracesProto = (body: Buffer): OtlpRequest<Span> => request(body, span);

// --- logs

function logRecord(end: number): LogRecord {
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
  while (pos < end) {
    const tag = varint(end);
    switch (tag) {
      case 0x09:
        nanos(end);
        l.timeUs = timeUs;
        l.timeNs = timeNs;
        break;
      case 0x10:
        l.severityNumber = varint(end) | 0;
        break;
      case 0x1a:
        l.severityText = string(end);
        break;
      case 0x2a: {
        const e = delimited(end);
        l.body = anyValue(e, 0);
        done(e);
        break;
      }
      case 0x32:
        l.attributes.push(keyValue(delimited(end)));
        break;
      case 0x45:
        l.flags = fixed32(end);
        break;
      case 0x4a:
        l.traceId = hex(end);
        break;
      case 0x52:
        l.spanId = hex(end);
        break;
      case 0x59:
        nanos(end);
        l.observedUs = timeUs;
        l.observedNs = timeNs;
        break;
      case 0x62:
        l.eventName = string(end);
        break;
      default:
        skip(tag & 7, end);
    }
  }
  return l;
}

export const decodeLogsProto = (body: Buffer): OtlpRequest<LogRecord> => request(body, logRecord);

// --- metrics

const timeOf = (end: number) => {
  nanos(end);
  return timeUs;
};

function numberPoint(end: number): NumberPoint {
  const p: NumberPoint = { attributes: [], timeUs: 0, flags: 0, value: undefined };
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x3a) p.attributes.push(keyValue(delimited(end)));
    else if (tag === 0x19) p.timeUs = timeOf(end);
    else if (tag === 0x21) p.value = double(end);
    else if (tag === 0x31) p.value = sfixed64(end);
    else if (tag === 0x40) p.flags = varint(end);
    else skip(tag & 7, end);
  }
  done(end);
  return p;
}

function histogramPoint(end: number): HistogramPoint {
  const p: HistogramPoint = { attributes: [], timeUs: 0, flags: 0, count: 0, sum: undefined, bucketCounts: [], explicitBounds: [] };
  while (pos < end) {
    const tag = varint(end);
    const field = tag >>> 3;
    if (tag === 0x4a) p.attributes.push(keyValue(delimited(end)));
    else if (tag === 0x19) p.timeUs = timeOf(end);
    else if (tag === 0x21) p.count = fixed64(end);
    else if (tag === 0x29) p.sum = double(end);
    else if (field === 6) repeated(tag, 1, end, fixed64, p.bucketCounts);
    else if (field === 7) repeated(tag, 1, end, double, p.explicitBounds);
    else if (tag === 0x50) p.flags = varint(end);
    else skip(tag & 7, end);
  }
  done(end);
  return p;
}

const uint64 = (end: number) => varint64(end, false);

function buckets(end: number): ExponentialBuckets {
  const b: ExponentialBuckets = { offset: 0, bucketCounts: [] };
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x08) b.offset = sint32(end);
    else if (tag >>> 3 === 2) repeated(tag, 0, end, uint64, b.bucketCounts);
    else skip(tag & 7, end);
  }
  done(end);
  return b;
}

function exponentialPoint(end: number): ExponentialHistogramPoint {
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
  while (pos < end) {
    const tag = varint(end);
    switch (tag) {
      case 0x0a:
        p.attributes.push(keyValue(delimited(end)));
        break;
      case 0x19:
        p.timeUs = timeOf(end);
        break;
      case 0x21:
        p.count = fixed64(end);
        break;
      case 0x29:
        p.sum = double(end);
        break;
      case 0x30:
        p.scale = sint32(end);
        break;
      case 0x39:
        p.zeroCount = fixed64(end);
        break;
      case 0x42:
        p.positive = buckets(delimited(end));
        break;
      case 0x4a:
        p.negative = buckets(delimited(end));
        break;
      case 0x50:
        p.flags = varint(end);
        break;
      default:
        skip(tag & 7, end);
    }
  }
  done(end);
  return p;
}

function summaryPoint(end: number): SummaryPoint {
  const p: SummaryPoint = { attributes: [], timeUs: 0, flags: 0, count: 0, sum: 0, quantiles: [] };
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x3a) p.attributes.push(keyValue(delimited(end)));
    else if (tag === 0x19) p.timeUs = timeOf(end);
    else if (tag === 0x21) p.count = fixed64(end);
    else if (tag === 0x29) p.sum = double(end);
    else if (tag === 0x32) {
      const e = delimited(end);
      const v = { quantile: 0, value: 0 };
      while (pos < e) {
        const t = varint(e);
        if (t === 0x09) v.quantile = double(e);
        else if (t === 0x11) v.value = double(e);
        else skip(t & 7, e);
      }
      done(e);
      p.quantiles.push(v);
    } else if (tag === 0x40) p.flags = varint(end);
    else skip(tag & 7, end);
  }
  done(end);
  return p;
}

/** Gauge, Sum, Histogram, … : `repeated <Point> data_points = 1` (their other fields are unused). */
function points<P>(end: number, point: (end: number) => P): P[] {
  const out: P[] = [];
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x0a) out.push(point(delimited(end)));
    else skip(tag & 7, end);
  }
  done(end);
  return out;
}

function metric(end: number): Metric {
  let m: Metric = { name: '', type: 'none', points: [] };
  let name = '';
  while (pos < end) {
    const tag = varint(end);
    switch (tag) {
      case 0x0a:
        name = string(end);
        break;
      case 0x2a:
        m = { name: '', type: 'gauge', points: points(delimited(end), numberPoint) };
        break;
      case 0x3a:
        m = { name: '', type: 'sum', points: points(delimited(end), numberPoint) };
        break;
      case 0x4a:
        m = { name: '', type: 'histogram', points: points(delimited(end), histogramPoint) };
        break;
      case 0x52:
        m = { name: '', type: 'exponential_histogram', points: points(delimited(end), exponentialPoint) };
        break;
      case 0x5a:
        m = { name: '', type: 'summary', points: points(delimited(end), summaryPoint) };
        break;
      default:
        skip(tag & 7, end);
    }
  }
  m.name = name;
  return m;
}

export const decodeMetricsProto = (body: Buffer): OtlpRequest<Metric> => request(body, metric);
