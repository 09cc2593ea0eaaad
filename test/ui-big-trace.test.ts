// A trace of 20,001 spans in the web UI, in Chromium against a real `waggle serve` (sent through
// /1/batch in bodies of 5,000): the waterfall draws only the rows in view (a bounded number of row
// elements whatever the trace's size), scrolling to the end shows the last span, search finds a
// span by a field's value and jumps to it, collapsing a service hides its spans, the minimap
// zooms the time, and the critical path is marked. Screenshots go to test-results/ui-big-trace/
// (git-ignored; docs/images/web-ui-big-trace.png is one). Chromium: see test/ui-browser.test.ts.
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumInstalled, launchChromium, printedKeys, signedInPage } from './browser-helpers.js';
import { killAll, removeTempDirs, serve, tempDir, type Served } from './cli-helpers.js';

const SHOTS = fileURLToPath(new URL('../test-results/ui-big-trace/', import.meta.url));
const present = chromiumInstalled();
const CI = process.env.CI === 'true';
const API = 100;
const DB = 199;

/**
 * The root (frontend), 100 api spans one after another (800 ms each, a second apart), each with
 * 199 overlapping db queries (the k-th starts 3k ms in, 100 ms long). Critical path: the root,
 * every api span (each ends before the next starts), and in each the last query, then the last
 * that ends before it starts, and so on (the 198th, 164th, 130th, 96th, 62nd and 28th): 1 + 100 +
 * 600 = 701 spans.
 */
function bigTrace(startMs: number) {
  const at = (offset: number) => new Date(startMs + offset).toISOString();
  const ev = (sid: string, parent: string | undefined, service: string, name: string, offset: number, ms: number, extra: Record<string, unknown> = {}) => ({
    time: at(offset),
    data: { 'trace.trace_id': 'big', 'trace.span_id': sid, ...(parent ? { 'trace.parent_id': parent } : {}), 'service.name': service, name, duration_ms: ms, ...extra },
  });
  const out = [ev('root', undefined, 'frontend', 'GET /report', 0, API * 1000 + 5)];
  for (let i = 0; i < API; i++) {
    out.push(ev(`api-${i}`, 'root', 'api', `load part ${i}`, i * 1000 + 1, 800));
    for (let k = 0; k < DB; k++) {
      const extra = i === 57 && k === 123 ? { 'db.statement': 'SELECT needle FROM haystack' } : {};
      out.push(ev(`db-${i}-${k}`, `api-${i}`, 'db', i === API - 1 && k === DB - 1 ? 'final query' : 'SELECT rows', i * 1000 + 2 + k * 3, 100, extra));
    }
  }
  return out;
}

describe.skipIf(!present && !CI)('a trace of 20,000 spans in the web UI (Chromium)', { timeout: 60_000 }, () => {
  let server: Served;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  const errors: string[] = [];
  const scope = '/my-team/environments/production';
  const rowCount = () => page.locator('[data-testid=waterfall] .wf-row').count();

  beforeAll(async () => {
    if (!present) throw new Error(`CI: Chromium is required at ${CHROMIUM} for the web UI tests (.ci/run installs it with apt-get)`);
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    server = await serve(['--data-dir', tempDir()], { timeout: 60_000 });
    const key = printedKeys(server.stdout()).configuration;
    const ingestKey = printedKeys(server.stdout()).ingest;
    const events = bigTrace(Date.now() - 60_000);
    expect(events).toHaveLength(1 + API + API * DB);
    for (let i = 0; i < events.length; i += 5000) {
      const res = await fetch(`${server.url}/1/batch/reports`, { method: 'POST', headers: { 'x-honeycomb-team': ingestKey, 'content-type': 'application/json' }, body: JSON.stringify(events.slice(i, i + 5000)) });
      expect(res.status).toBe(200);
    }
    ({ browser, close: closeBrowser } = await launchChromium());
    page = await signedInPage(browser, server.url, key, { width: 1360, height: 860 }, errors);
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
    await killAll();
    removeTempDirs();
  });

  it('draws only the rows in view, and scrolling to the end shows the last span', async () => {
    await page.goto(`${server.url}${scope}/datasets/__all__/trace/big`);
    await page.waitForSelector('[data-testid=waterfall] [data-span-id=root]', { timeout: 30_000 });
    expect(await page.textContent('main')).toContain('20,001 spans');
    expect(await page.getAttribute('[data-testid=waterfall]', 'data-shown')).toBe('20001');
    expect(await rowCount()).toBeLessThan(80);
    await page.screenshot({ path: `${SHOTS}big-trace.png` });
    await page.$eval('[data-testid=waterfall]', (el) => (el.scrollTop = el.scrollHeight));
    await page.waitForSelector('[data-span-id="db-99-198"]');
    expect(await page.textContent('[data-span-id="db-99-198"]')).toContain('final query');
    expect(await page.locator('[data-span-id=root]').count()).toBe(0);
    expect(await rowCount()).toBeLessThan(80);
    // Keyboard: Home goes back to the first row, ArrowDown to the next.
    await page.click('[data-span-id="db-99-198"]');
    await page.focus('[data-span-id="db-99-198"]');
    await page.keyboard.press('Home');
    await page.waitForSelector('[data-span-id=root][aria-selected=true]');
    await page.keyboard.press('ArrowDown');
    await page.waitForSelector('[data-span-id="api-0"][aria-selected=true]');
    // (The row is focused in an effect after the render that marks it selected: wait for it.)
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-span-id'))).toBe('api-0');
  });

  it('marks the critical path', async () => {
    expect(await page.textContent('label:has([data-testid=critical-toggle])')).toContain('critical path (701)');
    expect(await page.getAttribute('[data-span-id=root]', 'data-critical')).toBe('true');
    expect(await page.getAttribute('[data-span-id="api-0"]', 'data-critical')).toBe('true');
    expect(await page.getAttribute('[data-span-id="db-0-0"]', 'data-critical')).toBeNull();
    expect(await page.getAttribute('[data-span-id="db-0-28"]', 'data-critical')).toBe('true');
    expect(await page.getAttribute('[data-span-id="db-0-29"]', 'data-critical')).toBeNull();
  });

  it('finds a span by a field and jumps to it', async () => {
    await page.fill('[data-testid=trace-search]', 'needle');
    await expect.poll(() => page.textContent('[data-testid=trace-search-count]')).toBe('1 match');
    await page.click('[data-testid=trace-search-next]');
    await page.waitForSelector('[data-span-id="db-57-123"].current[aria-selected=true]');
    expect(await page.textContent('[data-testid=trace-search-count]')).toBe('1 of 1 match');
    await page.screenshot({ path: `${SHOTS}big-trace-search.png` });
    await expect.poll(() => page.textContent('[data-testid=span-details]')).toContain('SELECT needle FROM haystack');
    await page.fill('[data-testid=trace-search]', 'name=final');
    await expect.poll(() => page.textContent('[data-testid=trace-search-count]')).toBe('1 match');
    await page.fill('[data-testid=trace-search]', '');
  });

  it('collapses a service into the roots of its subtrees', async () => {
    await page.click('[data-testid=service-toggle][data-service=api]');
    await expect.poll(() => page.getAttribute('[data-testid=waterfall]', 'data-shown')).toBe(String(1 + API));
    await page.$eval('[data-testid=waterfall]', (el) => (el.scrollTop = 0));
    await page.waitForSelector('[data-span-id=root]');
    const services = await page.$$eval('[data-testid=waterfall] .wf-row .svc', (els) => [...new Set(els.map((e) => e.textContent))]);
    expect(services.sort()).toEqual(['api', 'frontend']);
    expect(await page.textContent('[data-span-id="api-0"] .badge')).toBe(String(DB));
    await page.click('[data-testid=service-toggle][data-service=api]');
    await expect.poll(() => page.getAttribute('[data-testid=waterfall]', 'data-shown')).toBe('20001');
  });

  it('zooms the time by dragging across the minimap, and back with a double-click', async () => {
    const box = (await page.locator('[data-testid=trace-minimap]').boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.25, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2, { steps: 4 });
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2, { steps: 4 });
    await page.mouse.up();
    const [from, to] = (await page.getAttribute('[data-testid=trace-minimap]', 'data-range'))!.split(',').map(Number);
    expect(from).toBeGreaterThan(20_000);
    expect(to).toBeLessThan(60_000);
    await page.screenshot({ path: `${SHOTS}big-trace-zoomed.png` });
    await page.dblclick('[data-testid=trace-minimap]');
    expect(await page.getAttribute('[data-testid=trace-minimap]', 'data-range')).toBe('0.000,100005.000');
    expect(errors).toEqual([]);
  });
});
