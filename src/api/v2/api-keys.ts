// /2/teams/{team}/api-keys: ingest and configuration keys of the team's environments.
// The secret is in the create response only. Disabling or deleting a key takes effect on the
// next request: keys are read from the store on every request, never cached.
import { Type } from '@sinclair/typebox';
import { invalidField, notFound, validationError } from '../../errors.js';
import { CONFIGURATION_PERMISSIONS, INGEST_PERMISSIONS, normalisePermissions } from '../../domain/keys.js';
import { createKey } from '../../domain/tenancy.js';
import type { ApiKey, ConfigStore, KeyType, Team } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
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

function keyResource(teamSlug: string, key: ApiKey, secret?: string) {
  return {
    id: key.id,
    type: 'api-keys' as const,
    attributes: {
      key_type: key.keyType as 'ingest' | 'configuration',
      name: key.name,
      disabled: key.disabled,
      permissions: key.permissions,
      ...(key.timeToLive ? { time_to_live: key.timeToLive } : {}),
      ...(secret ? { secret } : {}),
      timestamps: { created: key.createdAt, updated: key.updatedAt },
    },
    relationships: { environment: { data: { id: key.environmentId!, type: 'environments' as const } } },
    links: { self: `/2/teams/${teamSlug}/api-keys/${key.id}` },
  };
}

/** Permission names a key type does not have are an error, not silently dropped. */
function checkPermissionNames(keyType: KeyType, permissions: Record<string, unknown> | undefined, field: string) {
  const allowed: readonly string[] = keyType === 'ingest' ? INGEST_PERMISSIONS : CONFIGURATION_PERMISSIONS;
  const wrong = Object.keys(permissions ?? {}).filter((p) => !allowed.includes(p));
  if (wrong.length) {
    throw validationError(
      wrong.map((p) => ({ field: `${field}.${p}`, code: 'invalid', description: `not a permission of ${keyType} keys` })),
    );
  }
}

async function findTeamKey(store: ConfigStore, team: Team, id: string): Promise<ApiKey> {
  const key = await store.getApiKey(id);
  if (!key || key.teamId !== team.id || key.keyType === 'management') throw notFound('API key');
  return key;
}

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
      return { data: items.map((k) => keyResource(team.slug, k)), links };
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
      if (attributes.time_to_live !== undefined) {
        if (attributes.key_type !== 'ingest') {
          throw invalidField('data.attributes.time_to_live', 'only ingest keys can expire');
        }
        if (Date.parse(attributes.time_to_live) <= now().getTime()) {
          throw invalidField('data.attributes.time_to_live', 'must be in the future');
        }
      }
      const { key, secret } = await createKey(store, {
        team,
        environment,
        keyType: attributes.key_type,
        name: attributes.name,
        permissions: attributes.permissions,
        disabled: attributes.disabled,
        timeToLive: attributes.time_to_live ? new Date(attributes.time_to_live).toISOString() : null,
      });
      return reply.code(201).send({ data: keyResource(team.slug, key, secret) });
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
      return { data: keyResource(team.slug, await findTeamKey(store, team, request.params.ID)) };
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
      const { name, disabled, permissions } = request.body.data.attributes;
      if (permissions && key.keyType === 'ingest') {
        throw invalidField('data.attributes.permissions', 'the permissions of an ingest key cannot be changed');
      }
      checkPermissionNames(key.keyType, permissions, 'data.attributes.permissions');
      const updated = await store.updateApiKey(key.id, {
        name,
        disabled,
        // Omitted permission values stay as they were.
        permissions: permissions ? normalisePermissions(key.keyType, { ...key.permissions, ...permissions }) : undefined,
      });
      return { data: keyResource(team.slug, updated!) };
    },
  );

  app.delete(
    '/2/teams/:teamSlug/api-keys/:ID',
    { schema: { tags, security: [{ bearerAuth: ['api-keys:write'] }], params: TeamIdParams }, config: write },
    async (request, reply) => {
      const team = teamOf(request, request.params.teamSlug);
      const key = await findTeamKey(store, team, request.params.ID);
      await store.deleteApiKey(key.id);
      return reply.code(204).send();
    },
  );
}
