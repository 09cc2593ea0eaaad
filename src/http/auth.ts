// Authentication and authorisation for every route. A route states what it needs in its
// `config.auth`; the onRequest hook below resolves the key, checks it, applies the key's rate
// limit and leaves `request.auth` for the handler.
//
// Outcomes: no key, an unknown, disabled or expired key, or a key of the wrong kind → 401;
// a valid key without the route's permission (or scope) → 403. Resources of another
// environment or team are not found by the handlers (they look up inside `request.auth`) → 404.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { resolveBearer, resolveTeamHeader, type Permission, type Rejection, type Scope } from '../domain/keys.js';
import type { ApiKey, ConfigStore, Environment, Team } from '../stores/config/types.js';
import { INVALID_KEY } from './errors.js';
import { ApiError } from '../errors.js';
import type { RateLimiter } from './rate-limit.js';
import type { RatePolicy } from '../settings.js';
import { resolveSession } from '../domain/sessions.js';
import { isOwnOrigin, sessionToken } from './session.js';

export type AuthRule =
  | { kind: 'none' }
  /**
   * `X-Honeycomb-Team` / `X-Service-Team`: configuration keys, and ingest keys where `ingest` is set.
   * `firehose`: `X-Amz-Firehose-Access-Key` too, ahead of the others (Kinesis Firehose delivery).
   */
  | {
      kind: 'team';
      ingest?: boolean;
      firehose?: boolean;
      permission?: Permission | readonly Permission[];
      rate?: 'api' | 'ingest';
      legacyErrors?: boolean;
      /** Ingest 429s carry Retry-After (OTLP clients read it); /1/ ingest routes answer without, as documented. */
      retryAfter?: boolean;
    }
  /** `Authorization: Bearer id:secret` with a management key. */
  | { kind: 'management'; scope?: Scope };

export interface AuthContext {
  key: ApiKey;
  team: Team;
  /** The key's environment; null for management keys. */
  environment: Environment | null;
  /** The key came from the web UI's session cookie, not a header (src/http/session.ts). */
  viaSession: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRule;
  }
  interface FastifyRequest {
    auth: AuthContext | null;
  }
}

export const REJECTION_TEXT: Record<Rejection, string> = {
  missing: 'unknown API key - check your credentials',
  unknown: 'unknown API key - check your credentials',
  disabled: 'API key is disabled',
  expired: 'API key has expired',
};

/** Environment of a team-header key, or the team of a management key, from the request. */
export function envOf(request: FastifyRequest): Environment {
  const env = request.auth?.environment;
  if (!env) throw new Error('route without an environment-scoped key');
  return env;
}

export function teamHeader(request: FastifyRequest, firehose = false): string | undefined {
  const h = (firehose ? request.headers['x-amz-firehose-access-key'] || undefined : undefined) ??
    request.headers['x-honeycomb-team'] ?? request.headers['x-service-team'];
  return Array.isArray(h) ? h[0] : h;
}

export interface AuthDeps {
  store: ConfigStore;
  limiter: RateLimiter;
  now: () => Date;
  apiRate: RatePolicy | null;
  ingestRate: RatePolicy | null;
}

/** Where authenticate() puts the rate-limit headers (a reply's, or gRPC metadata). */
export type HeaderSink = (name: string, value: string) => void;

/**
 * Checks a credential against a rule: resolves the key, applies its rate limit and checks the
 * rule's permission or scope. Throws ApiError (401, 403, 404, 429) in the rule's dialect.
 * `found` is told the key's context as soon as it is known (before the rate limit and the
 * permission are checked). The onRequest hook below uses it for every route; OTLP over gRPC,
 * which has no route, calls it directly (through the ApiContext). `session`: the web UI's
 * session token, which stands in for the credential (the hook passes it only for team routes
 * other than ingest, without a key header, on requests that passed the Origin check).
 */
export async function authenticate(
  deps: AuthDeps,
  rule: Exclude<AuthRule, { kind: 'none' }>,
  credential: string | undefined,
  header: HeaderSink = () => undefined,
  opts: { teamSlug?: string; found?: (auth: AuthContext) => void; session?: string } = {},
): Promise<AuthContext> {
  const legacy = rule.kind === 'team' && rule.legacyErrors ? ({ dialect: 'legacy' } as const) : {};
  const now = deps.now();

  let key: ApiKey | Rejection;
  const viaSession = rule.kind === 'team' && opts.session !== undefined;
  if (rule.kind === 'management') {
    key = await resolveBearer(deps.store, credential, now);
  } else if (viaSession) {
    key = await resolveSession(deps.store, opts.session!, now);
  } else {
    key = await resolveTeamHeader(deps.store, credential, now);
    if (typeof key !== 'string' && key.keyType === 'ingest' && !rule.ingest) {
      throw new ApiError(401, 'this endpoint requires a configuration key', legacy);
    }
  }
  if (typeof key === 'string') {
    const unknown = rule.kind === 'management' && (key === 'missing' || key === 'unknown');
    throw new ApiError(401, unknown ? INVALID_KEY : REJECTION_TEXT[key], legacy);
  }

  const team = await deps.store.getTeam(key.teamId);
  const environment = (key.environmentId && (await deps.store.getEnvironmentById(key.environmentId))) || null;
  if (!team || (rule.kind === 'team' && !environment)) throw new ApiError(401, REJECTION_TEXT.unknown, legacy);
  const auth: AuthContext = { key, team, environment, viaSession };
  opts.found?.(auth);

  const policy = rule.kind === 'team' && rule.rate === 'ingest' ? deps.ingestRate : deps.apiRate;
  if (policy) {
    const bucket = `${rule.kind === 'team' ? (rule.rate ?? 'api') : 'api'}:${key.id}`;
    const d = deps.limiter.take(bucket, policy);
    header('ratelimit', d.header);
    header('ratelimitpolicy', d.policyHeader);
    if (!d.allowed) {
      // Ingest 429s carry no Retry-After (as documented), unless the rule asks for it (OTLP); the others do.
      const ingest = rule.kind === 'team' && rule.rate === 'ingest';
      throw ingest
        ? new ApiError(429, 'Request dropped due to rate limiting.', { dialect: 'legacy', retryAfter: rule.retryAfter ? d.retryAfter : undefined })
        : new ApiError(429, 'You have exceeded your rate limit.', {
            retryAfter: d.retryAfter,
            detail: `Please try again after ${new Date(now.getTime() + d.retryAfter * 1000).toISOString()}.`,
          });
    }
  }

  if (rule.kind === 'management') {
    // Another team's path is not found, whatever the key's scopes.
    if (opts.teamSlug !== undefined && opts.teamSlug !== team.slug) throw new ApiError(404, 'team not found');
    if (rule.scope && !key.scopes.includes(rule.scope)) {
      throw new ApiError(403, `this management key lacks the ${rule.scope} scope`);
    }
  } else if (rule.permission && key.keyType === 'configuration') {
    const missing = [rule.permission].flat().find((p) => !key.permissions[p]);
    if (missing) throw new ApiError(403, `this API key lacks the ${missing} permission`, legacy);
  }
  return auth;
}

export function authHook(deps: AuthDeps) {
  return async function authenticateRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    request.auth = null;
    const rule = request.routeOptions.config?.auth;
    if (!rule || rule.kind === 'none') return;
    const credential = rule.kind === 'management' ? request.headers.authorization : teamHeader(request, rule.firehose);
    // The web UI's session stands in for the key header, on the UI's own requests only.
    const session = rule.kind === 'team' && rule.rate !== 'ingest' && credential === undefined ? sessionToken(request) : undefined;
    if (session !== undefined && !isOwnOrigin(request)) {
      const legacy = rule.kind === 'team' && rule.legacyErrors ? ({ dialect: 'legacy' } as const) : {};
      throw new ApiError(403, "cross-site request refused: the session cookie is accepted only from this server's own pages", legacy);
    }
    await authenticate(deps, rule, credential, (name, value) => reply.header(name, value), {
      teamSlug: (request.params as { teamSlug?: string } | undefined)?.teamSlug,
      found: (auth) => (request.auth = auth),
      session,
    });
  };
}
