// Time comparison in the web UI, in Chromium against a real `waggle serve`: events sent for now
// and for a day earlier; the query builder's "Compare to" set to 1 day earlier; the charts get a
// dashed past line per group, the tooltip and the table the past value and the change in %. A
// board panel of a query with an offset shows it; the editor's "No comparison" hides it
// (`hide_compare`, seen through the API). Screenshots go to test-results/ui-time-comparison/
// (git-ignored; docs/images/web-ui-time-comparison.png is its query.png).
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumInstalled, launchChromium, printedKeys, signedInPage } from './browser-helpers.js';
import { killAll, removeTempDirs, serve, tempDir, type Served } from './cli-helpers.js';

const SHOTS = fileURLToPath(new URL('../test-results/ui-time-comparison/', import.meta.url));
const present = chromiumInstalled();
const CI = process.env.CI === 'true';
const DAY = 86_400;

describe.skipIf(!present && !CI)('time comparison in the web UI (Chromium)', { timeout: 60_000 }, () => {
  let server: Served;
  let key: string;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  const errors: string[] = [];
  const scope = '/my-team/environments/production';
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { 'x-honeycomb-team': key, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res.status, `${method} ${path}`).toBeLessThan(300);
    return res.status === 204 ? undefined : res.json();
  };

  beforeAll(async () => {
    if (!present) throw new Error(`CI: Chromium is required at ${CHROMIUM} for the web UI tests (.ci/run installs it with apt-get)`);
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    server = await serve(['--data-dir', tempDir()], { timeout: 60_000 });
    key = printedKeys(server.stdout()).configuration;
    const ingestKey = printedKeys(server.stdout()).ingest;
    // Now: /a 3 events a minute for the last hour, /b 1; a day earlier: /a 2 a minute, /b 4.
    const nowS = Math.floor(Date.now() / 1000);
    const events: unknown[] = [];
    for (let m = 1; m < 60; m++) {
      const at = (s: number) => new Date(s * 1000).toISOString();
      for (let i = 0; i < 3; i++) events.push({ time: at(nowS - m * 60 - i), data: { route: '/a', ms: 10 + (m % 7) } });
      events.push({ time: at(nowS - m * 60), data: { route: '/b', ms: 40 } });
      for (let i = 0; i < 2; i++) events.push({ time: at(nowS - DAY - m * 60 - i), data: { route: '/a', ms: 12 } });
      for (let i = 0; i < 4; i++) events.push({ time: at(nowS - DAY - m * 60 - i), data: { route: '/b', ms: 30 } });
    }
    const res = await fetch(`${server.url}/1/batch/shop`, { method: 'POST', headers: { 'x-honeycomb-team': ingestKey, 'content-type': 'application/json' }, body: JSON.stringify(events) });
    expect(res.status).toBe(200);
    ({ browser, close: closeBrowser } = await launchChromium());
    page = await signedInPage(browser, server.url, key, { width: 1280, height: 860 }, errors);
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
    await killAll();
    removeTempDirs();
  });

  it('Compare to 1 day earlier: dashed past lines, the past value and change in the tooltip and the table', async () => {
    const spec = { calculations: [{ op: 'COUNT' }], breakdowns: ['route'], time_range: 3600, granularity: 300 };
    await page.goto(`${server.url}${scope}/datasets/shop?query=${encodeURIComponent(JSON.stringify(spec))}`);
    await page.waitForSelector('[data-testid=results-table]');
    expect(await page.locator('[data-testid=comparison-note]').count()).toBe(0);
    // "1 hour earlier" is offered (the window is an hour); "Custom…" offers every allowed offset.
    await page.selectOption('select[aria-label="Compare to"]', 'custom');
    expect(await page.locator('select[aria-label="Compare offset"] option:not([disabled])').allTextContents()).toEqual(['1 hour earlier', '2 hours earlier', '8 hours earlier', '1 day earlier', '1 week earlier', '4 weeks earlier', '26 weeks earlier']);
    await page.selectOption('select[aria-label="Compare to"]', String(DAY));
    await page.click('button:has-text("Run query")');
    await page.waitForSelector('[data-testid=comparison-note]');
    expect(await page.textContent('[data-testid=comparison-note]')).toContain('1 day earlier');
    expect(new URL(page.url()).searchParams.get('query')).toContain('"compare_time_offset_seconds":86400');

    // The table: each group's count, its count a day earlier and the change.
    const headers = await page.locator('[data-testid=results-table] thead th').allTextContents();
    expect(headers.slice(1)).toEqual(['route', 'COUNT', 'COUNT · 1 day earlier', 'COUNT · change']);
    const row = async (route: string) => page.locator(`[data-testid=results-table] tr[data-group="${route}"] td`).allTextContents();
    expect((await row('/a')).slice(1)).toEqual(['/a', '177', '118', '+50%']);
    expect((await row('/b')).slice(1)).toEqual(['/b', '59', '236', '−75%']);

    // The chart: two lines and their two past lines; hovering shows "was … · change".
    const chart = page.locator('[data-chart=COUNT]');
    await chart.locator('canvas').waitFor();
    const box = (await chart.locator('.u-over').boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
    await page.waitForSelector('[data-testid=tooltip-past]');
    const past = await page.locator('[data-testid=tooltip-past]').allTextContents();
    expect(past).toEqual(['was 10 · +50%', 'was 20 · −75%']);
    await page.screenshot({ path: `${SHOTS}query.png` });
    expect(errors).toEqual([]);
  });

  it('a board panel shows its query comparison; the editor hides it (hide_compare)', async () => {
    const q = await api('POST', '/1/queries/shop', { calculations: [{ op: 'COUNT' }], time_range: 3600, compare_time_offset_seconds: DAY });
    const a = await api('POST', '/1/query_annotations/shop', { name: 'Requests vs yesterday', query_id: q.id });
    const board = await api('POST', '/1/boards', { name: 'Compared', type: 'flexible', panels: [{ type: 'query', query_panel: { query_id: q.id, query_annotation_id: a.id } }] });
    await page.goto(`${server.url}${scope}/board/${board.id}`);
    await page.waitForSelector('.board-panel [data-testid=comparison-note]');
    await page.click('button:has-text("Edit")');
    const cell = page.locator('.edit-cell[data-panel-type=query]');
    await cell.locator('select[aria-label="Compare to"]:not([disabled])').waitFor();
    expect(await cell.locator('select[aria-label="Compare to"]').inputValue()).toBe(String(DAY));
    await cell.locator('select[aria-label="Compare to"]').selectOption('');
    await page.click('button:has-text("Save board")');
    await expect.poll(async () => (await api('GET', `/1/boards/${board.id}`)).panels[0].query_panel.visualization_settings?.hide_compare).toBe(true);
    await page.goto(`${server.url}${scope}/board/${board.id}`);
    await page.waitForSelector('.board-panel canvas');
    expect(await page.locator('.board-panel [data-testid=comparison-note]').count()).toBe(0);
    await page.screenshot({ path: `${SHOTS}board.png` });
    expect(errors).toEqual([]);
  });
});
