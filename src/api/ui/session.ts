// The web UI's sign-in and sign-out (Waggle extension; docs/web-ui.md):
//
//   POST   /1/ui/session   {"key": "<configuration key>"} → 200 with what /1/auth says of the key,
//                          and the session cookie (src/http/session.ts)
//   DELETE /1/ui/session   ends the session and clears the cookie → 204
//
// Both must come from the server's own pages (the Origin check): another site can neither sign a
// browser in with a key of its choosing (login CSRF) nor sign it out. Everything else the UI does
// goes through the public API, with the cookie accepted in place of the key header (auth.ts).
// The key travels once, in this request's body (never in a URL); request bodies are not logged.
import { Type } from '@sinclair/typebox';
import { REJECTION_TEXT } from '../../http/auth.js';
import { ApiError } from '../../errors.js';
import { clearSessionCookie, isOwnOrigin, sessionToken, setSessionCookie } from '../../http/session.js';
import { apiKeyAccess } from '../../domain/keys.js';
import { createSession, deleteSession } from '../../domain/sessions.js';
import type { ApiContext, App } from '../context.js';

const tags = ['Web UI (Waggle extension)'];

const SignedIn = Type.Object({
  team: Type.Object({ name: Type.String(), slug: Type.String() }),
  environment: Type.Object({ name: Type.String(), slug: Type.String() }),
  api_key_access: Type.Record(Type.String(), Type.Boolean()),
  expires_at: Type.String({ format: 'date-time' }),
});

const REFUSED: Record<string, string> = {
  ...REJECTION_TEXT,
  ingest: 'sign in with a configuration key: an ingest key can only send events',
};

const crossSite = () => new ApiError(403, 'cross-site request refused: sign-in and sign-out are accepted only from this server\'s own pages');

export function registerSession(app: App, ctx: ApiContext): void {
  const { store, now, settings } = ctx;

  app.post(
    '/1/ui/session',
    {
      schema: {
        tags,
        description:
          'Signs the web UI in with a configuration key: sets the HttpOnly, SameSite=Strict session cookie. ' +
          'Only from the server\'s own pages (the Origin header must be the server\'s origin).',
        body: Type.Object({ key: Type.String({ minLength: 1, maxLength: 200, description: 'A configuration key (the X-Honeycomb-Team value).' }) }),
        response: { 200: SignedIn },
      },
      config: { auth: { kind: 'none' } },
      // Another site's request is refused (403) before its body is read for problems (422).
      preValidation: async (request) => {
        if (!isOwnOrigin(request)) throw crossSite();
      },
    },
    async (request, reply) => {
      const made = await createSession(store, request.body.key, now(), settings.sessionTtlHours);
      if (typeof made === 'string') throw new ApiError(401, REFUSED[made]);
      const { key, session } = made;
      const team = await store.getTeam(key.teamId);
      const env = await store.getEnvironmentById(key.environmentId!);
      if (!team || !env) throw new ApiError(401, REFUSED.unknown);
      setSessionCookie(request, reply, session.token, session.expiresAt);
      reply.header('cache-control', 'no-store');
      return {
        team: { name: team.name, slug: team.slug },
        environment: { name: env.name, slug: env.slug },
        api_key_access: apiKeyAccess(key),
        expires_at: session.expiresAt.toISOString(),
      };
    },
  );

  app.delete(
    '/1/ui/session',
    {
      schema: { tags, description: 'Signs the web UI out: ends the session and clears its cookie.', response: { 204: Type.Null() } },
      config: { auth: { kind: 'none' } },
    },
    async (request, reply) => {
      if (!isOwnOrigin(request)) throw crossSite();
      const token = sessionToken(request);
      if (token) await deleteSession(store, token);
      clearSessionCookie(request, reply);
      return reply.code(204).send(null);
    },
  );
}
