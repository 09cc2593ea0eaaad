// The team's query history on Home, in Chromium against a real `waggle serve`: queries run in the
// UI by two people (two keys, two sessions) are listed on each one's Home, newest first, with who
// ran them and how long they took; the most-run one with its count; the search (text, dataset,
// column) narrows both lists as the server answers; an entry opens as a query, whose run is kept
// in turn. A board's panels (background runs) are not kept. The Home screenshot of
// docs/web-ui.md is this test's test-results/ui-query-history/home.png.
// Chromium: see test/ui-browser.test.ts.
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumInstalled, launchChromium, printedKeys, signedInPage } from './browser-helpers.js';
import { killAll, removeTempDirs, serve, tempDir, type Served } from './cli-helpers.js';

const SHOTS = fileURLToPath(new URL('../test-results/ui-query-history/', import.meta.url));
const present = chromiumInstalled();
const CI = process.env.CI === 'true';
const scope = '/my-team/environments/production';

describe.skipIf(!present && !CI)('the team’s query history on Home (Chromium)', { timeout: 60_000 }, () => {
  let server: Served;
  let key: string;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  const errors: string[] = [];
  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = { 'x-honeycomb-team': key }) => {
    const res = await fetch(`${server.url}${path}`, { method, headers: { ...headers, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    expect(res.status, `${method} ${path}`).toBeLessThan(300);
    return res.status === 204 ? undefined : res.json();
  };
  /** Signs a new browser context in with `token`; answers its page. */
  const signedIn = (token: string) => signedInPage(browser, server.url, token, { width: 1360, height: 900 }, errors);
  /** Runs a spec in the query page, as a person does (the address's `?query=`), and waits for its result. */
  const runInUi = async (p: Page, dataset: string, spec: object) => {
    await p.goto(`${server.url}${scope}/datasets/${dataset}?query=${encodeURIComponent(JSON.stringify(spec))}`);
    await p.waitForSelector('[data-result-id], [role=alert]');
    expect(await p.$('[role=alert]'), (await p.textContent('main')) ?? '').toBeNull();
    return (await p.getAttribute('[data-result-id]', 'data-result-id'))!;
  };
  const listed = (testid: string) =>
    page.$$eval(`[data-testid=${testid}] li`, (lis) => lis.map((li) => `${li.querySelector('a')!.textContent} | ${li.querySelector('.badge')?.textContent ?? ''} | ${li.querySelector('.small')!.textContent}`));

  beforeAll(async () => {
    if (!present) throw new Error(`CI: Chromium is required at ${CHROMIUM} for the web UI tests (.ci/run installs it with apt-get)`);
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    server = await serve(['--data-dir', tempDir()], { timeout: 30_000 });
    const out = server.stdout();
    key = printedKeys(out).configuration;
    const ingestKey = printedKeys(out).ingest;
    const mgmt = { authorization: `Bearer ${/ management key +\(Authorization: Bearer ID:SECRET\): (\S+)$/m.exec(out)![1]}`, 'content-type': 'application/vnd.api+json' };
    const now = Date.now();
    const events = Array.from({ length: 60 }, (_, i) => ({
      time: new Date(now - i * 30_000).toISOString(),
      data: { duration_ms: 10 + (i % 7) * 40, status: i % 6 === 0 ? 500 : 200, route: `/r${i % 3}`, region: i % 2 ? 'eu' : 'us' },
    }));
    for (const ds of ['checkout', 'payments']) {
      const res = await fetch(`${server.url}/1/batch/${ds}`, { method: 'POST', headers: { 'x-honeycomb-team': ingestKey, 'content-type': 'application/json' }, body: JSON.stringify(events) });
      expect(res.status).toBe(200);
    }
    // Two people: the first key renamed "Alice (SRE)", and a key of Bob's.
    const envs = await (await fetch(`${server.url}/2/teams/my-team/environments`, { headers: mgmt })).json();
    const envId = envs.data[0].id;
    const keys = await (await fetch(`${server.url}/2/teams/my-team/api-keys?filter[type]=configuration`, { headers: mgmt })).json();
    const first = keys.data.find((k: any) => k.attributes.key_type === 'configuration');
    const renamed = await fetch(`${server.url}/2/teams/my-team/api-keys/${first.id}`, { method: 'PATCH', headers: mgmt, body: JSON.stringify({ data: { id: first.id, type: 'api-keys', attributes: { name: 'Alice (SRE)' } } }) });
    expect(renamed.status).toBe(200);
    const made = await fetch(`${server.url}/2/teams/my-team/api-keys`, {
      method: 'POST',
      headers: mgmt,
      body: JSON.stringify({ data: { type: 'api-keys', attributes: { key_type: 'configuration', name: 'Bob (payments)', permissions: { run_queries: true, manage_columns: true, manage_boards: true, manage_markers: true } }, relationships: { environment: { data: { id: envId, type: 'environments' } } } } }),
    });
    expect(made.status).toBe(201);
    const bobKey = (await made.json()).data.attributes.secret;
    ({ browser, close: closeBrowser } = await launchChromium());

    const bob = await signedIn(bobKey);
    const slow = { calculations: [{ op: 'P99', column: 'duration_ms' }], filters: [{ column: 'status', op: '=', value: 500 }], breakdowns: ['route'], time_range: 3600 };
    await runInUi(bob, 'payments', slow);
    await runInUi(bob, 'payments', { calculations: [{ op: 'COUNT' }], breakdowns: ['region'], time_range: 7200 });
    await runInUi(bob, 'payments', slow);
    await bob.context().close();
    page = await signedIn(key);
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
    await killAll();
    removeTempDirs();
  });

  it("lists everyone's queries on Home, newest first, and the most-run with their counts", async () => {
    await runInUi(page, 'checkout', { calculations: [{ op: 'COUNT' }, { op: 'AVG', column: 'duration_ms' }], breakdowns: ['route'], time_range: 7200 });
    // A board's panels are background runs: not kept.
    const q = await api('POST', '/1/queries/checkout', { calculations: [{ op: 'MAX', column: 'duration_ms' }] });
    const board = await api('POST', '/1/boards', {
      name: 'Checkout', type: 'flexible',
      panels: [{ type: 'query', query_panel: { query_id: q.id, query_annotation_id: (await api('POST', '/1/query_annotations/checkout', { name: 'max', query_id: q.id })).id }, position: { x_coordinate: 0, y_coordinate: 0, width: 6, height: 4 } }],
    });
    await page.goto(`${server.url}${scope}/board/${board.id}`);
    await page.waitForSelector('[data-chart]');

    await page.click('nav >> text=Home');
    await page.waitForSelector('[data-testid=history-recent] li');
    const recent = await listed('history-recent');
    expect(recent).toHaveLength(4);
    expect(recent[0]).toMatch(/^COUNT, AVG\(duration_ms\) by route \| {2}\| checkout · .* · run by Alice \(SRE\) .*took .* · result$/);
    expect(recent[1]).toMatch(/^P99\(duration_ms\) by route where status = 500 \| {2}\| payments · Last hour · run by Bob \(payments\) .*took .*ms · result$/);
    expect(recent[2]).toMatch(/^COUNT by region .*Bob/);
    const top = await listed('history-most-run');
    expect(top[0]).toMatch(/^P99\(duration_ms\) .*\| ×2 \| payments .*last run by Bob/);
    expect(top.slice(1).every((t) => t.includes('| ×1 |'))).toBe(true);
    expect(errors).toEqual([]);
    await page.screenshot({ path: `${SHOTS}home.png`, fullPage: true });
  });

  it('searches by text, dataset and column, as the server answers', async () => {
    await page.fill('input[aria-label="Search text"]', 'p99 500');
    await expect.poll(() => listed('history-recent')).toHaveLength(2);
    expect(await listed('history-most-run')).toHaveLength(1);
    await page.fill('input[aria-label="Search text"]', '');
    await page.selectOption('section[aria-labelledby=history-h] select[aria-label=Dataset]', 'checkout');
    await expect.poll(() => listed('history-recent')).toHaveLength(1);
    await page.selectOption('section[aria-labelledby=history-h] select[aria-label=Dataset]', '');
    await page.fill('input[aria-label=Column]', 'region');
    await expect.poll(async () => (await listed('history-recent')).map((l) => l.split(' | ')[0])).toEqual(['COUNT by region']);
    await page.fill('input[aria-label=Column]', 'nothing.like.this');
    await expect.poll(() => page.textContent('[data-testid=history-recent]')).toContain('No query matches.');
    await page.fill('input[aria-label=Column]', '');
    await expect.poll(() => listed('history-recent')).toHaveLength(4);
  });

  it('opens an entry as a query, whose run is kept in turn', async () => {
    await page.click('[data-testid=history-most-run] li >> nth=0 >> a.mono');
    await page.waitForURL(/\/datasets\/payments\?query=/);
    const spec = JSON.parse(new URL(page.url()).searchParams.get('query')!);
    expect(spec).toEqual({ calculations: [{ op: 'P99', column: 'duration_ms' }], filters: [{ column: 'status', op: '=', value: 500 }], breakdowns: ['route'], time_range: 3600 });
    const resultId = await page.waitForSelector('[data-result-id]').then((e) => e.getAttribute('data-result-id'));
    await expect.poll(async () => (await api('GET', '/1/query_history?limit=1'))[0].result_id).toBe(resultId);
    const top = await api('GET', '/1/query_history?sort=most_run&limit=1');
    expect(top[0]).toMatchObject({ dataset: 'payments', count: 3, run_by: { key_name: 'Alice (SRE)' } });
    expect(errors).toEqual([]);
  });
});
