// Trace against trace in the web UI, in Chromium against a real `waggle serve`: five traces of
// the root span frontend "GET /checkout" sent through /1/batch, the slow one opened; "Compare
// with a typical trace" asks the server (GET /1/traces/{ds}/{id}/typical) and opens the trace
// nearest the median; the comparison lines the spans up (matched, only in A, only in B) with the
// difference of each pair, slower red and faster green. "Compare with…" another trace id from
// the trace page, and "Swap A and B". Screenshots go to test-results/ui-trace-compare/
// (git-ignored; docs/images/web-ui-trace-compare.png is one). Chromium: see test/ui-browser.test.ts.
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumInstalled, launchChromium, printedKeys, signedInPage } from './browser-helpers.js';
import { killAll, removeTempDirs, serve, tempDir, type Served } from './cli-helpers.js';

const SHOTS = fileURLToPath(new URL('../test-results/ui-trace-compare/', import.meta.url));
const present = chromiumInstalled();
const CI = process.env.CI === 'true';

/** A checkout trace: its root, the cart with `selects` queries, the payment (with a retry when slow), fraud scoring when not. */
function checkout(id: string, startMs: number, rootMs: number, slow: boolean) {
  const at = (offset: number) => new Date(startMs + offset).toISOString();
  const span = (sid: string, parent: string | undefined, service: string, name: string, offset: number, ms: number) => ({
    time: at(offset),
    data: { 'trace.trace_id': id, 'trace.span_id': `${id}-${sid}`, ...(parent ? { 'trace.parent_id': `${id}-${parent}` } : {}), 'service.name': service, name, duration_ms: ms },
  });
  const spans = [
    span('root', undefined, 'frontend', 'GET /checkout', 0, rootMs),
    span('cart', 'root', 'cart', 'cart.load', 5, slow ? 150 : 60),
    span('q1', 'cart', 'db', 'SELECT carts', 10, slow ? 40 : 20),
    span('q2', 'cart', 'db', 'SELECT items', 35, 18),
    span('pay', 'root', 'payments', 'charge', 160, slow ? rootMs - 200 : rootMs - 170),
  ];
  if (slow) spans.push(span('q3', 'cart', 'db', 'SELECT items', 60, 80), span('retry', 'pay', 'payments', 'charge retry', 700, 900));
  else spans.push(span('fraud', 'root', 'fraud', 'score', 150, 12));
  return spans;
}

describe.skipIf(!present && !CI)('comparing traces in the web UI (Chromium)', { timeout: 60_000 }, () => {
  let server: Served;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  const errors: string[] = [];
  const scope = '/my-team/environments/production';
  const rows = () =>
    page.$$eval('[data-testid=trace-compare] [data-in]', (els) =>
      els.map((e) => [e.getAttribute('data-in'), e.getAttribute('data-name'), e.getAttribute('data-diff-ms'), e.querySelector('.tc-diff')?.className.includes('bad') ? 'red' : e.querySelector('.tc-diff')?.className.includes('ok') ? 'green' : '']),
    );

  beforeAll(async () => {
    if (!present) throw new Error(`CI: Chromium is required at ${CHROMIUM} for the web UI tests (.ci/run installs it with apt-get)`);
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    server = await serve(['--data-dir', tempDir()], { timeout: 60_000 });
    const key = printedKeys(server.stdout()).configuration;
    const ingestKey = printedKeys(server.stdout()).ingest;
    const now = Date.now();
    // Roots of 180, 210, 240, 600 and 1,800 ms: the median is 240 (typ-c).
    const events = [
      ...checkout('slow', now - 60_000, 1800, true),
      ...checkout('typ-a', now - 120_000, 180, false),
      ...checkout('typ-b', now - 110_000, 210, false),
      ...checkout('typ-c', now - 100_000, 240, false),
      ...checkout('typ-d', now - 90_000, 600, false),
    ];
    const res = await fetch(`${server.url}/1/batch/checkout`, { method: 'POST', headers: { 'x-honeycomb-team': ingestKey, 'content-type': 'application/json' }, body: JSON.stringify(events) });
    expect(res.status).toBe(200);
    ({ browser, close: closeBrowser } = await launchChromium());
    page = await signedInPage(browser, server.url, key, { width: 1360, height: 760 }, errors);
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
    await killAll();
    removeTempDirs();
  });

  it('compares the slow trace with the typical one the server finds: matched spans with their difference, spans only one has', async () => {
    await page.goto(`${server.url}${scope}/datasets/__all__/trace/slow`);
    await page.click('text=Compare with a typical trace');
    await page.waitForURL(`${server.url}${scope}/datasets/__all__/trace/slow/compare/typ-c?median=240&roots=5`);
    await page.waitForSelector('[data-testid=trace-compare] [data-in]');
    expect(await rows()).toEqual([
      ['both', 'GET /checkout', '1560.000', 'red'],
      ['both', 'cart.load', '90.000', 'red'],
      ['both', 'SELECT carts', '20.000', 'red'],
      ['both', 'SELECT items', '0.000', ''],
      ['a', 'SELECT items', null, ''],
      ['b', 'score', null, ''],
      ['both', 'charge', '1530.000', 'red'],
      ['a', 'charge retry', null, ''],
    ]);
    expect(await page.textContent('[data-testid=typical-note]')).toContain('of the 5 traces with the same root span within 12 hours, its root took the time nearest their median, 240 ms');
    const summary = await page.textContent('[data-testid=compare-summary]');
    expect(summary).toContain('5 matched');
    expect(summary).toContain('2 only in A');
    expect(summary).toContain('1 only in B');
    expect(await page.textContent('[data-in=both][data-name="GET /checkout"] .tc-diff')).toBe('+1.56 s (+650%)');
    expect(await page.locator('[data-in=a] .badge', { hasText: 'only in A' }).count()).toBe(2);
    await page.screenshot({ path: `${SHOTS}trace-compare.png`, fullPage: true });
    // Only the spans that differ: the SELECT items of 18 ms in both is left out.
    await page.check('[data-testid=compare-summary] input[type=checkbox]');
    await page.waitForSelector('[data-in=both][data-name="SELECT items"]', { state: 'detached' });
    expect((await rows()).map((r) => r[1])).toEqual(['GET /checkout', 'cart.load', 'SELECT carts', 'SELECT items', 'score', 'charge', 'charge retry']);
    // Swapped: the typical trace against the slow one, every difference the other way (green).
    await page.click('text=Swap A and B');
    await page.waitForURL(`${server.url}${scope}/datasets/__all__/trace/typ-c/compare/slow`);
    // (The previous comparison stays on screen until both traces of this one have arrived.)
    await page.waitForSelector('[data-testid=trace-compare] [data-in=b][data-name="charge retry"]');
    const swapped = await rows();
    expect(swapped[0]).toEqual(['both', 'GET /checkout', '-1560.000', 'green']);
    expect(swapped.filter((r) => r[0] === 'b').map((r) => r[1])).toEqual(['SELECT items', 'charge retry']);
  });

  it('compares with another trace id typed on the trace page', async () => {
    await page.goto(`${server.url}${scope}/datasets/checkout/trace/typ-d`);
    await page.waitForSelector('[data-testid=waterfall]');
    await page.screenshot({ path: `${SHOTS}trace.png`, fullPage: true });
    await page.fill('[data-testid=compare-with] input', 'typ-a');
    await page.click('[data-testid=compare-with] button[type=submit]');
    await page.waitForURL(`${server.url}${scope}/datasets/checkout/trace/typ-d/compare/typ-a`);
    await page.waitForSelector('[data-testid=trace-compare] [data-in]');
    const r = await rows();
    expect(r.every((x) => x[0] === 'both')).toBe(true);
    expect(r[0]).toEqual(['both', 'GET /checkout', '420.000', 'red']);
    expect(errors).toEqual([]);
  });
});
