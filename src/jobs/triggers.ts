// Trigger evaluation: a scheduler Job that runs every enabled trigger's query at its frequency,
// compares the result with the threshold, keeps the trigger's state and notifies its recipients.
//
// Decisions (also in docs/triggers.md):
// - Schedule. Each trigger has evaluation slots: the first at its creation time (whole seconds,
//   app clock), then every `frequency` seconds (next = last slot + frequency, whatever the tick
//   delay). A slot is evaluated at the first tick at or after it. After downtime (or while
//   disabled) several slots may have passed: only the latest one is evaluated, once, and the
//   schedule carries on aligned from it — missed slots are not replayed.
// - Window. The query runs over [slot − time_range, slot) — its `time_range`, or the frequency
//   when it has none — through runQuery, untruncated (triggers are not query results), with the
//   `WAGGLE_QUERY_TIMEOUT_MS` run-time limit. A failed or timed-out run changes nothing but the
//   schedule (the error is logged and kept in the state as `last.error`).
// - Schedule windows (`evaluation_schedule_type: window`): a slot outside the window (UTC,
//   days_of_week, start inclusive, end exclusive, end ≤ start = next day) is skipped: no query, no
//   change of state; a triggered trigger stays triggered until an evaluation inside the window.
// - Values. With breakdowns, each group is compared on its own, and the trigger breaches when any
//   group breaches; it has one state (`triggered`), not one per group. A group without a value for
//   the calculation is left out. When nothing matches at all, COUNT, SUM and COUNT_DISTINCT count
//   as one value 0; other calculations have no data, which counts as not breaching.
// - Baselines. The same query runs over the window shifted back by `offset_minutes`; each group's
//   change is current − baseline (`value`) or (current − baseline) ÷ |baseline| × 100
//   (`percentage`, in percent). A group missing on one side counts as 0 for COUNT/SUM/
//   COUNT_DISTINCT, else is left out; a baseline of 0 leaves a group out of a percentage change.
// - State. `consecutive` counts breaching evaluations in a row (reset by one that does not
//   breach). The trigger fires when it reaches `exceeded_limit`: it becomes `triggered`, and its
//   recipients get `triggered`. `on_change` notifies only then; `on_true` again at every
//   breaching evaluation while triggered. The first evaluation that does not breach resolves it
//   (`resolved`, for both alert types). A disabled trigger is not evaluated; if it was triggered
//   it is resolved (and notified) at the next tick. State lives in the config store
//   (`trigger_state`), so a restart carries on from it.
// - Marker recipients (`{type: "marker", target: "<text>"}`) are not notified: each time the
//   trigger fires (the `triggered` notifications) the evaluation makes a marker with the text as
//   its message, type `trigger`, the trigger's URL and the slot as start_time, on the trigger's
//   dataset (the environment for `__all__` triggers). Its id is derived from the trigger, slot and
//   recipient, so a repeated evaluation makes no second marker.
// - Links (docs/triggers.md, "Links in notifications"). A notification's `alert.url` is the
//   trigger's page in the web UI (`/<team>/environments/<env>/datasets/<dataset>/triggers/<id>`),
//   and each evaluation that notifies stores a query result of its window (the trigger's query
//   over [slot − range, slot), kind `query_result`, pending: it runs when first read) whose UI page
//   is `result.url` and whose chart is `result.imageUrl` (`graph_image_url`). Paths: the notifier
//   puts the public base URL in front. The state changes (fired, resolved) are kept in the state
//   with that result's id (`history`, the trigger page's).
// - Notifications go to `ctx.notifier` (never the network from here), one per recipient, with a
//   deterministic id (trigger, slot, status, recipient) so a retried evaluation deduplicates, and
//   dedupKey `trigger:<id>` shared by a trigger and its resolve. Recipients are notified before
//   the state is saved: a crash in between repeats a notification rather than losing it.
import type { BucketCache } from '../query/bucket-cache.js';
import type { Job } from './scheduler.js';
import { ZERO_WHEN_EMPTY_OPS, breaches, inScheduleWindow, initialTriggerState, newTriggerState, stateIdOf, triggerDuration, withChange, type StoredTrigger, type TriggerState } from '../domain/triggers.js';
import { derivedId, shortId } from '../domain/ids.js';
import { newResult, type ResultBody } from '../domain/query-results.js';
import { graphImagePath, resultPagePath, triggerPagePath } from '../domain/ui-links.js';
import { createMarker } from '../domain/markers.js';
import { isDeliverable, MARKER_RECIPIENT } from '../domain/notification-recipients.js';
import type { Notification, Notifier } from '../notify/types.js';
import { backgroundBaseUrl, type Settings } from '../settings.js';
import { runQuery } from '../query/run.js';
import { querySources } from '../query/sources.js';
import { calculationKey, type Calculation, type QuerySpec } from '../query/spec.js';
import type { ConfigStore, StoredObject } from '../stores/config/types.js';
import type { EventStore } from '../stores/events/types.js';
import { QUERY_RESULT_KIND, TRIGGER_KIND, TRIGGER_STATE_KIND } from '../domain/kinds.js';

/** What evaluation needs of the app. */
export interface TriggerJobContext {
  store: ConfigStore;
  events: EventStore;
  notifier: Notifier;
  settings: Pick<Settings, 'queryTimeoutMs' | 'publicUrl' | 'host' | 'port'>;
  /** Kept bucket states: an evaluation reads only what changed since the last (src/query/bucket-cache.ts). */
  cache?: BucketCache;
}

/** Most result groups one evaluation compares. */
const MAX_GROUPS = 10_000;

export interface GroupValue {
  group: Record<string, unknown>;
  value: number;
}
export interface Evaluation {
  /** Every group's value (the change, for baseline triggers). */
  groups: GroupValue[];
  /** The groups that breach the threshold. */
  breaching: GroupValue[];
  noData: boolean;
  /** The most extreme value in the threshold's direction (of the breaching groups when any). */
  value?: number;
}

const isValidTrigger = (b: Partial<StoredTrigger> | null | undefined): b is StoredTrigger =>
  !!b && typeof b.query_id === 'string' && !!b.query && !!b.threshold && typeof b.frequency === 'number' && b.frequency > 0;

/** The scheduler job evaluating every due trigger of every environment. */
export function triggerJob(ctx: TriggerJobContext): Job {
  return { name: 'triggers', run: (now) => evaluateDueTriggers(ctx, now) };
}

/** Evaluates every trigger whose slot has come at `now`; one failing trigger does not stop the others. */
export async function evaluateDueTriggers(ctx: TriggerJobContext, now: Date): Promise<void> {
  const triggers = await ctx.store.listObjects<StoredTrigger>(TRIGGER_KIND, {});
  const states = new Map((await ctx.store.listObjects<TriggerState>(TRIGGER_STATE_KIND, {})).map((o) => [o.body.triggerId, o]));
  const failures: unknown[] = [];
  for (const t of triggers) {
    if (!isValidTrigger(t.body)) continue;
    try {
      await step(ctx, t, states.get(t.id), now);
    } catch (err) {
      failures.push(err);
    }
  }
  if (failures.length) throw new AggregateError(failures, `${failures.length} trigger evaluation(s) failed`);
}

async function saveState(ctx: TriggerJobContext, t: StoredObject<StoredTrigger>, exists: boolean, state: TriggerState): Promise<void> {
  if (exists) {
    await ctx.store.updateObject<TriggerState>(TRIGGER_STATE_KIND, stateIdOf(t.id), { body: state });
    return;
  }
  await ctx.store.createObject(newTriggerState(t, state));
}

async function step(ctx: TriggerJobContext, t: StoredObject<StoredTrigger>, stateObj: StoredObject<TriggerState> | undefined, now: Date) {
  const trigger = t.body;
  const state: TriggerState = stateObj
    ? { ...stateObj.body }
    : initialTriggerState(t.id, now);

  if (trigger.disabled) {
    if (!state.triggered) return;
    state.triggered = false;
    state.consecutive = 0;
    const threshold = { op: trigger.threshold.op, value: trigger.threshold.value };
    state.history = withChange(state.history, { at: now.toISOString(), status: 'resolved', threshold, reason: 'disabled' });
    const slug = await slugOf(ctx, t);
    await notifyAll(ctx, t, slug, 'resolved', now, now, {
      summary: `${trigger.name}: resolved because the trigger was disabled`,
      threshold,
    }, await linksOf(ctx, t, slug));
    await saveState(ctx, t, !!stateObj, state);
    return;
  }

  const due = Date.parse(state.nextRun);
  if (!Number.isFinite(due) || now.getTime() < due) {
    if (!stateObj) await saveState(ctx, t, false, state);
    return;
  }
  const f = trigger.frequency * 1000;
  const slot = due + Math.floor((now.getTime() - due) / f) * f;
  state.nextRun = new Date(slot + f).toISOString();

  if (trigger.evaluation_schedule_type === 'window' && trigger.evaluation_schedule && !inScheduleWindow(trigger.evaluation_schedule.window, new Date(slot))) {
    await saveState(ctx, t, !!stateObj, state);
    return;
  }

  let result: Evaluation;
  try {
    result = await evaluateTrigger(ctx, t, slot / 1000);
  } catch (err) {
    state.last = { breaching: false, noData: false, error: err instanceof Error ? err.message : String(err) };
    await saveState(ctx, t, !!stateObj, state);
    throw err;
  }

  // The trigger may have been deleted while its query ran.
  if (!(await ctx.store.getObject(TRIGGER_KIND, t.id))) return;

  const breaching = result.breaching.length > 0;
  state.lastRun = new Date(slot).toISOString();
  state.last = { breaching, noData: result.noData, ...(result.value !== undefined ? { value: result.value } : {}) };
  state.consecutive = breaching ? state.consecutive + 1 : 0;
  const slug = await slugOf(ctx, t);
  const threshold = { op: trigger.threshold.op, value: trigger.threshold.value };

  if (breaching && state.consecutive >= trigger.threshold.exceeded_limit) {
    const starts = !state.triggered;
    if (starts || trigger.alert_type === 'on_true') {
      const links = await linksOf(ctx, t, slug, slot / 1000);
      await notifyAll(ctx, t, slug, 'triggered', new Date(slot), now, {
        summary: summarise(trigger, result, 'triggered'),
        value: result.value,
        threshold,
        groups: result.breaching,
        ...links.result,
      }, links);
      await makeMarkers(ctx, t, slot / 1000, links.trigger);
      if (starts) state.history = withChange(state.history, { at: new Date(slot).toISOString(), status: 'triggered', threshold, ...valueOf(result), ...(links.resultId ? { resultId: links.resultId } : {}) });
    }
    if (starts) state.triggeredAt = now.toISOString();
    state.triggered = true;
  } else if (!breaching && state.triggered) {
    state.triggered = false;
    const links = await linksOf(ctx, t, slug, slot / 1000);
    await notifyAll(ctx, t, slug, 'resolved', new Date(slot), now, {
      summary: summarise(trigger, result, 'resolved'),
      value: result.value,
      threshold,
      groups: result.groups,
      ...links.result,
    }, links);
    state.history = withChange(state.history, { at: new Date(slot).toISOString(), status: 'resolved', threshold, ...valueOf(result), ...(links.resultId ? { resultId: links.resultId } : {}) });
  }
  await saveState(ctx, t, !!stateObj, state);
}

const valueOf = (r: Evaluation) => (r.value !== undefined && Number.isFinite(r.value) ? { value: r.value } : {});

/** The links of a notification: paths (the notifier makes them absolute). */
interface Links {
  /** The trigger's page in the web UI. */
  trigger?: string;
  /** The stored result's page and its chart (`result.url`, `result.imageUrl` of the notification). */
  result?: { url: string; imageUrl: string };
  resultId?: string;
}

/**
 * The trigger's UI page, and, for an evaluation (`slot`, Unix seconds), a stored query result of
 * its window: pending, so it runs only when someone opens it (its page or its image).
 */
async function linksOf(ctx: TriggerJobContext, t: StoredObject<StoredTrigger>, slug: string, slot?: number): Promise<Links> {
  const env = t.environmentId ? await ctx.store.getEnvironmentById(t.environmentId) : undefined;
  const team = env ? await ctx.store.getTeam(env.teamId) : undefined;
  if (!env || !team) return {};
  const links: Links = { trigger: triggerPagePath(team.slug, env.slug, slug, t.id) };
  if (slot === undefined) return links;
  try {
    const id = shortId();
    const range = triggerDuration(t.body.query, t.body.frequency);
    // The evaluation's window: the trigger's query over [slot − range, slot).
    const { time_range: _range, ...spec } = t.body.query;
    const query = { ...spec, id: t.body.query_id, start_time: slot - range, end_time: slot };
    const body: ResultBody = {
      ...newResult(id, slug, query, {}, slot),
      trigger: { id: t.id, name: t.body.name, threshold: { op: t.body.threshold.op, value: t.body.threshold.value } },
    };
    await ctx.store.createObject<ResultBody>({
      id,
      kind: QUERY_RESULT_KIND,
      teamId: t.teamId,
      environmentId: env.id,
      datasetId: t.datasetId,
      scope: env.id,
      uniqueKey: null,
      body,
    });
    links.resultId = id;
    links.result = {
      url: resultPagePath(team.slug, env.slug, slug, id),
      imageUrl: graphImagePath(team.slug, env.slug, slug, id, body.imageToken!),
    };
  } catch {
    // (a notification without a result link rather than none)
  }
  return links;
}

async function slugOf(ctx: TriggerJobContext, t: StoredObject<unknown>): Promise<string> {
  if (!t.datasetId || !t.environmentId) return '__all__';
  return (await ctx.store.listDatasets(t.environmentId)).find((d) => d.id === t.datasetId)?.slug ?? '__all__';
}

/** Runs the trigger's query for the slot ending at `end` (Unix seconds) and compares it. */
export async function evaluateTrigger(ctx: TriggerJobContext, t: StoredObject<StoredTrigger>, end: number): Promise<Evaluation> {
  const trigger = t.body;
  const env = t.environmentId ? await ctx.store.getEnvironmentById(t.environmentId) : undefined;
  if (!env) return { groups: [], breaching: [], noData: true };
  const dataset = t.datasetId ? (await ctx.store.listDatasets(env.id)).find((d) => d.id === t.datasetId) : null;
  if (dataset === undefined) return { groups: [], breaching: [], noData: true };
  const sources = await querySources(ctx.store, env, dataset);

  const calc: Calculation = trigger.query.calculations?.[0] ?? { op: 'COUNT' };
  const zeroable = ZERO_WHEN_EMPTY_OPS.includes(calc.op);
  const range = triggerDuration(trigger.query, trigger.frequency);
  const { op, value: threshold } = trigger.threshold;
  // The groups nearest to breaching come first, so the group limit never hides one that breaches.
  const descending = op === '>' || op === '>=';
  const spec: QuerySpec = {
    ...trigger.query,
    calculations: [calc],
    orders: trigger.baseline_details ? undefined : [{ op: calc.op, ...(calc.column != null ? { column: calc.column } : {}), order: descending ? 'descending' : 'ascending' }],
  };
  const measure = async (shift: number) => {
    const data = await runQuery(ctx.events, sources, spec, {
      start: end - shift - range,
      end: end - shift,
      limit: MAX_GROUPS,
      disableSeries: true,
      disableTotalByAggregate: true,
      disableOtherByAggregate: true,
      timeoutMs: ctx.settings.queryTimeoutMs,
      cache: ctx.cache,
    });
    const key = calculationKey(calc);
    const groups = new Map<string, GroupValue>();
    for (const row of data.results) {
      const v = row.data[key];
      if (typeof v !== 'number' || !Number.isFinite(v)) continue;
      const group: Record<string, unknown> = {};
      for (const b of spec.breakdowns ?? []) if (row.data[b] !== undefined) group[b] = row.data[b];
      groups.set(JSON.stringify((spec.breakdowns ?? []).map((b) => row.data[b] ?? null)), { group, value: v });
    }
    if (groups.size === 0 && zeroable) groups.set('', { group: {}, value: 0 });
    return groups;
  };

  const current = await measure(0);
  let groups: GroupValue[];
  if (!trigger.baseline_details) {
    groups = [...current.values()];
  } else {
    const before = await measure(trigger.baseline_details.offset_minutes * 60);
    const percentage = trigger.baseline_details.type === 'percentage';
    groups = [];
    for (const k of new Set([...current.keys(), ...before.keys()])) {
      const c = current.get(k) ?? (zeroable ? { group: before.get(k)!.group, value: 0 } : undefined);
      const b = before.get(k)?.value ?? (zeroable ? 0 : undefined);
      if (!c || b === undefined) continue;
      if (percentage) {
        if (b === 0) continue;
        groups.push({ group: c.group, value: ((c.value - b) / Math.abs(b)) * 100 });
      } else {
        groups.push({ group: c.group, value: c.value - b });
      }
    }
  }
  const breaching = groups.filter((g) => breaches(g.value, op, threshold));
  const pick = breaching.length ? breaching : groups;
  const value = pick.length ? pick.reduce((m, g) => (descending ? Math.max(m, g.value) : Math.min(m, g.value)), descending ? -Infinity : Infinity) : undefined;
  return { groups, breaching, noData: groups.length === 0, value };
}

function describeGroup(g: Record<string, unknown>): string {
  const parts = Object.entries(g).map(([k, v]) => `${k}=${String(v)}`);
  return parts.length ? parts.join(', ') : 'all events';
}

function summarise(trigger: StoredTrigger, r: Evaluation, status: 'triggered' | 'resolved'): string {
  const calc = calculationKey(trigger.query.calculations?.[0] ?? { op: 'COUNT' });
  const measured = trigger.baseline_details
    ? `change of ${calc} against ${trigger.baseline_details.offset_minutes} minutes earlier${trigger.baseline_details.type === 'percentage' ? ' (%)' : ''}`
    : calc;
  const cond = `${trigger.threshold.op} ${trigger.threshold.value}`;
  if (status === 'triggered') {
    const shown = r.breaching.slice(0, 5).map((g) => `${describeGroup(g.group)}: ${g.value}`).join('; ');
    const more = r.breaching.length > 5 ? `; and ${r.breaching.length - 5} more` : '';
    return `${trigger.name}: ${measured} ${cond} — ${shown}${more}`;
  }
  if (r.noData) return `${trigger.name}: resolved (no data for ${measured})`;
  return `${trigger.name}: resolved, ${measured} no longer ${cond} (${r.value !== undefined ? `now ${r.value}` : 'no value'})`;
}

async function notifyAll(
  ctx: Pick<TriggerJobContext, 'notifier'>,
  t: StoredObject<StoredTrigger>,
  datasetSlug: string,
  status: 'triggered' | 'resolved',
  slot: Date,
  now: Date,
  result: Notification['result'],
  links: Links = {},
): Promise<void> {
  for (const recipient of (t.body.recipients ?? []).filter(isDeliverable)) {
    ctx.notifier.enqueue({
      id: `trigger:${t.id}:${slot.toISOString()}:${status}:${recipient.id}`,
      source: 'trigger',
      status,
      teamId: t.teamId,
      environmentId: t.environmentId ?? '',
      recipient,
      alert: {
        id: t.id,
        name: t.body.name,
        description: t.body.description,
        dedupKey: `trigger:${t.id}`,
        alertType: t.body.alert_type,
        ...(links.trigger ? { url: links.trigger } : {}),
        datasetSlug,
      },
      result,
      timestamp: now.toISOString(),
    });
  }
}

/** The markers of the trigger's marker recipients, for the slot (Unix seconds) it fired in. */
async function makeMarkers(ctx: TriggerJobContext, t: StoredObject<StoredTrigger>, slot: number, page: string | undefined): Promise<void> {
  if (!t.environmentId) return;
  for (const recipient of t.body.recipients ?? []) {
    if (recipient.type !== MARKER_RECIPIENT) continue;
    await createMarker(
      ctx.store,
      { teamId: t.teamId, environmentId: t.environmentId, datasetId: t.datasetId },
      { start_time: slot, message: recipient.target, type: 'trigger', url: page ? backgroundBaseUrl(ctx.settings) + page : '' },
      derivedId(`trigger marker\u0000${t.id}\u0000${slot}\u0000${recipient.id}`),
    );
  }
}

/** Sends `resolved` for a triggered trigger that is being deleted. */
export function resolveOnDelete(ctx: { notifier: Notifier; now: () => Date }, t: StoredObject<StoredTrigger>, datasetSlug: string): void {
  const now = ctx.now();
  void notifyAll(ctx, t, datasetSlug, 'resolved', now, now, {
    summary: `${t.body.name}: resolved because the trigger was deleted`,
    threshold: { op: t.body.threshold.op, value: t.body.threshold.value },
  });
}
