// Authoring in the web UI, in Chromium against a real `waggle serve`: each flow made in the UI
// and then seen through the API. The dataset settings page: the dataset's description, JSON
// depth and delete protection; a column described, hidden and retyped; a calculated field whose
// expression the server checks as it is typed, then created, edited and deleted.
// Screenshots go to test-results/ui-authoring/ (git-ignored). Chromium: see test/ui-browser.test.ts.
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumInstalled, launchChromium } from './browser-helpers.js';
import { killAll, removeTempDirs, serve, tempDir, type Served } from './cli-helpers.js';

const SHOTS = fileURLToPath(new URL('../test-results/ui-authoring/', import.meta.url));
const present = chromiumInstalled();
const CI = process.env.CI === 'true';

describe.skipIf(!present && !CI)('authoring in the web UI (Chromium)', { timeout: 90_000 }, () => {
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
  const shot = (name: string) => page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true });

  beforeAll(async () => {
    if (!present) throw new Error(`CI: Chromium is required at ${CHROMIUM} for the web UI tests (.ci/run installs it with apt-get)`);
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    server = await serve(['--data-dir', tempDir()], { timeout: 60_000 });
    key = / configuration key \(X-Honeycomb-Team\): (\S+)$/m.exec(server.stdout())![1];
    const ingestKey = / ingest key +\(X-Honeycomb-Team\): (\S+)$/m.exec(server.stdout())![1];
    const events = Array.from({ length: 20 }, (_, i) => ({ data: { duration_ms: 10 + i, status: i % 5 === 0 ? 500 : 200, route: `/r${i % 3}` } }));
    const res = await fetch(`${server.url}/1/batch/checkout`, { method: 'POST', headers: { 'x-honeycomb-team': ingestKey, 'content-type': 'application/json' }, body: JSON.stringify(events) });
    expect(res.status).toBe(200);
    ({ browser, close: closeBrowser } = await launchChromium());
    page = await (await browser.newContext({ viewport: { width: 1360, height: 900 } })).newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/login`);
    await page.fill('#key', key);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=environment]');
  }, 90_000);

  afterAll(async () => {
    await closeBrowser?.();
    await killAll();
    removeTempDirs();
  });

  it('edits the dataset from its settings page, reached from Home', async () => {
    await page.click('tr:has-text("checkout") >> text=Settings');
    await page.waitForURL(`${server.url}${scope}/datasets/checkout/settings`);
    await page.fill('textarea[name=description]', 'Checkout service spans');
    await page.fill('input[name=expand_json_depth]', '3');
    await page.uncheck('input[name=delete_protected]');
    await page.click('form.settings-form >> button[type=submit]');
    await page.waitForSelector('text=Saved');
    expect(await api('GET', '/1/datasets/checkout')).toMatchObject({ description: 'Checkout service spans', expand_json_depth: 3, settings: { delete_protected: false } });
  });

  it('describes, hides and retypes a column', async () => {
    const row = page.locator('tr[data-column="status"]');
    await row.locator('input[aria-label="Description of status"]').fill('HTTP status');
    await row.locator('input[type=checkbox]').check();
    await row.locator('select').selectOption('string');
    await row.locator('button:has-text("Save")').click();
    await expect.poll(async () => row.locator('button:has-text("Save")').isDisabled()).toBe(true);
    const cols = (await api('GET', '/1/columns/checkout')) as { key_name: string }[];
    expect(cols.find((c) => c.key_name === 'status')).toMatchObject({ description: 'HTTP status', hidden: true, type: 'string' });
    expect(cols.find((c) => c.key_name === 'route')).toMatchObject({ description: '', hidden: false });
  });

  it('writes a calculated field with live errors from the server, then creates, edits and deletes it', async () => {
    await page.click('text=New calculated field');
    await page.fill('form.cf-form input[name=alias]', 'slow');
    await page.fill('form.cf-form textarea[name=expression]', 'GTE($duration_ms, ');
    await expect.poll(() => page.textContent('[data-testid=expression-check]')).toMatch(/at position \d+/);
    expect(await page.isDisabled('form.cf-form button[type=submit]')).toBe(true);
    await shot('calculated-field-error');
    await page.fill('form.cf-form textarea[name=expression]', 'GTE($duration_ms, 20)');
    await expect.poll(() => page.textContent('[data-testid=expression-check]')).toMatch(/valid · boolean/);
    await page.fill('form.cf-form input[name=description]', 'at least 20 ms');
    await page.click('form.cf-form button[type=submit]');
    await page.waitForSelector('tr[data-field="slow"]');
    const [made] = (await api('GET', '/1/derived_columns/checkout')) as { id: string }[];
    expect(made).toMatchObject({ alias: 'slow', expression: 'GTE($duration_ms, 20)', description: 'at least 20 ms' });
    await shot('dataset-settings');

    await page.click('tr[data-field="slow"] >> text=Edit');
    await page.fill('form.cf-form textarea[name=expression]', 'GTE($duration_ms, 25)');
    await expect.poll(() => page.textContent('[data-testid=expression-check]')).toMatch(/valid/);
    await page.click('form.cf-form button[type=submit]');
    await page.waitForSelector('tr[data-field="slow"] >> text=GTE($duration_ms, 25)');
    expect(await api('GET', `/1/derived_columns/checkout/${made.id}`)).toMatchObject({ expression: 'GTE($duration_ms, 25)' });

    page.once('dialog', (d) => void d.accept());
    await page.click('tr[data-field="slow"] >> text=Delete');
    await page.waitForSelector('text=No calculated fields yet.');
    expect(await api('GET', '/1/derived_columns/checkout')).toEqual([]);
    expect(errors).toEqual([]);
  });
});
