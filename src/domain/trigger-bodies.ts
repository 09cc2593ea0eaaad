// Trigger bodies: what a create or full-replacement body may say and how a stored trigger is
// answered (triggerResponse, in Honeycomb's TriggerResponse's key order). The body's schema
// (src/api/v1/shapes/triggers.ts, TriggerRequest) checks types, lengths, enumerations and the inline
// query's subset; validateTrigger only what it cannot say (cross-field rules, what `query_id` and
// `recipients` refer to), every problem in one 422 naming its field. The HTTP face is
// src/api/v1/triggers.ts; the stored shapes and evaluation rules are ./triggers.ts.
//
// Decisions (also in docs/triggers.md):
// - A trigger belongs to its dataset, or to the environment for `__all__`, and is listed, read and
//   changed only under that path segment (like queries and markers); elsewhere it is a 404.
// - `query` (inline) or `query_id`: exactly one. An inline query is validated like any query
//   (its schema, then src/query/validate.ts; problems are named `query.<field>`), then saved as a query of the
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
import type { QuerySpec, StoredQuery } from '../query/spec.js';
import { checkQuerySpec, type QueryInput } from '../query/validate.js';
import type { ConfigStore, Dataset, Environment, StoredObject } from '../stores/config/types.js';
import { ApiError } from '../errors.js';
import { Problems, isObject } from '../validation.js';
import { ALL_DATASETS } from './datasets.js';
import { QUERY_KIND, TRIGGER_STATE_KIND } from './kinds.js';
import { saveQuery } from './queries.js';
import { refreshNotificationRecipients, saveNotificationRecipients, validateNotificationRecipients } from './notification-recipients.js';
import { belongsTo } from './scope.js';
import { duplicateTagKeys, storedTags, tagsMember, type Tag } from './tags.js';
import { LIMITS, TRIGGER_FORBIDDEN_OPS, stateIdOf, triggerDuration, type BaselineDetails, type ScheduleWindow, type StoredTrigger, type Threshold, type TriggerState } from './triggers.js';

/**
 * A create or full-replacement body as its schema (src/api/v1/shapes/triggers.ts, TriggerRequest)
 * has checked it: every member of its type; `null` is not set, except that a null
 * `baseline_details` clears the baseline.
 */
export interface TriggerInput {
  name: string;
  description?: string | null;
  tags?: Tag[] | null;
  query?: QueryInput | null;
  query_id?: string | null;
  threshold: { op: Threshold['op']; value: number; exceeded_limit?: number | null };
  frequency?: number | null;
  alert_type?: StoredTrigger['alert_type'] | null;
  disabled?: boolean | null;
  auto_investigate?: boolean | null;
  recipients?: unknown[] | null;
  evaluation_schedule_type?: StoredTrigger['evaluation_schedule_type'] | null;
  evaluation_schedule?: { window: ScheduleWindow } | null;
  baseline_details?: Partial<BaselineDetails> | null;
}

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

/** The trigger query subset's counts (see the header): exactly one calculation, at most one having. */
function checkTriggerQueryCounts(p: Problems, spec: QuerySpec, at: (field: string) => string): void {
  const calculations = spec.calculations?.length || 1;
  if (calculations !== 1) p.add(at('calculations'), 'invalid', `a trigger query must have exactly one calculation, not ${calculations}`);
  if ((spec.havings?.length ?? 0) > LIMITS.maxHavings) p.add(at('havings'), 'invalid', `a trigger query can have at most ${LIMITS.maxHavings} having`);
}

/**
 * The trigger query subset (see the header) of a query_id's stored query, reported on `query_id`;
 * an inline query's is its schema's (TriggerQueryInput) but for the counts.
 */
function checkStoredTriggerQuery(p: Problems, spec: QuerySpec): void {
  const problem = (message: string) => p.add('query_id', 'invalid', message);
  checkTriggerQueryCounts(p, spec, () => 'query_id');
  for (const c of spec.calculations ?? []) if (TRIGGER_FORBIDDEN_OPS.includes(c.op)) problem(`${c.op} cannot be used in a trigger query`);
  if (spec.orders !== undefined) problem('a trigger query cannot have orders');
  if (spec.limit !== undefined) problem('a trigger query cannot have a limit');
  if (spec.start_time !== undefined || spec.end_time !== undefined) problem('a trigger query uses time_range only, not start_time or end_time');
}

/** The schedule: the type against the schedule, and distinct days (what the schema cannot say). */
function scheduleOf(p: Problems, input: TriggerInput): Pick<StoredTrigger, 'evaluation_schedule_type' | 'evaluation_schedule'> | undefined {
  const schedule = input.evaluation_schedule ?? undefined;
  const type = input.evaluation_schedule_type ?? (schedule ? 'window' : 'frequency');
  if (type === 'frequency') {
    if (schedule) return void p.add('evaluation_schedule', 'invalid', 'is only for evaluation_schedule_type "window"');
    return { evaluation_schedule_type: 'frequency' };
  }
  if (!schedule) return void p.add('evaluation_schedule', 'missing', 'is required with evaluation_schedule_type "window"');
  const { days_of_week, start_time, end_time } = schedule.window;
  const before = p.count;
  days_of_week.forEach((d, i) => {
    if (days_of_week.indexOf(d) < i) p.add(`evaluation_schedule.window.days_of_week.${i}`, 'invalid', `duplicates ${JSON.stringify(d)}`);
  });
  if (p.count > before) return undefined;
  return { evaluation_schedule_type: 'window', evaluation_schedule: { window: { days_of_week, start_time, end_time } } };
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
  input: TriggerInput,
  frequency: number,
  current?: StoredTrigger,
): Promise<{ spec: QuerySpec; queryId?: string } | undefined> {
  const id = input.query_id ?? undefined;
  if (!input.query && id === undefined) return void p.add('query', 'missing', 'one of query and query_id is required');

  let stored: StoredQuery | undefined;
  if (id !== undefined) {
    const obj = id === '' ? undefined : await store.getObject<StoredQuery>(QUERY_KIND, id);
    if (!belongsTo(obj, env)) return void p.add('query_id', 'invalid', 'is not a query of this environment');
    if (obj.datasetId !== (dataset?.id ?? null)) {
      const where = dataset ? `dataset ${JSON.stringify(dataset.slug)}` : 'the environment (__all__)';
      return void p.add('query_id', 'invalid', `is a query of another dataset; a trigger of ${where} needs a query of ${where}`);
    }
    stored = obj.body;
  }
  let spec: QuerySpec | undefined;
  if (input.query) {
    const before = p.count;
    spec = withTimeRange(checkQuerySpec(p, input.query, (f) => `query.${f}`), frequency);
    if (p.count === before) checkTriggerQueryCounts(p, spec, (f) => `query.${f}`);
    if (p.count > before) return undefined;
  }
  const storedSpec = stored && withTimeRange(specOf(stored), frequency);
  if (stored && spec && canonical(spec) !== canonical(storedSpec)) {
    return void p.add('query', 'invalid', 'send either query or query_id (both only when query is that query as it is)');
  }
  if (stored) {
    checkStoredTriggerQuery(p, storedSpec!);
    return { spec: spec ?? storedSpec!, queryId: stored.id };
  }
  // Inline: keep the current query when it is the same, so a GET → PUT round trip makes no new query.
  const same = current && canonical(spec) === canonical(current.query);
  return { spec: spec!, queryId: same ? current.query_id : undefined };
}

/**
 * Checks what a trigger body's schema cannot say and returns what to store, saving an inline
 * query as a query of the dataset first. Throws one 422 naming every problem.
 */
export async function validateTrigger(
  store: ConfigStore,
  env: Environment,
  dataset: Dataset | null,
  input: TriggerInput,
  current?: StoredTrigger,
): Promise<StoredTrigger> {
  const p = new Problems();
  p.addAll(duplicateTagKeys(input.tags));
  const threshold: Threshold = { op: input.threshold.op, value: input.threshold.value, exceeded_limit: input.threshold.exceeded_limit ?? 1 };
  const frequency = input.frequency ?? LIMITS.defaultFrequency;
  const schedule = scheduleOf(p, input);
  // Omitted on PUT: the stored baseline stays (null or {} clears it; the schema says a non-empty one has both members).
  const sent = input.baseline_details;
  const baseline = sent === undefined ? current?.baseline_details : sent?.offset_minutes !== undefined ? (sent as BaselineDetails) : undefined;

  const query = await resolveQuery(store, env, dataset, p, input, frequency, current);
  if (query) {
    const duration = triggerDuration(query.spec, frequency);
    if (duration < frequency || duration > LIMITS.durationPerFrequency * frequency) {
      p.add(
        'frequency',
        'invalid',
        `the query's time range (${duration} s) must be from the frequency (${frequency} s) to ${LIMITS.durationPerFrequency} times the frequency`,
      );
    }
  }
  if (baseline) {
    const { op, value } = threshold;
    if (op !== '>=' && op !== '<=') p.add('threshold.op', 'invalid', 'must be >= or <= for a trigger with baseline_details');
    else if (op === '>=' && value < 0) p.add('threshold.value', 'invalid', 'must be at least 0 with >= and baseline_details');
    else if (op === '<=' && value > 0) p.add('threshold.value', 'invalid', 'must be at most 0 with <= and baseline_details');
  }
  let recipients: StoredTrigger['recipients'] = [];
  try {
    recipients = await validateNotificationRecipients(store, env.teamId, input.recipients, { allowMarker: true, current: current?.recipients });
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 422 || !err.extra.typeDetail) throw err;
    p.addAll(err.extra.typeDetail);
  }
  p.throwIfAny();
  recipients = await saveNotificationRecipients(store, env.teamId, recipients);

  const queryId = query!.queryId ?? (await saveQuery(store, env, dataset, query!.spec)).id;
  const out: StoredTrigger = {
    name: input.name,
    description: input.description ?? '',
    tags: storedTags(input.tags),
    query_id: queryId,
    query: query!.spec,
    threshold,
    frequency,
    alert_type: input.alert_type ?? 'on_change',
    disabled: input.disabled ?? false,
    recipients,
    ...schedule!,
  };
  // Omitted: false on a dataset's trigger, unset on an environment-wide one (see the header).
  const autoInvestigate = input.auto_investigate ?? (dataset ? false : undefined);
  if (autoInvestigate !== undefined) out.auto_investigate = autoInvestigate;
  if (baseline) out.baseline_details = { offset_minutes: baseline.offset_minutes, type: baseline.type };
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
