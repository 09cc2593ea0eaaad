// GET /2/auth: the management key making the request, with its team.
import { Type } from '@sinclair/typebox';
import { managementAuthAnswer } from '../../domain/keys.js';
import type { ApiContext, App } from '../context.js';

const AuthV2Response = Type.Object({
  data: Type.Object({
    id: Type.String(),
    type: Type.Literal('api-keys'),
    attributes: Type.Object({
      name: Type.String(),
      key_type: Type.Literal('management'),
      disabled: Type.Boolean(),
      scopes: Type.Array(Type.String()),
      timestamps: Type.Object({ created: Type.String(), updated: Type.String() }),
    }),
    relationships: Type.Object({
      team: Type.Object({ data: Type.Object({ id: Type.String(), type: Type.Literal('teams') }) }),
    }),
  }),
  included: Type.Array(
    Type.Object({ id: Type.String(), type: Type.String(), attributes: Type.Record(Type.String(), Type.Unknown()) }),
  ),
});

export function registerAuthV2(app: App, _ctx: ApiContext): void {
  app.get(
    '/2/auth',
    {
      schema: { tags: ['Auth'], security: [{ bearerAuth: [] }], response: { 200: AuthV2Response } },
      config: { auth: { kind: 'management' } },
    },
    async (request) => {
      const { key, team } = request.auth!;
      return managementAuthAnswer(key, team);
    },
  );
}
