// /1/burn_alerts/{datasetSlug|__all__}: list per SLO (`?slo_id=` required; items without
// recipients), create (201), get, full-replacement PUT, DELETE (204). Every route needs Manage
// SLOs (`manage_slos`). The rules of an alert (the decisions) and its answers are
// src/domain/burn-alerts.ts's; evaluation is in src/jobs/burn-alerts.ts.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envOf } from '../../http/auth.js';
import { notFound, validationError } from '../../errors.js';
import { MAX_NOTIFICATION_RECIPIENTS, NotificationRecipientSchema } from '../../domain/notification-recipients.js';
import { ALERT_TYPES, MAX_DESCRIPTION, MAX_THRESHOLD, MIN_BUDGET_RATE_WINDOW, burnAlertDetail, burnAlertListItem, deleteBurnAlert, findBurnAlert, getAlertState, listSloBurnAlerts, newBurnAlert, parseBurnAlert, type AlertType, type BurnAlertBody } from '../../domain/burn-alerts.js';
import type { ApiContext, App } from '../context.js';
import { sendCreated, sendDeleted } from '../resource.js';
import { getSloObject, sloScope, type SloScope } from '../../domain/slos.js';
import { SlugParams, itemParams, orNull } from './schemas.js';
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
// The bodies' schemas validate them (ajv); what they cannot say is parseBurnAlert's
// (src/domain/burn-alerts.ts: checkAlert, checkRecipients): the fields an alert type needs and refuses, the
// window against the SLO's period, the recipients a body names; and the SLO it names.
const alertFields = {
  alert_type: Type.Optional(
    Type.Unsafe<AlertType | '' | null>({ type: ['string', 'null'], enum: [...ALERT_TYPES, '', null], default: 'exhaustion_time', description: '"" or null is exhaustion_time.' }),
  ),
  description: Type.Optional(orNull(Type.String({ maxLength: MAX_DESCRIPTION }))),
  exhaustion_minutes: Type.Optional(orNull(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Required by exhaustion_time alerts, refused by the others.' }))),
  budget_rate_window_minutes: Type.Optional(orNull(Type.Integer({ minimum: MIN_BUDGET_RATE_WINDOW, description: 'Required by budget_rate alerts, refused by the others; at most the SLO’s period.' }))),
  budget_rate_decrease_threshold_per_million: Type.Optional(orNull(Type.Integer({ minimum: 1, maximum: MAX_THRESHOLD, description: 'Required by budget_rate alerts, refused by the others.' }))),
  auto_investigate: Type.Optional(orNull(Type.Boolean({ default: false }))),
  // At least one, but `[]` is answered as a blank field (`missing`) by checkRecipients, where
  // minItems would make it `invalid`.
  recipients: Type.Array(NotificationRecipientSchema, { maxItems: MAX_NOTIFICATION_RECIPIENTS, description: 'At least one.' }),
};
const SloRef = Type.Object({ id: Type.String({ minLength: 1 }) });
const CreateInput = Type.Object({ ...alertFields, slo: SloRef });
const UpdateInput = Type.Object({ ...alertFields, slo: Type.Optional(Type.Unknown({ description: 'Ignored: an alert keeps its SLO.' })) });
const ItemParams = itemParams('burnAlertId');
const ListQuery = Type.Object({ slo_id: Type.Optional(Type.String()) });

export function registerBurnAlerts(app: App, ctx: ApiContext): void {
  const { store } = ctx;

  const findAlert = (scope: SloScope, id: string) => findBurnAlert(store, scope, id);
  // A path's 404 (its dataset, the alert) comes before a body's 422, as the handlers' lookups would make it.
  const pathFirst = async (request: FastifyRequest) => {
    const { datasetSlug, burnAlertId } = request.params as { datasetSlug: string; burnAlertId?: string };
    const scope = await sloScope(store, envOf(request), datasetSlug);
    if (burnAlertId !== undefined) await findAlert(scope, burnAlertId);
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
      const alerts = await listSloBurnAlerts(store, scope.env, slo.id);
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
        body: CreateInput,
        description: 'Creates a burn alert on the SLO `slo.id` (an SLO reachable from this path).',
        response: { 201: Detail },
      },
      preValidation: pathFirst,
      config: { auth },
    },
    async (request, reply) => {
      const { datasetSlug } = request.params as Static<typeof SlugParams>;
      const scope = await sloScope(store, envOf(request), datasetSlug);
      const input = request.body as Static<typeof CreateInput>;
      const slo = await getSloObject(store, scope, input.slo.id);
      const created = await store.createObject(newBurnAlert(scope.env, slo, await parseBurnAlert(store, scope.env.teamId, input, slo)));
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
        body: UpdateInput,
        description: 'Full replacement; `recipients` required, `slo` ignored. The alert type may change.',
        response: { 200: Detail },
      },
      preValidation: pathFirst,
      config: { auth },
    },
    async (request) => {
      const { datasetSlug, burnAlertId } = request.params as Static<typeof ItemParams>;
      const scope = await sloScope(store, envOf(request), datasetSlug);
      const { alert, slo } = await findAlert(scope, burnAlertId);
      const body = await parseBurnAlert(store, scope.env.teamId, request.body as Static<typeof UpdateInput>, slo);
      const updated = await store.updateObject<BurnAlertBody>(BURN_ALERT_KIND, alert.id, { body });
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
