// OTLP spans → events, as Honeycomb stores them (docs/otlp.md; husky's otlp/traces.go and
// traces_direct.go: where the two translators differ, the newer "direct" one, docs/otlp.md says
// which and why). Per span, in this order: one event per span event, one per link, then the
// span's own event.
//
// Precedence when names collide: the item's own attributes, then Honeycomb's fields, then the
// scope's, then the resource's, then (spans only) fields copied from the first exception event.
// Fields are written lowest first, so that the later write wins.
import { addAttributes, sampleRateOf, type FieldList } from './attributes.js';
import { tracesDataset } from './datasets.js';
import type { KeyValue, OtlpRequest, Span, Value } from './model.js';
import { addRow, resourceRows, scopeFields, traceIdText, type Refusal, type Rows, type Translated } from './rows.js';
import type { IngestLimits } from '../normalise.js';

const SPAN_KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];
const STATUS_ERROR = 2;

export interface DatasetChoice {
  classicKey: boolean;
  /** `x-honeycomb-dataset`, as sent. */
  datasetHeader: string | undefined;
}

/**
 * The sample rate a span's `tracestate` implies: the OpenTelemetry rejection threshold
 * (`ot=…;th:HEX`, or the older `th=HEX`) as an adjusted count, 1 / sampling probability. A
 * fractional count of at most 100 is rounded up or down at random in proportion (so the rates
 * add up over many spans); larger counts are floored.
 */
export function traceStateSampleRate(traceState: string, random: () => number = Math.random): number | undefined {
  let th: string | undefined;
  for (const entry of traceState.split(',')) {
    if (!entry.startsWith('ot=')) continue;
    for (const pair of entry.slice(3).split(';')) {
      const kv = pair.split(':');
      if (kv.length === 2 && kv[0] === 'th') {
        th = kv[1];
        break;
      }
    }
    if (th !== undefined) break;
  }
  if (th === undefined) {
    const pairs = new Map<string, string>();
    for (const kv of traceState.split(';')) {
      const p = kv.split('=');
      if (p.length === 2) pairs.set(p[0], p[1]);
    }
    th = pairs.get('th');
  }
  if (th === undefined || !/^[0-9a-fA-F]{1,14}$/.test(th)) return undefined;
  // The threshold is th's hex digits padded on the right to 56 bits.
  const threshold = BigInt(`0x${th}`) << BigInt(4 * (14 - th.length));
  const count = 1 / (Number((1n << 56n) - threshold) / 2 ** 56);
  const low = Math.min(2 ** 31 - 1, Math.floor(count));
  if (low > 100) return low;
  const high = Math.ceil(count);
  if (high === low) return low;
  return random() < count - low ? high : low;
}

/** The fields an exception event copies onto its span: these names, strings (escaped: a boolean). */
function exceptionFields(attributes: KeyValue[]): [string, Value][] {
  const out: [string, Value][] = [];
  for (const { key, value } of attributes) {
    if ((EXCEPTION_KEYS.has(key) && typeof value === 'string') || (key === 'exception.escaped' && typeof value === 'boolean')) out.push([key, value]);
  }
  return out;
}
const EXCEPTION_KEYS = new Set(['exception.message', 'exception.type', 'exception.stacktrace']);

/** Nanoseconds from (us, ns) a to b, as float milliseconds. */
const msBetween = (aUs: number, aNs: number, bUs: number, bNs: number) => ((bUs - aUs) * 1000 + (bNs - aNs)) / 1e6;
const isZero = (us: number, ns: number) => us === 0 && ns === 0;
const before = (aUs: number, aNs: number, bUs: number, bNs: number) => aUs < bUs || (aUs === bUs && aNs < bNs);

/** What a span's events, links and own event share. */
interface SpanContext {
  traceId: string;
  rate: number;
  error: boolean;
  resource: FieldList;
  scope: FieldList;
}

/** The fields every trace event has (Honeycomb's "common fields"). */
function commonFields(rows: Rows, traceId: string, parentId: string, parentName: string, annotation: string | undefined, error: boolean): void {
  rows.set('trace.trace_id', traceId);
  if (parentId !== '') rows.set('trace.parent_id', parentId);
  if (parentName !== '') rows.set('parent_name', parentName);
  if (annotation !== undefined) rows.set('meta.annotation_type', annotation);
  rows.set('meta.signal_type', 'trace');
  if (error) rows.set('error', true);
}

function spanRows(rows: Rows, refused: Refusal[], item: number, span: Span, c: SpanContext): void {
  const { traceId } = c;
  let exception: [string, Value][] | undefined;
  for (const ev of span.events) {
    if (exception === undefined && ev.name === 'exception') exception = exceptionFields(ev.attributes);
    addRow(rows, refused, item, 1, () => {
      c.resource.writeTo(rows);
      c.scope.writeTo(rows);
      commonFields(rows, traceId, span.spanId, span.name, 'span_event', c.error);
      rows.set('name', ev.name);
      let sinceStart = 0;
      let invalid = false;
      if (!isZero(ev.timeUs, ev.timeNs) && !isZero(span.startUs, span.startNs)) {
        if (before(ev.timeUs, ev.timeNs, span.startUs, span.startNs)) invalid = true;
        else sinceStart = msBetween(span.startUs, span.startNs, ev.timeUs, ev.timeNs);
      }
      rows.set('meta.time_since_span_start_ms', sinceStart);
      if (invalid) rows.set('meta.invalid_time_since_span_start', true);
      addAttributes(rows, ev.attributes);
      return { timeUs: ev.timeUs, samplerate: c.rate };
    });
  }
  for (const link of span.links) {
    addRow(rows, refused, item, 1, () => {
      c.resource.writeTo(rows);
      c.scope.writeTo(rows);
      commonFields(rows, traceId, span.spanId, span.name, 'link', c.error);
      if (link.traceId !== '') rows.set('trace.link.trace_id', traceIdText(link.traceId));
      if (link.spanId !== '') rows.set('trace.link.span_id', link.spanId);
      addAttributes(rows, link.attributes);
      return { timeUs: span.startUs, samplerate: c.rate };
    });
  }
  addRow(rows, refused, item, 1, () => {
    if (exception) for (const [k, v] of exception) rows.set(k, v as string | boolean);
    c.resource.writeTo(rows);
    c.scope.writeTo(rows);
    commonFields(rows, traceId, span.parentSpanId, '', undefined, c.error);
    rows.set('name', span.name);
    rows.set('trace.span_id', span.spanId);
    if (span.traceState !== '') rows.set('trace.trace_state', span.traceState);
    rows.set('status_code', span.statusCode);
    if (span.statusMessage !== '') rows.set('status_message', span.statusMessage);
    rows.set('span.num_events', span.events.length);
    rows.set('span.num_links', span.links.length);
    const kind = SPAN_KINDS[span.kind] ?? 'unspecified';
    rows.set('span.kind', kind);
    rows.set('type', kind);
    let duration = 0;
    let invalid = false;
    if (!isZero(span.startUs, span.startNs) && !isZero(span.endUs, span.endNs)) {
      if (before(span.endUs, span.endNs, span.startUs, span.startNs)) invalid = true;
      else duration = msBetween(span.startUs, span.startNs, span.endUs, span.endNs);
    }
    rows.set('duration_ms', duration);
    if (invalid) rows.set('meta.invalid_duration', true);
    addAttributes(rows, span.attributes);
    return { timeUs: span.startUs, samplerate: c.rate };
  });
}

export function translateTraces(req: OtlpRequest<Span>, choice: DatasetChoice, limits: IngestLimits): Translated {
  const refused: Refusal[] = [];
  const datasetOf = (service: string | undefined) => tracesDataset(choice.classicKey, choice.datasetHeader, service);
  const { byDataset, resources } = resourceRows(req, limits, datasetOf, (s) => 1 + s.events.length + s.links.length);
  let item = 0;
  req.forEach((res, i) => {
    const { fields: resource, rate: resourceRate, rows } = resources[i];
    for (const sc of res.scopes) {
      const scope = scopeFields(sc.scope, sc.schemaUrl);
      const scopeRate = sampleRateOf(sc.scope.attributes) ?? resourceRate;
      for (const span of sc.items) {
        const rate = sampleRateOf(span.attributes) ?? scopeRate ?? (span.traceState === '' ? undefined : traceStateSampleRate(span.traceState)) ?? 1;
        spanRows(rows, refused, item++, span, { traceId: traceIdText(span.traceId), rate, error: span.statusCode === STATUS_ERROR, resource, scope });
      }
    }
  });
  return { groups: byDataset.finish(), items: item, refused };
}
