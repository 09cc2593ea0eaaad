// A model of the SLO maths over raw events, as docs/slos.md states it: the figures tests expect
// from the detailed SLO answer and the SLO history (test/slo-rollups.test.ts on DuckDB,
// test/clickhouse-slo.test.ts on every engine).
export const MIN = 60_000;

export interface Ev {
  ms: number;
  status?: number;
  samplerate: number;
}
export interface SloModel {
  days: number;
  tpm: number;
  resetMs?: number;
  /** The SLI: good, bad, or not counted (undefined). */
  sli: (e: Ev) => boolean | undefined;
}
export const lt = (limit: number) => (e: Ev) => (e.status === undefined ? undefined : e.status < limit);

/** Weighted good and bad counts of the events with `from ≤ time < to` (ms). */
export function count(evs: Ev[], sli: SloModel['sli'], from: number, to: number) {
  let good = 0;
  let bad = 0;
  for (const e of evs) {
    if (e.ms < from || e.ms >= to) continue;
    const s = sli(e);
    if (s === true) good += e.samplerate;
    else if (s === false) bad += e.samplerate;
  }
  return { good, bad };
}

export function maths(s: SloModel, w: { good: number; bad: number }, last4h: { good: number; bad: number }) {
  const t = s.tpm / 1e6;
  const e = w.good + w.bad;
  const allowed = (1 - t) * e;
  const e4 = last4h.good + last4h.bad;
  return {
    eligible: e,
    compliance: e > 0 ? (100 * w.good) / e : 100,
    budget_remaining: allowed > 0 ? 100 * (1 - w.bad / allowed) : 100,
    burn_rate: e4 > 0 ? last4h.bad / e4 / (1 - t) : 0,
  };
}

/** The detailed figures at `nowMs`: the window is [its first minute or the reset, now). */
export function detailedModel(evs: Ev[], s: SloModel, nowMs: number) {
  const c = Math.floor(nowMs / MIN);
  const start = Math.max((c - s.days * 1440 + 1) * MIN, s.resetMs ?? -Infinity, 0);
  return maths(s, count(evs, s.sli, start, nowMs), count(evs, s.sli, Math.max(start, (c - 239) * MIN), nowMs));
}

/** History entries over [startS, endS) in hourly intervals (ranges up to 7 days), as docs/slos.md says. */
export function historyModel(evs: Ev[], s: SloModel, startS: number, endS: number) {
  const out: { timestamp: number; compliance: number; budget_remaining: number }[] = [];
  for (let from = Math.floor(startS / 3600) * 3600; from < endS; from += 3600) {
    const end = Math.min(from + 3600, endS);
    const hi = Math.floor(end / 60);
    let lo = hi - s.days * 1440;
    if (s.resetMs !== undefined && end * 1000 > s.resetMs) lo = Math.max(lo, Math.floor(s.resetMs / MIN));
    const w = count(evs, s.sli, lo * MIN, hi * MIN);
    if (w.good + w.bad === 0) continue;
    const m = maths(s, w, { good: 0, bad: 0 });
    out.push({ timestamp: from, compliance: m.compliance, budget_remaining: m.budget_remaining });
  }
  return out;
}

export { random } from './random.js';

