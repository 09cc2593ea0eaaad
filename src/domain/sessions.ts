// Web UI sessions. Signing in with a configuration key makes a session: a random token that the
// browser keeps in a signed, HttpOnly, SameSite=Strict cookie (src/http/session.ts). The server
// keeps, per session, only the key's *id* and an expiry, under the SHA-256 of the token: the key's
// secret is never stored, the token is never stored, and a session works exactly while its key
// does (disabling or deleting the key ends it at once, since keys are read on every request).
// Sessions live in the configuration store (object kind `ui_session`), so every node sharing the
// store accepts them and they survive a restart; deleting the key's environment deletes them.
import { randomBytes } from 'node:crypto';
import { resolveTeamHeader, type Rejection } from './keys.js';
import { sha256 } from './ids.js';
import { UniqueViolation, type ApiKey, type ConfigStore } from '../stores/config/types.js';
import { SECRET_KIND, SESSION_KIND } from './kinds.js';

interface SessionBody {
  keyId: string;
  /** ISO time after which the session is refused (and deleted). */
  expiresAt: string;
}

export interface NewSession {
  token: string;
  expiresAt: Date;
}

/**
 * Signs a configuration key in: a new session for it, or the reason the key is refused. Ingest
 * keys are refused (`ingest`): the UI reads and queries, which needs a configuration key.
 */
export async function createSession(
  store: ConfigStore,
  secret: string | undefined,
  now: Date,
  ttlHours: number,
): Promise<{ key: ApiKey; session: NewSession } | Rejection | 'ingest'> {
  const key = await resolveTeamHeader(store, secret, now);
  if (typeof key === 'string') return key;
  if (key.keyType !== 'configuration' || !key.environmentId) return 'ingest';
  await pruneExpired(store, key.teamId, now);
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + ttlHours * 3_600_000);
  await store.createObject<SessionBody>({
    id: sessionId(token),
    kind: SESSION_KIND,
    teamId: key.teamId,
    environmentId: key.environmentId,
    datasetId: null,
    scope: key.environmentId,
    uniqueKey: null,
    body: { keyId: key.id, expiresAt: expiresAt.toISOString() },
  });
  return { key, session: { token, expiresAt } };
}

/** The key a session token stands for, if the session is live and its key usable. */
export async function resolveSession(store: ConfigStore, token: string, now: Date): Promise<ApiKey | Rejection> {
  const obj = await store.getObject<SessionBody>(SESSION_KIND, sessionId(token));
  if (!obj) return 'unknown';
  if (Date.parse(obj.body.expiresAt) <= now.getTime()) {
    await store.deleteObject(SESSION_KIND, obj.id);
    return 'expired';
  }
  const key = await store.getApiKey(obj.body.keyId);
  if (!key || key.keyType !== 'configuration') return 'unknown';
  if (key.disabled) return 'disabled';
  return key;
}

/** Ends a session (sign-out); unknown tokens are ignored. */
export async function deleteSession(store: ConfigStore, token: string): Promise<void> {
  await store.deleteObject(SESSION_KIND, sessionId(token));
}

/** Sessions are stored under the token's hash: the store never holds a usable token. */
const sessionId = (token: string) => `uis_${sha256(token)}`;

async function pruneExpired(store: ConfigStore, teamId: string, now: Date): Promise<void> {
  for (const o of await store.listObjects<SessionBody>(SESSION_KIND, { teamId })) {
    if (Date.parse(o.body.expiresAt) <= now.getTime()) await store.deleteObject(SESSION_KIND, o.id);
  }
}

/**
 * The secret that signs session cookies: `configured` (WAGGLE_SESSION_SECRET) or one made on
 * first use and kept in the configuration store, server-wide (no team: `teamId` and `scope` are
 * empty), so that every node sharing the store signs alike. Two nodes starting at once both try
 * to create it; the unique key makes one win and the other read the winner's.
 */
export async function sessionSigningSecret(store: ConfigStore, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  const find = async () => (await store.listObjects<{ secret: string }>(SECRET_KIND, {}))[0]?.body.secret;
  const existing = await find();
  if (existing) return existing;
  const secret = randomBytes(32).toString('base64url');
  try {
    await store.createObject({ id: 'ui_session_secret', kind: SECRET_KIND, teamId: '', environmentId: null, datasetId: null, scope: '', uniqueKey: 'secret', body: { secret } });
    return secret;
  } catch (err) {
    if (!(err instanceof UniqueViolation)) throw err;
    const winner = await find();
    if (!winner) throw err;
    return winner;
  }
}
