// The server's public base URL (WAGGLE_PUBLIC_URL, WAGGLE_TRUST_PROXY): the start of problem
// `type`s, query_url, board_url and Location headers; the request's scheme and Host by default,
// X-Forwarded-Proto/Host only when the proxy is trusted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../src/settings.js';
import { json, makeApp, sendJson, type TestApp } from './helpers.js';
import { ingest, saveQuery } from './query-helpers.js';

const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'waggle.example.com' };

async function links(t: TestApp, headers: Record<string, string> = {}) {
  const h = { ...t.config, ...headers };
  const problem = json(await t.app.inject({ method: 'POST', url: '/1/boards', headers: { ...h, 'content-type': 'application/json' }, payload: '{"name":' }));
  const board = json(await sendJson(t, 'POST', '/1/boards', { name: 'b', type: 'flexible' }, h));
  const queryId = await saveQuery(t, 'links', { calculations: [{ op: 'COUNT' }] });
  const result = await t.app.inject({ method: 'POST', url: '/1/query_results/links', headers: h, payload: { query_id: queryId } });
  return { problemType: problem.type, boardUrl: board.links.board_url, queryUrl: json(result).links.query_url, location: String(result.headers.location) };
}

describe('public base URL', () => {
  describe('unset: the request decides, proxies untrusted', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await makeApp();
      await ingest(t, 'links', [{ data: { a: 1 } }]);
    });
    afterAll(() => t.close());

    it('uses the scheme and Host of the request', async () => {
      const l = await links(t, { host: 'waggle.internal:8080' });
      expect(l.problemType).toBe('http://waggle.internal:8080/problems/unparseable');
      expect(l.boardUrl).toMatch(/^http:\/\/waggle\.internal:8080\/[^/]+\/environments\/[^/]+\/board\/\w+$/);
      expect(l.queryUrl).toMatch(/^http:\/\/waggle\.internal:8080\/[^/]+\/environments\/[^/]+\/datasets\/links\/result\/\w+$/);
      expect(l.location).toMatch(/^http:\/\/waggle\.internal:8080\/1\/query_results\/links\/\w+$/);
    });

    it('ignores X-Forwarded-Proto/Host from an untrusted peer', async () => {
      const l = await links(t, forwarded);
      expect(l.problemType).toBe('http://localhost:80/problems/unparseable');
      expect(l.boardUrl.startsWith('http://localhost:80/')).toBe(true);
    });

    it('never puts a hostile Host header into a link', async () => {
      const l = await links(t, { host: 'evil.example/<script>' });
      expect(l.problemType).toBe('http://localhost/problems/unparseable');
    });
  });

  describe('WAGGLE_TRUST_PROXY=true: X-Forwarded-Proto/Host are believed', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await makeApp({ settings: { trustProxy: true } });
      await ingest(t, 'links', [{ data: { a: 1 } }]);
    });
    afterAll(() => t.close());

    it('builds links from the forwarded scheme and host', async () => {
      const l = await links(t, forwarded);
      expect(l.problemType).toBe('https://waggle.example.com/problems/unparseable');
      expect(l.boardUrl.startsWith('https://waggle.example.com/')).toBe(true);
      expect(l.queryUrl.startsWith('https://waggle.example.com/')).toBe(true);
      expect(l.location.startsWith('https://waggle.example.com/1/query_results/links/')).toBe(true);
    });
  });

  describe('WAGGLE_PUBLIC_URL set: every link starts with it', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await makeApp({ settings: { publicUrl: 'https://obs.example.org/waggle', trustProxy: true } });
      await ingest(t, 'links', [{ data: { a: 1 } }]);
    });
    afterAll(() => t.close());

    it('whatever the request or proxy headers say', async () => {
      for (const headers of [{}, forwarded, { host: "other:1" }] as Record<string, string>[]) {
        const l = await links(t, headers);
        expect(l.problemType).toBe('https://obs.example.org/waggle/problems/unparseable');
        expect(l.boardUrl.startsWith('https://obs.example.org/waggle/')).toBe(true);
        expect(l.queryUrl.startsWith('https://obs.example.org/waggle/')).toBe(true);
        expect(l.location.startsWith('https://obs.example.org/waggle/1/query_results/links/')).toBe(true);
      }
    });
  });

  it('settings: WAGGLE_PUBLIC_URL must be an http(s) URL (trailing slash dropped); WAGGLE_TRUST_PROXY takes booleans, hop counts and address lists', () => {
    expect(loadSettings({ WAGGLE_PUBLIC_URL: 'https://waggle.example.com/' }).publicUrl).toBe('https://waggle.example.com');
    expect(() => loadSettings({ WAGGLE_PUBLIC_URL: 'waggle.example.com' })).toThrow(/WAGGLE_PUBLIC_URL/);
    expect(loadSettings({}).trustProxy).toBe(false);
    expect(loadSettings({ WAGGLE_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadSettings({ WAGGLE_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadSettings({ WAGGLE_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(() => loadSettings({ WAGGLE_TRUST_PROXY: 'everyone' })).toThrow(/WAGGLE_TRUST_PROXY/);
  });
});
