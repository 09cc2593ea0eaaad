// GET /1/auth: what the presented ingest or configuration key is and may do.
import { Type } from '@sinclair/typebox';
import { keyAuthAnswer } from '../../domain/keys.js';
import type { ApiContext, App } from '../context.js';

const AuthResponse = Type.Object({
  id: Type.String(),
  type: Type.Union([Type.Literal('configuration'), Type.Literal('ingest')]),
  time_to_live: Type.Optional(Type.String()),
  api_key_access: Type.Record(Type.String(), Type.Boolean()),
  environment: Type.Object({ name: Type.String(), slug: Type.String() }),
  team: Type.Object({ name: Type.String(), slug: Type.String() }),
});

export function registerAuth(app: App, _ctx: ApiContext): void {
  app.get(
    '/1/auth',
    {
      schema: { tags: ['Auth'], security: [{ configuration_key: [] }, { ingest_key: [] }], response: { 200: AuthResponse } },
      config: { auth: { kind: 'team', ingest: true } },
    },
    async (request) => {
      const { key, team, environment } = request.auth!;
      return keyAuthAnswer(key, team, environment);
    },
  );
}
