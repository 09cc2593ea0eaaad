// POST /1/reporting/slos/historical: the history of up to 24 SLOs of the environment (Manage SLOs).
// What a request may ask for and the intervals (the decisions): src/domain/slo-history.ts.
//
// Answer: `{<slo id>: [{timestamp, compliance, budget_remaining}, …]}`, one entry per interval
// (src/domain/slo-history.ts). Its figures are the SLO's compliance and budget remaining
// (percent, as in the detailed SLO) at the interval's end (or end_time, if sooner): over the
// SLO's rolling window of whole minutes before that moment, from reset_at's minute on after a
// reset. Intervals whose window holds no eligible events are left out, so an SLO without data
// answers [] (as the contract says). The minutes the SLO's rollups hold are read from them
// (refreshed first), earlier ones from raw events (src/jobs/slo.ts, history).
import { Type } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { sloMaths } from '../../jobs/slo.js';
import { historySlos, intervalStarts, MAX_HISTORY_IDS } from '../../domain/slo-history.js';
import type { ApiContext, App } from '../context.js';

const Entry = Type.Object({ timestamp: Type.Integer(), compliance: Type.Number(), budget_remaining: Type.Number() });
// The schema validates the body (ajv); historySlos checks what it cannot say: the times against
// now and each other, and the SLOs the ids name.
const Request = Type.Object({
  ids: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: MAX_HISTORY_IDS }),
  start_time: Type.Integer({ minimum: 0, description: 'Unix seconds; at most a year ago.' }),
  end_time: Type.Integer({ minimum: 0, description: 'Unix seconds; after start_time, not in the future.' }),
});

export function registerReporting(app: App, ctx: ApiContext): void {
  const { store } = ctx;
  const evaluator = ctx.slos;
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
      const { start_time: start, end_time: end } = request.body;
      const slos = await historySlos(store, env, request.body, Math.floor(ctx.now().getTime() / 1000));
      const { step, starts } = intervalStarts(start, end);
      const out: Record<string, { timestamp: number; compliance: number; budget_remaining: number }[]> = {};
      for (const slo of slos) {
        const ends = starts.map((s) => Math.min(s + step, end));
        const counts = await evaluator.history(env, slo, ends, ctx.now().getTime());
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
