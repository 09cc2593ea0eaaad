// Regression tests of issue 37's defects ("Web UI, round two") that need a browser: Debian's
// Chromium (playwright-core) against one `waggle serve` seeded with test/ui-seed.ts, one browser
// for the whole file (kept lean: a few page loads per defect). The pure logic of the same fixes is
// test/web-round-two.test.ts. Skipped without Chromium, except with CI=true (as ui-browser).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumInstalled, launchChromium, printedKeys } from './browser-helpers.js';
import { killAll, removeTempDirs, serve, tempDir, type Served } from './cli-helpers.js';
import { seedDemo, type Seeded } from './ui-seed.js';

const CI = process.env.CI === 'true';
const present = chromiumInstalled();

describe.skipIf(!present && !CI)('issue 37’s web UI defects, in Chromium', { timeout: 60_000 }, () => {
  let server: Served;
  let keys: { configuration: string; ingest: string };
  let seeded: Seeded;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  const scope = '/my-team/environments/production';
  const errors: string[] = [];
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { 'x-honeycomb-team': keys.configuration, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res.status, `${method} ${path}`).toBeLessThan(300);
    return { body: await res.json(), headers: res.headers };
  };
  const apiResult = async (dataset: string, spec: unknown) => {
    const q = (await api('POST', `/1/queries/${dataset}`, spec)).body;
    let r = await api('POST', `/1/query_results/${dataset}`, { query_id: q.id });
    while (!r.body.complete) r = await api('GET', `/1/query_results/${dataset}/${r.body.id}`);
    return r;
  };

  beforeAll(async () => {
    if (!present) throw new Error(`CI: Chromium is required at ${CHROMIUM} for the web UI tests`);
    server = await serve(['--data-dir', tempDir()], { timeout: 60_000 });
    const out = server.stdout();
    keys = printedKeys(out);
    seeded = await seedDemo(server.url, keys);
    ({ browser, close: closeBrowser } = await launchChromium());
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = await context.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/login`);
    await page.fill('#key', keys.configuration);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=environment]');
  }, 120_000);

  afterAll(async () => {
    await closeBrowser?.();
    await killAll();
    removeTempDirs();
  });

  it('5: a stored result draws the window it covers: one bucket is not a two-year axis, quiet minutes are 0', async () => {
    const one = await apiResult('checkout', { calculations: [{ op: 'COUNT' }], time_range: 60, granularity: 60 });
    const [start, end] = one.headers.get('x-waggle-window')!.split(',').map(Number);
    expect(end - start).toBeGreaterThanOrEqual(60);
    await page.goto(one.body.links.query_url);
    const chart = page.locator('[data-chart="COUNT"]');
    await chart.locator('canvas').first().waitFor();
    expect(await chart.getAttribute('data-span')).toBe(`${start},${end}`);
    // uPlot's axis labels: times of the day, never a year (the one-point axis ran 2027 → 2029).
    const labels = await chart.locator('.u-axis').first().textContent();
    expect(labels).not.toMatch(/20(2[7-9])/);

    // A sparse result (errors only, by minute): every minute of the window is a bucket, 0 when quiet.
    const sparse = await apiResult('checkout', { calculations: [{ op: 'COUNT' }], filters: [{ column: 'status', op: '=', value: 500 }], time_range: 1800, granularity: 60 });
    const [s2, e2] = sparse.headers.get('x-waggle-window')!.split(',').map(Number);
    await page.goto(sparse.body.links.query_url);
    await chart.locator('summary').click();
    const cells = await chart.locator('table[data-chart-data="COUNT"] tbody td[data-value]').evaluateAll((tds) => tds.map((td) => Number(td.getAttribute('data-value'))));
    expect(cells).toHaveLength((e2 - s2) / 60);
    expect(cells.filter((v) => v === 0).length).toBeGreaterThan(0);
    expect(cells.reduce((a, b) => a + b, 0)).toBe(sparse.body.data.results[0].data.COUNT);
  });

  it('3, 4: a board’s panels show a legend, every chart of a panel inside it, and the markers', async () => {
    const q1 = (await api('POST', '/1/queries/checkout', { calculations: [{ op: 'COUNT' }], breakdowns: ['service.name'], time_range: 7200 })).body;
    const q2 = (await api('POST', '/1/queries/checkout', { calculations: [{ op: 'COUNT' }, { op: 'P95', column: 'duration_ms' }], breakdowns: ['region'], time_range: 7200 })).body;
    const a1 = (await api('POST', '/1/query_annotations/checkout', { name: 'Stacked by service', query_id: q1.id })).body;
    const a2 = (await api('POST', '/1/query_annotations/checkout', { name: 'Count and P95 by region', query_id: q2.id })).body;
    const board = (
      await api('POST', '/1/boards', {
        name: 'Round two',
        type: 'flexible',
        panels: [
          { type: 'query', query_panel: { query_id: q1.id, query_annotation_id: a1.id, visualization_settings: { charts: [{ chart_type: 'stacked' }] } }, position: { x_coordinate: 0, y_coordinate: 0, width: 6, height: 6 } },
          { type: 'query', query_panel: { query_id: q2.id, query_annotation_id: a2.id }, position: { x_coordinate: 6, y_coordinate: 0, width: 6, height: 6 } },
        ],
      })
    ).body;
    await page.goto(board.links.board_url);
    await page.waitForFunction(() => document.querySelectorAll('.board-panel canvas').length >= 3, undefined, { timeout: 30_000 });
    const panels = page.locator('.board-panel[data-panel-type=query]');
    expect(await panels.nth(0).locator('[data-testid=legend] li').allTextContents()).toEqual(['frontend', 'payments', 'cart', 'search', 'shipping']);
    expect(await panels.nth(1).locator('[data-testid=legend] li').count()).toBe(4);
    // Both charts of the second panel lie inside its body: nothing to scroll to.
    const fit = await panels.nth(1).locator('.body').evaluate((body) => {
      const b = body.getBoundingClientRect();
      return { scroll: body.scrollHeight - body.clientHeight, charts: [...body.querySelectorAll('[data-chart]')].map((c) => c.getBoundingClientRect().bottom <= b.bottom + 1) };
    });
    expect(fit).toEqual({ scroll: 0, charts: [true, true] });
    // The seeded deploy marker (35 minutes ago, on checkout) is drawn on every chart.
    await expect.poll(() => page.locator('.board-panel .marker-flag').count()).toBe(3);
  });

  it('8: the events page fits its panel at 1440 px, chooses its columns, links the trace id and cuts values with an ellipsis', async () => {
    await page.goto(`${server.url}${scope}/datasets/__all__/events`);
    await page.waitForSelector('[data-testid=events-table] tbody tr');
    // The page never scrolls sideways; the table scrolls in its panel, the expand button first.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1440);
    const panel = (await page.locator('[data-testid=events-table]').locator('xpath=ancestor::div[contains(@class,"panel")]').boundingBox())!;
    const expand = (await page.locator('button[aria-label="All fields of event 1"]').boundingBox())!;
    expect(expand.x + expand.width).toBeLessThanOrEqual(panel.x + panel.width);
    const headers = () => page.$$eval('[data-testid=events-table] thead th.cell', (ths) => ths.map((t) => t.textContent));
    expect(await headers()).toHaveLength(8);
    // Choosing a column (the offered list holds every field of these events) adds it, in the address too.
    await page.click('.column-picker summary');
    const offered = await page.$$eval('[data-testid=column-choices] label', (ls) => ls.map((l) => l.textContent!.trim()));
    expect(offered.length).toBeGreaterThan(8);
    const extra = offered[offered.length - 1];
    await page.locator('[data-testid=column-choices] label', { hasText: extra }).locator('input').check();
    await expect.poll(headers).toContain(extra);
    expect(new URL(page.url()).searchParams.getAll('col')).toContain(extra);
    // The trace id is a link to its trace; values stay on one line, whole in their tooltip.
    if (!(await headers()).includes('trace.trace_id')) await page.locator('[data-testid=column-choices] label', { hasText: /^trace\.trace_id$/ }).locator('input').check();
    const link = page.locator('[data-testid=events-table] tbody td.cell a[href*="/trace/"]').first();
    await link.waitFor();
    const cell = await page.locator('[data-testid=events-table] tbody td.cell').first().evaluate((td) => ({ ws: getComputedStyle(td).whiteSpace, to: getComputedStyle(td).textOverflow, title: td.getAttribute('title') }));
    expect(cell).toMatchObject({ ws: 'nowrap', to: 'ellipsis' });
    expect(cell.title).not.toBeNull();
    await link.click();
    await page.waitForURL(/\/trace\//);
  });

  it('7: a heatmap after COUNT is drawn after it, with a colour legend', async () => {
    const spec = { calculations: [{ op: 'COUNT' }, { op: 'HEATMAP', column: 'duration_ms' }], time_range: 7200 };
    await page.goto(`${server.url}${scope}/datasets/checkout?query=${encodeURIComponent(JSON.stringify(spec))}`);
    await page.locator('.heatmap canvas').waitFor();
    expect(await page.$$eval('[data-testid=results] [data-chart]', (cs) => cs.map((c) => c.getAttribute('data-chart')))).toEqual(['COUNT', 'HEATMAP(duration_ms)']);
    expect(await page.textContent('[data-testid=heat-legend]')).toMatch(/^events per cell1\d/);
  });

  it('2: "BubbleUp failing events" compares the failing events with the passing ones, not with every other event', async () => {
    // An SLI that judges payments only (null for the other services' events).
    await api('POST', '/1/derived_columns/checkout', { alias: 'sli_pay', expression: 'IF(EQUALS($service.name, "payments"), LT($duration_ms, 600))' });
    const slo = (await api('POST', '/1/slos/checkout', { name: 'Payments latency', sli: { alias: 'sli_pay' }, time_period_days: 7, target_per_million: 990000 })).body;
    const counts = await apiResult('checkout', { calculations: [{ op: 'COUNT' }], breakdowns: ['sli_pay'], time_range: 7 * 86400 });
    const of = (v: unknown) => counts.body.data.results.find((r: any) => r.data.sli_pay === v)?.data.COUNT ?? 0;
    expect(of(undefined)).toBeGreaterThan(of(true)); // most events are not judged by this SLI
    await page.goto(`${server.url}${scope}/datasets/checkout/slo/${slo.id}`);
    await page.click('text=BubbleUp failing events');
    const panel = page.locator('[data-testid=bubbleup]');
    await panel.locator('.dist').first().waitFor({ timeout: 30_000 });
    const text = (await panel.textContent())!;
    expect(text).toContain('sli_pay = false');
    expect(text).not.toContain('0 – 0');
    // (9) Values too long for their column end in an ellipsis, whole in their tooltip.
    const label = await panel.locator('.vals .label').first().evaluate((l) => ({ title: l.getAttribute('title'), to: getComputedStyle(l.querySelector('.group-link') ?? l).textOverflow }));
    expect(label.to).toBe('ellipsis');
    expect(label.title).not.toBeNull();
    const m = /([\d,]+) selected events against ([\d,]+) others/.exec(text)!;
    expect([Number(m[1].replace(/,/g, '')), Number(m[2].replace(/,/g, ''))]).toEqual([of(false), of(true)]);
  });

  it('6: the SLO burn-down spans the SLO’s events from a whole budget, compliance on its own chart', async () => {
    await page.goto(`${server.url}${scope}/datasets/checkout/slo/${seeded.sloId}`);
    const burn = page.locator('.burn-down');
    await burn.locator('canvas').first().waitFor();
    const [start, end] = (await burn.getAttribute('data-range'))!.split(',').map(Number);
    expect(end - start).toBeLessThan(6 * 3600); // two hours of events, not the 7-day period
    expect(await burn.getAttribute('data-first-budget')).toBe('100');
    expect(await burn.locator('[role=img]').count()).toBe(2);
  });

  it('1, 9: a trace: distinct colours per service, Query not highlighted, span names whole in a tooltip, links followed, field names broken at dots', async () => {
    await page.goto(`${server.url}${scope}/datasets/__all__/trace/${seeded.traceId}`);
    await page.waitForSelector('[data-testid=waterfall] [data-span-id]');
    const colours = await page.$$eval('[data-testid=waterfall] [data-span-id]', (rows) =>
      Object.fromEntries(rows.map((r) => [r.querySelector('.svc')!.textContent, getComputedStyle(r.querySelector('.wf-bar')!).backgroundColor])),
    );
    expect(Object.keys(colours).sort()).toEqual(['cart', 'frontend', 'payments', 'postgres']);
    expect(new Set(Object.values(colours)).size).toBe(4);
    expect(await page.locator('nav a[aria-current=page]').count()).toBe(0);
    expect(await page.getAttribute('[data-span-id="pay"] .nm', 'title')).toBe('payments.charge');
    await page.click('[data-span-id="pay"]');
    const side = page.locator('[data-testid=span-details]');
    expect(await side.locator('.kv .k[title="trace.trace_id"] wbr').count()).toBe(2); // trace. | trace_ | id
    await side.locator('[data-testid=span-link] a').click();
    await page.waitForURL(/\/trace\/fraud-check-77$/);
  });

  it('9: opening Query runs nothing; a query’s charts share one crosshair, with 12-hour tooltips', async () => {
    const posts: string[] = [];
    const onRequest = (r: { method: () => string; url: () => string }) => void (r.method() === 'POST' && posts.push(r.url()));
    page.on('request', onRequest);
    await page.goto(`${server.url}${scope}`);
    const recent = () => page.evaluate(() => JSON.stringify({ ...localStorage }));
    const before = await recent();
    await page.click('nav >> text=Query');
    await page.waitForSelector('[data-testid=not-run]');
    await page.selectOption('select[aria-label=Dataset]', 'checkout');
    await page.waitForURL(/\/datasets\/checkout\?draft=/);
    await page.waitForTimeout(300);
    page.off('request', onRequest);
    expect(posts).toEqual([]);
    expect(await recent()).toBe(before); // nothing listed as recent

    const spec = { calculations: [{ op: 'COUNT' }, { op: 'AVG', column: 'duration_ms' }], time_range: 7200 };
    await page.goto(`${server.url}${scope}/datasets/checkout?query=${encodeURIComponent(JSON.stringify(spec))}`);
    const over = page.locator('[data-chart] .u-over');
    await over.nth(1).waitFor();
    const box = (await over.nth(0).boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2);
    const cursorLeft = (i: number) => page.locator('[data-chart] .u-cursor-x').nth(i).evaluate((e) => (e as HTMLElement).style.transform || (e as HTMLElement).style.left);
    await expect.poll(() => cursorLeft(1)).toBe(await cursorLeft(0));
    expect(await page.locator('[data-chart] .tooltip').count()).toBe(1);
    expect(await page.locator('[data-chart] .tooltip .t').textContent()).toMatch(/^\d+\/\d+ \d{1,2}:\d\d(:\d\d)?[ap]m$/);
  });

  it('loads every page without a script error', () => {
    expect(errors).toEqual([]);
  });
});
