// The server's public base URL, the start of every link it emits in an answer (problem `type`s,
// `query_url`, `board_url`, `Location` headers). `WAGGLE_PUBLIC_URL` when set; otherwise the
// scheme and Host the request came with, `X-Forwarded-Proto/Host` only when `WAGGLE_TRUST_PROXY`
// trusts the peer (Fastify's `request.protocol`/`request.host` apply it). Links made with no
// request at hand (notifications) use `backgroundBaseUrl` in settings.ts.
import type { Settings } from '../settings.js';

export function requestBaseUrl(request: { protocol: string; host: string }, settings: Pick<Settings, 'publicUrl'>): string {
  if (settings.publicUrl) return settings.publicUrl;
  // A Host header is the client's to write; keep only what a URL's authority may hold.
  const host = /^[A-Za-z0-9.\-:[\]]+$/.test(request.host) ? request.host : 'localhost';
  return `${request.protocol}://${host}`;
}
