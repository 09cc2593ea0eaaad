// Time ranges of queries: presets, absolute ranges, granularity, and how they read.
import type { QuerySpec } from './api/types.js';
export { truncatedWindow } from '../../src/query/spec.js';

export const PRESETS: { label: string; short: string; seconds: number }[] = [
  { label: 'Last 10 minutes', short: '10m', seconds: 600 },
  { label: 'Last 30 minutes', short: '30m', seconds: 1800 },
  { label: 'Last hour', short: '1h', seconds: 3600 },
  { label: 'Last 2 hours', short: '2h', seconds: 7200 },
  { label: 'Last 6 hours', short: '6h', seconds: 21600 },
  { label: 'Last 24 hours', short: '24h', seconds: 86400 },
  { label: 'Last 2 days', short: '2d', seconds: 172800 },
  { label: 'Last 7 days', short: '7d', seconds: 604800 },
];

export const GRANULARITIES: { label: string; seconds: number | undefined }[] = [
  { label: 'auto', seconds: undefined },
  { label: '1 s', seconds: 1 },
  { label: '10 s', seconds: 10 },
  { label: '30 s', seconds: 30 },
  { label: '1 min', seconds: 60 },
  { label: '5 min', seconds: 300 },
  { label: '15 min', seconds: 900 },
  { label: '1 h', seconds: 3600 },
  { label: '1 day', seconds: 86400 },
];

export const DEFAULT_RANGE = 7200;

/** The window a spec asks for, Unix seconds [start, end): the server's rule (src/query/spec.ts). */
export function windowOf(spec: QuerySpec, nowSeconds: number): { start: number; end: number } {
  const range = spec.time_range ?? DEFAULT_RANGE;
  if (spec.start_time !== undefined && spec.end_time !== undefined) return { start: spec.start_time, end: spec.end_time };
  if (spec.start_time !== undefined) return { start: spec.start_time, end: spec.start_time + range };
  if (spec.end_time !== undefined) return { start: spec.end_time - range, end: spec.end_time };
  return { start: nowSeconds - range, end: nowSeconds };
}

/** `Last 2 hours`, `Last 90 minutes`, or the absolute range. */
export function describeRange(spec: QuerySpec): string {
  if (spec.start_time !== undefined || spec.end_time !== undefined) {
    const w = windowOf(spec, Math.floor(Date.now() / 1000));
    return `${formatDateTime(w.start)} – ${formatDateTime(w.end)}`;
  }
  const s = spec.time_range ?? DEFAULT_RANGE;
  return PRESETS.find((p) => p.seconds === s)?.label ?? `Last ${spanText(s)}`;
}

/** `90 minutes`, `3 hours`, `2 days`, `45 seconds`. */
export function spanText(seconds: number): string {
  const units: [number, string][] = [[86400, 'day'], [3600, 'hour'], [60, 'minute'], [1, 'second']];
  for (const [u, name] of units) {
    if (seconds >= u && seconds % u === 0) {
      const n = seconds / u;
      return `${n} ${name}${n === 1 ? '' : 's'}`;
    }
  }
  return `${seconds} seconds`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Local `YYYY-MM-DD HH:mm` of a Unix time. */
export function formatDateTime(unixSeconds: number): string {
  const t = new Date(unixSeconds * 1000);
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())} ${pad(t.getHours())}:${pad(t.getMinutes())}`;
}

/** `6:20pm` (local): how the charts' time axes read (uPlot's 12-hour form). */
export function formatClock(unixSeconds: number, seconds = false): string {
  const t = new Date(unixSeconds * 1000);
  const h = t.getHours();
  return `${h % 12 === 0 ? 12 : h % 12}:${pad(t.getMinutes())}${seconds ? `:${pad(t.getSeconds())}` : ''}${h < 12 ? 'am' : 'pm'}`;
}

/** `11/29 6:20pm` (local): a time in a tooltip, in the axes' 12-hour form, with its date. */
export function formatTooltipTime(unixSeconds: number): string {
  const t = new Date(unixSeconds * 1000);
  return `${t.getMonth() + 1}/${t.getDate()} ${formatClock(unixSeconds, t.getSeconds() !== 0)}`;
}

/** The value of an `<input type="datetime-local">` for a Unix time (local time, to the minute). */
export function toLocalInput(unixSeconds: number): string {
  return formatDateTime(unixSeconds).replace(' ', 'T');
}

/** A Unix time from an `<input type="datetime-local">` value; undefined when empty or invalid. */
export function fromLocalInput(value: string): number | undefined {
  const m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d))?$/.exec(value);
  if (!m) return undefined;
  const t = new Date(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], m[6] ? +m[6] : 0);
  return Number.isNaN(t.getTime()) ? undefined : Math.floor(t.getTime() / 1000);
}

/** The spec with a relative range of `seconds` (absolute times dropped). */
export function withPreset(spec: QuerySpec, seconds: number): QuerySpec {
  const { start_time: _s, end_time: _e, ...rest } = spec;
  return { ...rest, time_range: seconds };
}

/** The spec with an absolute range [start, end) (the relative range dropped). */
export function withAbsolute(spec: QuerySpec, start: number, end: number): QuerySpec {
  const { time_range: _r, ...rest } = spec;
  return { ...rest, start_time: Math.floor(start), end_time: Math.ceil(end) };
}
