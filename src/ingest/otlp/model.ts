// What an OTLP request decodes to, from protobuf (decode-proto.ts) and from JSON (decode-json.ts)
// alike, so that one translator per signal (traces.ts, logs.ts, metrics.ts) serves both
// encodings. Only what translation uses is kept: dropped counts, flags of spans and links,
// exemplars and the like are skipped while decoding.
//
// Ids are lowercase hex. Times are unsigned 64-bit nanoseconds split in two exact numbers:
// whole microseconds (`…Us`, what events are stored with) and the nanoseconds left (`…Ns`,
// 0–999), so that durations keep every nanosecond.

/** An attribute value. `null`: no value set (such entries are skipped). */
export type Value = string | number | boolean | Bytes | ArrayValue | KvList | null;

export class Bytes {
  constructor(readonly base64: string) {}
}
export class ArrayValue {
  constructor(readonly values: Value[]) {}
}
export class KvList {
  constructor(readonly values: KeyValue[]) {}
}

export interface KeyValue {
  key: string;
  value: Value;
}

export interface Scope {
  name: string;
  version: string;
  attributes: KeyValue[];
}

export interface ScopeItems<T> {
  scope: Scope;
  schemaUrl: string;
  items: T[];
}

export interface ResourceItems<T> {
  attributes: KeyValue[];
  schemaUrl: string;
  scopes: ScopeItems<T>[];
}

/** A decoded Export*ServiceRequest. */
export type OtlpRequest<T> = ResourceItems<T>[];

export interface SpanEvent {
  timeUs: number;
  timeNs: number;
  name: string;
  attributes: KeyValue[];
}

export interface SpanLink {
  traceId: string;
  spanId: string;
  attributes: KeyValue[];
}

export interface Span {
  traceId: string;
  spanId: string;
  traceState: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startUs: number;
  startNs: number;
  endUs: number;
  endNs: number;
  attributes: KeyValue[];
  events: SpanEvent[];
  links: SpanLink[];
  statusCode: number;
  statusMessage: string;
}

export interface LogRecord {
  timeUs: number;
  timeNs: number;
  observedUs: number;
  observedNs: number;
  severityNumber: number;
  severityText: string;
  /** undefined: no body. */
  body: Value | undefined;
  attributes: KeyValue[];
  flags: number;
  traceId: string;
  spanId: string;
  eventName: string;
}

/** Data points share these. */
export interface PointBase {
  attributes: KeyValue[];
  timeUs: number;
  /** DataPointFlags; bit 0: no recorded value. */
  flags: number;
}

export interface NumberPoint extends PointBase {
  /** undefined when the point has neither as_int nor as_double. */
  value: number | undefined;
}

export interface HistogramPoint extends PointBase {
  count: number;
  sum: number | undefined;
  bucketCounts: number[];
  explicitBounds: number[];
}

export interface ExponentialBuckets {
  offset: number;
  bucketCounts: number[];
}

export interface ExponentialHistogramPoint extends PointBase {
  count: number;
  sum: number | undefined;
  scale: number;
  zeroCount: number;
  positive: ExponentialBuckets;
  negative: ExponentialBuckets;
}

export interface SummaryPoint extends PointBase {
  count: number;
  sum: number;
  quantiles: { quantile: number; value: number }[];
}

export type Metric =
  | { name: string; type: 'gauge' | 'sum'; points: NumberPoint[] }
  | { name: string; type: 'histogram'; points: HistogramPoint[] }
  | { name: string; type: 'exponential_histogram'; points: ExponentialHistogramPoint[] }
  | { name: string; type: 'summary'; points: SummaryPoint[] }
  | { name: string; type: 'none'; points: [] };

export type Signal = 'traces' | 'logs' | 'metrics';

/** Splits nanoseconds given as two 32-bit halves into [microseconds, nanoseconds left]. */
export function splitNanos(lo: number, hi: number): [number, number] {
  // hi * 2^32 = hi * 4,294,967 * 1000 + hi * 296: every product stays exact.
  const rest = hi * 296 + lo;
  const us = hi * 4_294_967 + Math.floor(rest / 1000);
  return [us, rest % 1000];
}

export const emptyScope = (): Scope => ({ name: '', version: '', attributes: [] });
