// Debian's Chromium driven by playwright-core, for the browser tests, the web UI bench and the
// README's screenshots. Chromium is found by path (`.ci/run` installs the Debian package when it
// is missing); it starts headless, with a fresh profile (playwright makes a new temporary one
// for every launch) and without the background networking that a closed network refuses.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.WAGGLE_CHROMIUM ?? '/usr/bin/chromium';

export const chromiumInstalled = () => existsSync(CHROMIUM);

export async function launchChromium(): Promise<{ browser: Browser; close: () => Promise<void> }> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return { browser, close: () => browser.close() };
}

/** The configuration and ingest keys `waggle serve` printed at its first start. */
export function printedKeys(stdout: string): { configuration: string; ingest: string } {
  return {
    configuration: / configuration key \(X-Honeycomb-Team\): (\S+)$/m.exec(stdout)![1],
    ingest: / ingest key +\(X-Honeycomb-Team\): (\S+)$/m.exec(stdout)![1],
  };
}

/** A page of a new browser context, signed in to the server at `url` with `key`; its page errors go to `errors`. */
export async function signedInPage(browser: Browser, url: string, key: string, viewport: { width: number; height: number }, errors: string[]): Promise<Page> {
  const page = await (await browser.newContext({ viewport })).newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${url}/login`);
  await page.fill('#key', key);
  await page.click('button[type=submit]');
  await page.waitForSelector('[data-testid=environment]');
  return page;
}
