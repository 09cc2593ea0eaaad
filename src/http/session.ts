// The web UI's session cookie and the rule that keeps it from being used by anything but the
// UI's own pages (sessions themselves: src/domain/sessions.ts).
//
// The cookie holds a random token, signed with HMAC-SHA-256 (@fastify/cookie), `HttpOnly` (no
// script reads it), `SameSite=Strict` (no other site's page makes the browser send it), `Path=/`,
// and `Secure` when the server's public base URL is https. A request is the UI's own when it
// passes the Origin check below; only then is the cookie accepted in place of a key header, so
// header-key clients are unaffected and another site cannot make a signed-in browser act (CSRF).
import type { FastifyReply, FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'waggle_session';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a request comes from the server's own pages. A state-changing request must carry an
 * `Origin` equal to the server's own origin (browsers send one on every cross-origin request
 * and every non-GET fetch). A read may come without one, but not from another site: when the
 * browser says where it comes from (`Sec-Fetch-Site`), it must be `same-origin` or `none` (typed
 * in the address bar).
 */
export function isOwnOrigin(request: FastifyRequest): boolean {
  const own = new URL(request.publicBase).origin;
  const origin = request.headers.origin;
  if (origin !== undefined) return origin === own;
  if (!SAFE_METHODS.has(request.method)) return false;
  const site = request.headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin' || site === 'none';
}

/** The session token of the request's cookie, when its signature is good. */
export function sessionToken(request: FastifyRequest): string | undefined {
  const raw = request.cookies?.[SESSION_COOKIE];
  if (!raw) return undefined;
  const u = request.unsignCookie(raw);
  return u.valid && u.value ? u.value : undefined;
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, expiresAt: Date): void {
  reply.setCookie(SESSION_COOKIE, token, {
    signed: true,
    httpOnly: true,
    sameSite: 'strict',
    secure: request.publicBase.startsWith('https:'),
    path: '/',
    expires: expiresAt,
  });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', secure: request.publicBase.startsWith('https:'), path: '/' });
}
