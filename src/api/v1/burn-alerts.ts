// /1/burn_alerts/{datasetSlug|__all__}: list per SLO (`?slo_id=` required; items without
// recipients), create (201), get, full-replacement PUT, DELETE (204). Every route needs Manage
// SLOs (`manage_slos`). The rules of an alert (the decisions) and its answers are
// src/domain/burn-alerts.ts's; evaluation is in src/jobs/burn-alerts.ts.
import { Type, type Static } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { notFound, validationError } from '../../errors.js';
import { shortId } from '../../domain/ids.js';
import { MAX_NOTIFICATION_RECIPIENTS, NotificationRecipientSchema, saveNotificationRecipients } from '../../domain/notification-recipients.js';
import { ApiError } from '../../errors.js';
import { ALERT_TYPES, MAX_DESCRIPTION, MAX_THRESHOLD, MIN_BUDGET_RATE_WINDOW, burnAlertDetail, burnAlertListItem, checkAlert, checkRecipients, deleteBurnAlert, getAlertState, type AlertType, type BurnAlertBody, type BurnAlertObject } from '../../domain/burn-alerts.js';

import type { ApiContext, App } from '../context.js';
import { findOwned, sendCreated, sendDeleted } from '../resource.js';
import { bodyObject, isObject, Problems } from '../../validation.js';
import { getSloObject, sloScope, type SloObject, type SloScope } from '../../domain/slos.js';
import { SlugParams, itemParams } from './schemas.js';
import { BURN_ALERT_KIND } from '../../domain/kinds.js';

const tags = ['Burn Alerts'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_slos' } as const;

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
      return Promise.all(alerts.map(async (a) => burnAlertListItem(a, (await getAlertState(store, a.id)).triggered)));
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
      return sendCreated(reply, await burnAlertDetail(store, created));
    },
  );

  app.get(
    '/1/burn_alerts/:datasetSlug/:burnAlertId',
    { schema: { tags, security, params: ItemParams, response: { 200: Detail } }, config: { auth } },
    async (request) => {
      const scope = await sloScope(store, envOf(request), request.params.datasetSlug);
      return burnAlertDetail(store, (await findAlert(scope, request.params.burnAlertId)).alert);
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
      return burnAlertDetail(store, updated);
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
