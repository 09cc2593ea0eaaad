// OTLP attribute values → event fields, as Honeycomb stores them (docs/otlp.md;
// husky's otlp/common.go): strings, booleans, integers and doubles keep their type; a
// key-value list is flattened to `parent.child` fields, five levels deep, and below that kept
// whole as JSON; bytes and arrays become JSON text. JSON text is what Go's encoder writes
// (map keys sorted, no HTML escaping, bytes as base64, a trailing newline) cut at 65,535 bytes.
// Entries with an empty key or no value are skipped, and so are non-finite doubles (as on
// /1/batch: they have no JSON form).
import type { Scalar } from '../../stores/events/types.js';
import { ArrayValue, Bytes, KvList, type KeyValue, type Value } from './model.js';

/** Key-value lists deeper than this are stored as JSON text (Honeycomb's maxDepth). */
export const MAX_FLATTEN_DEPTH = 5;
/** JSON text of a value is cut at this many bytes (Honeycomb's field size, 2^16 - 1). */
export const MAX_JSON_BYTES = 65_535;

/** Where fields go: the row being built (sink.ts), or a list kept for many rows. */
export interface FieldTarget {
  set(name: string, value: Scalar): void;
}

/** Fields kept to be written into many rows (a resource's or a scope's). */
export class FieldList implements FieldTarget {
  readonly names: string[] = [];
  readonly values: Scalar[] = [];
  set(name: string, value: Scalar): void {
    this.names.push(name);
    this.values.push(value);
  }
  /** The value last set for `name` (later entries win, as when written into a row). */
  get(name: string): Scalar | undefined {
    const i = this.names.lastIndexOf(name);
    return i < 0 ? undefined : this.values[i];
  }
  writeTo(out: FieldTarget): void {
    const { names, values } = this;
    for (let i = 0; i < names.length; i++) out.set(names[i], values[i]);
  }
}

/** A value as Go's encoding/json would marshal it (maps as objects with sorted keys). */
function marshallable(v: Value): unknown {
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'number' && !Number.isFinite(v)) throw new RangeError('no JSON form');
    return v;
  }
  if (v instanceof Bytes) return v.base64;
  if (v instanceof ArrayValue) return v.values.map(marshallable);
  const m = new Map<string, unknown>();
  for (const kv of (v as KvList).values) m.set(kv.key, marshallable(kv.value));
  const o: Record<string, unknown> = {};
  for (const k of [...m.keys()].sort()) o[k] = m.get(k);
  return o;
}

/** Cuts `text` to at most `max` UTF-8 bytes, at a character boundary. */
function cutToBytes(text: string, max: number): string {
  if (text.length * 3 <= max) return text;
  const b = Buffer.from(text, 'utf8');
  if (b.length <= max) return text;
  let end = max;
  while (end > 0 && (b[end] & 0xc0) === 0x80) end--;
  return b.toString('utf8', 0, end);
}

/**
 * JSON text of a value plus the newline Go's encoder ends it with, at most 65,535 bytes;
 * undefined when it has no JSON form (a NaN or an infinity inside: Go's encoder refuses those,
 * and Honeycomb then leaves the field out).
 */
export function jsonText(v: Value): string | undefined {
  let text: string;
  try {
    text = `${JSON.stringify(marshallable(v))}\n`;
  } catch (err) {
    if (err instanceof RangeError) return undefined;
    throw err;
  }
  // Go's encoder escapes these two even with HTML escaping off.
  if (/[\u2028\u2029]/.test(text)) text = text.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  return cutToBytes(text, MAX_JSON_BYTES);
}

/** One attribute (or a log body) under `name`, flattened per the rules above. */
export function addValue(out: FieldTarget, name: string, v: Value, depth: number): void {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      out.set(name, v);
      return;
    case 'number':
      if (Number.isFinite(v)) out.set(name, v);
      return;
  }
  if (v === null) return;
  if (v instanceof KvList && depth < MAX_FLATTEN_DEPTH) {
    for (const kv of v.values) if (kv.value !== null) addValue(out, `${name}.${kv.key}`, kv.value, depth + 1);
    return;
  }
  const text = jsonText(v);
  if (text !== undefined) out.set(name, text);
}

/**
 * A sample-rate attribute: `sampleRate` or `SampleRate` with a number or a string. It sets the
 * event's sample rate and is not stored as a field; with any other value (a boolean, say) it
 * is an ordinary field.
 */
export const isSampleRate = (key: string, value: Value) =>
  (key === 'sampleRate' || key === 'SampleRate') && (typeof value === 'number' || typeof value === 'string');

/** Attributes into `out`; sample-rate attributes too only when `keepSampleRate`. */
export function addAttributes(out: FieldTarget, attributes: KeyValue[], keepSampleRate = false): void {
  for (let i = 0; i < attributes.length; i++) {
    const { key, value } = attributes[i];
    if (key === '' || value === null || (!keepSampleRate && isSampleRate(key, value))) continue;
    addValue(out, key, value, 0);
  }
}

/**
 * The sample rate named by a level's attributes (`sampleRate`, else `SampleRate`), or undefined
 * when it names none. Strings are read as numbers; values are rounded (x + 0.5, truncated);
 * 2^31 - 1 and more give 2^31 - 1; zero, negative, NaN and unreadable values give 1.
 */
export function sampleRateOf(attributes: KeyValue[]): number | undefined {
  let lower: Value | undefined;
  let upper: Value | undefined;
  for (const { key, value } of attributes) {
    if (!isSampleRate(key, value)) continue;
    if (key === 'sampleRate') lower = value;
    else upper = value;
  }
  const v = lower ?? upper;
  if (v === undefined) return undefined;
  const x = typeof v === 'number' ? v : goParseFloat(v as string);
  if (Number.isNaN(x)) return 1;
  if (x >= 2 ** 31 - 1) return 2 ** 31 - 1;
  const rounded = Math.trunc(x + 0.5);
  return rounded <= 0 ? 1 : rounded;
}

/** strconv.ParseFloat's accepted forms, near enough: a decimal or exponent number, inf, nan. */
function goParseFloat(s: string): number {
  if (/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(s)) return Number(s);
  if (/^[+-]?inf(?:inity)?$/i.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
  return NaN;
}
