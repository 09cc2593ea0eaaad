// Alerts delivered end to end: objects made over HTTP (/1/recipients, /1/triggers, /1/slos,
// /1/burn_alerts), events ingested over HTTP, evaluation driven by the app's controllable clock
// (scheduler.tick(), as test/triggers-eval.test.ts and test/burn-alerts.test.ts do), and a real
// HTTP server (node:http) standing in for the webhook receiver and PagerDuty checks what arrived
// over the network, with links that lead to the web UI (the trigger's page, the page and chart of
// the result stored for the evaluation, the SLO's page) and the trigger's state history (Waggle
// extension). Also the per-alert `details` of trigger recipients (webhook `variables`,
// `pagerduty_severity`) validated through /1/triggers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { HttpReceiver } from './receivers.js';
import { pollResult } from './query-helpers.js';

const receiver = new HttpReceiver();
// PagerDuty's Events API answers 202 with a JSON body.
receiver.fallback.set('/pd/v2/enqueue', () => ({ status: 202, headers: { 'content-type': 'application/json' }, body: '{"status":"success","message":"Event processed"}' }));
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());

const deliverySettings = () => ({
  evaluationTickMs: 0,
  notifyRetryBaseMs: 5,
  notifyRetryMaxMs: 20,
  notifyMaxAttempts: 3,
  notifyTimeoutMs: 2000,
  pagerdutyUrl: `${receiver.url}/pd`,
  publicUrl: 'https://waggle.example.com',
});

type Res = { statusCode: number; body: string };
const send = (t: TestApp, method: 'POST' | 'PUT', url: string, body: unknown, headers = t.config) =>
  t.app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

async function created(t: TestApp, url: string, body: unknown): Promise<Record<string, any>> {
  const res = await send(t, 'POST', url, body);
  expect(res.statusCode, res.body).toBe(201);
  return json(res);
}

async function ingest(t: TestApp, dataset: string, events: unknown[]) {
  for (let i = 0; i < events.length; i += 1000) {
    const res = await t.app.inject({ method: 'POST', url: `/1/batch/${dataset}`, headers: t.ingest, payload: events.slice(i, i + 1000) as object[] });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res).every((r: { status: number }) => r.status === 202), res.body).toBe(true);
  }
}

const idle = (t: TestApp) => t.app.jobs.notifier.idle!({ timeoutMs: 10_000 });
const PD_KEY = 'e2eintegrationkey000000000000001';

describe('trigger → webhook (template with per-alert variables) and PagerDuty (severity), over the network', () => {
  let t: TestApp;
  // A whole minute two hours ago, so every event is in the past.
  const T0 = Math.floor(Date.now() / 60_000) * 60_000 - 2 * 3_600_000;
  const iso = (s: number) => new Date(T0 + s * 1000).toISOString();

  let scope: string;

  beforeAll(async () => {
    t = await makeApp({ settings: deliverySettings() });
    scope = `/${t.init.team.slug}/environments/${t.init.environment.slug}`;
  });
  afterAll(() => t?.close());

  it('fires: the template renders with the alert variables, PagerDuty gets the severity and dedup_key; then both resolve', async () => {
    const hookPath = '/hooks/e2e-trigger';
    const hook = await created(t, '/1/recipients', {
      type: 'webhook',
      details: {
        webhook_name: 'e2e hook',
        webhook_url: `${receiver.url}${hookPath}`,
        webhook_secret: 'e2e-secret',
        webhook_payloads: {
          template_variables: [{ name: 'team', default_value: 'core' }, { name: 'priority', default_value: 'P3' }, { name: 'runbook', default_value: 'none' }],
          payload_templates: {
            trigger: {
              body:
                '{"status": "{{ .Alert.Status }}", "summary": "{{ .Alert.Summary }}", "name": "{{ .Name }}", "kind": "{{ .Alert.Type }}/{{ .Alert.AlertType }}",' +
                ' "dedup": "{{ .Alert.DedupKey }}", "value": {{ toJson .Result.Value }}, "threshold": {{ toJson .Threshold }}, "op": "{{ .Operator }}",' +
                ' "datasets": {{ toJson .Datasets }}, "team": "{{ .Vars.team }}", "priority": "{{ .Vars.priority }}", "runbook": "{{ .Vars.runbook }}"}',
            },
          },
        },
      },
    });
    const pd = await created(t, '/1/recipients', { type: 'pagerduty', details: { pagerduty_integration_name: 'e2e PD', pagerduty_integration_key: PD_KEY } });

    // 12 events in the minute before T0; none after.
    await ingest(t, 'checkout', Array.from({ length: 12 }, (_, i) => ({ time: iso(-60 + i * 5), data: { endpoint: '/pay', duration_ms: 100 + i } })));
    t.clock.ms = T0;
    const trigger = await created(t, '/1/triggers/checkout', {
      name: 'Checkout busy',
      description: 'more than 5 requests a minute',
      query: { calculations: [{ op: 'COUNT' }], time_range: 60 },
      frequency: 60,
      threshold: { op: '>', value: 5 },
      recipients: [
        { id: hook.id, details: { variables: [{ name: 'priority', value: 'P1' }, { name: 'runbook', value: 'https://runbooks.test/checkout' }] } },
        { id: pd.id, details: { pagerduty_severity: 'warning' } },
      ],
    });
    expect(trigger.recipients).toEqual([
      { id: hook.id, type: 'webhook', target: 'e2e hook', details: { variables: [{ name: 'priority', value: 'P1' }, { name: 'runbook', value: 'https://runbooks.test/checkout' }] } },
      { id: pd.id, type: 'pagerduty', target: 'e2e PD', details: { pagerduty_severity: 'warning' } },
    ]);

    await t.app.jobs.scheduler.tick(); // slot T0: window [T0−60, T0) holds 12 events
    await idle(t);
    const hooks = receiver.at(hookPath);
    expect(hooks).toHaveLength(1);
    expect(hooks[0].headers['content-type']).toBe('application/json');
    expect(hooks[0].headers['x-honeycomb-webhook-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(JSON.parse(hooks[0].body)).toEqual({
      status: 'TRIGGERED',
      summary: 'Triggered: Checkout busy',
      name: 'Checkout busy',
      kind: 'trigger/on_change',
      dedup: `trigger:${trigger.id}`,
      value: 12,
      threshold: 5,
      op: 'greater than',
      datasets: ['checkout'],
      team: 'core', // the recipient's default
      priority: 'P1', // the alert's variables override the defaults
      runbook: 'https://runbooks.test/checkout',
    });
    const events = receiver.at('/pd/v2/enqueue');
    expect(events).toHaveLength(1);
    expect(events[0].headers['content-type']).toBe('application/json');
    expect(JSON.parse(events[0].body)).toMatchObject({
      routing_key: PD_KEY,
      event_action: 'trigger',
      dedup_key: `trigger:${trigger.id}`,
      payload: { severity: 'warning', source: 'waggle/checkout', class: 'trigger', timestamp: iso(0), custom_details: { value: 12, threshold: { op: '>', value: 5 } } },
      client: 'Waggle',
      // Links start with WAGGLE_PUBLIC_URL and lead to the web UI: the trigger's page …
      client_url: `https://waggle.example.com${scope}/datasets/checkout/triggers/${trigger.id}`,
    });
    expect(JSON.parse(events[0].body).payload.summary).toContain('Checkout busy');
    // … and the page of the query result stored for the evaluation that fired, with its chart.
    const fired = JSON.parse(events[0].body);
    const resultUrl = new RegExp(`^https://waggle\\.example\\.com${scope}/datasets/checkout/result/([A-Za-z0-9]{11})$`);
    expect(fired.links).toEqual([
      { href: fired.client_url, text: 'Checkout busy' },
      { href: expect.stringMatching(resultUrl), text: 'The result' },
    ]);
    const resultId = resultUrl.exec(fired.links[1].href)![1];
    expect(fired.images).toEqual([{ src: `${fired.links[1].href}/snapshot/${fired.images[0].src.split('/').pop()}`, href: fired.links[1].href, alt: 'The result’s chart' }]);
    // That result is the trigger's query over the evaluated window, [T0−60, T0): the 12 events.
    const stored = await pollResult(t, `https://waggle.example.com/1/query_results/checkout/${resultId}`);
    expect(stored.query).toMatchObject({ calculations: [{ op: 'COUNT' }], start_time: T0 / 1000 - 60, end_time: T0 / 1000 });
    expect(stored.data.results).toEqual([{ data: { COUNT: 12 } }]);
    expect(stored.links.graph_image_url).toBe(fired.images[0].src);
    const png = await t.app.inject({ method: 'GET', url: new URL(fired.images[0].src).pathname });
    expect([png.statusCode, png.headers['content-type']]).toEqual([200, 'image/png']);

    // Still breaching a minute later would not notify again (on_change); here the next window is empty: resolved.
    t.clock.ms = T0 + 60_000;
    await t.app.jobs.scheduler.tick();
    await idle(t);
    expect(receiver.at(hookPath)).toHaveLength(2);
    expect(JSON.parse(receiver.at(hookPath)[1].body)).toMatchObject({ status: 'OK', summary: 'Resolved: Checkout busy', value: 0, priority: 'P1', dedup: `trigger:${trigger.id}` });
    expect(receiver.at('/pd/v2/enqueue')).toHaveLength(2);
    expect(JSON.parse(receiver.at('/pd/v2/enqueue')[1].body)).toEqual({ routing_key: PD_KEY, event_action: 'resolve', dedup_key: `trigger:${trigger.id}` });

    // The trigger's history (Waggle extension, its UI page's): both changes with their results, and the four deliveries.
    const history = await t.app.inject({ method: 'GET', url: `/1/triggers/checkout/${trigger.id}/history`, headers: t.config });
    expect(history.statusCode, history.body).toBe(200);
    const h = json(history);
    expect(h).toMatchObject({ triggered: false });
    expect(h.state_changes).toEqual([
      { at: iso(60), status: 'resolved', value: 0, threshold: { op: '>', value: 5 }, result_id: expect.any(String), result_url: expect.stringContaining(`${scope}/datasets/checkout/result/`) },
      { at: iso(0), status: 'triggered', value: 12, threshold: { op: '>', value: 5 }, result_id: resultId, result_url: fired.links[1].href },
    ]);
    expect(h.deliveries.map((d: { status: string; recipient: { type: string }; state: string }) => `${d.status} ${d.recipient.type} ${d.state}`).sort()).toEqual([
      'resolved pagerduty delivered', 'resolved webhook delivered', 'triggered pagerduty delivered', 'triggered webhook delivered',
    ]);
    expect(h.deliveries[0]).toMatchObject({ attempt_count: 1, http_status: expect.any(Number), finished_at: expect.any(String) });

    // Quiet afterwards.
    t.clock.ms = T0 + 120_000;
    await t.app.jobs.scheduler.tick();
    await idle(t);
    expect(receiver.requests.filter((r) => r.path === hookPath || r.path.startsWith('/pd/'))).toHaveLength(4);
    expect((await t.app.inject({ method: 'DELETE', url: `/1/triggers/checkout/${trigger.id}`, headers: t.config })).statusCode).toBe(204);
  });

  describe('per-alert details of trigger recipients, through /1/triggers', () => {
    let hook: Record<string, any>;
    let pd: Record<string, any>;
    let n = 0;
    const body = (recipients: unknown) => ({
      name: `details ${++n}`,
      query: { calculations: [{ op: 'COUNT' }], time_range: 900 },
      threshold: { op: '>', value: 1 },
      recipients,
    });
    const problems = (res: Res): Array<{ field: string; code: string; description: string }> => {
      expect(res.statusCode, res.body).toBe(422);
      return json(res).type_detail;
    };
    const fields = (res: Res) => problems(res).map((d) => d.field).sort();
    const vars = (variables: unknown) => [{ id: hook.id, details: { variables } }];

    beforeAll(async () => {
      const names = ['severity', 'team', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
      hook = await created(t, '/1/recipients', {
        type: 'webhook',
        details: { webhook_name: 'vars hook', webhook_url: `${receiver.url}/hooks/vars`, webhook_payloads: { template_variables: names.map((name) => ({ name })) } },
      });
      pd = await created(t, '/1/recipients', { type: 'pagerduty', details: { pagerduty_integration_name: 'vars PD', pagerduty_integration_key: 'varsintegrationkey00000000000001' } });
      await ingest(t, 'vars', [{ data: { x: 1 } }]);
    });

    it('accepts variables that name the recipient’s template variables (value optional) and answers them', async () => {
      const ok = await created(t, '/1/triggers/vars', body([{ id: hook.id, details: { variables: [{ name: 'severity', value: 'high' }, { name: 'team' }] } }, { id: pd.id, details: { pagerduty_severity: 'info' } }]));
      expect(ok.recipients[0].details).toEqual({ variables: [{ name: 'severity', value: 'high' }, { name: 'team' }] });
      expect(ok.recipients[1].details).toEqual({ pagerduty_severity: 'info' });
      const got = json(await t.app.inject({ method: 'GET', url: `/1/triggers/vars/${ok.id}`, headers: t.config }));
      expect(got.recipients).toEqual(ok.recipients);
      // PUT validates the same way.
      const put = await send(t, 'PUT', `/1/triggers/vars/${ok.id}`, body(vars([{ name: 'nope' }])));
      expect(fields(put)).toEqual(['recipients.0.details.variables.0.name']);
      const fine = await send(t, 'PUT', `/1/triggers/vars/${ok.id}`, body(vars([{ name: 'team', value: 'payments' }])));
      expect(fine.statusCode, fine.body).toBe(200);
      expect(json(fine).recipients[0].details).toEqual({ variables: [{ name: 'team', value: 'payments' }] });
    });

    it('422 for a variable the recipient does not define, a bad name, a repeat, a long value, more than 10', async () => {
      const unknown = problems(await send(t, 'POST', '/1/triggers/vars', body(vars([{ name: 'severity', value: 'x' }, { name: 'region', value: 'eu' }]))));
      expect(unknown).toEqual([expect.objectContaining({ field: 'recipients.0.details.variables.1.name', description: expect.stringContaining('not a template variable') })]);

      for (const bad of ['Severity', '1a', 'a-b', 'a_b', 'a b', 'x'.repeat(65)]) {
        expect(fields(await send(t, 'POST', '/1/triggers/vars', body(vars([{ name: bad }])))), bad).toEqual(['recipients.0.details.variables.0.name']);
      }
      const missing = problems(await send(t, 'POST', '/1/triggers/vars', body(vars([{ value: 'x' }]))));
      expect(missing).toEqual([expect.objectContaining({ field: 'recipients.0.details.variables.0.name', code: 'missing' })]);
      expect(fields(await send(t, 'POST', '/1/triggers/vars', body(vars([{ name: 'team' }, { name: 'team', value: 'y' }]))))).toEqual(['recipients.0.details.variables.1.name']);
      expect(fields(await send(t, 'POST', '/1/triggers/vars', body(vars([{ name: 'team', value: 'v'.repeat(257) }]))))).toEqual(['recipients.0.details.variables.0.value']);
      const ok256 = await send(t, 'POST', '/1/triggers/vars', body(vars([{ name: 'team', value: 'v'.repeat(256) }])));
      expect(ok256.statusCode, ok256.body).toBe(201);

      const eleven = ['severity', 'team', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'severity'].map((name) => ({ name }));
      expect(fields(await send(t, 'POST', '/1/triggers/vars', body(vars(eleven))))).toEqual(['recipients.0.details.variables']);
      const ten = await send(t, 'POST', '/1/triggers/vars', body(vars(eleven.slice(0, 10))));
      expect(ten.statusCode, ten.body).toBe(201);
      expect(fields(await send(t, 'POST', '/1/triggers/vars', body(vars('severity=high'))))).toEqual(['recipients.0.details.variables']);
      expect(fields(await send(t, 'POST', '/1/triggers/vars', body(vars(['severity']))))).toEqual(['recipients.0.details.variables.0']);
    });

    it('422 for variables on a non-webhook recipient and a bad PagerDuty severity; all problems in one answer', async () => {
      const res = await send(
        t,
        'POST',
        '/1/triggers/vars',
        body([
          { id: hook.id, details: { variables: [{ name: 'nope' }], pagerduty_severity: 'warning' } },
          { id: pd.id, details: { pagerduty_severity: 'urgent', variables: [{ name: 'severity' }] } },
        ]),
      );
      expect(fields(res)).toEqual([
        'recipients.0.details.pagerduty_severity',
        'recipients.0.details.variables.0.name',
        'recipients.1.details.pagerduty_severity',
        'recipients.1.details.variables',
      ]);
      const list = json(await t.app.inject({ method: 'GET', url: '/1/triggers/vars', headers: t.config })) as Array<{ name: string }>;
      expect(list.map((x) => x.name)).not.toContain(`details ${n}`);
    });
  });
});

describe('burn alert (exhaustion_time) → webhook, over the network', () => {
  let t: TestApp;
  const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000;
  /** Mid-minute of the minute `k` minutes before T0 (negative: after T0). */
  const ago = (k: number) => new Date(T0 - k * 60_000 + 30_000).toISOString();

  beforeAll(async () => {
    t = await makeApp({ settings: deliverySettings() });
    t.clock.ms = T0;
  });
  afterAll(() => t?.close());

  it('delivers the default payload with type burn_alert, alert_type exhaustion_time and the SLO figures; then the resolve', async () => {
    // As test/burn-alerts.test.ts: a day of successes (10 a minute) and, for the last hour, one failure a minute.
    await ingest(t, 'burn', [
      ...Array.from({ length: 1439 }, (_, i) => ({ data: { status: 200 }, time: ago(i + 1), samplerate: 10 })),
      ...Array.from({ length: 60 }, (_, i) => ({ data: { status: 500 }, time: ago(i + 1) })),
    ]);
    expect((await send(t, 'POST', '/1/derived_columns/burn', { alias: 'ok', expression: 'LT($status, 500)' })).statusCode).toBe(201);
    const slo = await created(t, '/1/slos/burn', { name: 'Checkout SLO', sli: { alias: 'ok' }, time_period_days: 1, target_per_million: 990000 });
    // A 500 first: delivery retries and the receiver gets the same payload again.
    const hookPath = '/hooks/e2e-burn';
    receiver.script.set(hookPath, [{ status: 500 }]);
    const hook = await created(t, '/1/recipients', { type: 'webhook', details: { webhook_name: 'burn hook', webhook_url: `${receiver.url}${hookPath}` } });
    const alert = await created(t, '/1/burn_alerts/burn', { slo: { id: slo.id }, exhaustion_minutes: 240, description: 'page someone', recipients: [{ id: hook.id }] });

    await t.app.jobs.scheduler.tick();
    await idle(t);
    const got = receiver.at(hookPath);
    expect(got).toHaveLength(2);
    expect(got[1].body).toBe(got[0].body);
    const payload = JSON.parse(got[1].body);
    expect(payload).toMatchObject({
      version: 'v0.1.0',
      type: 'burn_alert',
      alert_type: 'exhaustion_time',
      id: alert.id,
      status: 'TRIGGERED',
      trigger_description: 'page someone',
      dataset: 'burn',
      is_test: false,
      timestamp: new Date(T0).toISOString(),
      slo: { id: slo.id, name: 'Checkout SLO' },
      // The link leads to the SLO's page in the web UI.
      trigger_url: `https://waggle.example.com/${t.init.team.slug}/environments/${t.init.environment.slug}/datasets/burn/slo/${slo.id}`,
      result_url: '',
    });
    // Figures worked out in test/burn-alerts.test.ts: 84.5 failures of budget left, 59 in the last hour.
    expect(payload.slo.exhaustion_minutes).toBeCloseTo((84.5 * 60) / 59, 9);
    expect(payload.slo.budget_remaining).toBeCloseTo(100 * (1 - 60 / 144.5), 9);
    expect(payload.slo.burn_rate).toBeCloseTo(60 / (2390 + 60) / 0.01, 9);
    expect(Object.keys(payload.slo).sort()).toEqual(['budget_remaining', 'burn_rate', 'exhaustion_minutes', 'id', 'name']);
    expect(payload.dedup_key).toEqual(expect.any(String));

    // The failures stop; an hour of successes later the alert resolves, with the same dedup key.
    await ingest(t, 'burn', Array.from({ length: 61 }, (_, j) => ({ data: { status: 200 }, time: ago(-j), samplerate: 10 })));
    t.clock.ms = T0 + 61 * 60_000;
    await t.app.jobs.scheduler.tick();
    await idle(t);
    expect(receiver.at(hookPath)).toHaveLength(3);
    const resolved = JSON.parse(receiver.at(hookPath)[2].body);
    expect(resolved).toMatchObject({ type: 'burn_alert', alert_type: 'exhaustion_time', status: 'OK', dedup_key: payload.dedup_key, slo: { id: slo.id, name: 'Checkout SLO' } });
  });
});
