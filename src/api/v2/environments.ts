// /2/teams/{team}/environments: list (cursor pages), create, get, PATCH, DELETE. What a body may
// say (the name and slug a client echoes), delete protection and how an environment is answered
// (the decisions): src/domain/environments.ts.
import { Type } from '@sinclair/typebox';
import { createEnvironment, deleteEnvironment, environmentAnswer, environmentChange, ENVIRONMENT_COLORS, findEnvironment } from '../../domain/environments.js';
import type { ApiContext, App } from '../context.js';
import { sendCreated } from '../resource.js';
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
      return { data: items.map((e) => environmentAnswer(team.slug, e)), links };
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
      return sendCreated(reply, { data: environmentAnswer(team.slug, env) });
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
      return { data: environmentAnswer(team.slug, await findEnvironment(store, team, request.params.ID)) };
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
      const env = await findEnvironment(store, team, request.params.ID);
      checkBodyId(request.body.data.id, env.id);
      const updated = await store.updateEnvironment(team.id, env.id, environmentChange(env, request.body.data.attributes));
      return { data: environmentAnswer(team.slug, updated!) };
    },
  );

  app.delete(
    '/2/teams/:teamSlug/environments/:ID',
    { schema: { tags, security: [{ bearerAuth: ['environments:write'] }], params: TeamIdParams }, config: write },
    async (request, reply) => {
      const team = teamOf(request, request.params.teamSlug);
      await deleteEnvironment(store, team, request.params.ID);
      // Not sendDeleted: send(null) would get the JSON:API content-type (index.ts's onSend); a 204 has none.
      return reply.code(204).send();
    },
  );
}
