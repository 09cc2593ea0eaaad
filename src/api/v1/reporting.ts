// POST /1/reporting/slos/historical: the history of up to 24 SLOs of the environment (Manage SLOs).
//
// Body `{ids, start_time, end_time}`: ids 1..24 SLO ids of this environment (an unknown one, or
// another environment's → 422 on `ids.<i>`; the contract has no 404 here); start_time and
// end_time integers (Unix seconds), start no more than 365 days before now, end not after now
// and after start.
//
// Answer: `{<slo id>: [{timestamp, compliance, budget_remaining}, …]}`. The range is cut into
// intervals — an hour when it spans at most 7 days, a day up to 90 days, a week (starting Monday
// 00:00 UTC) beyond — aligned to UTC boundaries, so the first interval may start before
// start_time. Each entry's timestamp is its interval's start; its figures are the SLO's compliance
// and budget remaining (percent, as in the detailed SLO) at the interval's end (or end_time, if
// sooner): over the SLO's rolling window of whole minutes before that moment, from reset_at's
// minute on after a reset. Intervals whose window holds no eligible events are left out, so an
// SLO without data answers [] (as the contract says). The minutes the SLO's rollups hold are read
// from them (refreshed first), earlier ones from raw events (src/jobs/slo.ts, history).
import { Type } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { sloMaths } from '../../jobs/slo.js';
import { isSlo, type SloObject } from '../../domain/slos.js';
import type { ApiContext, App } from '../context.js';
import { belongsTo } from '../../domain/scope.js';
import { Problems } from '../../validation.js';
import { SLO_KIND } from '../../domain/kinds.js';

const HOUR = 3600;
const DAY = 86_400;
const WEEK = 7 * DAY;
const MONDAY_OFFSET = 4 * DAY; // the Unix epoch was a Thursday
const MAX_IDS = 24;
const MAX_AGE_SECONDS = 365 * DAY;

const Entry = Type.Object({ timestamp: Type.Integer(), compliance: Type.Number(), budget_remaining: Type.Number() });
// The schema validates the body (ajv); the handler checks what it cannot say: the times against
// now and each other, and the SLOs the ids name.
const Request = Type.Object({
  ids: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: MAX_IDS }),
  start_time: Type.Integer({ minimum: 0, description: 'Unix seconds; at most a year ago.' }),
  end_time: Type.Integer({ minimum: 0, description: 'Unix seconds; after start_time, not in the future.' }),
});

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

export function registerReporting(app: App, ctx: ApiContext): void {
  const { store } = ctx;
  const engine = ctx.slos;
  app.post(
    '/1/reporting/slos/historical',
    {
      schema: {
        tags: ['Reporting'],
        security: [{ configuration_key: [] }],
        body: Request,
        description:
          'SLO history: per SLO, compliance and budget remaining at the end of each interval (an hour for ranges up to 7 days, a day up to 90, a week beyond).',
        response: { 200: Type.Record(Type.String(), Type.Array(Entry)) },
      },
      config: { auth: { kind: 'team', permission: 'manage_slos' } },
    },
    async (request) => {
      const env = envOf(request);
      const { ids, start_time: start, end_time: end } = request.body;
      const p = new Problems();
      const nowS = Math.floor(ctx.now().getTime() / 1000);
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
      const { step, starts } = intervalStarts(start, end);
      const out: Record<string, { timestamp: number; compliance: number; budget_remaining: number }[]> = {};
      for (const slo of slos) {
        const ends = starts.map((s) => Math.min(s + step, end));
        const counts = await engine.history(env, slo, ends, ctx.now().getTime());
        out[slo.id] = [];
        counts.forEach((c, k) => {
          if (c.good + c.bad <= 0) return;
          const m = sloMaths(slo.body, c, { good: 0, bad: 0 });
          out[slo.id].push({ timestamp: starts[k], compliance: m.compliance, budget_remaining: m.budgetRemaining });
        });
      }
      return out;
    },
  );
}
