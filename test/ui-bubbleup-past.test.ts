// BubbleUp against the past in the web UI, in Chromium against a real `waggle serve`: events sent
// so that the last 30 minutes stand out from the rest of the last two hours by their region, and
// from the same 30 minutes a week earlier by their version. The query page opens BubbleUp of the
// last 30 minutes (`&bubbleup=`, as the SLO page's link does); "Compare with: the rest" ranks the
// region first, "1 week earlier" the version, the header and the legend saying what is compared,
// and an offset shorter than the selection cannot be picked. Screenshot:
// test-results/ui-bubbleup-past/ (git-ignored; docs/images/web-ui-bubbleup-past.png is one).
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumInstalled, launchChromium, printedKeys, signedInPage } from './browser-helpers.js';
import { killAll, removeTempDirs, serve, tempDir, type Served } from './cli-helpers.js';

const SHOTS = fileURLToPath(new URL('../test-results/ui-bubbleup-past/', import.meta.url));
const present = chromiumInstalled();
const CI = process.env.CI === 'true';
const WEEK = 7 * 86_400;

/** The last 30 minutes: eu-west 80% (10% before), v2; the same 30 minutes a week earlier: eu-west 80%, v1. */
function events(now: number) {
  const out: unknown[] = [];
  const at = (s: number) => new Date(s * 1000).toISOString();
  for (let i = 0; i < 60; i++) {
    const region = i % 5 === 0 ? 'us-east' : 'eu-west';
    out.push({ time: at(now - 1790 + i * 29), data: { region, version: 'v2', duration_ms: 100 + i } });
    out.push({ time: at(now - WEEK - 1790 + i * 29), data: { region, version: 'v1', duration_ms: 100 + i } });
  }
  for (let i = 0; i < 120; i++) out.push({ time: at(now - 7000 + i * 40), data: { region: i % 10 === 0 ? 'eu-west' : 'us-east', version: 'v2', duration_ms: 100 + i } });
  return out;
}

describe.skipIf(!present && !CI)('BubbleUp against the past in the web UI (Chromium)', { timeout: 60_000 }, () => {
  let server: Served;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    if (!present) throw new Error(`CI: Chromium is required at ${CHROMIUM} for the web UI tests (.ci/run installs it with apt-get)`);
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    server = await serve(['--data-dir', tempDir()], { timeout: 60_000 });
    const key = printedKeys(server.stdout()).configuration;
    const ingestKey = printedKeys(server.stdout()).ingest;
    const res = await fetch(`${server.url}/1/batch/checkout`, {
      method: 'POST',
      headers: { 'x-honeycomb-team': ingestKey, 'content-type': 'application/json' },
      body: JSON.stringify(events(Math.floor(Date.now() / 1000))),
    });
    expect(res.status).toBe(200);
    ({ browser, close: closeBrowser } = await launchChromium());
    page = await signedInPage(browser, server.url, key, { width: 1360, height: 900 }, errors);
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
    await killAll();
    removeTempDirs();
  });

  const top = async () => {
    const first = page.locator('[data-testid=bubbleup] .dist').first();
    await first.waitFor({ timeout: 20_000 });
    return first.getAttribute('data-column');
  };

  it('compares the last 30 minutes with the rest, then with the same 30 minutes a week earlier', async () => {
    const now = Math.floor(Date.now() / 1000);
    const spec = { calculations: [{ op: 'COUNT' }], time_range: 7200 };
    const selection = { start_time: now - 1800, end_time: now };
    await page.goto(`${server.url}/my-team/environments/production/datasets/checkout?query=${encodeURIComponent(JSON.stringify(spec))}&bubbleup=${encodeURIComponent(JSON.stringify(selection))}`);
    const panel = page.locator('[data-testid=bubbleup]');
    expect(await top()).toBe('region');
    const compared = panel.locator('[data-testid=bubbleup-compared]');
    expect(await compared.textContent()).toContain("vs the rest of the query's events");
    const choice = panel.locator('select[name=compare_with]');
    expect(await choice.locator('option').allTextContents()).toEqual(['the rest', '1 hour earlier', '1 day earlier', '1 week earlier']);
    expect(await choice.locator('option:disabled').count()).toBe(0);

    await choice.selectOption({ label: '1 week earlier' });
    await expect.poll(() => compared.textContent()).toContain('vs the same selection 1 week earlier');
    expect(await top()).toBe('version');
    const first = panel.locator('.dist').first();
    expect(Number(await first.locator('.badge').textContent())).toBe(100);
    expect(await panel.locator('.legend-inline').textContent()).toContain('1 week earlier');
    expect(await panel.textContent()).toContain('60 selected events against 60 in the same selection 1 week earlier');
    await page.screenshot({ path: `${SHOTS}bubbleup-past.png`, fullPage: true });

    await choice.selectOption({ label: 'the rest' });
    await expect.poll(() => compared.textContent()).toContain("vs the rest of the query's events");
    expect(await top()).toBe('region');
    expect(errors).toEqual([]);
  });

  it('offers no offset shorter than the selection', async () => {
    const now = Math.floor(Date.now() / 1000);
    const spec = { calculations: [{ op: 'COUNT' }], time_range: 7200 };
    const selection = { start_time: now - 5400, end_time: now };
    await page.goto(`${server.url}/my-team/environments/production/datasets/checkout?query=${encodeURIComponent(JSON.stringify(spec))}&bubbleup=${encodeURIComponent(JSON.stringify(selection))}`);
    await top();
    const choice = page.locator('[data-testid=bubbleup] select[name=compare_with]');
    expect(await choice.locator('option:disabled').allTextContents()).toEqual(['1 hour earlier']);
    expect(errors).toEqual([]);
  });
});
