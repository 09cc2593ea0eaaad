// Burn alert evaluation: a Job on the scheduler evaluates every burn alert of every SLO each
// `burnAlertIntervalSeconds` (app clock), after bringing each SLO's rollups up to date.
//
//   exhaustion_time  The budget left, in failures: R = A − B over the SLO's window (A = allowed
//                    failures). The recent burn: b = failures in the last L minutes ÷ L, with the
//                    lookback L = ⌈exhaustion_minutes / 4⌉ (at least 1): a 4-hour alert
//                    extrapolates the last hour. Projected minutes to exhaustion = R / b (0 once
//                    R ≤ 0; none while b = 0). Triggered when that is ≤ exhaustion_minutes.
//   budget_rate      The budget spent in the last W minutes (W = budget_rate_window_minutes, at
//                    most the SLO's period), as a fraction of the whole budget: d = B_W ÷ A.
//                    Triggered when d × 1,000,000 ≥ budget_rate_decrease_threshold_per_million.
// No eligible events in the SLO's window: not triggered.
//
// `triggered` lives in a state object per alert (kind `burn_alert_state`, id `<alert id>_state`)
// in the config store, apart from the alert, so an evaluation never overwrites a concurrent PUT
// and the state survives a restart. When it flips, a Notification (`triggered` or `resolved`) is
// enqueued for each of the alert's recipients; its link (`alert.url`) is the SLO's page in the web
// UI (`/<team>/environments/<env>/datasets/<dataset or __all__>/slo/<id>`).
import { randomUUID } from 'node:crypto';
import type { ConfigStore, Environment } from '../stores/config/types.js';
import { isDeliverable, refreshNotificationRecipients } from '../domain/notification-recipients.js';
import type { Notification, Notifier } from '../notify/types.js';
import type { Job } from './scheduler.js';
import type { SloEvaluator, SloFigures } from './slo.js';
import { MINUTES_PER_DAY, isSlo, type SloObject } from '../domain/slos.js';
import { getAlertState, stateId, type BurnAlertBody, type BurnAlertObject, type BurnAlertState } from '../domain/burn-alerts.js';
import { sloPagePath } from '../domain/ui-links.js';
import { BURN_ALERT_KIND, BURN_ALERT_STATE_KIND, SLO_KIND } from '../domain/kinds.js';


export function lookbackMinutes(exhaustionMinutes: number): number {
  return Math.max(1, Math.ceil(exhaustionMinutes / 4));
}

export function budgetRateWindow(alert: BurnAlertBody, slo: SloObject): number {
  return Math.min(alert.budget_rate_window_minutes ?? 60, slo.body.time_period_days * MINUTES_PER_DAY);
}

export interface AlertVerdict {
  triggered: boolean;
  /** Projected minutes until the budget is gone (exhaustion_time alerts); null = not in sight. */
  exhaustionMinutes: number | null;
  /** Budget spent over the window, per million of the budget (budget_rate alerts). */
  budgetDropPerMillion: number | null;
}

/** Decides one alert from the SLO's figures and the failures counted over its own window. */
export function judge(alert: BurnAlertBody, figures: SloFigures, windowBad: number): AlertVerdict {
  if (figures.eligible <= 0) return { triggered: false, exhaustionMinutes: null, budgetDropPerMillion: null };
  if (alert.alert_type === 'exhaustion_time') {
    const lookback = lookbackMinutes(alert.exhaustion_minutes ?? 0);
    const left = figures.allowed - figures.bad;
    const perMinute = windowBad / lookback;
    const projected = left <= 0 ? 0 : perMinute > 0 ? left / perMinute : null;
    return { triggered: projected !== null && projected <= (alert.exhaustion_minutes ?? 0), exhaustionMinutes: projected, budgetDropPerMillion: null };
  }
  const drop = figures.allowed > 0 ? (windowBad / figures.allowed) * 1_000_000 : 0;
  return { triggered: drop >= (alert.budget_rate_decrease_threshold_per_million ?? Infinity), exhaustionMinutes: null, budgetDropPerMillion: drop };
}

/** The window (minutes back from now) an alert counts failures over. */
export function alertWindow(alert: BurnAlertBody, slo: SloObject): number {
  return alert.alert_type === 'exhaustion_time' ? lookbackMinutes(alert.exhaustion_minutes ?? 0) : budgetRateWindow(alert, slo);
}

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

function summary(alert: BurnAlertBody, slo: SloObject, f: SloFigures, v: AlertVerdict, triggered: boolean): string {
  const name = `SLO ${JSON.stringify(slo.body.name)}`;
  const budget = `budget remaining ${round(f.budgetRemaining)}%`;
  if (alert.alert_type === 'exhaustion_time') {
    const when = v.exhaustionMinutes === null ? 'not projected to run out' : v.exhaustionMinutes <= 0 ? 'exhausted' : `projected to run out in ${Math.round(v.exhaustionMinutes)} minutes`;
    return triggered
      ? `${name}: error budget ${when} (alert at ${alert.exhaustion_minutes} minutes); ${budget}`
      : `${name}: resolved, error budget ${when}; ${budget}`;
  }
  const drop = `${round((v.budgetDropPerMillion ?? 0) / 10_000, 4)}%`;
  const threshold = `${round((alert.budget_rate_decrease_threshold_per_million ?? 0) / 10_000, 4)}%`;
  return triggered
    ? `${name}: budget fell ${drop} in the last ${alert.budget_rate_window_minutes} minutes (threshold ${threshold}); ${budget}`
    : `${name}: resolved, budget fell ${drop} in the last ${alert.budget_rate_window_minutes} minutes (threshold ${threshold}); ${budget}`;
}

export interface BurnAlertJobDeps {
  store: ConfigStore;
  evaluator: SloEvaluator;
  notifier: Notifier;
  intervalSeconds: number;
}

/** The scheduler Job: refreshes every SLO and evaluates every burn alert when the interval has passed. */
export function burnAlertJob(deps: BurnAlertJobDeps): Job & { evaluate(now: Date): Promise<void> } {
  let last: number | undefined;
  const job = {
    name: 'burn-alerts',
    async run(now: Date) {
      if (last !== undefined && now.getTime() >= last && now.getTime() - last < deps.intervalSeconds * 1000) return;
      last = now.getTime();
      await job.evaluate(now);
    },
    async evaluate(now: Date) {
      const { store, evaluator } = deps;
      const all = await store.listObjects<unknown>(SLO_KIND, {});
      const slos = all.filter(isSlo);
      const alerts = await store.listObjects<BurnAlertBody>(BURN_ALERT_KIND, {});
      const bySlo = new Map<string, BurnAlertObject[]>();
      for (const a of alerts) {
        if (!a.body || typeof a.body.slo_id !== 'string') continue;
        bySlo.set(a.body.slo_id, [...(bySlo.get(a.body.slo_id) ?? []), a]);
      }
      const envs = new Map<string, Environment | undefined>();
      let firstError: unknown;
      for (const slo of slos) {
        try {
          if (!slo.environmentId) continue;
          if (!envs.has(slo.environmentId)) envs.set(slo.environmentId, await store.getEnvironmentById(slo.environmentId));
          const env = envs.get(slo.environmentId);
          if (!env) continue;
          await evaluateSlo(deps, env, slo, bySlo.get(slo.id) ?? [], now);
        } catch (err) {
          firstError ??= err;
        }
      }
      await evaluator.collectGarbage(new Set(all.map((o) => o.id))).catch((err) => (firstError ??= err));
      if (firstError) throw firstError;
    },
  };
  return job;
}

/** Refreshes one SLO and evaluates its alerts, notifying on every flip. */
export async function evaluateSlo(deps: BurnAlertJobDeps, env: Environment, slo: SloObject, alerts: BurnAlertObject[], now: Date): Promise<void> {
  const { store, evaluator, notifier } = deps;
  const windows = alerts.map((a) => alertWindow(a.body, slo));
  const { figures, extra } = await evaluator.evaluate(env, slo, now.getTime(), windows);
  for (const [i, alert] of alerts.entries()) {
    const verdict = judge(alert.body, figures, extra[i].bad);
    const state = await getAlertState(store, alert.id);
    const next: BurnAlertState = {
      triggered: verdict.triggered,
      changed_at: state.triggered === verdict.triggered ? state.changed_at : now.toISOString(),
      last: {
        at: now.toISOString(),
        budget_remaining: figures.budgetRemaining,
        burn_rate: figures.burnRate,
        exhaustion_minutes: verdict.exhaustionMinutes,
        budget_drop_per_million: verdict.budgetDropPerMillion,
      },
    };
    const existing = await store.getObject(BURN_ALERT_STATE_KIND, stateId(alert.id));
    if (existing) await store.updateObject(BURN_ALERT_STATE_KIND, stateId(alert.id), { body: next, touch: false });
    else {
      // The alert may have been deleted meanwhile: then its state is not recreated.
      if (!(await store.getObject(BURN_ALERT_KIND, alert.id))) continue;
      await store.createObject({
        id: stateId(alert.id),
        kind: BURN_ALERT_STATE_KIND,
        teamId: alert.teamId,
        environmentId: alert.environmentId,
        datasetId: alert.datasetId,
        scope: alert.id,
        uniqueKey: null,
        body: next,
      });
    }
    if (state.triggered === verdict.triggered) continue;
    const status = verdict.triggered ? 'triggered' : 'resolved';
    const recipients = await refreshNotificationRecipients(store, alert.teamId, alert.body.recipients ?? []);
    const text = summary(alert.body, slo, figures, verdict, verdict.triggered);
    const dataset = slo.datasetId === null ? '__all__' : (await store.listDatasets(env.id)).find((d) => d.id === slo.datasetId)?.slug ?? '__all__';
    // The link: the SLO's page in the web UI (the notifier puts the public base URL in front).
    const team = await store.getTeam(env.teamId);
    for (const recipient of recipients.filter(isDeliverable)) {
      const n: Notification = {
        id: randomUUID(),
        source: 'burn_alert',
        status,
        teamId: alert.teamId,
        environmentId: env.id,
        recipient,
        alert: {
          id: alert.id,
          name: `${slo.body.name}: ${alert.body.alert_type === 'exhaustion_time' ? 'exhaustion time' : 'budget rate'} burn alert`,
          description: alert.body.description,
          dedupKey: `waggle-burn-alert-${alert.id}`,
          // Explicit: a resolve has no exhaustion figure, and inferring the kind from the figures made it `budget_rate`.
          alertType: alert.body.alert_type,
          ...(team ? { url: sloPagePath(team.slug, env.slug, dataset, slo.id) } : {}),
          ...(dataset === '__all__' ? {} : { datasetSlug: dataset }),
        },
        result: {
          summary: text,
          slo: {
            id: slo.id,
            name: slo.body.name,
            budgetRemaining: figures.budgetRemaining,
            ...(verdict.exhaustionMinutes !== null ? { exhaustionMinutes: verdict.exhaustionMinutes } : {}),
            burnRate: figures.burnRate,
          },
        },
        timestamp: now.toISOString(),
      };
      notifier.enqueue(n);
    }
  }
}
