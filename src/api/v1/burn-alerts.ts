// /1/burn_alerts/{datasetSlug|__all__}: list per SLO (`?slo_id=` required; items without
// recipients), create (201), get, full-replacement PUT, DELETE (204). Every route needs Manage
// SLOs (`manage_slos`). Evaluation is in src/jobs/burn-alerts.ts.
//
// Decisions (also in docs/slos.md):
// - Stored in the object store, kind `burn_alert`, under the SLO's environment and dataset (an
//   alert of a dataset's SLO goes with the dataset). `triggered` lives in a separate state object.
// - An alert is found under `__all__` or under any dataset of its SLO, like the SLO; elsewhere
//   404. `slo.id` on create must be an SLO found the same way from the path (404 `SLO not found`
//   otherwise, as for the list's `slo_id`); on PUT `slo` is ignored (an alert cannot move).
// - `alert_type` `exhaustion_time` (the default, also for "" as the Terraform provider sends an
//   unset type) takes `exhaustion_minutes` (integer ≥ 0,
//   required); `budget_rate` takes `budget_rate_window_minutes` (integer, 60 … the SLO's period in
//   minutes) and `budget_rate_decrease_threshold_per_million` (integer 1 … 1,000,000), both
//   required. A field of the other type (not null) → 422 on that field.
// - `recipients` (1 … 100) required on create and PUT, checked by validateNotificationRecipients:
//   `{type: "email", target: "<address>"}` without an id names the team's email recipient of that
//   address or makes one (once the whole body is valid), and the answer names its id.
//   `description` ≤ 1023 (omitted: ""). `auto_investigate` (boolean, default false) is stored and
//   echoed only. Read-only (`id`, `triggered`, timestamps) and unknown fields are ignored. PUT
//   keeps the alert's triggered state; the next evaluation decides anew.
import { Type, type Static } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { notFound, validationError } from '../../errors.js';
import { shortId } from '../../domain/ids.js';
import {
  MAX_NOTIFICATION_RECIPIENTS,
  NotificationRecipientSchema,
  saveNotificationRecipients,
  validateNotificationRecipients,
  type NotificationRecipient,
} from '../../domain/recipients.js';
import { ApiError } from '../../errors.js';
import { ALERT_TYPES, deleteBurnAlert, getAlertState, type AlertType, type BurnAlertBody, type BurnAlertObject } from '../../jobs/burn-alerts.js';
import { MINUTES_PER_DAY, type SloObject } from '../../jobs/slo.js';
import type { ConfigStore } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { findOwned, sendCreated, sendDeleted } from '../resource.js';
import { bodyObject, isObject, Problems, textLength, type Json } from '../../validation.js';
import { getSloObject, sloScope, type SloScope } from './slos.js';
import { SlugParams, itemParams } from './schemas.js';
import { BURN_ALERT_KIND } from '../../domain/kinds.js';

const tags = ['Burn Alerts'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_slos' } as const;
const MAX_DESCRIPTION = 1023;
const MIN_BUDGET_RATE_WINDOW = 60;
const MAX_THRESHOLD = 1_000_000;
const EXHAUSTION_FIELDS = ['exhaustion_minutes'] as const;
const BUDGET_RATE_FIELDS = ['budget_rate_window_minutes', 'budget_rate_decrease_threshold_per_million'] as const;

const AlertTypeSchema = Type.Unsafe<AlertType>({ type: 'string', enum: [...ALERT_TYPES], default: 'exhaustion_time' });
const ListItem = Type.Object({
  id: Type.String(),
  alert_type: AlertTypeSchema,
  description: Type.String(),
  triggered: Type.Boolean(),
  exhaustion_minutes: Type.Optional(Type.Integer()),
  budget_rate_window_minutes: Type.Optional(Type.Integer()),
  budget_rate_decrease_threshold_per_million: Type.Optional(Type.Integer()),
  auto_investigate: Type.Boolean(),
  slo: Type.Object({ id: Type.String() }),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const Detail = Type.Intersect([ListItem, Type.Object({ recipients: Type.Array(NotificationRecipientSchema) })]);
const Input = Type.Object({
  alert_type: Type.Optional(Type.Unsafe<AlertType | ''>({ type: 'string', enum: [...ALERT_TYPES, ''], default: 'exhaustion_time', description: '"" is exhaustion_time.' })),
  description: Type.Optional(Type.String({ maxLength: MAX_DESCRIPTION })),
  exhaustion_minutes: Type.Optional(Type.Integer({ minimum: 0 })),
  budget_rate_window_minutes: Type.Optional(Type.Integer({ minimum: MIN_BUDGET_RATE_WINDOW })),
  budget_rate_decrease_threshold_per_million: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_THRESHOLD })),
  auto_investigate: Type.Optional(Type.Boolean({ default: false })),
  slo: Type.Optional(Type.Object({ id: Type.String() }, { description: 'Required on create; ignored on update.' })),
  recipients: Type.Array(NotificationRecipientSchema, { minItems: 1, maxItems: MAX_NOTIFICATION_RECIPIENTS }),
});
const ItemParams = itemParams('burnAlertId');
const ListQuery = Type.Object({ slo_id: Type.Optional(Type.String()) });

function listItem(o: BurnAlertObject, triggered: boolean): Static<typeof ListItem> {
  const b = o.body;
  const typed =
    b.alert_type === 'exhaustion_time'
      ? { exhaustion_minutes: b.exhaustion_minutes ?? 0 }
      : { budget_rate_window_minutes: b.budget_rate_window_minutes ?? 0, budget_rate_decrease_threshold_per_million: b.budget_rate_decrease_threshold_per_million ?? 0 };
  return {
    id: o.id,
    alert_type: b.alert_type,
    description: b.description,
    triggered,
    ...typed,
    auto_investigate: b.auto_investigate ?? false,
    slo: { id: b.slo_id },
    created_at: o.createdAt,
    updated_at: o.updatedAt,
  };
}

async function detail(store: ConfigStore, o: BurnAlertObject): Promise<Static<typeof Detail>> {
  return { ...listItem(o, (await getAlertState(store, o.id)).triggered), recipients: o.body.recipients };
}

/** Checks the alert's own fields against the SLO; problems go to `p`. */
function checkAlert(p: Problems, input: Json, slo: SloObject | undefined): Omit<BurnAlertBody, 'slo_id' | 'recipients'> {
  let alertType: AlertType = 'exhaustion_time';
  if (input.alert_type !== undefined && input.alert_type !== null && input.alert_type !== '' && p.enumOf('alert_type', input.alert_type, ALERT_TYPES)) {
    alertType = input.alert_type;
  }
  let autoInvestigate = false;
  if (input.auto_investigate !== undefined && input.auto_investigate !== null && p.bool('auto_investigate', input.auto_investigate)) {
    autoInvestigate = input.auto_investigate;
  }
  let description = '';
  if (input.description !== undefined && input.description !== null) {
    if (typeof input.description !== 'string') p.type('description', 'a string', input.description);
    else if (textLength(input.description) > MAX_DESCRIPTION) p.add('description', 'invalid', `must be at most ${MAX_DESCRIPTION} characters`);
    else description = input.description;
  }
  const present = (f: string) => input[f] !== undefined && input[f] !== null;
  const integer = (f: string, min: number, max: number, maxText?: string): number | undefined => {
    const v = input[f];
    if (!present(f)) return p.add(f, 'missing', `is required when alert_type is ${alertType}`) || undefined;
    if (!p.integer(f, v, min)) return undefined;
    if ((v as number) > max) return p.add(f, 'invalid', `must be at most ${maxText ?? max}`) || undefined;
    return v as number;
  };
  const others = alertType === 'exhaustion_time' ? BUDGET_RATE_FIELDS : EXHAUSTION_FIELDS;
  for (const f of others) if (present(f)) p.add(f, 'invalid', `must not be sent when alert_type is ${alertType}`);
  if (alertType === 'exhaustion_time') {
    return { alert_type: alertType, description, auto_investigate: autoInvestigate, exhaustion_minutes: integer('exhaustion_minutes', 0, Number.MAX_SAFE_INTEGER) };
  }
  const period = slo ? slo.body.time_period_days * MINUTES_PER_DAY : Number.MAX_SAFE_INTEGER;
  return {
    alert_type: alertType,
    description,
    auto_investigate: autoInvestigate,
    budget_rate_window_minutes: integer('budget_rate_window_minutes', MIN_BUDGET_RATE_WINDOW, period, `the SLO's time period (${period} minutes)`),
    budget_rate_decrease_threshold_per_million: integer('budget_rate_decrease_threshold_per_million', 1, MAX_THRESHOLD),
  };
}

/** The body's recipients (problems go to `p`); new inline email recipients are not made yet. */
async function checkRecipients(p: Problems, store: ConfigStore, teamId: string, input: Json): Promise<NotificationRecipient[]> {
  try {
    return await validateNotificationRecipients(store, teamId, input.recipients ?? undefined, { minItems: 1 });
  } catch (err) {
    if (!(err instanceof ApiError && err.extra.typeDetail)) throw err;
    p.addAll(err.extra.typeDetail);
    return [];
  }
}

export function registerBurnAlerts(app: App, ctx: ApiContext): void {
  const { store } = ctx;
  const noSchemaValidation = () => () => true;

  /** The alert as seen from the path (its SLO must be visible there); 404 otherwise. */
  const findAlert = async (scope: SloScope, id: string): Promise<{ alert: BurnAlertObject; slo: SloObject }> => {
    const alert = await findOwned<BurnAlertBody>(store, BURN_ALERT_KIND, id, 'burn alert', scope.env);
    if (!alert.body || typeof alert.body.slo_id !== 'string') throw notFound('burn alert');
    try {
      return { alert, slo: await getSloObject(store, scope, alert.body.slo_id) };
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw notFound('burn alert');
      throw err;
    }
  };

  app.get(
    '/1/burn_alerts/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        querystring: ListQuery,
        description: 'The burn alerts of the SLO `slo_id` (required), without recipients.',
        response: { 200: Type.Array(ListItem) },
      },
      config: { auth },
    },
    async (request) => {
      const scope = await sloScope(store, envOf(request), request.params.datasetSlug);
      const sloId = request.query.slo_id;
      if (sloId === undefined || sloId === '') {
        throw validationError([{ field: 'slo_id', code: 'missing', description: 'the query parameter is required' }]);
      }
      const slo = await getSloObject(store, scope, sloId);
      const alerts = (await store.listObjects<BurnAlertBody>(BURN_ALERT_KIND, { environmentId: scope.env.id })).filter((a) => a.body?.slo_id === slo.id);
      return Promise.all(alerts.map(async (a) => listItem(a, (await getAlertState(store, a.id)).triggered)));
    },
  );

  app.post(
    '/1/burn_alerts/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        body: Input,
        description: 'Creates a burn alert on the SLO `slo.id` (an SLO reachable from this path).',
        response: { 201: Detail },
      },
      validatorCompiler: noSchemaValidation,
      config: { auth },
    },
    async (request, reply) => {
      const { datasetSlug } = request.params as Static<typeof SlugParams>;
      const scope = await sloScope(store, envOf(request), datasetSlug);
      const input = bodyObject(request.body);
      const p = new Problems();
      let sloId: string | undefined;
      if (input.slo === undefined || input.slo === null) p.missing('slo');
      else if (!isObject(input.slo)) p.type('slo', 'an object', input.slo);
      else if (p.string('slo.id', input.slo.id)) sloId = input.slo.id;
      p.throwIfAny();
      const slo = await getSloObject(store, scope, sloId!);
      const fields = checkAlert(p, input, slo);
      const checked = await checkRecipients(p, store, scope.env.teamId, input);
      p.throwIfAny();
      const recipients = await saveNotificationRecipients(store, scope.env.teamId, checked);
      const created = await store.createObject<BurnAlertBody>({
        id: shortId(),
        kind: BURN_ALERT_KIND,
        teamId: scope.env.teamId,
        environmentId: scope.env.id,
        datasetId: slo.datasetId,
        scope: slo.id,
        uniqueKey: null,
        body: { slo_id: slo.id, ...fields, recipients },
      });
      return sendCreated(reply, await detail(store, created));
    },
  );

  app.get(
    '/1/burn_alerts/:datasetSlug/:burnAlertId',
    { schema: { tags, security, params: ItemParams, response: { 200: Detail } }, config: { auth } },
    async (request) => {
      const scope = await sloScope(store, envOf(request), request.params.datasetSlug);
      return detail(store, (await findAlert(scope, request.params.burnAlertId)).alert);
    },
  );

  app.put(
    '/1/burn_alerts/:datasetSlug/:burnAlertId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        body: Input,
        description: 'Full replacement; `recipients` required, `slo` ignored. The alert type may change.',
        response: { 200: Detail },
      },
      validatorCompiler: noSchemaValidation,
      config: { auth },
    },
    async (request) => {
      const { datasetSlug, burnAlertId } = request.params as Static<typeof ItemParams>;
      const scope = await sloScope(store, envOf(request), datasetSlug);
      const { alert, slo } = await findAlert(scope, burnAlertId);
      const input = bodyObject(request.body);
      const p = new Problems();
      const fields = checkAlert(p, input, slo);
      const checked = await checkRecipients(p, store, scope.env.teamId, input);
      p.throwIfAny();
      const recipients = await saveNotificationRecipients(store, scope.env.teamId, checked);
      const updated = await store.updateObject<BurnAlertBody>(BURN_ALERT_KIND, alert.id, { body: { slo_id: alert.body.slo_id, ...fields, recipients } });
      if (!updated) throw notFound('burn alert');
      return detail(store, updated);
    },
  );

  app.delete(
    '/1/burn_alerts/:datasetSlug/:burnAlertId',
    { schema: { tags, security, params: ItemParams, response: { 204: Type.Null({ description: 'Deleted' }) } }, config: { auth } },
    async (request, reply) => {
      const scope = await sloScope(store, envOf(request), request.params.datasetSlug);
      const { alert } = await findAlert(scope, request.params.burnAlertId);
      if (!(await deleteBurnAlert(store, alert.id))) throw notFound('burn alert');
      return sendDeleted(reply);
    },
  );
}
