// One incoming event → the flat, typed form the writer stores, or the reason it is refused.
// Time: RFC 3339 (any fraction, any offset; no offset means UTC) or a Unix epoch number (or
// numeric string) in seconds, milliseconds, microseconds or nanoseconds, told apart by size.
// Stored with microsecond precision. Nested objects are flattened to dotted names down to the
// dataset's expand_json_depth; deeper objects and all arrays are kept as JSON strings.
// Field names and string values that are not well-formed Unicode are made so (wellFormed).
import type { Scalar } from '../stores/events/types.js';
import type { ColumnsBuilder } from '../stores/events/columns.js';

export interface IngestLimits {
  maxFieldsPerEvent: number;
  maxEventBytes: number;
  maxStringBytes: number;
}

export const DEFAULT_LIMITS: IngestLimits = { maxFieldsPerEvent: 2000, maxEventBytes: 1_000_000, maxStringBytes: 64 * 1024 };

export interface NormalisedEvent {
  timeUs: number;
  samplerate: number;
  fields: Map<string, Scalar>;
}

export const TOO_MANY_COLUMNS = 'Event has too many columns.';

export class EventRejected extends Error {}

declare global {
  // ES2024, in Node 20; the project's lib is ES2022.
  interface String {
    isWellFormed(): boolean;
    toWellFormed(): string;
  }
}

/**
 * The one rule for text that is not well-formed Unicode, on every ingest path and for column
 * names however they arrive: each lone surrogate (a JSON escape such as `\udfff` with no partner)
 * becomes U+FFFD, before the text is looked up or stored. (Bytes that are not UTF-8 already
 * become U+FFFD when a body is decoded.) Replacing, not refusing, keeps the rest of the event,
 * as Go's encoding/json does; and the stores could not keep such text anyway: SQLite stored it
 * as bytes that read back as other text, so two names became one and the column registry lost
 * track of its columns; UTF-8 has no form for a lone surrogate at all.
 */
export function wellFormed(s: string): string {
  return s.isWellFormed() ? s : s.toWellFormed();
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:?\d{2})?$/;
const NUMERIC = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** Epoch number in s / ms / µs / ns → microseconds. */
function epochToUs(n: number): number {
  const a = Math.abs(n);
  if (a < 1e11) return n * 1e6; // seconds (until the year 5138)
  if (a < 1e14) return n * 1e3; // milliseconds
  if (a < 1e17) return n; // microseconds
  return n / 1e3; // nanoseconds
}

/** Years 0001 to 9999 (RFC 3339's range), in microseconds: anything else cannot be stored. */
const MIN_TIME_US = -62_135_596_800_000_000;
const MAX_TIME_US = 253_402_300_799_999_999;

function inRange(us: number): number {
  if (!(us >= MIN_TIME_US && us <= MAX_TIME_US)) throw new EventRejected('time is out of range (years 0001 to 9999)');
  return us;
}

/** Date.parse rolls 2024-02-30 over to March 1st; a day its month does not have is refused instead. */
function dayExists(date: string): boolean {
  const [y, mo, d] = date.split('-').map(Number);
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  return d <= [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
}

const UTC_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The usual time form, as toISOString() and most SDKs write it (`2024-05-01T12:34:56.789Z`), read
 * without building strings: the same result as the general path below, in a quarter of the time
 * (it runs once per event). Anything else, including an impossible date, returns undefined and
 * takes the general path, which also produces the error.
 */
function parseUtcZ(s: string): number | undefined {
  if (s.length < 20 || s.length > 30 || !UTC_Z.test(s)) return undefined;
  const digit = (i: number) => s.charCodeAt(i) - 48;
  const y = digit(0) * 1000 + digit(1) * 100 + digit(2) * 10 + digit(3);
  const mo = digit(5) * 10 + digit(6);
  const d = digit(8) * 10 + digit(9);
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  if (mo < 1 || mo > 12 || d < 1 || d > (mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1])) return undefined;
  // Date.parse checks the clock fields (and the year range) exactly as the general path does.
  const base = Date.parse(s.length === 20 ? s : `${s.slice(0, 19)}Z`);
  if (Number.isNaN(base)) return undefined;
  let fractionUs = 0;
  for (let i = 20, scale = 100_000; i < 26 && i < s.length - 1; i++, scale /= 10) fractionUs += digit(i) * scale;
  const us = base * 1000 + fractionUs;
  return us >= MIN_TIME_US && us <= MAX_TIME_US ? us : undefined;
}

/** Parses an event time; `undefined`, null and '' mean "when it was received". */
export function parseTime(v: unknown, receivedUs: number): number {
  if (v === undefined || v === null || v === '') return receivedUs;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new EventRejected('time must be a finite number');
    return inRange(Math.trunc(epochToUs(v)));
  }
  // A msgpack timestamp (decode.ts) keeps its microseconds in `epochUs`.
  if (v instanceof Date) return inRange((v as { epochUs?: number }).epochUs ?? v.getTime() * 1000);
  if (typeof v !== 'string') throw new EventRejected('time must be an RFC 3339 string or a Unix epoch number');
  const fast = parseUtcZ(v);
  if (fast !== undefined) return fast;
  const s = v.trim();
  // Integer nanoseconds have more digits than a double holds: divide exactly.
  if (/^-?\d{18,}$/.test(s)) return inRange(Number(BigInt(s) / 1000n));
  if (NUMERIC.test(s)) return inRange(Math.trunc(epochToUs(Number(s))));
  const m = RFC3339.exec(s);
  const base = m ? Date.parse(`${m[1]}T${m[2]}${m[4] ? m[4].toUpperCase().replace(/^([+-]\d{2})(\d{2})$/, '$1:$2') : 'Z'}`) : NaN;
  if (!m || Number.isNaN(base) || !dayExists(m[1])) {
    throw new EventRejected(`time ${JSON.stringify(v.slice(0, 64))} is not RFC 3339 or a Unix epoch`);
  }
  // The fraction's digits, not a float product (0.123457 * 1e6 is 123456.99…).
  const fractionUs = m[3] ? Number(m[3].slice(0, 6).padEnd(6, '0')) : 0;
  return inRange(base * 1000 + fractionUs);
}

/** Sample rate: a positive integer (or its decimal string); absent means 1. */
export function parseSamplerate(v: unknown): number {
  if (v === undefined || v === null || v === '') return 1;
  const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    throw new EventRejected('samplerate must be a positive integer');
  }
  return n;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date) && !ArrayBuffer.isView(v);
}

/**
 * An array or object kept as a JSON string. JSON.parse reads nesting of any depth, but
 * JSON.stringify recurses: nesting deeper than the stack allows refuses the event.
 */
function asJson(v: unknown, name: string): string {
  try {
    return JSON.stringify(v);
  } catch (err) {
    if (err instanceof RangeError) throw new EventRejected(`field ${JSON.stringify(name.slice(0, 128))} is nested too deeply`);
    throw err;
  }
}

/** Where flattened fields go: a Map, or the current row of a ColumnsBuilder. */
interface FieldSink {
  set(name: string, value: Scalar): unknown;
  /** Distinct fields so far. */
  readonly size: number;
}

/** Flattens `data` into `out`; returns the approximate size in bytes it added. */
function flatten(data: Record<string, unknown>, prefix: string, depthLeft: number, out: FieldSink, limits: IngestLimits): number {
  let size = 0;
  for (const key of Object.keys(data)) {
    const v = data[key];
    if (v === null || v === undefined) continue;
    const name = prefix + wellFormed(key);
    let value: Scalar;
    if (typeof v === 'string') value = wellFormed(v);
    else if (typeof v === 'number') {
      if (!Number.isFinite(v)) continue; // NaN/Infinity have no JSON form; msgpack can carry them
      value = v;
    } else if (typeof v === 'boolean') value = v;
    else if (typeof v === 'bigint') value = Number(v);
    else if (v instanceof Date) {
      if (Number.isNaN(v.getTime())) throw new EventRejected(`field ${JSON.stringify(name.slice(0, 128))} is an invalid timestamp`);
      value = v.toISOString();
    }
    else if (ArrayBuffer.isView(v)) value = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
    else if (isPlainObject(v) && depthLeft > 0) {
      size += flatten(v, `${name}.`, depthLeft - 1, out, limits);
      continue;
    } else value = asJson(v, name);

    if (typeof value === 'string' && value.length * 3 > limits.maxStringBytes && Buffer.byteLength(value) > limits.maxStringBytes) {
      throw new EventRejected(`field ${JSON.stringify(name.slice(0, 128))} is longer than ${limits.maxStringBytes} bytes`);
    }
    size += name.length + (typeof value === 'string' ? value.length : 8);
    out.set(name, value);
    if (out.size > limits.maxFieldsPerEvent) throw new EventRejected(TOO_MANY_COLUMNS);
  }
  return size;
}

function flattenInto(out: FieldSink, data: unknown, expandDepth: number, limits: IngestLimits): void {
  if (!isPlainObject(data)) throw new EventRejected('event data must be a JSON object');
  const size = flatten(data, '', expandDepth, out, limits);
  if (size > limits.maxEventBytes) throw new EventRejected(`event is larger than ${limits.maxEventBytes} bytes`);
}

/** Normalises the fields of one event (the `data` object of a batch item, or a single event body). */
export function normaliseFields(data: unknown, expandDepth: number, limits: IngestLimits): Map<string, Scalar> {
  const fields = new Map<string, Scalar>();
  flattenInto(fields, data, expandDepth, limits);
  return fields;
}

/**
 * A batch item `{data, time?, samplerate?}` → the next row of `out`; a refused item (throws
 * EventRejected) leaves no row.
 */
export function normaliseBatchItemInto(out: ColumnsBuilder, item: unknown, receivedUs: number, expandDepth: number, limits: IngestLimits): void {
  if (!isPlainObject(item)) throw new EventRejected('each event must be a JSON object with a data object');
  try {
    flattenInto(out, item.data, expandDepth, limits);
    out.endRow(parseTime(item.time, receivedUs), parseSamplerate(item.samplerate));
  } catch (err) {
    out.abandonRow();
    throw err;
  }
}
