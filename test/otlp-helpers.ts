// Shared helpers of the OTLP tests: requests written as OTLP/JSON objects, sent as JSON or
// encoded to protobuf by protobufjs with test/fixtures/otlp.proto (an encoder independent of
// Waggle's decoder), and the answers read back.
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { expect } from 'vitest';
import type { TestApp } from './helpers.js';
import type { Res } from './ingest-helpers.js';

export type Signal = 'traces' | 'logs' | 'metrics';

export const proto = protobuf.parse(readFileSync(new URL('./fixtures/otlp.proto', import.meta.url), 'utf8')).root;

const REQUEST: Record<Signal, string> = {
  traces: 'otlp.ExportTraceServiceRequest',
  logs: 'otlp.ExportLogsServiceRequest',
  metrics: 'otlp.ExportMetricsServiceRequest',
};
const RESPONSE: Record<Signal, string> = {
  traces: 'otlp.ExportTraceServiceResponse',
  logs: 'otlp.ExportLogsServiceResponse',
  metrics: 'otlp.ExportMetricsServiceResponse',
};

const ID_KEYS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** An OTLP/JSON object as protobufjs takes it: hex ids become bytes. */
function forProtobuf(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(forProtobuf);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = ID_KEYS.has(k) && typeof x === 'string' ? Buffer.from(x, 'hex') : forProtobuf(x);
  return out;
}

/** Encodes an OTLP/JSON request object (hex ids, integer enums) as protobuf. */
export function toProtobuf(signal: Signal, request: unknown): Buffer {
  const type = proto.lookupType(REQUEST[signal]);
  return Buffer.from(type.encode(type.fromObject(forProtobuf(request) as Record<string, unknown>)).finish());
}

export type Encoding = 'json' | 'protobuf';

/** POST /v1/{signal} with the request as JSON or protobuf; headers override the ingest key and type. */
export function otlp(t: TestApp, signal: Signal, request: unknown, encoding: Encoding = 'protobuf', headers: Record<string, string> = {}): Promise<Res> {
  const payload = Buffer.isBuffer(request) || typeof request === 'string' ? request : encoding === 'json' ? JSON.stringify(request) : toProtobuf(signal, request);
  return t.app.inject({
    method: 'POST',
    url: `/v1/${signal}`,
    headers: { ...t.ingest, 'content-type': encoding === 'json' ? 'application/json' : 'application/x-protobuf', ...headers },
    payload,
  }) as Promise<Res>;
}

/** A 200 answer: the Export*ServiceResponse decoded (protobuf or JSON by its Content-Type). */
export function exported(res: Res, signal: Signal): { rejected: number; message: string } {
  expect(res.statusCode, res.body).toBe(200);
  const type = String(res.headers['content-type']);
  if (type.startsWith('application/json')) {
    const body = JSON.parse(res.body);
    const p = body.partialSuccess ?? {};
    const key = Object.keys(p).find((k) => k.startsWith('rejected'));
    return { rejected: Number(key ? p[key] : 0), message: p.errorMessage ?? '' };
  }
  const body = proto.lookupType(RESPONSE[signal]).decode(res.rawPayload) as unknown as { partialSuccess?: Record<string, unknown> };
  const p = body.partialSuccess ?? {};
  const key = Object.keys(p).find((k) => k.startsWith('rejected'));
  return { rejected: Number(key ? p[key] : 0), message: String(p.errorMessage ?? '') };
}

export interface Status {
  code: number;
  message: string;
  retryDelaySeconds?: number;
}

/** An error answer: its google.rpc.Status, decoded by its Content-Type. */
export function statusOf(res: Res, httpStatus: number): Status {
  expect(res.statusCode, res.body).toBe(httpStatus);
  const type = String(res.headers['content-type']);
  if (type.startsWith('application/json')) {
    const body = JSON.parse(res.body);
    const retry = body.details?.[0]?.retryDelay;
    return { code: body.code, message: body.message, ...(retry ? { retryDelaySeconds: parseInt(retry, 10) } : {}) };
  }
  return decodeStatus(res.rawPayload);
}

/** A google.rpc.Status in protobuf (also what gRPC's grpc-status-details-bin holds). */
export function decodeStatus(bytes: Buffer): Status {
  const s = proto.lookupType('otlp.Status').decode(bytes) as unknown as { code: number; message: string; details: { typeUrl: string; value: Uint8Array }[] };
  const out: Status = { code: s.code, message: s.message };
  const info = s.details?.find((d) => d.typeUrl === 'type.googleapis.com/google.rpc.RetryInfo');
  if (info) {
    const r = proto.lookupType('otlp.RetryInfo').decode(info.value) as unknown as { retryDelay?: { seconds: number | { toNumber(): number } } };
    const secs = r.retryDelay?.seconds ?? 0;
    out.retryDelaySeconds = typeof secs === 'number' ? secs : secs.toNumber();
  }
  return out;
}

/** Nanoseconds since the epoch of a millisecond time, as OTLP/JSON writes them (a decimal string). */
export const nanos = (ms: number, extraNs = 0) => (BigInt(ms) * 1_000_000n + BigInt(extraNs)).toString();

/** An attribute list from a plain object (strings, booleans, integers; doubles via { double }). */
export function attrs(o: Record<string, unknown>): { key: string; value: unknown }[] {
  return Object.entries(o).map(([key, v]) => ({ key, value: anyValue(v) }));
}

export function anyValue(v: unknown): unknown {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  if (v && typeof v === 'object' && 'double' in v) return { doubleValue: (v as { double: number }).double };
  if (v && typeof v === 'object' && 'bytes' in v) return { bytesValue: Buffer.from((v as { bytes: number[] }).bytes).toString('base64') };
  if (v && typeof v === 'object') return { kvlistValue: { values: attrs(v as Record<string, unknown>) } };
  return {};
}

/** A fixed time for test requests (ms). */
export const T0 = Date.UTC(2026, 10, 25, 12, 0, 0);

/** A 10 ms span numbered `i` (its span id), with attributes from a plain object. */
export const span = (i: number, attributes: Record<string, unknown> = {}) => ({
  traceId: '5b8efff798038103d269b633813fc60c',
  spanId: (i + 1).toString(16).padStart(16, '0'),
  name: `span ${i}`,
  startTimeUnixNano: nanos(T0),
  endTimeUnixNano: nanos(T0 + 10),
  attributes: attrs(attributes),
});

/** A trace export of one resource (service.name `service`) and one scope. */
export const traces = (service: string, spans: Record<string, unknown>[]): Record<string, unknown> => ({
  resourceSpans: [{ resource: { attributes: attrs({ 'service.name': service }) }, scopeSpans: [{ scope: { name: 's' }, spans }] }],
});
