// SLO history (POST /1/reporting/slos/historical, src/api/v1/reporting.ts): what a request may
// ask for, and the intervals its answer is cut into. The figures of each interval are the SLO
// evaluation's (src/jobs/slo.ts, history).
//
// Decisions:
// - Body `{ids, start_time, end_time}`: ids 1..24 SLO ids of this environment (an unknown one, or
//   another environment's → 422 on `ids.<i>`; the contract has no 404 here; a repeated id is
//   answered once); start_time and end_time integers (Unix seconds), start no more than 365 days
//   before now, end not after now and after start.
// - The range is cut into intervals — an hour when it spans at most 7 days, a day up to 90 days,
//   a week (starting Monday 00:00 UTC) beyond — aligned to UTC boundaries, so the first interval
//   may start before start_time. Each entry's timestamp is its interval's start; its figures are
//   taken at the interval's end (or end_time, if sooner).
import { Problems } from '../validation.js';
import type { ConfigStore, Environment } from '../stores/config/types.js';
import { SLO_KIND } from './kinds.js';
import { belongsTo } from './scope.js';
import { isSlo, type SloObject } from './slos.js';

const HOUR = 3600;
const DAY = 86_400;
const WEEK = 7 * DAY;
const MONDAY_OFFSET = 4 * DAY; // the Unix epoch was a Thursday
export const MAX_HISTORY_IDS = 24;
const MAX_AGE_SECONDS = 365 * DAY;

/** Interval length for a range, in seconds (see the header). */
export function historyInterval(seconds: number): number {
  return seconds <= 7 * DAY ? HOUR : seconds <= 90 * DAY ? DAY : WEEK;
}

/** Interval starts covering [start, end). */
export function intervalStarts(start: number, end: number): { step: number; starts: number[] } {
  const step = historyInterval(end - start);
  const offset = step === WEEK ? MONDAY_OFFSET : 0;
  const first = Math.floor((start - offset) / step) * step + offset;
  const starts: number[] = [];
  for (let s = first; s < end; s += step) starts.push(s);
  return { step, starts };
}

/**
 * The SLOs a request its route schema has checked asks for, each once, in the order of `ids`;
 * one 422 with every problem a schema cannot see: the times against now (`nowS`, Unix seconds)
 * and each other, and ids that name no SLO of the environment.
 */
export async function historySlos(
  store: ConfigStore,
  env: Environment,
  input: { ids: string[]; start_time: number; end_time: number },
  nowS: number,
): Promise<SloObject[]> {
  const { ids, start_time: start, end_time: end } = input;
  const p = new Problems();
  if (start < nowS - MAX_AGE_SECONDS) p.add('start_time', 'invalid', 'must not be more than a year ago');
  if (end > nowS) p.add('end_time', 'invalid', 'must not be in the future');
  if (end <= start) p.add('end_time', 'invalid', 'must be after start_time');
  const slos: SloObject[] = [];
  for (const [i, id] of ids.entries()) {
    const o = await store.getObject<unknown>(SLO_KIND, id);
    if (!belongsTo(o, env) || !isSlo(o)) p.add(`ids.${i}`, 'invalid', `no SLO ${JSON.stringify(id)} in this environment`);
    else if (!slos.some((s) => s.id === o.id)) slos.push(o);
  }
  p.throwIfAny();
  return slos;
}
