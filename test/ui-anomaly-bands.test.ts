// Anomaly bands in the web UI, in Chromium against a real `waggle serve`: a week of daily history
// (the same hour each day) and now the same traffic plus a burst in one bucket;
// the query page's "Show expected band" fills each line's band and rings the burst, the note says
// one point is outside and the tooltip there says "outside · expected …". Switching to weekly
// seasonality asks again. The screenshot goes to test-results/ui-anomaly-bands/ (git-ignored;
// docs/images/web-ui-anomaly-bands.png is its query.png).
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumInstalled, launchChromium, printedKeys, signedInPage } from './browser-helpers.js';
import { killAll, removeTempDirs, serve, tempDir, type Served } from './cli-helpers.js';

const SHOTS = fileURLToPath(new URL('../test-results/ui-anomaly-bands/', import.meta.url));
const present = chromiumInstalled();
const CI = process.env.CI === 'true';
const DAY = 86_400;
const iso = (s: number) => new Date(s * 1000).toISOString();

describe.skipIf(!present && !CI)('anomaly bands in the web UI (Chromium)', { timeout: 60_000 }, () => {
  let server: Served;
  let key: string;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let burstAt: number;
  const errors: string[] = [];

  beforeAll(async () => {
    if (!present) throw new Error(`CI: Chromium is required at ${CHROMIUM} for the web UI tests (.ci/run installs it with apt-get)`);
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    server = await serve(['--data-dir', tempDir()], { timeout: 60_000 });
    key = printedKeys(server.stdout()).configuration;
    const ingestKey = printedKeys(server.stdout()).ingest;
    const nowS = Math.floor(Date.now() / 1000);
    // The burst's 30 seconds sit inside one 10-minute bucket, well within the hour (a burst
    // across a bucket boundary would put two points outside, at 1 run in 20).
    burstAt = Math.floor((nowS - 30 * 60) / 600) * 600 + 400;
    const events: unknown[] = [];
    for (let day = 0; day <= 7; day++) {
      for (let m = 1; m < 60; m++) {
        const t = nowS - day * DAY - m * 60;
        events.push({ time: iso(t), data: { route: '/a', ms: 10 } });
        // (The same minutes every day: a window's edge buckets hold part of 10 minutes, which part
        // depends on the time of the run, and noise there put a second point outside now and then.)
        if (m % 7 === 1) events.push({ time: iso(t - 1), data: { route: '/a', ms: 11 } });
        if (m % 5 === 0) events.push({ time: iso(t - 2), data: { route: '/b', ms: 20 } });
      }
    }
    for (let i = 0; i < 30; i++) events.push({ time: iso(burstAt - i), data: { route: '/a', ms: 50 } });
    const res = await fetch(`${server.url}/1/batch/shop`, { method: 'POST', headers: { 'x-honeycomb-team': ingestKey, 'content-type': 'application/json' }, body: JSON.stringify(events) });
    expect(res.status).toBe(200);
    ({ browser, close: closeBrowser } = await launchChromium());
    page = await signedInPage(browser, server.url, key, { width: 1280, height: 760 }, errors);
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
    await killAll();
    removeTempDirs();
  });

  it('Show expected band: the bands, the burst ringed and counted, the tooltip there says outside', async () => {
    const spec = { calculations: [{ op: 'COUNT' }], breakdowns: ['route'], time_range: 3600, granularity: 600 };
    await page.goto(`${server.url}/my-team/environments/production/datasets/shop?query=${encodeURIComponent(JSON.stringify(spec))}`);
    await page.waitForSelector('[data-testid=results-table]');
    const chart = page.locator('[data-chart=COUNT]');
    expect(await chart.getAttribute('data-outside')).toBeNull();
    await page.check('[data-testid=band-toggle] input[type=checkbox]');
    await page.waitForSelector('[data-testid=band-note]');
    expect(await page.textContent('[data-testid=band-note]')).toContain('1 point outside');
    await expect.poll(() => chart.getAttribute('data-outside')).toBe('1');

    // Hover the burst's bucket: the tooltip marks /a outside its band.
    const [from, to] = (await chart.getAttribute('data-span'))!.split(',').map(Number);
    const bucket = Math.floor(burstAt / 600) * 600;
    const box = (await chart.locator('.u-over').boundingBox())!;
    await page.mouse.move(box.x + (box.width * (bucket - from)) / (to - from), box.y + box.height * 0.3);
    await page.waitForSelector('[data-testid=tooltip-band][data-outside]');
    expect(await page.textContent('[data-testid=tooltip-band][data-outside]')).toMatch(/^outside · expected \d/);
    await page.screenshot({ path: `${SHOTS}query.png` });

    // Weekly seasonality: asked again (a week back the same traffic, two weeks back none).
    const asked = page.waitForRequest((r) => r.url().includes('/bands?seasonality=week'));
    await page.selectOption('select[aria-label="Expected band from"]', 'week');
    await asked;
    await page.waitForSelector('[data-testid=band-note]');
    await page.uncheck('[data-testid=band-toggle] input[type=checkbox]');
    await expect.poll(() => chart.getAttribute('data-outside')).toBeNull();
    expect(errors).toEqual([]);
  });
});
