// Serving the web UI (built by `npm run build` from web/ into dist/web/; docs/web-ui.md).
//
// - `/assets/*`: Vite's output, every file name carrying a hash of its content, so it is cached
//   for a year as immutable; served pre-compressed (.br / .gz written by the build) when the
//   browser accepts it.
// - A GET of one of the app's addresses (a browser's navigation, curl's `Accept: */*`) gets the
//   app's page, `index.html`, which routes on the client: `/`, `/login`,
//   `/<team>/environments/<env>/…` (the `query_url` and `board_url` Waggle hands out). It is never
//   cached (`no-cache`), so a new build is picked up at once. A client asking for JSON and not
//   HTML (an API client) gets the JSON 404 of an unknown route instead.
// - A strict Content-Security-Policy: scripts, styles, images, fonts and connections from this
//   server only, nothing inline, no frames, no plugins. The page loads nothing from any other host.
//
// Behind a reverse proxy under a path (`WAGGLE_PUBLIC_URL=https://example.com/waggle`) the page
// names its assets and API with that path: the build's relative `./assets/` links are rewritten
// and the path is given to the app in `<meta name="waggle-base">`.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../context.js';

/** dist/web of the package, from src/api/ui/ (tests) and dist/api/ui/ (the built server) alike. */
export const WEB_ROOT = fileURLToPath(new URL('../../../dist/web/', import.meta.url));

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-cache',
};

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Waggle</title></head>
<body><h1>Waggle</h1><p>The web UI has not been built: run <code>npm run build</code> (or <code>npm start</code>) and reload.</p>
<p>The API is served as usual under <code>/1/</code> and <code>/2/</code>.</p></body></html>`;

export async function registerStatic(app: App, root = WEB_ROOT): Promise<void> {
  const indexFile = join(root, 'index.html');
  let template: string | undefined;
  let templateTime = -1;
  const pages = new Map<string, string>();
  /** The page for a base path ('' at the root): asset links and the app's base made absolute. */
  const pageFor = (base: string) => {
    // Read again after a new build (a page request is rare; a stat is cheap).
    const mtime = existsSync(indexFile) ? statSync(indexFile).mtimeMs : 0;
    if (mtime !== templateTime) {
      templateTime = mtime;
      template = mtime ? readFileSync(indexFile, 'utf8') : undefined;
      pages.clear();
    }
    let html = pages.get(base);
    if (!html) {
      html = template
        ? template.replaceAll('"./assets/', `"${base}/assets/`).replace('<meta name="waggle-base" content="">', `<meta name="waggle-base" content="${escapeAttr(base)}">`)
        : NOT_BUILT;
      pages.set(base, html);
    }
    return html;
  };

  const assets = join(root, 'assets');
  if (existsSync(assets)) {
    await app.register(fastifyStatic, {
      root: assets,
      prefix: '/assets/',
      decorateReply: false,
      index: false,
      wildcard: true,
      preCompressed: true,
      immutable: true,
      maxAge: 365 * 86_400_000,
      setHeaders: (res) => res.header('x-content-type-options', 'nosniff'),
    });
  }

  const sendPage = (request: FastifyRequest, reply: FastifyReply) =>
    reply.code(200).headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(pageFor(new URL(request.publicBase).pathname.replace(/\/+$/, '')));

  // The app's own addresses only (routes.ts in web/), never a catch-all: every other path keeps
  // its API answer (an unknown route's 404, a too-long segment's 414).
  const pageRoute = { schema: { hide: true }, config: { auth: { kind: 'none' } } } as const;
  // No API lives at these addresses, so any GET of one gets the page (a browser's `text/html`,
  // curl's `*/*`, no Accept at all) except from a client that asks for JSON and not HTML: it
  // keeps the JSON 404 an API client understands.
  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    const accept = String(request.headers.accept ?? '');
    return /json/.test(accept) && !accept.includes('text/html') ? reply.callNotFound() : sendPage(request, reply);
  };
  for (const path of ['/', '/login', '/:team/environments/:env', '/:team/environments/:env/*']) app.get(path, pageRoute, page);
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
