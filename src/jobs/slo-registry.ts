// One SloEngine per app (the API context), shared by the SLO, burn-alert and reporting routes,
// with the burn-alert Job registered on the app's scheduler when it is first asked for.
import type { ApiContext } from '../api/context.js';
import { burnAlertJob } from './burn-alerts.js';
import { SloEngine } from './slo.js';

const engines = new WeakMap<ApiContext, SloEngine>();

export function sloEngineFor(ctx: ApiContext): SloEngine {
  let engine = engines.get(ctx);
  if (!engine) {
    engine = new SloEngine(ctx.store, ctx.events, ctx.leadership.shared ? ctx.leadership : undefined);
    engines.set(ctx, engine);
    ctx.scheduler.register(burnAlertJob({ store: ctx.store, engine, notifier: ctx.notifier, intervalSeconds: ctx.settings.burnAlertIntervalSeconds }));
  }
  return engine;
}
