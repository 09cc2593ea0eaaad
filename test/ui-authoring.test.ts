// Authoring in the web UI, in Chromium against a real `waggle serve`: each flow made in the UI
// and then seen through the API. The dataset settings page: the dataset's description, JSON
// depth and delete protection; a column described, hidden and retyped; a calculated field whose
// expression the server checks as it is typed, then created, edited and deleted. Recipients of
// each type made, edited, tested (a real webhook receives the test) and deleted. An SLO whose SLI
// is written in the form (checked live: it must be boolean), edited; burn alerts of both kinds.
// The service map of spans sent through /1/batch, and the query of one of its edges. A trigger
// made from a query (its threshold drawn on the chart), then disabled, edited and deleted on its
// page; a marker placed by a click on a chart.
// Screenshots go to test-results/ui-authoring/ (git-ignored). Chromium: see test/ui-browser.test.ts.
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumInstalled, launchChromium, printedKeys, signedInPage } from './browser-helpers.js';
import { killAll, removeTempDirs, serve, tempDir, type Served } from './cli-helpers.js';
import { HttpReceiver } from './receivers.js';

const SHOTS = fileURLToPath(new URL('../test-results/ui-authoring/', import.meta.url));
const present = chromiumInstalled();
const CI = process.env.CI === 'true';

describe.skipIf(!present && !CI)('authoring and the service map in the web UI (Chromium)', { timeout: 90_000 }, () => {
  let server: Served;
  let key: string;
  let browser: Browser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  const errors: string[] = [];
  const hook = new HttpReceiver();
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
    await hook.start();
    if (!present) throw new Error(`CI: Chromium is required at ${CHROMIUM} for the web UI tests (.ci/run installs it with apt-get)`);
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    server = await serve(['--data-dir', tempDir()], { timeout: 60_000 });
    key = printedKeys(server.stdout()).configuration;
    const ingestKey = printedKeys(server.stdout()).ingest;
    const events = Array.from({ length: 20 }, (_, i) => ({ data: { duration_ms: 10 + i, status: i % 5 === 0 ? 500 : 200, route: `/r${i % 3}` } }));
    const res = await fetch(`${server.url}/1/batch/checkout`, { method: 'POST', headers: { 'x-honeycomb-team': ingestKey, 'content-type': 'application/json' }, body: JSON.stringify(events) });
    expect(res.status).toBe(200);
    ({ browser, close: closeBrowser } = await launchChromium());
    page = await signedInPage(browser, server.url, key, { width: 1360, height: 900 }, errors);
  }, 90_000);

  afterAll(async () => {
    await hook.stop();
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

  it('makes recipients of each type, sends a webhook a test that arrives, edits and deletes them', async () => {
    await page.click('nav >> text=Recipients');
    await page.waitForURL(`${server.url}${scope}/recipients`);
    const make = async (type: string, fill: Record<string, string>) => {
      await page.click('text=New recipient');
      await page.selectOption('form.recipient-form select[name=type]', type);
      for (const [k, v] of Object.entries(fill)) await page.fill(`form.recipient-form input[name=${k}]`, v);
      await page.click('form.recipient-form button[type=submit]');
      await page.waitForSelector('form.recipient-form', { state: 'detached' });
    };
    // A problem the API finds is shown at its field, and nothing is made.
    await page.click('text=New recipient');
    await page.selectOption('form.recipient-form select[name=type]', 'pagerduty');
    await page.fill('form.recipient-form input[name=pagerduty_integration_name]', 'oncall');
    await page.fill('form.recipient-form input[name=pagerduty_integration_key]', 'too-short');
    await page.click('form.recipient-form button[type=submit]');
    await page.waitForSelector('form.recipient-form .field-error');
    await page.click('form.recipient-form >> text=Cancel');
    expect(await api('GET', '/1/recipients')).toEqual([]);

    await make('webhook', { webhook_name: 'ops hook', webhook_url: `${hook.url}/hook`, webhook_secret: 's3cret' });
    await make('email', { email_address: 'oncall@example.com' });
    await make('slack', { slack_channel: '#alerts' });
    await make('pagerduty', { pagerduty_integration_name: 'oncall', pagerduty_integration_key: 'k'.repeat(32) });
    await make('msteams_workflow', { webhook_name: 'teams', webhook_url: 'https://example.com/teams' });
    const list = (await api('GET', '/1/recipients')) as { id: string; type: string; details: Record<string, string> }[];
    expect(list.map((r) => r.type).sort()).toEqual(['email', 'msteams_workflow', 'pagerduty', 'slack', 'webhook']);
    const webhook = list.find((r) => r.type === 'webhook')!;
    expect(webhook.details).toMatchObject({ webhook_name: 'ops hook', webhook_url: `${hook.url}/hook`, webhook_secret: 's3cret' });
    expect(await page.textContent('[data-testid=recipients-table]')).not.toContain('s3cret');

    const row = page.locator(`tr[data-recipient="${webhook.id}"]`);
    await row.locator('text=Send test').click();
    await row.locator('text=test delivered').waitFor();
    expect(JSON.parse(hook.at('/hook')[0].body)).toMatchObject({ is_test: true });
    await page.screenshot({ path: `${SHOTS}recipients.png`, fullPage: true });

    await row.locator('text=Edit').click();
    await page.fill('form.recipient-form input[name=webhook_name]', 'ops hook 2');
    await page.click('form.recipient-form button[type=submit]');
    await page.waitForSelector('text=ops hook 2');
    expect(await api('GET', `/1/recipients/${webhook.id}`)).toMatchObject({ details: { webhook_name: 'ops hook 2', webhook_secret: 's3cret' } });
    page.once('dialog', (d) => void d.accept());
    await row.locator('text=Delete').click();
    await row.waitFor({ state: 'detached' });
    expect(((await api('GET', '/1/recipients')) as unknown[]).length).toBe(4);
    expect(errors).toEqual([]);
  });

  it('makes an SLO with a new SLI written in the form, edits it, and gives it burn alerts of both kinds', async () => {
    await page.click('nav >> text=SLOs');
    await page.click('text=New SLO');
    await page.selectOption('form.slo-form select[name=dataset]', 'checkout');
    await page.fill('form.slo-form input[name=name]', 'Fast checkout');
    await page.selectOption('form.slo-form select[name=sli]', '__new');
    await page.fill('form.slo-form input[name=sli_alias]', 'fast');
    await page.fill('form.slo-form input[name=sli_expression]', 'MUL($duration_ms, 2)');
    await expect.poll(() => page.textContent('[data-testid=sli-check]')).toMatch(/must be true or false; this expression is (float|integer)/);
    expect(await page.isDisabled('form.slo-form button[type=submit]')).toBe(true);
    await page.fill('form.slo-form input[name=sli_expression]', 'LT($duration_ms, 25)');
    await expect.poll(() => page.textContent('[data-testid=sli-check]')).toMatch(/valid · boolean/);
    await page.fill('form.slo-form input[name=target]', '99.5');
    await page.fill('form.slo-form input[name=time_period_days]', '7');
    await page.click('form.slo-form button[type=submit]');
    await page.waitForURL(/\/datasets\/checkout\/slo\//);
    const sloId = page.url().split('/').pop()!;
    expect(await api('GET', `/1/slos/checkout/${sloId}`)).toMatchObject({ name: 'Fast checkout', sli: { alias: 'fast' }, target_per_million: 995000, time_period_days: 7 });
    expect(await api('GET', '/1/derived_columns/checkout?alias=fast')).toMatchObject({ expression: 'LT($duration_ms, 25)' });

    await page.click('main >> button:has-text("Edit")');
    await page.fill('form.slo-form input[name=target]', '99.9');
    await page.click('form.slo-form button[type=submit]');
    await page.waitForSelector('form.slo-form', { state: 'detached' });
    expect(await api('GET', `/1/slos/checkout/${sloId}`)).toMatchObject({ target_per_million: 999000, sli: { alias: 'fast' } });

    const [recipient] = (await api('GET', '/1/recipients')) as { id: string }[];
    await page.click('text=New burn alert');
    await page.fill('form.burn-alert-form input[name=exhaustion_minutes]', '120');
    await page.check(`form.burn-alert-form input[value="${recipient.id}"]`);
    await page.click('form.burn-alert-form button[type=submit]');
    await page.waitForSelector('[data-testid=burn-alerts] >> text=2 hours');
    await page.click('text=New burn alert');
    await page.click('form.burn-alert-form >> text=Budget rate');
    await page.fill('form.burn-alert-form input[name=budget_drop]', '2');
    await page.fill('form.burn-alert-form input[name=budget_rate_window_minutes]', '90');
    await page.check(`form.burn-alert-form input[value="${recipient.id}"]`);
    await page.click('form.burn-alert-form button[type=submit]');
    await page.waitForSelector('[data-testid=burn-alerts] >> text=Budget rate');
    const alerts = (await api('GET', `/1/burn_alerts/checkout?slo_id=${sloId}`)) as Record<string, unknown>[];
    expect(alerts.map((a) => a.alert_type).sort()).toEqual(['budget_rate', 'exhaustion_time']);
    expect(alerts.find((a) => a.alert_type === 'budget_rate')).toMatchObject({ budget_rate_window_minutes: 90, budget_rate_decrease_threshold_per_million: 20000 });
    await page.screenshot({ path: `${SHOTS}slo.png`, fullPage: true });

    page.once('dialog', (d) => void d.accept());
    await page.click('main >> button.ghost:has-text("Delete") >> nth=0');
    await page.waitForURL(`${server.url}${scope}/slos`);
    expect(await api('GET', '/1/slos/checkout')).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('draws the service map of the spans sent, with errors, and opens the query of an edge', async () => {
    const ingestKey = printedKeys(server.stdout()).ingest;
    const spans = [];
    const time = new Date(Date.now() - 60_000).toISOString(); // (the map's window ends at the current second)
    for (let i = 0; i < 6; i++) {
      const trace = `t${i}`;
      spans.push({ time, data: { 'trace.trace_id': trace, 'trace.span_id': 'a', 'service.name': 'frontend', name: 'GET /', duration_ms: 30 } });
      spans.push({ time, data: { 'trace.trace_id': trace, 'trace.span_id': 'b', 'trace.parent_id': 'a', 'service.name': 'api', name: 'load', duration_ms: 20 } });
      spans.push({ time, data: { 'trace.trace_id': trace, 'trace.span_id': 'c', 'trace.parent_id': 'b', 'service.name': 'db', name: 'SELECT', duration_ms: 5, error: i < 2 } });
    }
    const res = await fetch(`${server.url}/1/batch/spans`, { method: 'POST', headers: { 'x-honeycomb-team': ingestKey, 'content-type': 'application/json' }, body: JSON.stringify(spans) });
    expect(res.status).toBe(200);
    await page.click('nav >> text=Service map');
    await page.waitForSelector('[data-testid=service-map-edges]');
    const rows = await page.$$eval('[data-testid=service-map-edges] tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 4).map((td) => td.textContent)));
    expect(rows).toEqual([
      ['api', 'db', '6', '2 (33.33 %)'],
      ['frontend', 'api', '6', '0'],
    ]);
    expect(await page.$$eval('.service-map svg .node', (g) => g.map((x) => x.getAttribute('data-service')))).toEqual(['frontend', 'api', 'db']);
    await page.screenshot({ path: `${SHOTS}service-map.png`, fullPage: true });
    await page.locator('.service-map svg path.edge').first().dispatchEvent('click'); // (a curve's box centre is off its stroke)
    await page.waitForURL(/\/datasets\/__all__\?query=/);
    const spec = JSON.parse(new URL(page.url()).searchParams.get('query')!);
    expect(spec.filters).toEqual([{ column: 'service.name', op: '=', value: 'db' }]);
    expect(errors).toEqual([]);
  });

  it('makes a trigger from a query, its threshold drawn on the chart; disables, edits and deletes it on its page', async () => {
    const spec = { calculations: [{ op: 'COUNT' }], time_range: 3600 };
    await page.goto(`${server.url}${scope}/datasets/checkout?query=${encodeURIComponent(JSON.stringify(spec))}`);
    await page.waitForSelector('[data-chart="COUNT"] canvas');
    await page.click('text=Make a trigger');
    await page.fill('form.trigger-form input[name=name]', 'Too many checkouts');
    await page.selectOption('form.trigger-form select[name=op]', '>=');
    await page.fill('form.trigger-form input[name=threshold]', '5');
    await page.waitForSelector('[data-chart="COUNT"][data-threshold="5"] canvas');
    await page.selectOption('form.trigger-form select[name=frequency]', '300');
    await page.selectOption('form.trigger-form select[name=range]', '2');
    const [recipient] = (await api('GET', '/1/recipients')) as { id: string }[];
    await page.check(`form.trigger-form input[value="${recipient.id}"]`);
    await page.screenshot({ path: `${SHOTS}make-trigger.png`, fullPage: true });
    await page.click('form.trigger-form button[type=submit]');
    await page.click('text=Too many checkouts');
    await page.waitForSelector('[data-testid=trigger-page]');
    const [made] = (await api('GET', '/1/triggers/checkout')) as { id: string }[];
    expect(made).toMatchObject({ name: 'Too many checkouts', threshold: { op: '>=', value: 5 }, frequency: 300, disabled: false, query: { calculations: [{ op: 'COUNT' }], time_range: 600 }, recipients: [{ id: recipient.id }] });

    await page.click('main >> button:has-text("Disable")');
    await page.waitForSelector('main >> button:has-text("Enable")');
    expect(await api('GET', `/1/triggers/checkout/${made.id}`)).toMatchObject({ disabled: true, threshold: { value: 5 }, frequency: 300 });
    await page.click('main >> button:has-text("Edit")');
    await page.fill('form.trigger-form input[name=threshold]', '10');
    await page.click('form.trigger-form button[type=submit]');
    await page.waitForSelector('form.trigger-form', { state: 'detached' });
    expect(await api('GET', `/1/triggers/checkout/${made.id}`)).toMatchObject({ disabled: true, threshold: { op: '>=', value: 10 }, frequency: 300, recipients: [{ id: recipient.id }] });
    page.once('dialog', (d) => void d.accept());
    await page.click('main >> button.ghost:has-text("Delete")');
    await page.waitForURL(`${server.url}${scope}/triggers`);
    expect(await api('GET', '/1/triggers/checkout')).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('adds a marker where a chart is clicked', async () => {
    const spec = { calculations: [{ op: 'COUNT' }], time_range: 3600 };
    await page.goto(`${server.url}${scope}/datasets/checkout?query=${encodeURIComponent(JSON.stringify(spec))}`);
    await page.waitForSelector('[data-chart="COUNT"] canvas');
    await page.click('text=Add marker');
    await page.waitForSelector('[data-testid=marker-hint]');
    const over = page.locator('[data-chart="COUNT"] .u-over');
    const box = (await over.boundingBox())!;
    await over.click({ position: { x: box.width / 2, y: box.height / 2 } });
    await page.fill('form.marker-form input[name=message]', 'deploy v2');
    await page.click('form.marker-form button[type=submit]');
    await page.waitForSelector('form.marker-form', { state: 'detached' });
    const [marker] = (await api('GET', '/1/markers/checkout')) as { start_time: number; message: string; type: string }[];
    expect(marker).toMatchObject({ message: 'deploy v2', type: 'deploy' });
    // The middle of a one-hour chart, to the minute the form keeps.
    const now = Date.now() / 1000;
    expect(marker.start_time).toBeGreaterThan(now - 2400);
    expect(marker.start_time).toBeLessThan(now - 1200);
    await page.waitForSelector('.marker-flag');
    expect(errors).toEqual([]);
  });

  it('draws the deploy marker a new service.version made on the query page', async () => {
    const ingestKey = printedKeys(server.stdout()).ingest;
    const send = async (version: string, secondsAgo: number) => {
      const events = Array.from({ length: 5 }, (_, i) => ({ time: new Date(Date.now() - (secondsAgo - i) * 1000).toISOString(), data: { 'service.name': 'shop', 'service.version': version, duration_ms: 10 + i } }));
      const res = await fetch(`${server.url}/1/batch/deploys`, { method: 'POST', headers: { 'x-honeycomb-team': ingestKey, 'content-type': 'application/json' }, body: JSON.stringify(events) });
      expect(res.status).toBe(200);
    };
    await send('1.4.1', 1500);
    await send('1.4.2', 900);
    await expect.poll(async () => ((await api('GET', '/1/markers/deploys')) as { message: string }[]).map((m) => m.message)).toEqual(['shop 1.4.2']);
    const spec = { calculations: [{ op: 'COUNT' }], time_range: 3600 };
    await page.goto(`${server.url}${scope}/datasets/deploys?query=${encodeURIComponent(JSON.stringify(spec))}`);
    await page.waitForSelector('.marker-flag[title="deploy: shop 1.4.2"]');
    await page.screenshot({ path: `${SHOTS}deploy-marker.png`, fullPage: true });
    expect(errors).toEqual([]);
  });
});
