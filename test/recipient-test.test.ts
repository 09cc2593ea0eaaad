// POST /1/recipients/{id}/test (a Waggle extension, "Send test" in the web UI): a test
// notification through the real delivery path to a real receiver, marked as a test; found in the
// delivery log by `alert_id`; a failing receiver shows as failed; permissions and tenancy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, sendJson, type TestApp } from './helpers.js';
import { HttpReceiver } from './receivers.js';
import { addKey, initialTenancy, secondTeam } from './tenancy-fixtures.js';
import type { DeliveryNotifier } from '../src/notify/index.js';

let t: TestApp;
const http = new HttpReceiver();
beforeAll(async () => {
  await http.start();
  t = await makeApp({ settings: { notifyRetryBaseMs: 5, notifyRetryMaxMs: 20, notifyMaxAttempts: 2, notifyTimeoutMs: 1000, slackApiUrl: `${http.url}/slack/api`, slackToken: 'xoxb-test' } });
});
afterAll(async () => {
  await t.close();
  await http.stop();
});

const idle = () => (t.app.jobs.notifier as DeliveryNotifier).idle({ timeoutMs: 10_000 });
const recipient = async (type: string, details: Record<string, unknown>) => {
  const res = await sendJson(t, 'POST', '/1/recipients', { type, details });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).id as string;
};
const sendTest = (id: string, headers = t.config) => t.app.inject({ method: 'POST', url: `/1/recipients/${id}/test`, headers });
const deliveriesOf = async (alertId: string) =>
  json(await t.app.inject({ method: 'GET', url: `/1/deliveries?alert_id=${encodeURIComponent(alertId)}`, headers: t.config }));

describe('POST /1/recipients/{id}/test', () => {
  it('sends a webhook a test payload, and the delivery log shows it delivered under its alert id', async () => {
    const id = await recipient('webhook', { webhook_name: 'hook', webhook_url: `${http.url}/hook` });
    const res = await sendTest(id);
    expect(res.statusCode, res.body).toBe(202);
    const { alert_id } = json(res);
    expect(alert_id).toMatch(/^test-/);
    await idle();
    const [got] = http.at('/hook');
    const payload = JSON.parse(got.body);
    expect(payload).toMatchObject({ is_test: true, id: alert_id, name: 'Test notification from Waggle', status: 'TRIGGERED' });
    expect(payload.summary).toMatch(/^\[TEST\] /);
    const log = await deliveriesOf(alert_id);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ state: 'delivered', alert: { id: alert_id }, recipient: { id, type: 'webhook' } });
    // The filter keeps other alerts' deliveries out.
    expect(await deliveriesOf('test-none')).toEqual([]);
  });

  it('a Slack recipient gets a message marked as a test; a failing receiver shows as failed with its error', async () => {
    const slack = await recipient('slack', { slack_channel: '#alerts' });
    await sendTest(slack);
    await idle();
    expect(http.at('/slack/api/chat.postMessage').map((r) => r.body).join('')).toContain('[TEST]');
    http.fallback.set('/down', () => ({ status: 400, body: 'no' }));
    const down = await recipient('webhook', { webhook_name: 'down', webhook_url: `${http.url}/down` });
    const { alert_id } = json(await sendTest(down));
    await idle();
    const [d] = await deliveriesOf(alert_id);
    expect(d.state).toBe('failed');
    expect(d.error).toMatch(/400/);
  });

  it("needs Manage Recipients; another team's recipient or an unknown id → 404", async () => {
    const id = await recipient('email', { email_address: 'a@example.com' });
    const { team, environment } = await initialTenancy(t);
    const limited = await addKey(t, team, environment, { permissions: { manage_triggers: true } });
    expect((await sendTest(id, limited.headers)).statusCode).toBe(403);
    const other = await secondTeam(t);
    expect((await sendTest(id, other.headers)).statusCode).toBe(404);
    expect((await sendTest('nope')).statusCode).toBe(404);
    expect((await sendTest(id, {})).statusCode).toBe(401);
  });
});
