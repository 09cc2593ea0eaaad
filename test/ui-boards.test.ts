// Board authoring in the web UI, in Chromium against a real `waggle serve`: each flow made in the
// UI and then seen through the API. A board made from the list ("New board"), renamed, given a
// Markdown and an SLO panel; a query's result added to it ("Add to board") with its chart type,
// and to a new board; panels moved and resized with the buttons, the keyboard and a drag, a
// chart type and style changed, a panel removed; preset filters; views created, renamed and
// deleted; boards deleted from the editor and from the list. Screenshots go to
// test-results/ui-boards/ (git-ignored). Chromium: see test/ui-browser.test.ts.
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isValidLayout } from '../web/src/board-grid.js';
import { CHROMIUM, chromiumInstalled, launchChromium, printedKeys, signedInPage } from './browser-helpers.js';
import { killAll, removeTempDirs, serve, tempDir, type Served } from './cli-helpers.js';

const SHOTS = fileURLToPath(new URL('../test-results/ui-boards/', import.meta.url));
const present = chromiumInstalled();
const CI = process.env.CI === 'true';

interface Pos {
  x_coordinate: number;
  y_coordinate: number;
  width: number;
  height: number;
}
interface Panel {
  type: string;
  position: Pos;
  query_panel?: { query_id: string; query_annotation_id: string; query_style: string; dataset: string; visualization_settings?: { charts: { chart_type: string }[] } };
  slo_panel?: { slo_id: string };
  text_panel?: { content: string };
}
interface Board {
  id: string;
  name: string;
  description: string;
  panels: Panel[];
  preset_filters: { column: string; alias: string }[];
}

describe.skipIf(!present && !CI)('board authoring in the web UI (Chromium)', { timeout: 60_000 }, () => {
  let server: Served;
  let key: string;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let sloId: string;
  let boardId: string;
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
  const board = async () => (await api('GET', `/1/boards/${boardId}`)) as Board;
  const shot = (name: string) => page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true });
  const rects = (b: Board) => b.panels.map((p) => ({ x: p.position.x_coordinate, y: p.position.y_coordinate, w: p.position.width, h: p.position.height }));
  const save = async () => {
    await page.click('[data-testid=save-board]');
    await page.waitForSelector('.board-editor', { state: 'detached' });
    await page.waitForSelector('button:has-text("Edit")');
  };

  beforeAll(async () => {
    if (!present) throw new Error(`CI: Chromium is required at ${CHROMIUM} for the web UI tests (.ci/run installs it with apt-get)`);
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    server = await serve(['--data-dir', tempDir()], { timeout: 60_000 });
    key = printedKeys(server.stdout()).configuration;
    const ingestKey = printedKeys(server.stdout()).ingest;
    const now = Math.floor(Date.now() / 1000);
    const events = Array.from({ length: 30 }, (_, i) => ({
      time: new Date((now - 60 * (i % 20)) * 1000).toISOString(),
      data: { duration_ms: 10 + i * 7, status: i % 5 === 0 ? 500 : 200, route: `/r${i % 3}` },
    }));
    const res = await fetch(`${server.url}/1/batch/checkout`, { method: 'POST', headers: { 'x-honeycomb-team': ingestKey, 'content-type': 'application/json' }, body: JSON.stringify(events) });
    expect(res.status).toBe(200);
    await api('POST', '/1/derived_columns/checkout', { alias: 'fast', expression: 'LT($duration_ms, 100)' });
    sloId = ((await api('POST', '/1/slos/checkout', { name: 'Fast checkout', sli: { alias: 'fast' }, time_period_days: 7, target_per_million: 990000 })) as { id: string }).id;
    ({ browser, close: closeBrowser } = await launchChromium());
    page = await signedInPage(browser, server.url, key, { width: 1360, height: 900 }, errors);
  }, 90_000);

  afterAll(async () => {
    await closeBrowser?.();
    await killAll();
    removeTempDirs();
  });

  it('makes a board from the list, renames it and adds a Markdown and an SLO panel', async () => {
    await page.click('nav >> text=Boards');
    await page.click('text=New board');
    await page.fill('form.new-board input[name=name]', 'Checkout');
    await page.fill('form.new-board textarea[name=description]', 'The checkout service');
    await shot('new-board');
    await page.click('form.new-board button[type=submit]');
    await page.waitForSelector('.board-editor');
    boardId = /\/board\/([^/?]+)\?edit=1$/.exec(page.url())![1];
    expect(await board()).toMatchObject({ name: 'Checkout', description: 'The checkout service', panels: [] });

    await page.fill('input[name=board-name]', 'Checkout overview');
    await page.click('text=Add text panel');
    await page.fill('textarea[aria-label="Markdown of the text panel"]', '## Runbook\n\nPage **#checkout** when p99 > 1s.');
    await page.selectOption('select[aria-label="SLO to add"]', sloId);
    await page.click('text=Add SLO panel');
    await save();
    await page.waitForSelector('.board-panel[data-panel-type=text] >> text=Runbook');
    const b = await board();
    expect(b.name).toBe('Checkout overview');
    expect(b.panels.map((p) => p.type)).toEqual(['text', 'slo']);
    expect(b.panels[0].text_panel!.content).toBe('## Runbook\n\nPage **#checkout** when p99 > 1s.');
    expect(b.panels[1].slo_panel!.slo_id).toBe(sloId);
    expect(b.panels.map((p) => p.position)).toEqual([
      { x_coordinate: 0, y_coordinate: 0, width: 6, height: 4 },
      { x_coordinate: 6, y_coordinate: 0, width: 6, height: 6 },
    ]);
  });

  it('adds a query result to the board with its chart type, and to a new board', async () => {
    const spec = { calculations: [{ op: 'COUNT' }, { op: 'P99', column: 'duration_ms' }], breakdowns: ['route'], time_range: 7200 };
    await page.goto(`${server.url}${scope}/datasets/checkout?query=${encodeURIComponent(JSON.stringify(spec))}`);
    await page.waitForSelector('[data-result-id]');
    await page.click('text=Add to board');
    await page.waitForSelector('form.add-to-board-form select[name=board] >> option:has-text("Checkout overview")', { state: 'attached' });
    await page.selectOption('form.add-to-board-form select[name=board]', boardId);
    await page.fill('form.add-to-board-form input[name=title]', 'Checkout traffic');
    await page.selectOption('form.add-to-board-form select[name=chart_type]', 'stacked');
    await shot('add-to-board');
    const resultId = await page.getAttribute('[data-result-id]', 'data-result-id');
    await page.click('form.add-to-board-form button[type=submit]');
    await page.waitForSelector('[role=status] >> text=Checkout overview');
    // The builder's query was not run again.
    expect(await page.getAttribute('[data-result-id]', 'data-result-id')).toBe(resultId);
    const b = await board();
    expect(b.panels.map((p) => p.type)).toEqual(['text', 'slo', 'query']);
    const q = b.panels[2];
    expect(q.position).toEqual({ x_coordinate: 0, y_coordinate: 4, width: 6, height: 6 });
    expect(q.query_panel).toMatchObject({ dataset: 'checkout', query_style: 'graph', visualization_settings: { charts: [{ chart_type: 'stacked' }] } });
    expect(await api('GET', `/1/queries/checkout/${q.query_panel!.query_id}`)).toMatchObject(spec);
    expect(await api('GET', `/1/query_annotations/checkout/${q.query_panel!.query_annotation_id}`)).toMatchObject({ name: 'Checkout traffic', query_id: q.query_panel!.query_id });

    // A new board, from the same dialog.
    await page.click('text=Add to board');
    await page.click('text=Add to board');
    await page.selectOption('form.add-to-board-form select[name=board]', '__new');
    await page.fill('form.add-to-board-form input[name=new-board]', 'Latency');
    await page.selectOption('form.add-to-board-form select[name=chart_type]', 'stat');
    await page.selectOption('form.add-to-board-form select[name=query_style]', 'combo');
    await page.click('form.add-to-board-form button[type=submit]');
    await page.waitForSelector('[role=status] >> text=Latency');
    const all = (await api('GET', '/1/boards')) as Board[];
    const latency = all.find((x) => x.name === 'Latency')!;
    expect(latency.panels).toHaveLength(1);
    expect(latency.panels[0].query_panel).toMatchObject({ query_style: 'combo', visualization_settings: { charts: [{ chart_type: 'stat' }] } });
    await page.click('[role=status] >> text=Latency');
    await page.waitForSelector('.board-panel[data-panel-type=query] .stat');
  });

  it('arranges panels with the buttons, the keyboard and a drag; changes a chart type; removes a panel', async () => {
    await page.goto(`${server.url}${scope}/board/${boardId}`);
    await page.click('button:has-text("Edit")');
    await page.waitForSelector('.edit-cell[data-panel-type=query] canvas');
    const cell = (type: string) => page.locator(`.edit-cell[data-panel-type=${type}]`);
    const pos = async (type: string) => cell(type).getAttribute('data-position');
    // The query panel (0,4 6×6) made wider, then the full width, and taller.
    await cell('query').locator('button[aria-label^="Wider"]').click();
    expect(await pos('query')).toBe('0,4,7,6');
    for (let i = 0; i < 5; i++) await cell('query').locator('button[aria-label^="Wider"]').click();
    await cell('query').locator('button[aria-label^="Taller"]').click();
    expect(await pos('query')).toBe('0,4,12,7');
    // Up: it swaps places with the panels above it.
    await cell('query').locator('button[aria-label^="Move up"]').click();
    expect(await pos('query')).toBe('0,0,12,7');
    expect(await pos('text')).toBe('0,7,6,4');
    // The text panel, from the keyboard: right, then Shift+Down for one row taller.
    await cell('text').locator('button.handle').focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Shift+ArrowDown');
    expect(await pos('text')).toBe('1,7,6,5');
    // Dragged by its handle five columns right (the SLO panel there goes below it).
    await cell('text').locator('button.handle').scrollIntoViewIfNeeded();
    const grid = (await page.locator('.board-grid.editing').boundingBox())!;
    const handle = (await cell('text').locator('button.handle').boundingBox())!;
    const col = (grid.width + 14) / 12;
    await page.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2);
    await page.mouse.down();
    await page.mouse.move(handle.x + handle.width / 2 + 2.5 * col, handle.y + handle.height / 2, { steps: 4 });
    await page.mouse.move(handle.x + handle.width / 2 + 5 * col, handle.y + handle.height / 2, { steps: 4 });
    await page.mouse.up();
    expect(await pos('text')).toBe('6,7,6,5');
    expect(await pos('slo')).toBe('6,12,6,6');
    // Resized by its corner: two columns narrower, one row shorter.
    await cell('text').locator('.resize-handle').scrollIntoViewIfNeeded();
    const corner = (await cell('text').locator('.resize-handle').boundingBox())!;
    await page.mouse.move(corner.x + 8, corner.y + 8);
    await page.mouse.down();
    await page.mouse.move(corner.x + 8 - 2 * col, corner.y + 8 - 70, { steps: 5 });
    await page.mouse.up();
    expect(await pos('text')).toBe('6,7,4,4');
    await cell('query').locator('select[aria-label="Chart type"]').selectOption('tsbar');
    await cell('query').locator('select[aria-label="Query style"]').selectOption('combo');
    await shot('board-editor');
    const shown = await page.$$eval('.edit-cell', (els) => els.map((e) => e.getAttribute('data-position')));
    await save();
    const b = await board();
    expect(rects(b).map((r) => `${r.x},${r.y},${r.w},${r.h}`)).toEqual(shown);
    expect(isValidLayout(rects(b))).toBe(true);
    expect(b.panels[2].query_panel).toMatchObject({ query_style: 'combo', visualization_settings: { charts: [{ chart_type: 'tsbar' }] } });
    // The board draws what was saved: the query panel across the top, the text panel at column 7.
    // (polled: the board is drawn again once the saved board is read back)
    await expect.poll(() => page.$eval('.board-panel[data-panel-type=text]', (e) => getComputedStyle(e).gridColumnStart)).toBe('7');

    // The SLO panel removed.
    await page.click('button:has-text("Edit")');
    await cell('slo').locator('button[aria-label^="Remove panel"]').click();
    await save();
    expect((await board()).panels.map((p) => p.type)).toEqual(['text', 'query']);
  });

  it('sets preset filters, makes, renames and deletes views', async () => {
    await page.click('button:has-text("Edit")');
    await page.click('text=+ Preset filter');
    await page.fill('input[aria-label="Preset filter 1 column"]', 'route');
    await page.fill('input[aria-label="Preset filter 1 label"]', 'Route');
    await page.click('text=+ Preset filter');
    await page.fill('input[aria-label="Preset filter 2 column"]', 'status');
    await page.fill('input[aria-label="Preset filter 2 label"]', 'Status');
    await page.click('button[aria-label="Remove preset filter route"]');

    const views = page.locator('[data-testid=views-editor]');
    await views.locator('text=New view').click();
    const draft = views.locator('.view-draft').nth(0);
    await draft.locator('input[aria-label="View name"]').fill('Errors');
    await draft.locator('input[aria-label="Filter column"]').fill('status');
    await draft.locator('select[aria-label="Filter operation"]').selectOption('>=');
    await draft.locator('input[aria-label="Filter value"]').fill('500');
    await draft.locator('text=+ Filter').click();
    await draft.locator('input[aria-label="Filter column"]').nth(1).fill('route');
    await draft.locator('select[aria-label="Filter operation"]').nth(1).selectOption('in');
    await draft.locator('input[aria-label="Filter value"]').nth(1).fill('/r0, /r1');
    await draft.locator('text=Create view').click();
    await draft.locator('text=saved').waitFor();
    await views.locator('text=New view').click();
    const second = views.locator('.view-draft').nth(1);
    await second.locator('input[aria-label="View name"]').fill('Slow');
    await second.locator('input[aria-label="Filter column"]').fill('duration_ms');
    await second.locator('select[aria-label="Filter operation"]').selectOption('exists');
    await second.locator('text=Create view').click();
    await second.locator('text=saved').waitFor();
    let list = (await api('GET', `/1/boards/${boardId}/views`)) as { id: string; name: string; filters: unknown[] }[];
    expect(list.map((v) => v.name)).toEqual(['Errors', 'Slow']);
    expect(list[0].filters).toEqual([
      { column: 'status', operation: '>=', value: 500 },
      { column: 'route', operation: 'in', value: ['/r0', '/r1'] },
    ]);
    expect(list[1].filters).toEqual([{ column: 'duration_ms', operation: 'exists' }]);

    // Renamed; the other deleted.
    await draft.locator('input[aria-label="View name"]').fill('Server errors');
    await draft.locator('text=Save view').click();
    await draft.locator('text=saved').waitFor();
    page.once('dialog', (d) => void d.accept());
    await second.locator('text=Delete view').click();
    await expect.poll(async () => ((await api('GET', `/1/boards/${boardId}/views`)) as unknown[]).length).toBe(1);
    list = (await api('GET', `/1/boards/${boardId}/views`)) as typeof list;
    expect(list[0]).toMatchObject({ name: 'Server errors', filters: [{ column: 'status', operation: '>=', value: 500 }, { column: 'route' }] });
    await shot('board-views-editor');

    await save();
    expect((await board()).preset_filters).toEqual([{ column: 'status', alias: 'Status' }]);
    // The board offers the preset filter and the view.
    await page.waitForSelector('label.field:has-text("Status") input');
    await page.selectOption('select[aria-label="Board view"]', { label: 'Server errors' });
    await page.waitForSelector('text=Every query panel is filtered by status >= 500');
    await page.waitForSelector('.board-panel[data-panel-type=query] canvas');
    await shot('board-edited');
  });

  it('deletes a board from its editor and one from the list', async () => {
    await page.click('button:has-text("Edit")');
    page.once('dialog', (d) => void d.accept());
    await page.click('button:has-text("Delete board")');
    await page.waitForURL(`${server.url}${scope}/boards`);
    await page.waitForSelector('[data-board="Latency"]');
    expect(((await api('GET', '/1/boards')) as Board[]).map((b) => b.name)).toEqual(['Latency']);
    expect((await fetch(`${server.url}/1/boards/${boardId}/views`, { headers: { 'x-honeycomb-team': key } })).status).toBe(404);
    page.once('dialog', (d) => void d.accept());
    await page.click('button[aria-label="Delete board Latency"]');
    await page.waitForSelector('text=No boards yet');
    expect(await api('GET', '/1/boards')).toEqual([]);
    expect(errors).toEqual([]);
  });
});
