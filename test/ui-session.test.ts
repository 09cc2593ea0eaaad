// The web UI's server side: sign-in/sign-out with a signed, HttpOnly, SameSite=Strict session
// cookie; the cookie accepted in place of the key header only on the UI's own requests (the
// Origin check); header keys unaffected; and the page and assets with their headers.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, type TestApp } from './helpers.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';
import { CONTENT_SECURITY_POLICY, WEB_ROOT } from '../src/api/ui/static.js';

const ORIGIN = 'http://localhost'; // (the default port is no part of an origin)
const own = { origin: ORIGIN };

let t: TestApp;
beforeAll(async () => {
  t = await makeApp();
});
afterAll(() => t.close());

/** Signs in with a key; answers the response and the cookie header to send back. */
async function signIn(key: string, headers: Record<string, string> = own) {
  const res = await t.app.inject({ method: 'POST', url: '/1/ui/session', headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify({ key }) });
  const setCookie = [res.headers['set-cookie'] ?? []].flat().join('\n');
  const cookie = /waggle_session=([^;]+)/.exec(setCookie)?.[1];
  return { res, setCookie, cookie: cookie ? `waggle_session=${cookie}` : '' };
}

describe('sign-in', () => {
  it('sets a signed, HttpOnly, SameSite=Strict cookie that holds neither the key nor anything the store keeps', async () => {
    const { res, setCookie, cookie } = await signIn(t.init.keys.configuration);
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toMatchObject({
      team: { slug: t.init.team.slug },
      environment: { slug: t.init.environment.slug },
      api_key_access: { queries: true },
    });
    expect(Date.parse(json(res).expires_at)).toBeGreaterThan(t.clock.ms + 167 * 3_600_000);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).toMatch(/Path=\//);
    expect(setCookie).not.toMatch(/Secure/); // plain http here
    expect(res.headers['cache-control']).toBe('no-store');
    expect(cookie).not.toContain(t.init.keys.configuration);
    // token.signature
    const value = decodeURIComponent(cookie.split('=').slice(1).join('='));
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9+/_-]+=*$/);
    const token = value.split('.')[0];
    const sessions = await t.store.listObjects<{ keyId: string }>('ui_session', {});
    expect(sessions.length).toBeGreaterThan(0);
    for (const s of sessions) {
      expect(JSON.stringify(s)).not.toContain(token);
      expect(JSON.stringify(s)).not.toContain(t.init.keys.configuration);
    }
  });

  it('is Secure when the public base URL is https', async () => {
    const s = await makeApp({ settings: { publicUrl: 'https://waggle.example.com' } });
    try {
      const res = await s.app.inject({
        method: 'POST', url: '/1/ui/session', headers: { origin: 'https://waggle.example.com' }, payload: { key: s.init.keys.configuration },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(String(res.headers['set-cookie'])).toMatch(/Secure/);
      // Another origin is refused even though the request reached this server.
      const other = await s.app.inject({ method: 'POST', url: '/1/ui/session', headers: { origin: ORIGIN }, payload: { key: s.init.keys.configuration } });
      expect(other.statusCode).toBe(403);
    } finally {
      await s.close();
    }
  });

  it('refuses bad input, unknown, disabled and ingest keys, and other origins', async () => {
    const post = (payload: string | undefined, headers: Record<string, string> = own) =>
      t.app.inject({ method: 'POST', url: '/1/ui/session', headers: { ...headers, 'content-type': 'application/json' }, payload });
    const empty = await post(undefined);
    expect(empty.statusCode).toBe(400);
    expect(json(empty).type).toMatch(/\/problems\/unparseable$/);
    const notJson = await post('{"key":');
    expect(notJson.statusCode).toBe(400);
    const missing = await post('{}');
    expect(missing.statusCode).toBe(422);
    expect(json(missing).type_detail).toEqual([{ field: 'key', code: 'missing', description: 'cannot be blank' }]);
    const wrongType = await post('{"key": 12}');
    expect(wrongType.statusCode).toBe(422);
    expect(json(wrongType).type_detail[0]).toMatchObject({ field: 'key', code: 'incorrect_type' });
    const array = await post('[]');
    expect(array.statusCode).toBe(422);

    const unknown = await signIn('x'.repeat(22));
    expect(unknown.res.statusCode).toBe(401);
    expect(json(unknown.res)).toEqual({ error: 'unknown API key - check your credentials' });
    expect(unknown.setCookie).toBe('');
    const ingest = await signIn(t.init.keys.ingest);
    expect(ingest.res.statusCode).toBe(401);
    expect(json(ingest.res).error).toMatch(/configuration key/);
    const { team, environment } = await initialTenancy(t);
    const disabled = await addKey(t, team, environment, { disabled: true });
    expect((await signIn(disabled.token)).res.statusCode).toBe(401);

    // Login CSRF: another site's page, or no Origin at all, cannot sign the browser in.
    const evil = await signIn(t.init.keys.configuration, { origin: 'https://evil.example' });
    expect(evil.res.statusCode).toBe(403);
    expect(evil.setCookie).toBe('');
    expect((await signIn(t.init.keys.configuration, {})).res.statusCode).toBe(403);
  });
});

describe('the session cookie in place of the key header', () => {
  it('works on the UI’s own requests: reads without Origin (same-origin), writes with the own Origin', async () => {
    const { cookie } = await signIn(t.init.keys.configuration);
    const auth = await t.app.inject({ method: 'GET', url: '/1/auth', headers: { cookie, 'sec-fetch-site': 'same-origin' } });
    expect(auth.statusCode, auth.body).toBe(200);
    expect(json(auth).type).toBe('configuration');
    expect((await t.app.inject({ method: 'GET', url: '/1/datasets', headers: { cookie } })).statusCode).toBe(200);
    const created = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: { cookie, ...own }, payload: { name: 'via-ui' } });
    expect(created.statusCode, created.body).toBe(201);
  });

  it('is refused on cross-site requests (CSRF) and on writes without an Origin', async () => {
    const { cookie } = await signIn(t.init.keys.configuration);
    const evilWrite = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: { cookie, origin: 'https://evil.example' }, payload: { name: 'csrf' } });
    expect(evilWrite.statusCode).toBe(403);
    expect(json(evilWrite).error).toMatch(/cross-site request refused/);
    const noOrigin = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: { cookie }, payload: { name: 'csrf' } });
    expect(noOrigin.statusCode).toBe(403);
    const crossRead = await t.app.inject({ method: 'GET', url: '/1/datasets', headers: { cookie, 'sec-fetch-site': 'cross-site' } });
    expect(crossRead.statusCode).toBe(403);
    const sameSite = await t.app.inject({ method: 'GET', url: '/1/datasets', headers: { cookie, 'sec-fetch-site': 'same-site' } });
    expect(sameSite.statusCode).toBe(403);
    const list = json(await t.app.inject({ method: 'GET', url: '/1/datasets', headers: t.config }));
    expect(list.map((d: { slug: string }) => d.slug)).not.toContain('csrf');
  });

  it('is refused when tampered with, on ingest routes and on /2/', async () => {
    const { cookie } = await signIn(t.init.keys.configuration);
    const [name, value] = cookie.split('=');
    const decoded = decodeURIComponent(value);
    const forged = `${name}=${encodeURIComponent(`${'A'.repeat(43)}.${decoded.split('.')[1]}`)}`;
    expect((await t.app.inject({ method: 'GET', url: '/1/auth', headers: { cookie: forged } })).statusCode).toBe(401);
    const unsigned = `${name}=${decoded.split('.')[0]}`;
    expect((await t.app.inject({ method: 'GET', url: '/1/auth', headers: { cookie: unsigned } })).statusCode).toBe(401);
    const batch = await t.app.inject({ method: 'POST', url: '/1/batch/ui-ingest', headers: { cookie, ...own }, payload: [{ data: { a: 1 } }] });
    expect(batch.statusCode).toBe(401);
    const v2 = await t.app.inject({ method: 'GET', url: '/2/auth', headers: { cookie } });
    expect(v2.statusCode).toBe(401);
  });

  it('never weakens header keys: the header wins over the cookie, and a bad header is not rescued by a good cookie', async () => {
    const { cookie } = await signIn(t.init.keys.configuration);
    const bad = await t.app.inject({ method: 'GET', url: '/1/auth', headers: { cookie, 'x-honeycomb-team': 'y'.repeat(22) } });
    expect(bad.statusCode).toBe(401);
    // A header-key client is not subject to the Origin check.
    const api = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: { ...t.config, origin: 'https://elsewhere.example' }, payload: { name: 'api-client' } });
    expect(api.statusCode).toBe(201);
  });

  it('carries the key’s permissions and environment: 403 without a permission, 404 for another environment', async () => {
    const { team, environment } = await initialTenancy(t);
    const limited = await addKey(t, team, environment, { permissions: { create_datasets: true } });
    const { cookie } = await signIn(limited.token);
    const denied = await t.app.inject({ method: 'GET', url: '/1/columns/via-ui', headers: { cookie } });
    expect(denied.statusCode).toBe(403);
    const staging = await secondEnvironment(t, 'UI Staging');
    await t.app.inject({ method: 'POST', url: '/1/datasets', headers: staging.headers, payload: { name: 'staging-only' } });
    const { cookie: full } = await signIn(t.init.keys.configuration);
    expect((await t.app.inject({ method: 'GET', url: '/1/datasets/staging-only', headers: { cookie: full } })).statusCode).toBe(404);
  });

  it('ends with its key (disabled), with its time (expiry) and with sign-out', async () => {
    const { team, environment } = await initialTenancy(t);
    const key = await addKey(t, team, environment);
    const { cookie } = await signIn(key.token);
    expect((await t.app.inject({ method: 'GET', url: '/1/auth', headers: { cookie } })).statusCode).toBe(200);
    await t.store.updateApiKey(key.key.id, { disabled: true });
    expect((await t.app.inject({ method: 'GET', url: '/1/auth', headers: { cookie } })).statusCode).toBe(401);

    const second = await signIn(t.init.keys.configuration);
    t.clock.advance(169 * 3600);
    const expired = await t.app.inject({ method: 'GET', url: '/1/auth', headers: { cookie: second.cookie } });
    expect(expired.statusCode).toBe(401);
    expect(json(expired).error).toBe('API key has expired');

    const third = await signIn(t.init.keys.configuration);
    const crossOut = await t.app.inject({ method: 'DELETE', url: '/1/ui/session', headers: { cookie: third.cookie, origin: 'https://evil.example' } });
    expect(crossOut.statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: '/1/auth', headers: { cookie: third.cookie } })).statusCode).toBe(200);
    const out = await t.app.inject({ method: 'DELETE', url: '/1/ui/session', headers: { cookie: third.cookie, ...own } });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/waggle_session=;.*Expires=Thu, 01 Jan 1970/);
    // The old cookie, kept by a client that ignores the clearing, no longer works.
    expect((await t.app.inject({ method: 'GET', url: '/1/auth', headers: { cookie: third.cookie } })).statusCode).toBe(401);
    // Signing out without a session is harmless.
    expect((await t.app.inject({ method: 'DELETE', url: '/1/ui/session', headers: own })).statusCode).toBe(204);
  });

  it('gives the UI a query-result bucket of its own', async () => {
    const s = await makeApp({ settings: { queryResultRateLimit: { limit: 1, windowSeconds: 60 }, uiQueryResultRateLimit: { limit: 3, windowSeconds: 60 } } });
    try {
      await s.app.inject({ method: 'POST', url: '/1/datasets', headers: s.config, payload: { name: 'rl' } });
      const q = json(await s.app.inject({ method: 'POST', url: '/1/queries/rl', headers: s.config, payload: { calculations: [{ op: 'COUNT' }] } }));
      const res = await s.app.inject({ method: 'POST', url: '/1/ui/session', headers: { origin: ORIGIN }, payload: { key: s.init.keys.configuration } });
      const cookie = `waggle_session=${/waggle_session=([^;]+)/.exec(String(res.headers['set-cookie']))![1]}`;
      const run = (headers: Record<string, string>) => s.app.inject({ method: 'POST', url: '/1/query_results/rl', headers, payload: { query_id: q.id } });
      expect((await run(s.config)).statusCode).toBe(201);
      expect((await run(s.config)).statusCode).toBe(429);
      const ui = { cookie, origin: ORIGIN };
      expect([(await run(ui)).statusCode, (await run(ui)).statusCode, (await run(ui)).statusCode, (await run(ui)).statusCode]).toEqual([201, 201, 201, 429]);
    } finally {
      await s.close();
    }
  });
});

describe('the page and its assets', () => {
  const built = existsSync(join(WEB_ROOT, 'index.html'));

  it('serves the app page for UI paths (query_url, board_url) with a strict CSP, never cached', async () => {
    expect(built, 'dist/web is built by `npm run build` (npm test runs it)').toBe(true);
    for (const url of ['/', '/login', `/${t.init.team.slug}/environments/${t.init.environment.slug}/datasets/x/result/abc123`, `/${t.init.team.slug}/environments/${t.init.environment.slug}/board/b1?x=1`]) {
      const res = await t.app.inject({ method: 'GET', url, headers: { accept: 'text/html,application/xhtml+xml' } });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.body).toContain('<script type="module"');
      // Nothing from another host, nothing inline.
      expect(res.body).not.toMatch(/(src|href)="(https?:)?\/\//);
      expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(res.body).not.toMatch(/<style/);
      expect(res.body).toMatch(/src="\/assets\/[^"]+\.js"/);
    }
    expect(CONTENT_SECURITY_POLICY).toMatch(/default-src 'none'/);
    expect(CONTENT_SECURITY_POLICY).toMatch(/script-src 'self'(;|$)/);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
  });

  it("serves the page to any GET of a UI address (curl's Accept: */*, no Accept); a JSON-only client gets the JSON 404", async () => {
    expect(built).toBe(true);
    for (const headers of [{ accept: '*/*' }, {}]) {
      for (const url of ['/', '/login', `/${t.init.team.slug}/environments/${t.init.environment.slug}/board/b1`]) {
        const res = await t.app.inject({ method: 'GET', url, headers });
        expect(res.statusCode, `${url} ${JSON.stringify(headers)}`).toBe(200);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.body).toContain('<script type="module"');
      }
    }
    const api = await t.app.inject({ method: 'GET', url: '/', headers: { accept: 'application/json' } });
    expect(api.statusCode).toBe(404);
    expect(json(api).error).toBe('no such route: GET /');
  });

  it('keeps JSON 404s for API clients and API paths', async () => {
    const plain = await t.app.inject({ method: 'GET', url: '/nothing/here' });
    expect(plain.statusCode).toBe(404);
    expect(json(plain).error).toMatch(/no such route/);
    for (const url of ['/1/nope', '/2/nope', '/assets/missing.js', '/1', '/problems/not-found']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
      expect(res.statusCode, url).toBe(404);
      expect(String(res.headers['content-type']), url).not.toMatch(/text\/html/);
    }
    expect((await t.app.inject({ method: 'POST', url: '/somewhere', headers: { accept: 'text/html' } })).statusCode).toBe(404);
  });

  it('serves hashed assets as immutable, pre-compressed when accepted', async () => {
    expect(built).toBe(true);
    const js = readdirSync(join(WEB_ROOT, 'assets')).find((f) => f.endsWith('.js'))!;
    const res = await t.app.inject({ method: 'GET', url: `/assets/${js}`, headers: { 'accept-encoding': 'gzip' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(gunzipSync(res.rawPayload).length).toBeGreaterThan(res.rawPayload.length);
    const identity = await t.app.inject({ method: 'GET', url: `/assets/${js}` });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.body).toBe(gunzipSync(res.rawPayload).toString('utf8'));
  });

  it('names its assets under the public URL’s path behind a proxy', async () => {
    const s = await makeApp({ settings: { publicUrl: 'https://example.com/waggle' } });
    try {
      const res = await s.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } });
      expect(res.body).toMatch(/src="\/waggle\/assets\//);
      expect(res.body).toContain('<meta name="waggle-base" content="/waggle">');
    } finally {
      await s.close();
    }
  });
});
