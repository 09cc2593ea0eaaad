// The request and answer shapes of /1/signals (src/api/v1/signals.ts): they validate the body's
// types and make up the OpenAPI document; parseSignal (src/domain/signals.ts) checks the rest.
import { Type } from '@sinclair/typebox';
import { NotificationRecipientSchema } from '../../../domain/notification-recipients.js';
import { ENDED_REASONS, SENSITIVITIES, SERVICE_NAME_MAX, SIGNAL_DESCRIPTION_MAX, SIGNAL_KINDS, SIGNAL_NAME_MAX, SIGNAL_RECIPIENTS_MAX, SIGNAL_STATUSES, TRAINING_HOURS_DEFAULT, TRAINING_HOURS_MAX, TRAINING_HOURS_MIN, type Sensitivity } from '../../../domain/signals.js';

const nullable = <T>(schema: Record<string, unknown>, type: string) => Type.Unsafe<T | null>({ ...schema, type: [type, 'null'] });
const stringEnum = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

export const SignalRequest = Type.Object({
  service_name: Type.String({ minLength: 1, maxLength: SERVICE_NAME_MAX, description: 'The service watched (a value of the dataset’s service_name field). Fixed at creation.' }),
  kind: stringEnum(SIGNAL_KINDS, '`error_rate` or `presence`. Fixed at creation.'),
  name: Type.Optional(nullable<string>({ minLength: 1, maxLength: SIGNAL_NAME_MAX, description: 'Default: "Error rate of <service>" / "Presence of <service>".' }, 'string')),
  description: Type.Optional(nullable<string>({ maxLength: SIGNAL_DESCRIPTION_MAX, description: 'Default "".' }, 'string')),
  enabled: Type.Optional(nullable<boolean>({ description: 'Default true; false turns the signal off.' }, 'boolean')),
  sensitivity: Type.Optional(
    Type.Unsafe<Sensitivity | null>({
      type: ['string', 'null'],
      enum: [...SENSITIVITIES, null],
      description: 'low | medium (default) | high: see docs/signals.md for the band widths and silences.',
    }),
  ),
  training_period_hours: Type.Optional(
    nullable<number>(
      {
        minimum: TRAINING_HOURS_MIN,
        maximum: TRAINING_HOURS_MAX,
        description: `Hours of history learned before the signal becomes active, and the length of the rolling baseline (default ${TRAINING_HOURS_DEFAULT}).`,
      },
      'integer',
    ),
  ),
  recipients: Type.Optional(
    Type.Unsafe<unknown[] | null>({ type: ['array', 'null'], maxItems: SIGNAL_RECIPIENTS_MAX, items: NotificationRecipientSchema, description: 'Recipients notified when an anomaly starts (triggered) and ends (resolved).' }),
  ),
});

const Band = Type.Object({
  expected: Type.Number({ description: 'Error rate (0…1) or spans expected in the silence window' }),
  lower: Type.Number(),
  upper: Type.Union([Type.Number(), Type.Null()], { description: 'null for presence: only silence is anomalous' }),
});

export const Signal = Type.Object({
  id: Type.String(),
  dataset_slug: Type.String(),
  name: Type.String(),
  description: Type.String(),
  service_name: Type.String(),
  kind: stringEnum(SIGNAL_KINDS),
  enabled: Type.Boolean(),
  sensitivity: stringEnum(SENSITIVITIES),
  training_period_hours: Type.Integer(),
  recipients: Type.Array(NotificationRecipientSchema),
  status: stringEnum(SIGNAL_STATUSES),
  status_reason: Type.String(),
  anomalous: Type.Boolean({ description: 'An anomaly is open' }),
  baseline: Type.Union([
    Type.Object({
      expected: Type.Number(),
      lower: Type.Number(),
      upper: Type.Union([Type.Number(), Type.Null()]),
      windows: Type.Integer({ description: 'Five-minute windows the baseline covers' }),
      computed_at: Type.String({ format: 'date-time' }),
    }),
    Type.Null(),
  ], { description: 'The band in force (frozen while an anomaly is open); null until the signal has been active' }),
  last_observation: Type.Union([
    Type.Object({
      time: Type.String({ format: 'date-time' }),
      value: Type.Number({ description: 'Error rate (0…1) or span count' }),
      spans: Type.Number(),
      window_seconds: Type.Integer(),
    }),
    Type.Null(),
  ]),
  first_seen_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Event time of the service’s first span' }),
  training_ends_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  last_evaluated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

export const Anomaly = Type.Object({
  id: Type.String(),
  signal_id: Type.String(),
  kind: stringEnum(SIGNAL_KINDS),
  service_name: Type.String(),
  status: stringEnum(['open', 'resolved'] as const),
  started_at: Type.String({ format: 'date-time', description: 'The evaluation that first saw the service outside its band' }),
  window_start: Type.String({ format: 'date-time', description: 'Start of the window that evaluation looked at' }),
  ended_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  ended_reason: Type.Union([stringEnum(ENDED_REASONS), Type.Null()], { description: '`recovered`, or the status that closed it' }),
  observed: Type.Number({ description: 'Error rate (0…1) or span count when it started' }),
  peak: Type.Number({ description: 'Highest error rate (lowest count) while open' }),
  last_observed: Type.Number(),
  spans: Type.Number({ description: 'Spans in the window when it started' }),
  band: Band,
});


const Conflict = Type.Object(
  { error: Type.String(), status: Type.Number(), type: Type.String(), title: Type.String(), detail: Type.Optional(Type.String()), instance: Type.Optional(Type.String()) },
  { description: 'A signal of this kind for this service already exists in the dataset' },
);
export const conflictResponse = { description: 'Conflict', content: { 'application/problem+json': { schema: Conflict } } };
