// /2/teams/{team}/api-keys: ingest and configuration keys of the team's environments.
// The secret is in the create response only. Disabling or deleting a key takes effect on the
// next request: keys are read from the store on every request, never cached. What a body may say
// and how a key is answered (the decisions): src/domain/api-keys.ts.
import { Type } from '@sinclair/typebox';
import { notFound } from '../../errors.js';
import { CONFIGURATION_PERMISSIONS } from '../../domain/keys.js';
import { apiKeyAnswer, apiKeyChange, checkPermissionNames, findTeamKey, keyTimeToLive } from '../../domain/api-keys.js';
import { createKey } from '../../domain/tenancy.js';
import type { KeyType } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { sendCreated } from '../resource.js';
import { checkBodyId, PageQuery, PaginationLinks, pageOut, readPage, TeamIdParams, TeamParams, teamOf } from './jsonapi.js';

const Permissions = Type.Object(
  Object.fromEntries(CONFIGURATION_PERMISSIONS.map((p) => [p, Type.Optional(Type.Boolean())])),
  { additionalProperties: false },
);
const EnvironmentRelationship = Type.Object({
  data: Type.Object({ id: Type.String(), type: Type.Literal('environments') }),
});
const ApiKeyObject = Type.Object({
  id: Type.String(),
  type: Type.Literal('api-keys'),
  attributes: Type.Object({
    key_type: Type.Union([Type.Literal('ingest'), Type.Literal('configuration')]),
    name: Type.String(),
    disabled: Type.Boolean(),
    permissions: Type.Record(Type.String(), Type.Boolean()),
    time_to_live: Type.Optional(Type.String()),
    secret: Type.Optional(Type.String()),
    timestamps: Type.Object({ created: Type.String(), updated: Type.String() }),
  }),
  relationships: Type.Object({ environment: EnvironmentRelationship }),
  links: Type.Object({ self: Type.String() }),
});
const ApiKeyCreateRequest = Type.Object({
  data: Type.Object({
    type: Type.Literal('api-keys'),
    attributes: Type.Object(
      {
        key_type: Type.Union([Type.Literal('ingest'), Type.Literal('configuration')]),
        name: Type.String({ minLength: 1, maxLength: 100 }),
        disabled: Type.Optional(Type.Boolean()),
        permissions: Type.Optional(Permissions),
        time_to_live: Type.Optional(Type.String({ format: 'date-time' })),
      },
      { additionalProperties: false },
    ),
    relationships: Type.Object({ environment: EnvironmentRelationship }),
  }),
});
const ApiKeyUpdateRequest = Type.Object({
  data: Type.Object({
    id: Type.String(),
    type: Type.Literal('api-keys'),
    attributes: Type.Object(
      {
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        disabled: Type.Optional(Type.Boolean()),
        permissions: Type.Optional(Permissions),
      },
      { additionalProperties: false },
    ),
  }),
});
const ListQuery = Type.Intersect([
  PageQuery,
  Type.Object({ 'filter[type]': Type.Optional(Type.Union([Type.Literal('ingest'), Type.Literal('configuration')])) }),
]);

const tags = ['API Keys'];
const read = { auth: { kind: 'management', scope: 'api-keys:read' } } as const;
const write = { auth: { kind: 'management', scope: 'api-keys:write' } } as const;

export function registerApiKeys(app: App, { store, now }: ApiContext): void {
  app.get(
    '/2/teams/:teamSlug/api-keys',
    {
      schema: {
        tags, security: [{ bearerAuth: ['api-keys:read'] }], params: TeamParams, querystring: ListQuery,
        response: { 200: Type.Object({ data: Type.Array(ApiKeyObject), links: PaginationLinks }) },
      },
      config: read,
    },
    async (request) => {
      const team = teamOf(request, request.params.teamSlug);
      const page = readPage(request.query);
      const filterType = request.query['filter[type]'];
      // Management keys are never listed here.
      const keyTypes: KeyType[] = filterType ? [filterType] : ['ingest', 'configuration'];
      const rows = await store.listApiKeys(team.id, { keyTypes }, { after: page.after, limit: page.size + 1 });
      const extra = filterType ? `filter[type]=${filterType}&` : '';
      const { items, links } = pageOut(rows, page, `/2/teams/${team.slug}/api-keys`, extra);
      return { data: items.map((k) => apiKeyAnswer(team.slug, k)), links };
    },
  );

  app.post(
    '/2/teams/:teamSlug/api-keys',
    {
      schema: {
        tags, security: [{ bearerAuth: ['api-keys:write'] }], params: TeamParams, body: ApiKeyCreateRequest,
        response: { 201: Type.Object({ data: ApiKeyObject }) },
      },
      config: write,
    },
    async (request, reply) => {
      const team = teamOf(request, request.params.teamSlug);
      const { attributes, relationships } = request.body.data;
      const environment = await store.getEnvironment(team.id, relationships.environment.data.id);
      if (!environment) throw notFound('environment');
      checkPermissionNames(attributes.key_type, attributes.permissions, 'data.attributes.permissions');
      const timeToLive = keyTimeToLive(attributes.key_type, attributes.time_to_live, now().getTime(), 'data.attributes.time_to_live');
      const { key, secret } = await createKey(store, {
        team,
        environment,
        keyType: attributes.key_type,
        name: attributes.name,
        permissions: attributes.permissions,
        disabled: attributes.disabled,
        timeToLive,
      });
      return sendCreated(reply, { data: apiKeyAnswer(team.slug, key, secret) });
    },
  );

  app.get(
    '/2/teams/:teamSlug/api-keys/:ID',
    {
      schema: {
        tags, security: [{ bearerAuth: ['api-keys:read'] }], params: TeamIdParams,
        response: { 200: Type.Object({ data: ApiKeyObject }) },
      },
      config: read,
    },
    async (request) => {
      const team = teamOf(request, request.params.teamSlug);
      return { data: apiKeyAnswer(team.slug, await findTeamKey(store, team, request.params.ID)) };
    },
  );

  app.patch(
    '/2/teams/:teamSlug/api-keys/:ID',
    {
      schema: {
        tags, security: [{ bearerAuth: ['api-keys:write'] }], params: TeamIdParams, body: ApiKeyUpdateRequest,
        response: { 200: Type.Object({ data: ApiKeyObject }) },
      },
      config: write,
    },
    async (request) => {
      const team = teamOf(request, request.params.teamSlug);
      const key = await findTeamKey(store, team, request.params.ID);
      checkBodyId(request.body.data.id, key.id);
      const updated = await store.updateApiKey(key.id, apiKeyChange(key, request.body.data.attributes, 'data.attributes.permissions'));
      return { data: apiKeyAnswer(team.slug, updated!) };
    },
  );

  app.delete(
    '/2/teams/:teamSlug/api-keys/:ID',
    { schema: { tags, security: [{ bearerAuth: ['api-keys:write'] }], params: TeamIdParams }, config: write },
    async (request, reply) => {
      const team = teamOf(request, request.params.teamSlug);
      const key = await findTeamKey(store, team, request.params.ID);
      await store.deleteApiKey(key.id);
      // Not sendDeleted: send(null) would get the JSON:API content-type (index.ts's onSend); a 204 has none.
      return reply.code(204).send();
    },
  );
}
