// /2/teams/{team}/environments: list (cursor pages), create, get, PATCH, DELETE.
// The Terraform provider always sends `name` and `slug` (empty when it has nothing to say), so:
// create accepts a `slug` that is empty or the one the name gives (the slug is always derived);
// PATCH accepts a `name` and `slug` that are empty or the current ones, and refuses a real
// change of either with a 422 (an environment is never renamed).
import { Type } from '@sinclair/typebox';
import { invalidField, notFound } from '../../errors.js';
import { createEnvironment, deleteEnvironment, ENVIRONMENT_COLORS } from '../../domain/environments.js';
import type { Environment as EnvRecord } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { checkBodyId, PageQuery, PaginationLinks, pageOut, readPage, TeamIdParams, TeamParams, teamOf } from './jsonapi.js';

const Color = Type.Union(ENVIRONMENT_COLORS.map((c) => Type.Literal(c)));
const Environment = Type.Object({
  id: Type.String(),
  type: Type.Literal('environments'),
  links: Type.Object({ self: Type.String() }),
  attributes: Type.Object({
    name: Type.String(),
    description: Type.String(),
    color: Type.String(),
    slug: Type.String(),
    settings: Type.Object({ delete_protected: Type.Boolean() }),
  }),
});
const CreateEnvironmentRequest = Type.Object({
  data: Type.Object({
    type: Type.Literal('environments'),
    attributes: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 255 }),
        slug: Type.Optional(Type.String({ description: 'Derived from the name: only "" or that slug is accepted.' })),
        description: Type.Optional(Type.String({ maxLength: 255 })),
        color: Type.Optional(Color),
      },
      { additionalProperties: false },
    ),
  }),
});
const UpdateEnvironmentRequest = Type.Object({
  data: Type.Object({
    id: Type.String(),
    type: Type.Literal('environments'),
    attributes: Type.Object(
      {
        name: Type.Optional(Type.String({ description: 'Cannot change: only "" or the current name is accepted.' })),
        slug: Type.Optional(Type.String({ description: 'Cannot change: only "" or the current slug is accepted.' })),
        description: Type.Optional(Type.String({ maxLength: 255 })),
        color: Type.Optional(Color),
        settings: Type.Optional(
          Type.Object({ delete_protected: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
        ),
      },
      { additionalProperties: false },
    ),
  }),
});

function environmentResource(teamSlug: string, env: EnvRecord) {
  return {
    id: env.id,
    type: 'environments' as const,
    links: { self: `/2/teams/${teamSlug}/environments/${env.id}` },
    attributes: {
      name: env.name,
      description: env.description,
      color: env.color,
      slug: env.slug,
      settings: { delete_protected: env.deleteProtected },
    },
  };
}

const tags = ['Environments'];
const read = { auth: { kind: 'management', scope: 'environments:read' } } as const;
const write = { auth: { kind: 'management', scope: 'environments:write' } } as const;

export function registerEnvironments(app: App, { store }: ApiContext): void {
  app.get(
    '/2/teams/:teamSlug/environments',
    {
      schema: {
        tags, security: [{ bearerAuth: ['environments:read'] }], params: TeamParams, querystring: PageQuery,
        response: { 200: Type.Object({ data: Type.Array(Environment), links: PaginationLinks }) },
      },
      config: read,
    },
    async (request) => {
      const team = teamOf(request, request.params.teamSlug);
      const page = readPage(request.query);
      const rows = await store.listEnvironments(team.id, { after: page.after, limit: page.size + 1 });
      const { items, links } = pageOut(rows, page, `/2/teams/${team.slug}/environments`);
      return { data: items.map((e) => environmentResource(team.slug, e)), links };
    },
  );

  app.post(
    '/2/teams/:teamSlug/environments',
    {
      schema: {
        tags, security: [{ bearerAuth: ['environments:write'] }], params: TeamParams, body: CreateEnvironmentRequest,
        response: { 201: Type.Object({ data: Environment }) },
      },
      config: write,
    },
    async (request, reply) => {
      const team = teamOf(request, request.params.teamSlug);
      const env = await createEnvironment(store, team, request.body.data.attributes);
      return reply.code(201).send({ data: environmentResource(team.slug, env) });
    },
  );

  app.get(
    '/2/teams/:teamSlug/environments/:ID',
    {
      schema: {
        tags, security: [{ bearerAuth: ['environments:read'] }], params: TeamIdParams,
        response: { 200: Type.Object({ data: Environment }) },
      },
      config: read,
    },
    async (request) => {
      const team = teamOf(request, request.params.teamSlug);
      const env = await store.getEnvironment(team.id, request.params.ID);
      if (!env) throw notFound('environment');
      return { data: environmentResource(team.slug, env) };
    },
  );

  app.patch(
    '/2/teams/:teamSlug/environments/:ID',
    {
      schema: {
        tags, security: [{ bearerAuth: ['environments:write'] }], params: TeamIdParams, body: UpdateEnvironmentRequest,
        response: { 200: Type.Object({ data: Environment }) },
      },
      config: write,
    },
    async (request) => {
      const team = teamOf(request, request.params.teamSlug);
      const env = await store.getEnvironment(team.id, request.params.ID);
      if (!env) throw notFound('environment');
      checkBodyId(request.body.data.id, env.id);
      const { name, slug, description, color, settings } = request.body.data.attributes;
      if (name !== undefined && name !== '' && name !== env.name) {
        throw invalidField('data.attributes.name', `cannot be changed (the environment is named ${JSON.stringify(env.name)}); create another environment`);
      }
      if (slug !== undefined && slug !== '' && slug !== env.slug) {
        throw invalidField('data.attributes.slug', `cannot be changed (it is ${JSON.stringify(env.slug)}); it is derived from the name`);
      }
      const updated = await store.updateEnvironment(team.id, env.id, {
        description,
        color,
        deleteProtected: settings?.delete_protected,
      });
      return { data: environmentResource(team.slug, updated!) };
    },
  );

  app.delete(
    '/2/teams/:teamSlug/environments/:ID',
    { schema: { tags, security: [{ bearerAuth: ['environments:write'] }], params: TeamIdParams }, config: write },
    async (request, reply) => {
      const team = teamOf(request, request.params.teamSlug);
      await deleteEnvironment(store, team, request.params.ID);
      return reply.code(204).send();
    },
  );
}
