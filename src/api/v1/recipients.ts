// /1/recipients: team-wide notification targets. List (the whole team's), create (201), get,
// full-replacement PUT, DELETE (204), and GET /1/recipients/{id}/triggers (the team's triggers
// in every environment that notify the recipient). Every route needs the configuration-key
// permission Manage Recipients (`manage_recipients`), reads included, like the Columns routes
// (Honeycomb documents a 403 only on create; the SPEC gives the permission for the whole area).
//
// Recipients belong to the key's team, not its environment: a key of any environment of the
// team sees and changes the same recipients; another team's recipient answers 404.
//
// The rules (per-type details, duplicates, secrets, in-use check) live in
// src/domain/recipients.ts. Decisions made here:
// - PUT is a full replacement of `details`; `type` is required and cannot change (422 on
//   `type`). Read-only fields in the body (`id`, `created_at`, `updated_at`) are ignored.
// - A duplicate (same type and destination, see the domain module) → 409 on POST and PUT.
// - DELETE while a trigger or burn alert of the team uses the recipient → 409.
// - `/triggers` answers the triggers as the Triggers API does (triggerResponses).
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { createRecipient, deleteRecipient, getRecipient, listRecipients, recipientResponse, triggersUsingRecipient, updateRecipient } from '../../domain/recipients.js';
import type { ApiContext, App } from '../context.js';
import { RecipientInputSchema, RecipientSchema } from './shapes/recipients.js';
import { sendCreated, sendDeleted } from '../resource.js';
import { triggerResponses } from '../../domain/trigger-bodies.js';

const tags = ['Recipients'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_recipients' } as const;

const ItemParams = Type.Object({ recipientId: Type.String() });

const Conflict = Type.Object(
  {
    error: Type.String(),
    status: Type.Number(),
    type: Type.String(),
    title: Type.String(),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String()),
  },
  { description: 'A duplicate recipient, or (DELETE) one in use by triggers, burn alerts or signals' },
);
const conflictResponse = { description: 'Conflict', content: { 'application/problem+json': { schema: Conflict } } };
const TriggerList = Type.Array(Type.Object({ id: Type.String() }, { additionalProperties: true }), {
  description: 'The triggers of the whole team that notify this recipient.',
});

function teamOf(request: FastifyRequest): string {
  const team = request.auth?.team;
  if (!team) throw new Error('route without a team key');
  return team.id;
}

export function registerRecipients(app: App, { store }: ApiContext): void {
  app.get(
    '/1/recipients',
    {
      schema: { tags, security, description: 'Every recipient of the team.', response: { 200: Type.Array(RecipientSchema) } },
      config: { auth },
    },
    async (request) => (await listRecipients(store, teamOf(request))).map(recipientResponse),
  );

  app.post(
    '/1/recipients',
    {
      schema: {
        tags,
        security,
        body: RecipientInputSchema,
        description: 'Creates a team-wide recipient. 409 when one of the same type and destination exists.',
        response: { 201: RecipientSchema, 409: conflictResponse },
      },
      config: { auth },
    },
    async (request, reply) => {
      const created = await createRecipient(store, teamOf(request), request.body as { type?: unknown; details?: unknown });
      return sendCreated(reply, recipientResponse(created));
    },
  );

  app.get(
    '/1/recipients/:recipientId',
    { schema: { tags, security, params: ItemParams, response: { 200: RecipientSchema } }, config: { auth } },
    async (request) => recipientResponse(await getRecipient(store, teamOf(request), request.params.recipientId)),
  );

  app.put(
    '/1/recipients/:recipientId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        body: RecipientInputSchema,
        description:
          'Full replacement of the details; `type` cannot change (422). Changes where every trigger and burn alert using it notifies.',
        response: { 200: RecipientSchema, 409: conflictResponse },
      },
      config: { auth },
    },
    async (request) =>
      recipientResponse(
        await updateRecipient(store, teamOf(request), request.params.recipientId, request.body as { type?: unknown; details?: unknown }),
      ),
  );

  app.delete(
    '/1/recipients/:recipientId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        description: '409 while a trigger or burn alert of the team uses the recipient.',
        response: { 204: Type.Null({ description: 'Deleted' }), 409: conflictResponse },
      },
      config: { auth },
    },
    async (request, reply) => {
      await deleteRecipient(store, teamOf(request), request.params.recipientId);
      return sendDeleted(reply);
    },
  );

  app.get(
    '/1/recipients/:recipientId/triggers',
    {
      schema: { tags, security, params: ItemParams, response: { 200: TriggerList } },
      config: { auth },
    },
    async (request) => {
      const teamId = teamOf(request);
      const { recipientId } = request.params;
      await getRecipient(store, teamId, recipientId);
      return triggerResponses(store, await triggersUsingRecipient(store, teamId, recipientId));
    },
  );
}
