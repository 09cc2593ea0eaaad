// Debian's Chromium driven by playwright-core, for the browser tests, the web UI bench and the
// README's screenshots. Chromium is found by path (`.ci/run` installs the Debian package when it
// is missing); it starts headless, with a fresh profile (playwright makes a new temporary one
// for every launch) and without the background networking that a closed network refuses.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

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
