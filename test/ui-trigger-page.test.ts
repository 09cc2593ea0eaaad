// The trigger page of the web UI in a real browser (Debian's Chromium, playwright-core) against a
// real `waggle serve` with the demo data (test/ui-seed.ts): its trigger fires at its first
// evaluation; the triggers list leads to its page, which draws the query's graph with the
// threshold and the firing period, lists the state change and the delivery of its notification,
// and links to the stored result of that evaluation. One server and one browser for the file;
// screenshots go to test-results/ui-trigger/ (git-ignored; docs/images/web-ui-trigger.png is one).
//
// Chromium is found at /usr/bin/chromium (WAGGLE_CHROMIUM overrides); without it these tests are
// skipped with a notice, except with CI=true, where they fail.
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumInstalled, launchChromium, printedKeys } from './browser-helpers.js';
import { killAll, removeTempDirs, serve, tempDir, type Served } from './cli-helpers.js';
import { seedDemo, type Seeded } from './ui-seed.js';

const SHOTS = fileURLToPath(new URL('../test-results/ui-trigger/', import.meta.url));
const CI = process.env.CI === 'true';
const present = chromiumInstalled();
if (!present && !CI) console.warn(`\n*** Chromium not found at ${CHROMIUM}: the trigger page browser tests are SKIPPED. ***\n`);

describe.skipIf(!present && !CI)('the trigger page in Chromium', { timeout: 60_000 }, () => {
  let server: Served;
  let key: string;
  let seeded: Seeded;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  const errors: string[] = [];
  const scope = '/my-team/environments/production';
  const api = async (path: string) => {
    const res = await fetch(`${server.url}${path}`, { headers: { 'x-honeycomb-team': key } });
    expect(res.status, path).toBe(200);
    return res.json();
  };

  beforeAll(async () => {
    if (!present) throw new Error(`CI: Chromium is required at ${CHROMIUM} for the web UI tests (.ci/run installs it with apt-get)`);
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    // Evaluation every half second: the demo trigger (p99 > 500 ms over 15 minutes) fires at once.
    server = await serve(['--data-dir', tempDir()], { timeout: 30_000, env: { WAGGLE_EVALUATION_TICK_MS: '500' } });
    const out = server.stdout();
    key = printedKeys(out).configuration;
    const ingest = printedKeys(out).ingest;
    [seeded, { browser, close: closeBrowser }] = await Promise.all([seedDemo(server.url, { configuration: key, ingest }), launchChromium()]);
    page = await (await browser.newContext({ viewport: { width: 1360, height: 900 } })).newPage();
    page.on('pageerror', (e) => errors.push(e.message));
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
    await killAll();
    removeTempDirs();
  });

  it('the list leads to the trigger’s page: graph with threshold and firing period, its state change and delivery, and the result of that evaluation', async () => {
    // The evaluation fires and tries the (unreachable) webhook.
    await expect.poll(async () => (await api(`/1/triggers/checkout/${seeded.triggerId}/history`)).deliveries.length, { timeout: 20_000, interval: 250 }).toBeGreaterThan(0);
    const history = await api(`/1/triggers/checkout/${seeded.triggerId}/history`);
    expect(history.state_changes[0]).toMatchObject({ status: 'triggered', result_url: expect.stringContaining(`${scope}/datasets/checkout/result/`) });

    await page.goto(`${server.url}${scope}/triggers`);
    await page.waitForURL(/\/login/);
    await page.fill('#key', key);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=triggers-table]');
    await page.click('[data-testid=triggers-table] a:has-text("Slow checkouts")');
    await page.waitForURL(`${server.url}${scope}/datasets/checkout/triggers/${seeded.triggerId}`);
    await page.waitForSelector('[data-testid=trigger-page] .chart canvas');
    expect(await page.textContent('[data-testid=trigger-page] h1')).toContain('triggered');
    expect(await page.textContent('[data-testid=trigger-legend]')).toContain('threshold > 500');
    expect(await page.textContent('[data-testid=trigger-figures]')).toMatch(/P99\(duration_ms\) > 500/);
    // The firing period: a flag on the chart (its shaded band runs to now).
    expect(await page.locator('[data-testid=trigger-page] .marker-flag').count()).toBe(1);
    const change = page.locator('[data-testid=trigger-changes] tbody tr');
    await expect.poll(() => change.count()).toBe(1);
    expect(await change.first().textContent()).toContain('triggered');
    expect(await page.textContent('[data-testid=trigger-deliveries]')).toMatch(/triggered[\s\S]*webhook[\s\S]*on-call hook/);
    await page.waitForTimeout(300); // (let the last frame settle)
    await page.screenshot({ path: `${SHOTS}trigger-page.png`, fullPage: true });

    // A notification's `result_url` is the page this link opens: exactly that stored result.
    await change.first().locator('a:has-text("the result")').click();
    const resultId = /\/result\/([^/]+)$/.exec(history.state_changes[0].result_url)![1];
    await page.waitForURL(`${server.url}${scope}/datasets/checkout/result/${resultId}`);
    await page.waitForSelector(`[data-result-id="${resultId}"] [data-testid=results-table]`);
    expect(errors).toEqual([]);
  });

  it('a notification’s trigger_url opens the page directly', async () => {
    await page.goto(`${server.url}${scope}/datasets/checkout/triggers/${seeded.triggerId}`);
    await page.waitForSelector('[data-testid=trigger-changes]');
    expect(await page.textContent('[data-testid=trigger-page] h1')).toContain('Slow checkouts');
    await page.goto(`${server.url}${scope}/datasets/checkout/triggers/NoSuchTrigger`);
    await page.waitForSelector('[role=alert]');
    expect(await page.textContent('[role=alert]')).toMatch(/not found/i);
  });
});
