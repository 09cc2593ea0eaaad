// Trigger bodies: what a create or full-replacement body may say (validateTrigger: every problem
// in one 422 naming its field) and how a stored trigger is answered (triggerResponse, in
// Honeycomb's TriggerResponse's key order). The HTTP face is src/api/v1/triggers.ts; the stored
// shapes and evaluation rules are ./triggers.ts.
//
// Decisions (also in docs/triggers.md):
// - A trigger belongs to its dataset, or to the environment for `__all__`, and is listed, read and
//   changed only under that path segment (like queries and markers); elsewhere it is a 404.
// - `query` (inline) or `query_id`: exactly one. An inline query is validated like any query
//   (src/query/validate.ts; problems are named `query.<field>`), then saved as a query of the
//   trigger's dataset (saveQuery) unless it equals the trigger's current query (PUT). `query_id`
//   must name a query of this environment and of the same dataset (or `__all__`); an unknown one,
//   another environment's, or another dataset's → 422 on `query_id` (the body is understood but
//   refers to something the trigger cannot use). Both together are accepted only when the inline
//   query is the `query_id`'s spec (what a GET answers and a client may send back on PUT).
// - Trigger query subset: exactly one calculation (omitted calculations mean COUNT, which is one),
//   not HEATMAP or CONCURRENCY; no `orders`; no `limit`; no `start_time` / `end_time`; at most one
//   having. A query without `time_range` gets the trigger's frequency as its time range
//   (Terraform examples send trigger queries without one), stored and returned, and saved so
//   in the query an inline query becomes; the duration must satisfy frequency ≤ time_range ≤
//   4 × frequency (422 on `frequency`). When `query` and `query_id` are both sent they are
//   compared with that default filled in on both sides.
// - `frequency`: integer seconds, 60 … 86400, a multiple of 60; omitted or null = 900.
// - `threshold` (required): `op` one of > >= < <=, `value` a number, `exceeded_limit` an integer
//   1 … 5 (default 1).
// - `baseline_details`: `{offset_minutes: 60|1440|10080|40320, type: percentage|value}`; null or
//   `{}` = none. Omitted = none on create and the stored one on PUT (the Terraform provider drops
//   the field from a PUT that carries both query and query_id), so only null or `{}` clears it.
//   With a baseline the threshold op must be `>=` with a value ≥ 0 or `<=` with a value ≤ 0 (the
//   Terraform provider's rule).
// - `evaluation_schedule_type` `frequency` | `window`; omitted: `window` when an
//   `evaluation_schedule` is sent, else `frequency`. `window` needs `evaluation_schedule.window`
//   `{days_of_week (1…7 distinct day names), start_time, end_time ("HH:mm", UTC)}`; `frequency`
//   with a schedule is a 422 (contradictory). A `frequency` trigger answers without
//   `evaluation_schedule`.
// - `name` 1 … 120 characters, not blank; `description` ≤ 1023 (omitted/null = ""); `tags` per
//   src/domain/tags.ts (no tags: no `tags` member in answers); `alert_type` on_change (default) |
//   on_true; `disabled` default false; `auto_investigate` (boolean) is stored and echoed and does
//   nothing else (Waggle has no automatic investigation); omitted, it is false on a dataset's
//   trigger and absent from an environment-wide one's answers, as Honeycomb answers them;
//   `recipients` (at most 100) per validateNotificationRecipients (stored as `{id, type, target,
//   details}`): besides team recipients, `{type: "email", target: "<address>"}` names the team's
//   email recipient of that address or makes one (once the whole body is valid), and
//   `{type: "marker", target: "<text>"}` makes a marker with that text each time the trigger fires
//   (src/jobs/triggers.ts).
// - PUT is a full replacement (omitted fields take their defaults, except baseline_details). It
//   keeps the evaluation state: the schedule goes on from the last run and the next evaluation
//   decides (a triggered trigger that no longer breaches resolves then).
// - Read-only (`id`, `dataset_slug`, `triggered`, `created_at`, `updated_at`) and unknown fields
//   in bodies are ignored. Every problem is reported in one 422 naming its field.
// - DELETE also deletes the evaluation state; a trigger deleted while triggered sends its
//   recipients a `resolved` notification, so incidents it opened do not stay open forever.
import { ApiError, type TypeDetail } from '../errors.js';
import type { QuerySpec, StoredQuery } from '../query/spec.js';
import { validateQuerySpec } from '../query/validate.js';
import type { ConfigStore, Dataset, Environment, StoredObject } from '../stores/config/types.js';
import { Problems, bodyObject, isObject, textLength, type Json } from '../validation.js';
import { ALL_DATASETS } from './datasets.js';
import { QUERY_KIND, TRIGGER_STATE_KIND } from './kinds.js';
import { saveQuery } from './queries.js';
import { refreshNotificationRecipients, saveNotificationRecipients, validateNotificationRecipients } from './notification-recipients.js';
import { belongsTo } from './scope.js';
import { checkTags, tagsMember } from './tags.js';
import { ALERT_TYPES, BASELINE_OFFSETS, BASELINE_TYPES, DAYS_OF_WEEK, LIMITS, SCHEDULE_TYPES, THRESHOLD_OPS, TIME_OF_DAY, TRIGGER_FORBIDDEN_OPS, stateIdOf, triggerDuration, type BaselineDetails, type DayOfWeek, type ScheduleWindow, type StoredTrigger, type Threshold, type TriggerState } from './triggers.js';

const has = (o: Json, k: string) => o[k] !== undefined && o[k] !== null;

/** JSON with object keys sorted: two specs are the same query when these are equal. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}
const specOf = (q: StoredQuery): QuerySpec => {
  const { id: _id, ...spec } = q;
  return spec;
};
/** The spec with its time range defaulted to the trigger's frequency (see the header). */
const withTimeRange = (spec: QuerySpec, frequency: number): QuerySpec =>
  spec.time_range === undefined && spec.start_time === undefined && spec.end_time === undefined ? { ...spec, time_range: frequency } : spec;

/** Problems of a 422 thrown by another validator, renamed under `prefix`. */
function problemsOf(err: unknown, prefix?: string): TypeDetail[] {
  if (!(err instanceof ApiError) || err.status !== 422 || !err.extra.typeDetail) throw err;
  if (!prefix) return err.extra.typeDetail;
  return err.extra.typeDetail.map((d) => ({ ...d, field: d.field === 'body' ? prefix : `${prefix}.${d.field}` }));
}

/** The trigger query subset (see the header); `at` names the field problems are reported on. */
function checkTriggerQuery(p: Problems, spec: QuerySpec, at: (field: string) => string): void {
  const calcs = spec.calculations?.length ? spec.calculations : [{ op: 'COUNT' as const }];
  if (calcs.length !== 1) p.add(at('calculations'), 'invalid', `a trigger query must have exactly one calculation, not ${calcs.length}`);
  calcs.forEach((c, i) => {
    if (TRIGGER_FORBIDDEN_OPS.includes(c.op)) p.add(at(`calculations.${i}.op`), 'invalid', `${c.op} cannot be used in a trigger query`);
  });
  if (spec.orders !== undefined) p.add(at('orders'), 'invalid', 'a trigger query cannot have orders');
  if (spec.limit !== undefined) p.add(at('limit'), 'invalid', 'a trigger query cannot have a limit');
  if (spec.start_time !== undefined) p.add(at('start_time'), 'invalid', 'a trigger query uses time_range only, not start_time');
  if (spec.end_time !== undefined) p.add(at('end_time'), 'invalid', 'a trigger query uses time_range only, not end_time');
  if ((spec.havings?.length ?? 0) > LIMITS.maxHavings) p.add(at('havings'), 'invalid', `a trigger query can have at most ${LIMITS.maxHavings} having`);
}

function checkThreshold(p: Problems, v: unknown): Threshold | undefined {
  if (v === undefined || v === null) return void p.missing('threshold');
  if (!isObject(v)) return void p.type('threshold', 'an object', v);
  let ok = true;
  if (v.op === undefined || v.op === null) ok = p.missing('threshold.op');
  else ok = p.enumOf('threshold.op', v.op, THRESHOLD_OPS) && ok;
  if (v.value === undefined || v.value === null) ok = p.missing('threshold.value');
  else if (typeof v.value !== 'number' || !Number.isFinite(v.value)) ok = p.type('threshold.value', 'a number', v.value);
  let exceeded = 1;
  if (has(v, 'exceeded_limit')) {
    const e = v.exceeded_limit;
    if (typeof e !== 'number' || !Number.isSafeInteger(e)) ok = p.type('threshold.exceeded_limit', 'an integer', e);
    else if (e < LIMITS.minExceededLimit || e > LIMITS.maxExceededLimit) {
      ok = p.add('threshold.exceeded_limit', 'invalid', `must be from ${LIMITS.minExceededLimit} to ${LIMITS.maxExceededLimit}, not ${e}`);
    } else exceeded = e;
  }
  return ok ? { op: v.op as Threshold['op'], value: v.value as number, exceeded_limit: exceeded } : undefined;
}

function checkFrequency(p: Problems, v: unknown): number | undefined {
  if (v === undefined || v === null) return LIMITS.defaultFrequency;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) return void p.type('frequency', 'an integer', v);
  if (v < LIMITS.minFrequency || v > LIMITS.maxFrequency) {
    return void p.add('frequency', 'invalid', `must be from ${LIMITS.minFrequency} to ${LIMITS.maxFrequency} seconds, not ${v}`);
  }
  if (v % LIMITS.frequencyStep !== 0) return void p.add('frequency', 'invalid', `must be a multiple of ${LIMITS.frequencyStep} seconds, not ${v}`);
  return v;
}

function checkSchedule(p: Problems, body: Json): Pick<StoredTrigger, 'evaluation_schedule_type' | 'evaluation_schedule'> | undefined {
  const type = body.evaluation_schedule_type;
  const schedule = body.evaluation_schedule;
  let scheduleType: StoredTrigger['evaluation_schedule_type'] = has(body, 'evaluation_schedule') ? 'window' : 'frequency';
  if (type !== undefined && type !== null) {
    if (!p.enumOf('evaluation_schedule_type', type, SCHEDULE_TYPES)) return undefined;
    scheduleType = type;
  }
  if (scheduleType === 'frequency') {
    if (has(body, 'evaluation_schedule')) {
      return void p.add('evaluation_schedule', 'invalid', 'is only for evaluation_schedule_type "window"');
    }
    return { evaluation_schedule_type: 'frequency' };
  }
  if (schedule === undefined || schedule === null) return void p.add('evaluation_schedule', 'missing', 'is required with evaluation_schedule_type "window"');
  if (!isObject(schedule)) return void p.type('evaluation_schedule', 'an object', schedule);
  const w = schedule.window;
  if (w === undefined || w === null) return void p.missing('evaluation_schedule.window');
  if (!isObject(w)) return void p.type('evaluation_schedule.window', 'an object', w);
  const at = (f: string) => `evaluation_schedule.window.${f}`;
  let ok = true;
  const days = w.days_of_week;
  if (days === undefined || days === null) ok = p.missing(at('days_of_week'));
  else if (!p.array(at('days_of_week'), days, DAYS_OF_WEEK.length)) ok = false;
  else if (days.length < 1) ok = p.add(at('days_of_week'), 'invalid', 'must have at least 1 day');
  else {
    const seen = new Set<unknown>();
    days.forEach((d, i) => {
      if (!p.enumOf(`${at('days_of_week')}.${i}`, d, DAYS_OF_WEEK)) ok = false;
      else if (seen.has(d)) ok = p.add(`${at('days_of_week')}.${i}`, 'invalid', `duplicates ${JSON.stringify(d)}`);
      seen.add(d);
    });
  }
  for (const f of ['start_time', 'end_time'] as const) {
    const t = w[f];
    if (t === undefined || t === null) ok = p.missing(at(f));
    else if (typeof t !== 'string') ok = p.type(at(f), 'a string', t);
    else if (!TIME_OF_DAY.test(t)) ok = p.add(at(f), 'invalid', 'must be a UTC time as HH:mm (00:00 to 23:59)');
  }
  if (!ok) return undefined;
  const window: ScheduleWindow = { days_of_week: days as DayOfWeek[], start_time: w.start_time as string, end_time: w.end_time as string };
  return { evaluation_schedule_type: 'window', evaluation_schedule: { window } };
}

function checkBaseline(p: Problems, v: unknown): { ok: boolean; baseline?: BaselineDetails } {
  if (v === undefined || v === null) return { ok: true };
  if (!isObject(v)) return { ok: p.type('baseline_details', 'an object', v) };
  if (Object.keys(v).length === 0) return { ok: true };
  let ok = true;
  if (v.offset_minutes === undefined || v.offset_minutes === null) ok = p.missing('baseline_details.offset_minutes');
  else if (typeof v.offset_minutes !== 'number' || !Number.isSafeInteger(v.offset_minutes)) ok = p.type('baseline_details.offset_minutes', 'an integer', v.offset_minutes);
  else if (!(BASELINE_OFFSETS as readonly number[]).includes(v.offset_minutes)) {
    ok = p.add('baseline_details.offset_minutes', 'invalid', `must be one of ${BASELINE_OFFSETS.join(', ')}`);
  }
  if (v.type === undefined || v.type === null) ok = p.missing('baseline_details.type');
  else ok = p.enumOf('baseline_details.type', v.type, BASELINE_TYPES) && ok;
  return ok ? { ok, baseline: { offset_minutes: v.offset_minutes as BaselineDetails['offset_minutes'], type: v.type as BaselineDetails['type'] } } : { ok };
}

/**
 * The query a body names: inline, by id, or both when they agree; its time range defaulted to
 * `frequency`. Undefined when it has problems.
 */
async function resolveQuery(
  store: ConfigStore,
  env: Environment,
  dataset: Dataset | null,
  p: Problems,
  body: Json,
  frequency: number,
  current?: StoredTrigger,
): Promise<{ spec: QuerySpec; queryId?: string; field: (f: string) => string } | undefined> {
  const inline = has(body, 'query');
  const byId = has(body, 'query_id');
  if (!inline && !byId) return void p.add('query', 'missing', 'one of query and query_id is required');

  let stored: StoredQuery | undefined;
  if (byId) {
    const id = body.query_id;
    if (typeof id !== 'string') return void p.type('query_id', 'a string', id);
    const obj = id === '' ? undefined : await store.getObject<StoredQuery>(QUERY_KIND, id);
    if (!belongsTo(obj, env)) return void p.add('query_id', 'invalid', 'is not a query of this environment');
    if (obj.datasetId !== (dataset?.id ?? null)) {
      const where = dataset ? `dataset ${JSON.stringify(dataset.slug)}` : 'the environment (__all__)';
      return void p.add('query_id', 'invalid', `is a query of another dataset; a trigger of ${where} needs a query of ${where}`);
    }
    stored = obj.body;
  }
  let spec: QuerySpec | undefined;
  if (inline) {
    try {
      spec = withTimeRange(validateQuerySpec(body.query), frequency);
    } catch (err) {
      p.addAll(problemsOf(err, 'query'));
      return undefined;
    }
  }
  const storedSpec = stored && withTimeRange(specOf(stored), frequency);
  if (stored && spec) {
    if (canonical(spec) !== canonical(storedSpec)) {
      return void p.add('query', 'invalid', 'send either query or query_id (both only when query is that query as it is)');
    }
    return { spec, queryId: stored.id, field: () => 'query_id' };
  }
  if (stored) return { spec: storedSpec!, queryId: stored.id, field: () => 'query_id' };
  // Inline: keep the current query when it is the same, so a GET → PUT round trip makes no new query.
  const same = current && canonical(spec) === canonical(current.query);
  return { spec: spec!, queryId: same ? current.query_id : undefined, field: (f) => `query.${f}` };
}

/**
 * Validates a trigger body (create or full replacement) and returns what to store, saving an
 * inline query as a query of the dataset first. Throws one 422 naming every problem.
 */
export async function validateTrigger(
  store: ConfigStore,
  env: Environment,
  dataset: Dataset | null,
  input: unknown,
  current?: StoredTrigger,
): Promise<StoredTrigger> {
  const body = bodyObject(input);
  const p = new Problems();

  p.string('name', body.name, { max: LIMITS.name, notBlank: true });
  let description = '';
  if (has(body, 'description')) {
    if (typeof body.description !== 'string') p.type('description', 'a string', body.description);
    else if (textLength(body.description) > LIMITS.description) p.add('description', 'invalid', `must be at most ${LIMITS.description} characters`);
    else description = body.description;
  }
  const { tags: tagList, problems: tagProblems } = checkTags(body.tags);
  p.addAll(tagProblems);
  const threshold = checkThreshold(p, body.threshold);
  const frequency = checkFrequency(p, body.frequency);
  let alertType: StoredTrigger['alert_type'] = 'on_change';
  if (has(body, 'alert_type') && p.enumOf('alert_type', body.alert_type, ALERT_TYPES)) alertType = body.alert_type;
  let disabled = false;
  if (has(body, 'disabled') && p.bool('disabled', body.disabled)) disabled = body.disabled;
  // Omitted: false on a dataset's trigger, unset on an environment-wide one (see the header).
  let autoInvestigate: boolean | undefined = dataset ? false : undefined;
  if (has(body, 'auto_investigate') && p.bool('auto_investigate', body.auto_investigate)) autoInvestigate = body.auto_investigate;
  const schedule = checkSchedule(p, body);
  // Omitted on PUT: the stored baseline stays (null or {} clears it).
  const { baseline } = body.baseline_details === undefined ? { baseline: current?.baseline_details } : checkBaseline(p, body.baseline_details);

  const query = await resolveQuery(store, env, dataset, p, body, frequency ?? LIMITS.defaultFrequency, current);
  if (query) {
    checkTriggerQuery(p, query.spec, query.field);
    if (frequency !== undefined) {
      const duration = triggerDuration(query.spec, frequency);
      if (duration < frequency || duration > LIMITS.durationPerFrequency * frequency) {
        p.add(
          'frequency',
          'invalid',
          `the query's time range (${duration} s) must be from the frequency (${frequency} s) to ${LIMITS.durationPerFrequency} times the frequency`,
        );
      }
    }
  }
  if (baseline && threshold) {
    const { op, value } = threshold;
    if (op !== '>=' && op !== '<=') p.add('threshold.op', 'invalid', 'must be >= or <= for a trigger with baseline_details');
    else if (op === '>=' && value < 0) p.add('threshold.value', 'invalid', 'must be at least 0 with >= and baseline_details');
    else if (op === '<=' && value > 0) p.add('threshold.value', 'invalid', 'must be at most 0 with <= and baseline_details');
  }
  let recipients: StoredTrigger['recipients'] = [];
  try {
    recipients = await validateNotificationRecipients(store, env.teamId, body.recipients, { allowMarker: true, current: current?.recipients });
  } catch (err) {
    p.addAll(problemsOf(err));
  }
  p.throwIfAny();
  recipients = await saveNotificationRecipients(store, env.teamId, recipients);

  const queryId = query!.queryId ?? (await saveQuery(store, env, dataset, query!.spec)).id;
  const out: StoredTrigger = {
    name: body.name as string,
    description,
    tags: tagList,
    query_id: queryId,
    query: query!.spec,
    threshold: threshold!,
    frequency: frequency!,
    alert_type: alertType,
    disabled,
    recipients,
    ...schedule!,
  };
  if (autoInvestigate !== undefined) out.auto_investigate = autoInvestigate;
  if (baseline) out.baseline_details = baseline;
  return out;
}

/** A trigger as the API answers it. */
export type TriggerResponse = Omit<StoredTrigger, 'evaluation_schedule' | 'baseline_details' | 'tags' | 'auto_investigate'> & {
  tags?: StoredTrigger['tags'];
  auto_investigate?: boolean;
  id: string;
  dataset_slug: string;
  triggered: boolean;
  last_evaluation: { at: string; value?: number; breaching: boolean; no_data: boolean; error?: string } | null;
  evaluation_schedule?: StoredTrigger['evaluation_schedule'];
  baseline_details?: BaselineDetails;
  created_at: string;
  updated_at: string;
};

/** The TriggerResponse of a stored trigger; tolerant of bodies missing fields. */
export function triggerResponse(o: StoredObject<Partial<StoredTrigger>>, datasetSlug: string, state?: TriggerState): TriggerResponse {
  const b = o.body ?? {};
  const out: TriggerResponse = {
    id: o.id,
    dataset_slug: datasetSlug,
    name: b.name ?? '',
    description: b.description ?? '',
    ...tagsMember(b.tags),
    query: b.query ?? {},
    query_id: b.query_id ?? '',
    threshold: b.threshold ?? { op: '>', value: 0, exceeded_limit: 1 },
    frequency: b.frequency ?? LIMITS.defaultFrequency,
    alert_type: b.alert_type ?? 'on_change',
    disabled: b.disabled ?? false,
    // Honeycomb answers it on every dataset trigger, on an environment-wide one only when set
    // (the Terraform provider's test of environment-wide triggers expects it absent).
    ...(datasetSlug !== ALL_DATASETS || b.auto_investigate !== undefined ? { auto_investigate: b.auto_investigate ?? false } : {}),
    triggered: state?.triggered ?? false,
    last_evaluation:
      state?.lastRun && state.last
        ? {
            at: state.lastRun,
            ...(state.last.value !== undefined ? { value: state.last.value } : {}),
            breaching: state.last.breaching,
            no_data: state.last.noData,
            ...(state.last.error ? { error: state.last.error } : {}),
          }
        : null,
    recipients: b.recipients ?? [],
    evaluation_schedule_type: b.evaluation_schedule_type ?? 'frequency',
    created_at: o.createdAt,
    updated_at: o.updatedAt,
  };
  if (b.evaluation_schedule) out.evaluation_schedule = b.evaluation_schedule;
  if (b.baseline_details) out.baseline_details = b.baseline_details;
  return out;
}

/**
 * TriggerResponses for stored triggers of any environments of one team (the recipients'
 * `/triggers` route uses it): each with its dataset slug, `triggered` from its evaluation state,
 * and recipients' `type`/`target` as the recipients are now.
 */
export async function triggerResponses(store: ConfigStore, objects: StoredObject<unknown>[]): Promise<TriggerResponse[]> {
  const slugs = new Map<string, Map<string, string>>();
  const slugOf = async (o: StoredObject<unknown>) => {
    if (o.datasetId === null || o.environmentId === null) return ALL_DATASETS;
    let m = slugs.get(o.environmentId);
    if (!m) slugs.set(o.environmentId, (m = new Map((await store.listDatasets(o.environmentId)).map((d) => [d.id, d.slug]))));
    return m.get(o.datasetId) ?? ALL_DATASETS;
  };
  const out: TriggerResponse[] = [];
  for (const o of objects) {
    const t = o as StoredObject<Partial<StoredTrigger>>;
    const state = await store.getObject<TriggerState>(TRIGGER_STATE_KIND, stateIdOf(o.id));
    const res = triggerResponse(t, await slugOf(o), state?.body);
    res.recipients = await refreshNotificationRecipients(store, o.teamId, res.recipients);
    out.push(res);
  }
  return out;
}
