// The request and answer shapes of /1/triggers (src/api/v1/triggers.ts). TriggerRequest validates
// a create or full-replacement body (ajv): types, lengths, enumerations, the inline query's trigger
// subset (TriggerQueryInput); validateTrigger (src/domain/trigger-bodies.ts) checks only what it
// cannot say: unique tag keys and schedule days, the schedule type against the schedule, the
// baseline against the threshold, the query's time range against the frequency, and what
// `query_id` and `recipients` refer to.
import { Type, type TSchema } from '@sinclair/typebox';
import { MAX_NOTIFICATION_RECIPIENTS, NotificationRecipientSchema } from '../../../domain/notification-recipients.js';
import { ALERT_TYPES, BASELINE_OFFSETS, BASELINE_TYPES, DAYS_OF_WEEK, LIMITS, SCHEDULE_TYPES, THRESHOLD_OPS, TIME_OF_DAY } from '../../../domain/triggers.js';
import { NOT_BLANK } from '../../../validation.js';
import { QuerySchema, TagsInput, orNull, tagsOutput } from '../schemas.js';
import { TriggerQueryInput } from './query.js';

const enumOf = <T extends string | number>(values: readonly T[], extra: Record<string, unknown> = {}) =>
  Type.Unsafe<T>({ type: typeof values[0] === 'number' ? 'integer' : 'string', enum: [...values], ...extra }) as ReturnType<typeof Type.Unsafe<T>> & { type: string };
/** Omitted or null: not set (its default). */
const unset = <T extends TSchema>(schema: T & { type: string }, description?: string) => Type.Optional(orNull(schema, description));

const ThresholdSchema = Type.Object({
  op: enumOf(THRESHOLD_OPS),
  value: Type.Number(),
  exceeded_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5, default: 1, description: 'Consecutive breaching evaluations before it fires.' })),
});
const ScheduleSchema = Type.Object({
  window: Type.Object({
    days_of_week: Type.Array(enumOf(DAYS_OF_WEEK), { minItems: 1, maxItems: 7, description: 'Distinct days.' }),
    start_time: Type.String({ pattern: TIME_OF_DAY.source, description: 'UTC, HH:mm' }),
    end_time: Type.String({ pattern: TIME_OF_DAY.source, description: 'UTC, HH:mm; ≤ start_time means the next day' }),
  }),
});
const BaselineSchema = Type.Object({ offset_minutes: Type.Optional(enumOf(BASELINE_OFFSETS)), type: Type.Optional(enumOf(BASELINE_TYPES)) });

export const TriggerRequest = Type.Object(
  {
    name: Type.String({ maxLength: LIMITS.name, pattern: NOT_BLANK, description: 'Not blank.' }),
    description: unset(Type.String({ maxLength: LIMITS.description }), 'Omitted or null: "".'),
    tags: TagsInput,
    query: unset(TriggerQueryInput, 'Saved as a query of the trigger’s dataset (unless it is the current one).'),
    query_id: unset(Type.String(), 'A query of this environment and of the trigger’s dataset (or `__all__`).'),
    threshold: Type.Object({
      op: enumOf(THRESHOLD_OPS),
      value: Type.Number(),
      exceeded_limit: unset(
        Type.Integer({ minimum: LIMITS.minExceededLimit, maximum: LIMITS.maxExceededLimit }),
        'Consecutive breaching evaluations before it fires; omitted or null: 1.',
      ),
    }),
    frequency: unset(
      Type.Integer({ minimum: LIMITS.minFrequency, maximum: LIMITS.maxFrequency, multipleOf: LIMITS.frequencyStep }),
      `Seconds; omitted or null: ${LIMITS.defaultFrequency}. The query's time range must be 1 to ${LIMITS.durationPerFrequency} frequencies.`,
    ),
    alert_type: unset(enumOf(ALERT_TYPES), 'Omitted or null: on_change.'),
    disabled: unset(Type.Boolean(), 'Omitted or null: false.'),
    auto_investigate: unset(Type.Boolean(), 'Stored and echoed; Waggle runs no automatic investigation.'),
    recipients: unset(Type.Array(NotificationRecipientSchema, { maxItems: MAX_NOTIFICATION_RECIPIENTS })),
    evaluation_schedule_type: unset(enumOf(SCHEDULE_TYPES), 'Omitted or null: window with an evaluation_schedule, else frequency.'),
    evaluation_schedule: unset(ScheduleSchema, 'Required by (and only for) the window type.'),
    baseline_details: Type.Optional(
      Type.Unsafe({
        ...BaselineSchema,
        type: ['object', 'null'],
        // `{}` is none; any other object needs both members.
        if: { type: 'object', minProperties: 1 },
        then: { required: ['offset_minutes', 'type'] },
        description: 'Null or `{}` clears the baseline; omitted on PUT keeps it. With one, the threshold is `>=` a value ≥ 0 or `<=` a value ≤ 0.',
      }),
    ),
  },
  { description: 'Exactly one of `query` and `query_id` (both only when `query` is that query as it is). Unknown members are ignored.' },
);

export const TriggerResponseSchema = Type.Object({
  id: Type.String(),
  dataset_slug: Type.String({ description: '`__all__` for environment-wide triggers' }),
  name: Type.String(),
  description: Type.String(),
  tags: tagsOutput('trigger'),
  query: QuerySchema,
  query_id: Type.String(),
  threshold: ThresholdSchema,
  frequency: Type.Integer(),
  alert_type: enumOf(ALERT_TYPES),
  disabled: Type.Boolean(),
  auto_investigate: Type.Optional(Type.Boolean({ description: 'Absent from an environment-wide trigger created without it.' })),
  recipients: Type.Array(NotificationRecipientSchema),
  evaluation_schedule_type: enumOf(SCHEDULE_TYPES),
  evaluation_schedule: Type.Optional(ScheduleSchema),
  baseline_details: Type.Optional(BaselineSchema),
  triggered: Type.Boolean({ description: 'Whether it has crossed its threshold without resolving.' }),
  last_evaluation: Type.Optional(
    Type.Union([
      Type.Object({
        at: Type.String({ format: 'date-time', description: 'The evaluation slot' }),
        value: Type.Optional(Type.Number({ description: 'The most extreme value in the threshold’s direction' })),
        breaching: Type.Boolean(),
        no_data: Type.Boolean(),
        error: Type.Optional(Type.String()),
      }),
      Type.Null(),
    ], { description: 'Waggle extension: the outcome of the last evaluation; null before the first.' }),
  ),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
