// Notification delivery over the network, against real local receivers: an HTTP server
// (node:http) standing in for webhooks, Slack, MS Teams and PagerDuty, and an SMTP server
// (smtp-server). Recipients are made through /1/recipients; notifications are enqueued straight
// on the app's notifier, as the alerting code does. Checks the payload of every recipient type,
// headers and signatures, templates with variables, retries and their limits, isolation between
// recipients, the bounded queue, the delivery log, resuming after a restart and the CLI.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, storeLegacyTeamsRecipient, type TestApp } from './helpers.js';
import { initialTenancy } from './tenancy-fixtures.js';
import { waggle } from './cli-helpers.js';
import { HttpReceiver } from './receivers.js';
import { DeliveryNotifier, listDeliveries, pruneDeliveries, type DeliveryRecord } from '../src/notify/index.js';
import type { Notification } from '../src/notify/types.js';
import type { RecipientType } from '../src/domain/recipients.js';
import type { Environment, Team } from '../src/stores/config/types.js';
import { loadSettings } from '../src/settings.js';
import { DELIVERY_KIND } from '../src/domain/kinds.js';

// --- receivers

interface Mail {
  parsed: ParsedMail;
  from: string;
  to: string[];
  user?: string;
  /** The SMTP session ran over TLS (implicit, or upgraded with STARTTLS). */
  secure?: boolean;
}

async function startSmtp(mails: Mail[], rcptFailures: Map<string, number>) {
  const server = new SMTPServer({
    logger: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: true,
    onAuth(auth, _session, cb) {
      if (auth.username === 'waggle' && auth.password === 'smtp-pass') return cb(null, { user: auth.username });
      return cb(new Error('bad credentials'));
    },
    onRcptTo(address, _session, cb) {
      const left = rcptFailures.get(address.address) ?? 0;
      if (left > 0) {
        rcptFailures.set(address.address, left - 1);
        const err = Object.assign(new Error('mailbox busy, try later'), { responseCode: 451 });
        return cb(err);
      }
      if (address.address.startsWith('nobody@')) return cb(Object.assign(new Error('no such user'), { responseCode: 550 }));
      cb();
    },
    onData(stream, session, cb) {
      simpleParser(stream).then(
        (parsed) => {
          mails.push({
            parsed,
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            user: session.user as string | undefined,
            secure: (session as { secure?: boolean }).secure,
          });
          cb();
        },
        (err: Error) => cb(err),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { server, port };
}

/** TEST-ONLY certificates (test/fixtures/smtp-tls/README.md): a CA and a server certificate for 127.0.0.1 it signed. */
const TLS_DIR = fileURLToPath(new URL('./fixtures/smtp-tls/', import.meta.url));
const CA_FILE = `${TLS_DIR}ca.crt`;

/** An SMTP server with TLS: implicit (`secure`) or STARTTLS offered on a plain connection. */
async function startTlsSmtp(mails: Mail[], mode: 'implicit' | 'starttls') {
  const server = new SMTPServer({
    logger: false,
    secure: mode === 'implicit',
    key: readFileSync(`${TLS_DIR}server.key`),
    cert: readFileSync(`${TLS_DIR}server.crt`),
    authOptional: true,
    onAuth(auth, _session, cb) {
      if (auth.username === 'waggle' && auth.password === 'smtp-pass') return cb(null, { user: auth.username });
      return cb(new Error('bad credentials'));
    },
    onData(stream, session, cb) {
      simpleParser(stream).then(
        (parsed) => {
          mails.push({ user: session.user as string | undefined, parsed, from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), secure: (session as { secure?: boolean }).secure });
          cb();
        },
        (err: Error) => cb(err),
      );
    },
  });
  server.on('error', () => {}); // failed handshakes (the untrusted-certificate cases) are expected
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.server.address() as AddressInfo).port };
}

// --- fixtures

let seq = 0;
const uniq = () => `${Date.now().toString(36)}${(seq++).toString(36)}`;

const http = new HttpReceiver();
const mails: Mail[] = [];
const rcptFailures = new Map<string, number>();
let smtp: Awaited<ReturnType<typeof startSmtp>>;
let t: TestApp;
let team: Team;
let environment: Environment;

const baseSettings = () => ({
  notifyRetryBaseMs: 5,
  notifyRetryMaxMs: 30,
  notifyMaxAttempts: 4,
  notifyTimeoutMs: 1000,
  pagerdutyUrl: `${http.url}/pd`,
  slackApiUrl: `${http.url}/slack/api`,
  slackToken: 'xoxb-test-token',
  smtpHost: '127.0.0.1',
  smtpPort: smtp.port,
  smtpStarttls: 'off' as const,
  smtpUser: 'waggle',
  smtpPassword: 'smtp-pass',
  smtpFrom: 'Waggle Alerts <alerts@waggle.test>',
});

async function createRecipient(app: TestApp, type: RecipientType, details: Record<string, unknown>) {
  const res = await app.app.inject({
    method: 'POST',
    url: '/1/recipients',
    headers: { ...app.config, 'content-type': 'application/json' },
    payload: JSON.stringify({ type, details }),
  });
  expect(res.statusCode, res.body).toBe(201);
  return json(res) as { id: string; type: RecipientType; details: Record<string, unknown> };
}

function notification(r: { id: string; type: RecipientType }, over: Partial<Notification> = {}, details?: Notification['recipient']['details']): Notification {
  return {
    id: `n-${uniq()}`,
    source: 'trigger',
    status: 'triggered',
    teamId: team.id,
    environmentId: environment.id,
    recipient: { id: r.id, type: r.type, target: 'x', ...(details ? { details } : {}) },
    alert: {
      id: 'trg-1',
      name: 'High latency',
      description: 'p99 "checkout" latency\nover 500 ms',
      dedupKey: 'trg-1/dedup',
      url: 'http://waggle.test/1/triggers/api/trg-1',
      datasetSlug: 'api',
    },
    result: {
      summary: 'P99(duration_ms) > 500: 740',
      value: 740,
      threshold: { op: '>', value: 500 },
      groups: [
        { group: { endpoint: '/checkout' }, value: 740 },
        { group: { endpoint: '/health' }, value: 3 },
      ],
    },
    timestamp: '2030-01-02T03:04:05.000Z',
    ...over,
  };
}

const notifier = (app: TestApp = t) => app.app.jobs.notifier as DeliveryNotifier;
async function deliver(...ns: Notification[]) {
  for (const n of ns) notifier().enqueue(n);
  await notifier().idle({ timeoutMs: 15_000 });
}
async function logOf(n: Notification, app: TestApp = t): Promise<DeliveryRecord & { id: string }> {
  const all = await app.store.listObjects<DeliveryRecord>(DELIVERY_KIND, {});
  const found = all.filter((o) => o.body.notificationId === n.id);
  expect(found, `delivery log entries for ${n.id}`).toHaveLength(1);
  return { id: found[0].id, ...found[0].body };
}
const hookUrl = (path: string) => `${http.url}${path}`;

beforeAll(async () => {
  await http.start();
  smtp = await startSmtp(mails, rcptFailures);
  t = await makeApp({ settings: baseSettings() });
  ({ team, environment } = await initialTenancy(t));
});
afterAll(async () => {
  await t?.close();
  await http.stop();
  await new Promise<void>((resolve) => smtp.server.close(() => resolve()));
});

describe('webhook delivery', () => {
  it('posts the default payload with the recipient headers, a signature and the delivery id', async () => {
    const path = `/hook/${uniq()}`;
    const secret = 'would you like to play a game';
    const r = await createRecipient(t, 'webhook', {
      webhook_name: `hook ${uniq()}`,
      webhook_url: hookUrl(path),
      webhook_secret: secret,
      webhook_headers: [{ header: 'X-Custom', value: 'abc' }, { header: 'Authorization', value: 'Bearer t0k' }, { header: 'X-Honeycomb-Webhook-Signature', value: 'forged' }],
    });
    const n = notification(r);
    const before = Math.floor(Date.now() / 1000);
    await deliver(n);
    expect(notifier().sent).toContainEqual(n);

    const [req] = http.at(path);
    expect(http.at(path)).toHaveLength(1);
    expect(req.method).toBe('POST');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-custom']).toBe('abc');
    expect(req.headers.authorization).toBe('Bearer t0k');
    expect(req.headers['x-honeycomb-webhook-token']).toBe(secret);
    const ts = String(req.headers['x-honeycomb-webhook-timestamp']);
    expect(Number(ts)).toBeGreaterThanOrEqual(before);
    expect(Number(ts)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    const expected = 'sha256=' + createHmac('sha256', secret).update(`${ts}.${req.body}`).digest('hex');
    expect(req.headers['x-honeycomb-webhook-signature']).toBe(expected);

    const log = await logOf(n);
    expect(req.headers['x-honeycomb-webhook-delivery-id']).toBe(log.id);
    expect(log).toMatchObject({ state: 'delivered', attemptCount: 1, recipient: { id: r.id, type: 'webhook' }, source: 'trigger', status: 'triggered' });
    expect(log.attempts).toHaveLength(1);
    expect(log.attempts[0]).toMatchObject({ outcome: 'delivered', httpStatus: 200 });

    expect(JSON.parse(req.body)).toEqual({
      version: 'v0.1.0',
      type: 'trigger',
      id: 'trg-1',
      name: 'High latency',
      status: 'TRIGGERED',
      summary: 'Triggered: High latency',
      description: 'P99(duration_ms) > 500: 740',
      trigger_description: 'p99 "checkout" latency\nover 500 ms',
      operator: 'greater than',
      threshold: 500,
      result_value: 740,
      result_url: '',
      result_groups: [
        { Group: { endpoint: '/checkout' }, Result: 740 },
        { Group: { endpoint: '/health' }, Result: 3 },
      ],
      result_groups_triggered: [{ Group: { endpoint: '/checkout' }, Result: 740 }],
      trigger_url: 'http://waggle.test/1/triggers/api/trg-1',
      environment: environment.name,
      dataset: 'api',
      slo: null,
      dedup_key: 'trg-1/dedup',
      notification_id: n.id,
      delivery_id: log.id,
      timestamp: '2030-01-02T03:04:05.000Z',
      is_test: false,
    });
  });

  it('sends no signature headers without a secret; a resolve says OK', async () => {
    const path = `/hook/${uniq()}`;
    const r = await createRecipient(t, 'webhook', { webhook_name: `hook ${uniq()}`, webhook_url: hookUrl(path) });
    await deliver(notification(r, { status: 'resolved' }));
    const [req] = http.at(path);
    expect(req.headers['x-honeycomb-webhook-signature']).toBeUndefined();
    expect(req.headers['x-honeycomb-webhook-token']).toBeUndefined();
    expect(req.headers['x-honeycomb-webhook-delivery-id']).toBeTruthy();
    expect(JSON.parse(req.body)).toMatchObject({ status: 'OK', summary: 'Resolved: High latency' });
  });

  it('renders payload templates with variables: recipient defaults overridden by the alert', async () => {
    const path = `/hook/${uniq()}`;
    const r = await createRecipient(t, 'webhook', {
      webhook_name: `tpl ${uniq()}`,
      webhook_url: hookUrl(path),
      webhook_payloads: {
        template_variables: [{ name: 'team', default_value: 'core' }, { name: 'priority', default_value: 'P3' }, { name: 'runbook' }],
        payload_templates: {
          trigger: {
            body:
              '{"text": "{{ .Alert.Summary }} for {{ .Vars.team }} ({{ .Vars.priority }})", "desc": "{{ .Description }}",' +
              ' "groups": {{ toJson .Result.GroupsTriggered }}, "threshold": {{ .Threshold }}, "env": "{{ .Environment }}",' +
              ' "runbook": "{{ .Vars.runbook }}", "datasets": {{ toJson .Datasets }}' +
              '{{ if eq .Alert.Status "OK" }}, "resolved": true{{ end }}}',
          },
          budget_rate: { body: '{"kind": "budget_rate", "slo": "{{ .SLO.Name }}", "rate": {{ .SLO.BurnRate }}, "sev": "{{ .Vars.priority }}"}' },
          exhaustion_time: { body: '{"kind": "exhaustion_time", "minutes": {{ .SLO.ExhaustionMinutes }}}' },
        },
      },
    });
    const fire = notification(r, {}, { variables: [{ name: 'priority', value: 'P1' }] });
    const resolve = notification(r, { status: 'resolved' });
    const slo = { id: 'slo-1', name: 'Checkout "SLO"', budgetRemaining: 12.5, burnRate: 4.2 };
    const rate = notification(r, { source: 'burn_alert', alert: { ...fire.alert, alertType: 'budget_rate' }, result: { summary: 'burning', slo } });
    const exhaustion = notification(r, { source: 'burn_alert', result: { summary: 'exhausting', slo: { ...slo, burnRate: undefined, exhaustionMinutes: 90 } } });
    await deliver(fire, resolve, rate, exhaustion);

    const bodies = http.at(path).map((q) => JSON.parse(q.body));
    expect(bodies).toHaveLength(4);
    expect(bodies[0]).toEqual({
      text: 'Triggered: High latency for core (P1)',
      desc: 'p99 "checkout" latency\nover 500 ms',
      groups: [{ Group: { endpoint: '/checkout' }, Result: 740 }],
      threshold: 500,
      env: environment.name,
      runbook: '',
      datasets: ['api'],
    });
    expect(bodies[1]).toMatchObject({ text: 'Resolved: High latency for core (P3)', resolved: true });
    expect(bodies[2]).toEqual({ kind: 'budget_rate', slo: 'Checkout "SLO"', rate: 4.2, sev: 'P3' });
    expect(bodies[3]).toEqual({ kind: 'exhaustion_time', minutes: 90 });
    expect(http.at(path)[0].headers['content-type']).toBe('application/json');
  });

  it('a broken template fails the delivery at once, with the reason in the log; text templates go as text/plain', async () => {
    const bad = `/hook/${uniq()}`;
    const rb = await createRecipient(t, 'webhook', {
      webhook_name: `bad ${uniq()}`,
      webhook_url: hookUrl(bad),
      webhook_payloads: { payload_templates: { trigger: { body: '{"x": "{{ .Alert.Nope }}"}' } } },
    });
    const text = `/hook/${uniq()}`;
    const rt = await createRecipient(t, 'webhook', {
      webhook_name: `text ${uniq()}`,
      webhook_url: hookUrl(text),
      webhook_payloads: { payload_templates: { trigger: { body: 'ALERT {{ .Name }}: {{ .Result.Value }}' } } },
    });
    const nb = notification(rb);
    await deliver(nb, notification(rt));
    expect(http.at(bad)).toHaveLength(0);
    const log = await logOf(nb);
    expect(log).toMatchObject({ state: 'failed', attemptCount: 1 });
    expect(log.error).toMatch(/payload template: can't evaluate \.Alert\.Nope/);
    expect(http.at(text)[0].body).toBe('ALERT High latency: 740');
    expect(http.at(text)[0].headers['content-type']).toBe('text/plain; charset=utf-8');
  });
});

describe('Slack, MS Teams, PagerDuty', () => {
  it('Slack: chat.postMessage to the channel with the bot token; ok:false is a failure', async () => {
    http.fallback.set('/slack/api/chat.postMessage', (q) => {
      const channel = JSON.parse(q.body).channel as string;
      return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(channel === '#missing' ? { ok: false, error: 'channel_not_found' } : { ok: true }) };
    });
    const r = await createRecipient(t, 'slack', { slack_channel: '#alerts' });
    const missing = await createRecipient(t, 'slack', { slack_channel: '#missing' });
    const n = notification(r);
    const m = notification(missing);
    await deliver(n, m);
    const reqs = http.at('/slack/api/chat.postMessage');
    const ok = reqs.find((q) => JSON.parse(q.body).channel === '#alerts')!;
    expect(ok.headers.authorization).toBe('Bearer xoxb-test-token');
    expect(ok.headers['content-type']).toBe('application/json; charset=utf-8');
    const msg = JSON.parse(ok.body);
    expect(msg.text).toBe('Triggered: High latency — P99(duration_ms) &gt; 500: 740');
    expect(msg.attachments[0]).toMatchObject({ color: 'danger', title: 'Triggered: High latency', title_link: 'http://waggle.test/1/triggers/api/trg-1', footer: 'Waggle' });
    expect(msg.attachments[0].fields).toContainEqual({ title: 'Threshold', value: '&gt; 500', short: true });
    expect(msg.attachments[0].fields).toContainEqual({ title: 'Groups', value: 'endpoint=/checkout: 740', short: true });
    expect(await logOf(n)).toMatchObject({ state: 'delivered', recipient: { type: 'slack', target: '#alerts' } });
    expect(await logOf(m)).toMatchObject({ state: 'failed', attemptCount: 1, error: 'Slack error: channel_not_found' });
  });

  it('Slack: the result’s page is a link and its chart the attachment’s image; paths get the public base URL', async () => {
    http.fallback.set('/slack/api/chat.postMessage', () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' }));
    const r = await createRecipient(t, 'slack', { slack_channel: `#links-${uniq()}` });
    const page = '/my-team/environments/prod/datasets/api/result/R1';
    const n = notification(r, {
      alert: { ...notification(r).alert, url: '/my-team/environments/prod/datasets/api/triggers/trg-1' },
      result: { ...notification(r).result, url: page, imageUrl: `${page}/snapshot/tok` },
    });
    await deliver(n);
    const msg = JSON.parse(http.at('/slack/api/chat.postMessage').find((q) => JSON.parse(q.body).channel === r.details.slack_channel)!.body);
    // (the server's address: no WAGGLE_PUBLIC_URL here)
    const base = /^(http:\/\/[^/]+)\//.exec(msg.attachments[0].title_link)![1];
    expect(msg.attachments[0]).toMatchObject({
      title_link: `${base}/my-team/environments/prod/datasets/api/triggers/trg-1`,
      image_url: `${base}${page}/snapshot/tok`,
    });
    expect(msg.attachments[0].text).toContain(`<${base}${page}|View the result>`);
  });

  it('MS Teams: a MessageCard for msteams, an Adaptive Card in the Workflows envelope for msteams_workflow', async () => {
    const p1 = `/teams/${uniq()}`;
    const p2 = `/flow/${uniq()}`;
    const legacy = await storeLegacyTeamsRecipient(t, { webhook_name: `teams ${uniq()}`, webhook_url: hookUrl(p1) });
    const flow = await createRecipient(t, 'msteams_workflow', { webhook_name: `flow ${uniq()}`, webhook_url: hookUrl(p2) });
    http.script.set(p2, [{ status: 202, body: '' }]);
    const nf = notification(flow, { status: 'resolved' });
    await deliver(notification(legacy), nf);
    const card = JSON.parse(http.at(p1)[0].body);
    expect(card).toMatchObject({
      '@type': 'MessageCard',
      '@context': 'https://schema.org/extensions',
      summary: 'Triggered: High latency',
      themeColor: 'D70000',
      title: 'Triggered: High latency',
      potentialAction: [{ '@type': 'OpenUri', name: 'Open', targets: [{ os: 'default', uri: 'http://waggle.test/1/triggers/api/trg-1' }] }],
    });
    expect(card.sections[0].facts).toContainEqual({ name: 'Value', value: '740' });
    const msg = JSON.parse(http.at(p2)[0].body);
    expect(msg.type).toBe('message');
    expect(msg.attachments).toHaveLength(1);
    expect(msg.attachments[0].contentType).toBe('application/vnd.microsoft.card.adaptive');
    const content = msg.attachments[0].content;
    expect(content).toMatchObject({ type: 'AdaptiveCard', version: '1.4', $schema: 'http://adaptivecards.io/schemas/adaptive-card.json' });
    expect(content.body[0]).toMatchObject({ type: 'TextBlock', text: 'Resolved: High latency', color: 'Good' });
    expect(content.body.find((b: { type: string }) => b.type === 'FactSet').facts).toContainEqual({ title: 'Status', value: 'Resolved' });
    expect(content.actions).toEqual([{ type: 'Action.OpenUrl', title: 'Open', url: 'http://waggle.test/1/triggers/api/trg-1' }]);
    expect(await logOf(nf)).toMatchObject({ state: 'delivered', attempts: [{ httpStatus: 202 }] });
  });

  it('PagerDuty: Events API v2 trigger with the alert severity (default critical), resolve by dedup_key', async () => {
    const key = 'abcdefghijklmnopqrstuvwxyz012345';
    const r = await createRecipient(t, 'pagerduty', { pagerduty_integration_name: `PD ${uniq()}`, pagerduty_integration_key: key });
    http.fallback.set('/pd/v2/enqueue', () => ({ status: 202, headers: { 'content-type': 'application/json' }, body: '{"status":"success","message":"Event processed"}' }));
    const before = http.at('/pd/v2/enqueue').length;
    await deliver(notification(r, {}, { pagerduty_severity: 'warning' }));
    await deliver(notification(r));
    await deliver(notification(r, { status: 'resolved' }, { pagerduty_severity: 'warning' }));
    const events = http.at('/pd/v2/enqueue').slice(before).map((q) => JSON.parse(q.body));
    expect(events).toHaveLength(3);
    expect(events[0]).toMatchObject({
      routing_key: key,
      event_action: 'trigger',
      dedup_key: 'trg-1/dedup',
      payload: {
        summary: 'Triggered: High latency — P99(duration_ms) > 500: 740',
        source: 'waggle/api',
        severity: 'warning',
        timestamp: '2030-01-02T03:04:05.000Z',
        class: 'trigger',
        custom_details: { value: 740, threshold: { op: '>', value: 500 }, groups_triggered: [{ group: { endpoint: '/checkout' }, value: 740 }] },
      },
      client: 'Waggle',
      client_url: 'http://waggle.test/1/triggers/api/trg-1',
    });
    expect(events[1].payload.severity).toBe('critical');
    expect(events[2]).toEqual({ routing_key: key, event_action: 'resolve', dedup_key: 'trg-1/dedup' });
  });
});

describe('email delivery', () => {
  it('sends plain text and HTML over SMTP, authenticated, from the configured address', async () => {
    const address = `oncall+${uniq()}@example.com`;
    const r = await createRecipient(t, 'email', { email_address: address });
    const n = notification(r, { alert: { ...notification(r).alert, name: 'Errors <5xx> & co' } });
    await deliver(n);
    const mail = mails.find((m) => m.to.includes(address))!;
    expect(mail).toBeDefined();
    expect(mail.user).toBe('waggle');
    expect(mail.from).toBe('alerts@waggle.test');
    expect(mail.parsed.subject).toBe('[Waggle] Triggered: Errors <5xx> & co');
    expect(mail.parsed.text).toContain('P99(duration_ms) > 500: 740');
    expect(mail.parsed.text).toContain('Threshold: > 500');
    expect(mail.parsed.html).toContain('<h2 style="color:#d70000">Triggered: Errors &lt;5xx&gt; &amp; co</h2>');
    const log = await logOf(n);
    expect(mail.parsed.headers.get('x-waggle-delivery-id')).toBe(log.id);
    expect(log).toMatchObject({ state: 'delivered', recipient: { type: 'email', target: address } });
  });

  it('retries an SMTP 4xx, gives up at once on 5xx', async () => {
    const busy = `busy+${uniq()}@example.com`;
    rcptFailures.set(busy, 2);
    const rb = await createRecipient(t, 'email', { email_address: busy });
    const rn = await createRecipient(t, 'email', { email_address: `nobody@${uniq()}.example.com` });
    const nb = notification(rb);
    const nn = notification(rn);
    await deliver(nb, nn);
    expect(await logOf(nb)).toMatchObject({ state: 'delivered', attemptCount: 3 });
    expect(mails.filter((m) => m.to.includes(busy))).toHaveLength(1);
    const failed = await logOf(nn);
    expect(failed).toMatchObject({ state: 'failed', attemptCount: 1 });
    expect(failed.error).toMatch(/^SMTP 550/);
  });
});

describe('retries, isolation and the delivery log', () => {
  it('retries 500 twice then succeeds, with the same delivery id each time', async () => {
    const path = `/hook/${uniq()}`;
    http.script.set(path, [{ status: 500, body: 'boom' }, { status: 503, headers: { 'retry-after': '0' } }]);
    const r = await createRecipient(t, 'webhook', { webhook_name: `retry ${uniq()}`, webhook_url: hookUrl(path) });
    const n = notification(r);
    await deliver(n);
    const reqs = http.at(path);
    expect(reqs).toHaveLength(3);
    expect(new Set(reqs.map((q) => q.headers['x-honeycomb-webhook-delivery-id'])).size).toBe(1);
    const log = await logOf(n);
    expect(log).toMatchObject({ state: 'delivered', attemptCount: 3 });
    expect(log.attempts.map((a) => [a.outcome, a.httpStatus])).toEqual([
      ['retry', 500],
      ['retry', 503],
      ['delivered', 200],
    ]);
    expect(log.attempts[0].error).toBe('HTTP 500: boom');
  });

  it('does not retry 400; retries 429 and gives up after the maximum attempts', async () => {
    const p400 = `/hook/${uniq()}`;
    const p429 = `/hook/${uniq()}`;
    http.script.set(p400, [{ status: 400, body: 'bad payload' }]);
    http.fallback.set(p429, () => ({ status: 429 }));
    const r400 = await createRecipient(t, 'webhook', { webhook_name: `400 ${uniq()}`, webhook_url: hookUrl(p400) });
    const r429 = await createRecipient(t, 'webhook', { webhook_name: `429 ${uniq()}`, webhook_url: hookUrl(p429) });
    const n400 = notification(r400);
    const n429 = notification(r429);
    await deliver(n400, n429);
    expect(http.at(p400)).toHaveLength(1);
    expect(await logOf(n400)).toMatchObject({ state: 'failed', attemptCount: 1, error: 'HTTP 400: bad payload' });
    expect(http.at(p429)).toHaveLength(4);
    const log = await logOf(n429);
    expect(log).toMatchObject({ state: 'failed', attemptCount: 4 });
    expect(log.error).toBe('gave up after 4 attempts; last error: HTTP 429: ok');
  });

  it('retries network errors (connection refused) and records why', async () => {
    const dead = new HttpReceiver();
    await dead.start();
    const url = `${dead.url}/gone`;
    await dead.stop();
    const r = await createRecipient(t, 'webhook', { webhook_name: `dead ${uniq()}`, webhook_url: url });
    const n = notification(r);
    await deliver(n);
    const log = await logOf(n);
    expect(log).toMatchObject({ state: 'failed', attemptCount: 4 });
    expect(log.attempts[0].error).toMatch(/^network error: ECONNREFUSED/);
  });

  it('a slow or failing recipient does not hold up a healthy one', async () => {
    const slow = `/hook/${uniq()}`;
    const healthy = `/hook/${uniq()}`;
    http.script.set(slow, [{ hang: true }]);
    const rs = await createRecipient(t, 'webhook', { webhook_name: `slow ${uniq()}`, webhook_url: hookUrl(slow) });
    const rh = await createRecipient(t, 'webhook', { webhook_name: `healthy ${uniq()}`, webhook_url: hookUrl(healthy) });
    const ns = notification(rs);
    const nh = notification(rh);
    const started = Date.now();
    notifier().enqueue(ns);
    notifier().enqueue(nh);
    await expect.poll(() => http.at(healthy).length, { timeout: 900, interval: 10 }).toBe(1);
    expect(http.at(healthy)[0].at - started).toBeLessThan(900);
    await notifier().idle({ timeoutMs: 10_000 });
    const log = await logOf(ns);
    expect(log).toMatchObject({ state: 'delivered', attemptCount: 2 });
    expect(log.attempts[0].error).toBe('no answer within 1000 ms');
  });

  it('keeps the order per recipient: a resolve waits for its trigger, even through retries', async () => {
    const path = `/hook/${uniq()}`;
    http.script.set(path, [{ status: 502 }]);
    const r = await createRecipient(t, 'webhook', { webhook_name: `order ${uniq()}`, webhook_url: hookUrl(path) });
    await deliver(notification(r), notification(r, { status: 'resolved' }));
    expect(http.at(path).map((q) => JSON.parse(q.body).status)).toEqual(['TRIGGERED', 'TRIGGERED', 'OK']);
  });

  it('a deleted recipient fails at once, unretried; a repeated notification id is delivered once', async () => {
    const path = `/hook/${uniq()}`;
    const r = await createRecipient(t, 'webhook', { webhook_name: `gone ${uniq()}`, webhook_url: hookUrl(path) });
    const del = await t.app.inject({ method: 'DELETE', url: `/1/recipients/${r.id}`, headers: t.config });
    expect(del.statusCode).toBe(204);
    const n = notification(r);
    await deliver(n);
    expect(http.at(path)).toHaveLength(0);
    expect(await logOf(n)).toMatchObject({ state: 'failed', attemptCount: 1, error: 'the recipient no longer exists' });

    const p2 = `/hook/${uniq()}`;
    const r2 = await createRecipient(t, 'webhook', { webhook_name: `dup ${uniq()}`, webhook_url: hookUrl(p2) });
    const twice = notification(r2);
    notifier().enqueue(twice);
    notifier().enqueue(twice);
    await notifier().idle();
    notifier().enqueue(twice);
    await notifier().idle();
    expect(http.at(p2)).toHaveLength(1);
    await logOf(twice);
  });

  it('bounded queue: past the limit a notification is refused and logged, and enqueue never blocks', async () => {
    const app = await makeApp({ settings: { ...baseSettings(), notifyQueueSize: 2 } });
    try {
      const { team: tm, environment: env } = await initialTenancy(app);
      const path = `/hook/${uniq()}`;
      http.script.set(path, [{ hang: true }, { hang: true }]);
      const r = await createRecipient(app, 'webhook', { webhook_name: `full ${uniq()}`, webhook_url: hookUrl(path) });
      const ns = [1, 2, 3].map(() => ({ ...notification(r), teamId: tm.id, environmentId: env.id }));
      const started = performance.now();
      for (const n of ns) notifier(app).enqueue(n);
      expect(performance.now() - started).toBeLessThan(250);
      expect(notifier(app).sent).toHaveLength(3);
      await notifier(app).idle({ timeoutMs: 15_000 });
      expect(await logOf(ns[2], app)).toMatchObject({ state: 'refused', attemptCount: 0, error: 'delivery queue is full (2 unfinished deliveries)' });
      expect((await logOf(ns[0], app)).state).toBe('delivered');
      expect((await logOf(ns[1], app)).state).toBe('delivered');
      const listed = await listDeliveries(app.store, { teamId: tm.id, environmentId: env.id });
      expect(listed.map((o) => o.body.notificationId)).toEqual([ns[2].id, ns[1].id, ns[0].id]);
    } finally {
      await app.close();
    }
  });

  it('the delivery log keeps the newest N, never pruning unfinished deliveries', async () => {
    const app = await makeApp({ settings: { ...baseSettings(), deliveryLogSize: 3 } });
    try {
      const { team: tm, environment: env } = await initialTenancy(app);
      const path = `/hook/${uniq()}`;
      const r = await createRecipient(app, 'webhook', { webhook_name: `prune ${uniq()}`, webhook_url: hookUrl(path) });
      const ns = Array.from({ length: 7 }, () => ({ ...notification(r), teamId: tm.id, environmentId: env.id }));
      for (const n of ns) {
        notifier(app).enqueue(n);
        await notifier(app).idle();
      }
      const kept = await listDeliveries(app.store, {});
      expect(kept.length).toBeLessThanOrEqual(4);
      expect(kept.map((o) => o.body.notificationId).slice(0, 3)).toEqual([ns[6].id, ns[5].id, ns[4].id]);
      await pruneDeliveries(app.store, 3);
      expect((await listDeliveries(app.store, {})).map((o) => o.body.notificationId)).toEqual([ns[6].id, ns[5].id, ns[4].id]);
    } finally {
      await app.close();
    }
  });
});

describe('shutdown and restart', () => {
  const make = (extra: Partial<ConstructorParameters<typeof DeliveryNotifier>[0]> = {}) =>
    new DeliveryNotifier({
      store: t.store,
      log: { info() {}, warn() {}, error() {} },
      options: { queueSize: 100, concurrency: 4, maxAttempts: 5, retryBaseMs: 60_000, retryMaxMs: 60_000, logSize: 10_000, closeGraceMs: 100 },
      transport: { timeoutMs: 5000, pagerdutyUrl: http.url, slackApiUrl: http.url, smtp: { secure: false, starttls: 'off', from: 'x@y.z' } },
      ...extra,
    });

  it('a pending retry survives a restart and is resumed when due', async () => {
    const path = `/hook/${uniq()}`;
    http.script.set(path, [{ status: 500 }]);
    const r = await createRecipient(t, 'webhook', { webhook_name: `resume ${uniq()}`, webhook_url: hookUrl(path) });
    const first = make();
    const n = notification(r);
    first.enqueue(n);
    await first.idle({ within: 30_000 });
    await first.close();
    const waiting = await logOf(n);
    expect(waiting).toMatchObject({ state: 'retrying', attemptCount: 1 });
    expect(Date.parse(waiting.nextAttemptAt!)).toBeGreaterThan(Date.now() + 20_000);

    const second = make({ clock: () => Date.now() + 61_000 });
    await second.idle();
    await second.close();
    expect(http.at(path)).toHaveLength(2);
    expect(await logOf(n)).toMatchObject({ state: 'delivered', attemptCount: 2 });
  });

  it('a request cut short by shutdown is not counted and is sent again after the restart', async () => {
    const path = `/hook/${uniq()}`;
    http.script.set(path, [{ hang: true }]);
    const r = await createRecipient(t, 'webhook', { webhook_name: `cut ${uniq()}`, webhook_url: hookUrl(path) });
    const first = make();
    const n = notification(r);
    first.enqueue(n);
    await expect.poll(() => http.at(path).length, { timeout: 2000, interval: 10 }).toBe(1);
    await first.close();
    const cut = await logOf(n);
    expect(cut).toMatchObject({ state: 'queued', attemptCount: 0, attempts: [{ outcome: 'interrupted' }] });

    const second = make();
    await second.idle();
    await second.close();
    expect(http.at(path)).toHaveLength(2);
    const after = await logOf(n);
    expect(after).toMatchObject({ state: 'delivered', attemptCount: 1 });
    expect(after.attempts.map((a) => a.outcome)).toEqual(['interrupted', 'delivered']);
  });
});

describe('waggle deliveries (CLI) and settings', { timeout: 60_000 }, () => {
  it('lists the delivery log, newest first, filtered, as text and JSON, without secrets', async () => {
    const path = `/hook/${uniq()}`;
    http.script.set(path, [{ status: 404, body: 'no such hook' }]);
    const r = await createRecipient(t, 'webhook', { webhook_name: `cli ${uniq()}`, webhook_url: hookUrl(path), webhook_secret: 'cli-secret-value' });
    const n = notification(r, { alert: { ...notification(r).alert, name: 'CLI alert' } });
    await deliver(n);

    const text = await waggle(['deliveries', '--data-dir', t.dataDir, '--state', 'failed', '--recipient', r.id]);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ failed +1 attempt +webhook:cli \S+ \(\S+\)  trigger triggered  "CLI alert"  HTTP 404  error: HTTP 404: no such hook$/);

    const out = await waggle(['deliveries', '--data-dir', t.dataDir, '--json', '--limit', '5', '--team', t.init.team.slug, '--environment', t.init.environment.slug]);
    expect(out.code, out.stderr).toBe(0);
    const rows = JSON.parse(out.stdout) as Array<Record<string, any>>;
    expect(rows.length).toBe(5);
    expect(rows[0]).toMatchObject({ notificationId: n.id, state: 'failed', attemptCount: 1, team_id: team.id, environment_id: environment.id, recipient: { id: r.id, type: 'webhook' } });
    expect(rows[0].attempts[0]).toMatchObject({ outcome: 'failed', httpStatus: 404 });
    const times = rows.map((o) => o.created_at as string);
    expect([...times].sort().reverse()).toEqual(times);
    expect(out.stdout).not.toContain('cli-secret-value');

    const bad = await waggle(['deliveries', '--data-dir', t.dataDir, '--state', 'lost']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--state must be one of');
  });

  it('reads the delivery settings from the environment', () => {
    const s = loadSettings({
      WAGGLE_NOTIFY_QUEUE_SIZE: '5',
      WAGGLE_NOTIFY_MAX_ATTEMPTS: '3',
      WAGGLE_NOTIFY_RETRY_BASE_MS: '10',
      WAGGLE_NOTIFY_TIMEOUT_MS: '2000',
      WAGGLE_DELIVERY_LOG_SIZE: '100',
      WAGGLE_PAGERDUTY_URL: 'http://pd.local:8080',
      WAGGLE_SLACK_WEBHOOK_URL: 'https://hooks.slack.test/T/B/X',
      WAGGLE_SMTP_HOST: 'mail.local',
      WAGGLE_SMTP_PORT: '2525',
      WAGGLE_SMTP_SECURE: 'true',
      WAGGLE_SMTP_STARTTLS: 'required',
      WAGGLE_SMTP_FROM: 'ops@example.com',
    });
    expect(s).toMatchObject({
      notifyQueueSize: 5,
      notifyMaxAttempts: 3,
      notifyRetryBaseMs: 10,
      notifyTimeoutMs: 2000,
      deliveryLogSize: 100,
      pagerdutyUrl: 'http://pd.local:8080',
      slackWebhookUrl: 'https://hooks.slack.test/T/B/X',
      smtpHost: 'mail.local',
      smtpPort: 2525,
      smtpSecure: true,
      smtpStarttls: 'required',
      smtpFrom: 'ops@example.com',
    });
    expect(() => loadSettings({ WAGGLE_NOTIFY_MAX_ATTEMPTS: '0' })).toThrow(/WAGGLE_NOTIFY_MAX_ATTEMPTS/);
    expect(() => loadSettings({ WAGGLE_PAGERDUTY_URL: 'ftp://x' })).toThrow(/WAGGLE_PAGERDUTY_URL/);
    expect(() => loadSettings({ WAGGLE_SMTP_STARTTLS: 'maybe' })).toThrow(/WAGGLE_SMTP_STARTTLS/);
  });
});

// --- delivery paths the tests above do not take: Slack's incoming webhook, SMTP over TLS, and
// the retry timing (backoff formula, Retry-After).

const silent = { info() {}, warn() {}, error() {} };
type DirectDeps = ConstructorParameters<typeof DeliveryNotifier>[0];
/** A DeliveryNotifier over the shared store with its own options/transport (no resume of others' deliveries). */
function direct(options: Partial<DirectDeps['options']>, transport: Partial<DirectDeps['transport']>, extra: Partial<DirectDeps> = {}) {
  return new DeliveryNotifier({
    store: t.store,
    log: silent,
    resume: false,
    options: { queueSize: 100, concurrency: 8, maxAttempts: 2, retryBaseMs: 5, retryMaxMs: 10, logSize: 10_000, closeGraceMs: 100, ...options },
    transport: { timeoutMs: 2000, pagerdutyUrl: http.url, slackApiUrl: `${http.url}/slack/api`, smtp: { secure: false, starttls: 'off', from: 'alerts@waggle.test' }, ...transport },
    ...extra,
  });
}
async function deliverWith(nf: DeliveryNotifier, ...ns: Notification[]) {
  try {
    for (const n of ns) nf.enqueue(n);
    await nf.idle({ timeoutMs: 15_000 });
  } finally {
    await nf.close();
  }
}

describe('Slack incoming webhook (WAGGLE_SLACK_WEBHOOK_URL, no token)', () => {
  it('posts the incoming-webhook message to the configured URL; 5xx and 429 are retried, other 4xx fail at once', async () => {
    const hook = `/slack-hook/${uniq()}`;
    const app = await makeApp({ settings: { ...baseSettings(), slackToken: undefined, slackWebhookUrl: `${http.url}${hook}` } });
    try {
      const { team: tm, environment: env } = await initialTenancy(app);
      const r = await createRecipient(app, 'slack', { slack_channel: '#alerts' });
      const own = (n: Notification): Notification => ({ ...n, teamId: tm.id, environmentId: env.id });
      // Slack answers 500 `rollup_error`, 429 with Retry-After, then `200 ok` (text/html).
      http.script.set(hook, [{ status: 500, body: 'rollup_error' }, { status: 429, headers: { 'retry-after': '0' }, body: 'rate limited' }]);
      http.fallback.set(hook, () => ({ status: 200, headers: { 'content-type': 'text/html' }, body: 'ok' }));
      const n = own(notification(r, { alert: { ...notification(r).alert, name: 'Errors <5xx> & co' } }));
      notifier(app).enqueue(n);
      await notifier(app).idle({ timeoutMs: 15_000 });

      const reqs = http.at(hook);
      expect(reqs).toHaveLength(3);
      expect(http.at('/slack/api/chat.postMessage').filter((q) => q.body.includes(n.alert.name))).toHaveLength(0);
      for (const q of reqs) {
        expect(q.method).toBe('POST');
        expect(q.headers['content-type']).toBe('application/json');
        expect(q.headers.authorization).toBeUndefined();
        expect(q.body).toBe(reqs[0].body);
      }
      const msg = JSON.parse(reqs[0].body);
      // Slack's incoming-webhook JSON: `text` (mrkdwn: &, < and > escaped) plus legacy attachments.
      expect(msg).toEqual({
        channel: '#alerts',
        text: 'Triggered: Errors &lt;5xx&gt; &amp; co — P99(duration_ms) &gt; 500: 740',
        attachments: [
          {
            color: 'danger',
            title: 'Triggered: Errors <5xx> & co',
            title_link: 'http://waggle.test/1/triggers/api/trg-1',
            text: 'P99(duration_ms) &gt; 500: 740\np99 "checkout" latency\nover 500 ms',
            fields: [
              { title: 'Status', value: 'Triggered', short: true },
              { title: 'Value', value: '740', short: true },
              { title: 'Threshold', value: '&gt; 500', short: true },
              { title: 'Groups', value: 'endpoint=/checkout: 740', short: true },
              { title: 'Environment', value: env.name, short: true },
              { title: 'Dataset', value: 'api', short: true },
              { title: 'Time', value: '2030-01-02T03:04:05.000Z', short: true },
            ],
            footer: 'Waggle',
            ts: Date.parse('2030-01-02T03:04:05.000Z') / 1000,
          },
        ],
      });
      const log = await logOf(n, app);
      expect(log).toMatchObject({ state: 'delivered', attemptCount: 3, recipient: { type: 'slack', target: '#alerts' } });
      expect(log.attempts.map((a) => [a.outcome, a.httpStatus])).toEqual([
        ['retry', 500],
        ['retry', 429],
        ['delivered', 200],
      ]);

      // A resolve is green; a 404 (`no_service`: the webhook was removed) fails at once.
      http.script.set(hook, [{ status: 404, body: 'no_service' }]);
      const resolved = own(notification(r, { status: 'resolved' }));
      notifier(app).enqueue(resolved);
      await notifier(app).idle({ timeoutMs: 15_000 });
      expect(http.at(hook)).toHaveLength(4);
      expect(JSON.parse(http.at(hook)[3].body).attachments[0]).toMatchObject({ color: 'good', title: 'Resolved: High latency' });
      expect(await logOf(resolved, app)).toMatchObject({ state: 'failed', attemptCount: 1, error: 'HTTP 404: no_service' });
    } finally {
      http.fallback.delete(hook);
      await app.close();
    }
  });

  it('with both a token and a webhook URL the token is used; with neither, Slack fails at once as not configured', async () => {
    const hook = `/slack-hook/${uniq()}`;
    http.fallback.set('/slack/api/chat.postMessage', () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' }));
    const r = await createRecipient(t, 'slack', { slack_channel: `#both-${uniq()}` });
    const n = notification(r);
    await deliverWith(direct({}, { slackToken: 'xoxb-both', slackWebhookUrl: `${http.url}${hook}` }), n);
    expect(http.at(hook)).toHaveLength(0);
    expect(http.at('/slack/api/chat.postMessage').filter((q) => q.headers.authorization === 'Bearer xoxb-both')).toHaveLength(1);
    expect(await logOf(n)).toMatchObject({ state: 'delivered' });

    const none = notification(r);
    await deliverWith(direct({}, {}), none);
    expect(await logOf(none)).toMatchObject({ state: 'failed', attemptCount: 1, error: expect.stringMatching(/^Slack is not configured/) });
  });
});

describe('email over TLS (STARTTLS and implicit TLS, a private CA)', () => {
  const tlsMails: Mail[] = [];
  let starttls: Awaited<ReturnType<typeof startTlsSmtp>>;
  let implicit: Awaited<ReturnType<typeof startTlsSmtp>>;
  beforeAll(async () => {
    starttls = await startTlsSmtp(tlsMails, 'starttls');
    implicit = await startTlsSmtp(tlsMails, 'implicit');
  });
  afterAll(async () => {
    for (const s of [starttls, implicit]) if (s) await new Promise<void>((resolve) => s.server.close(() => resolve()));
  });
  const mailTo = (address: string) => tlsMails.filter((m) => m.to.includes(address));
  const emailRecipient = async (what: string) => {
    const address = `${what}+${uniq()}@example.com`;
    return { address, r: await createRecipient(t, 'email', { email_address: address }) };
  };

  it('STARTTLS required: upgrades before logging in, trusting the server through WAGGLE_SMTP_CA_FILE (app settings)', async () => {
    const app = await makeApp({ settings: { ...baseSettings(), smtpPort: starttls.port, smtpStarttls: 'required', smtpCaFile: CA_FILE } });
    try {
      const { team: tm, environment: env } = await initialTenancy(app);
      const address = `tls+${uniq()}@example.com`;
      const r = await createRecipient(app, 'email', { email_address: address });
      const n = { ...notification(r), teamId: tm.id, environmentId: env.id };
      notifier(app).enqueue(n);
      await notifier(app).idle({ timeoutMs: 15_000 });
      const log = await logOf(n, app);
      expect(log, log.error).toMatchObject({ state: 'delivered', attemptCount: 1 });
      const [mail] = mailTo(address);
      expect(mail).toMatchObject({ secure: true, user: 'waggle', from: 'alerts@waggle.test' });
      expect(mail.parsed.subject).toBe('[Waggle] Triggered: High latency');
    } finally {
      await app.close();
    }
  });

  it('implicit TLS (WAGGLE_SMTP_SECURE) with the CA file; opportunistic STARTTLS upgrades when offered', async () => {
    const a = await emailRecipient('smtps');
    const b = await emailRecipient('opportunistic');
    const na = notification(a.r);
    const nb = notification(b.r);
    await deliverWith(direct({}, { smtp: { host: '127.0.0.1', port: implicit.port, secure: true, starttls: 'opportunistic', from: 'alerts@waggle.test', caFile: CA_FILE } }), na);
    await deliverWith(direct({}, { smtp: { host: '127.0.0.1', port: starttls.port, secure: false, starttls: 'opportunistic', from: 'alerts@waggle.test', caFile: CA_FILE } }), nb);
    expect(await logOf(na)).toMatchObject({ state: 'delivered', attemptCount: 1 });
    expect(await logOf(nb)).toMatchObject({ state: 'delivered', attemptCount: 1 });
    expect(mailTo(a.address)).toMatchObject([{ secure: true }]);
    expect(mailTo(b.address)).toMatchObject([{ secure: true }]);
  });

  it('certificates are verified: without the CA file both TLS modes fail (retried, then given up); nothing is sent', async () => {
    const a = await emailRecipient('untrusted-starttls');
    const b = await emailRecipient('untrusted-smtps');
    const na = notification(a.r);
    const nb = notification(b.r);
    await deliverWith(direct({}, { smtp: { host: '127.0.0.1', port: starttls.port, secure: false, starttls: 'required', from: 'alerts@waggle.test' } }), na);
    await deliverWith(direct({}, { smtp: { host: '127.0.0.1', port: implicit.port, secure: true, starttls: 'opportunistic', from: 'alerts@waggle.test' } }), nb);
    for (const n of [na, nb]) {
      const log = await logOf(n);
      expect(log).toMatchObject({ state: 'failed', attemptCount: 2 });
      expect(log.attempts[0].error).toMatch(/certificate/i);
    }
    expect(mailTo(a.address)).toHaveLength(0);
    expect(mailTo(b.address)).toHaveLength(0);
  });

  it('STARTTLS required against a server that does not offer it fails at once, sending nothing in the clear; an unreadable CA file fails at once', async () => {
    const a = await emailRecipient('no-starttls');
    const na = notification(a.r);
    const before = mails.length;
    await deliverWith(direct({}, { smtp: { host: '127.0.0.1', port: smtp.port, secure: false, starttls: 'required', from: 'alerts@waggle.test', caFile: CA_FILE } }), na);
    const refused = await logOf(na);
    // The server refuses STARTTLS (500): a permanent SMTP answer, so no retry; nothing sent in the clear.
    expect(refused).toMatchObject({ state: 'failed', attemptCount: 1 });
    expect(refused.error).toMatch(/^SMTP 500/);
    expect(mails.slice(before).filter((m) => m.to.includes(a.address))).toHaveLength(0);

    const b = await emailRecipient('bad-ca');
    const nb = notification(b.r);
    await deliverWith(direct({}, { smtp: { host: '127.0.0.1', port: starttls.port, secure: false, starttls: 'required', from: 'alerts@waggle.test', caFile: `${TLS_DIR}missing.crt` } }), nb);
    const log = await logOf(nb);
    expect(log).toMatchObject({ state: 'failed', attemptCount: 1 });
    expect(log.error).toMatch(/^could not read WAGGLE_SMTP_CA_FILE: ENOENT/);
  });

  it('WAGGLE_SMTP_CA_FILE is read from the environment and must name a readable file', () => {
    expect(loadSettings({ WAGGLE_SMTP_CA_FILE: CA_FILE }).smtpCaFile).toBe(CA_FILE);
    expect(loadSettings({}).smtpCaFile).toBeUndefined();
    expect(() => loadSettings({ WAGGLE_SMTP_CA_FILE: `${TLS_DIR}missing.crt` })).toThrow(/WAGGLE_SMTP_CA_FILE must name a readable file/);
  });
});

describe('retry timing', () => {
  /** Gaps (ms) between the requests a path received. */
  const gaps = (path: string) => http.at(path).map((q, i, all) => (i ? q.at - all[i - 1].at : 0)).slice(1);

  it('waits min(MAX, BASE·2^(k−1)) with equal jitter before attempt k+1', async () => {
    // random() = 0.5: each wait is exactly ¾ of min(MAX, BASE·2^(k−1)) = 60, 120, 240, 240 (capped) ms.
    const path = `/hook/${uniq()}`;
    http.fallback.set(path, () => ({ status: 503 }));
    const r = await createRecipient(t, 'webhook', { webhook_name: `backoff ${uniq()}`, webhook_url: hookUrl(path) });
    const n = notification(r);
    await deliverWith(direct({ maxAttempts: 5, retryBaseMs: 80, retryMaxMs: 320 }, {}, { random: () => 0.5 }), n);
    const log = await logOf(n);
    expect(log).toMatchObject({ state: 'failed', attemptCount: 5 });
    const g = gaps(path);
    expect(g).toHaveLength(4);
    [60, 120, 240, 240].forEach((want, i) => {
      expect(g[i], `wait before attempt ${i + 2}: ${g.join(', ')}`).toBeGreaterThanOrEqual(want - 2);
      expect(g[i], `wait before attempt ${i + 2}: ${g.join(', ')}`).toBeLessThan(want + 45);
    });
    http.fallback.delete(path);
  });

  it('jitter stays within [½, 1] of the exponential wait (Math.random)', async () => {
    const path = `/hook/${uniq()}`;
    http.script.set(path, [{ status: 500 }, { status: 500 }, { status: 500 }]);
    const r = await createRecipient(t, 'webhook', { webhook_name: `jitter ${uniq()}`, webhook_url: hookUrl(path) });
    const n = notification(r);
    await deliverWith(direct({ maxAttempts: 4, retryBaseMs: 60, retryMaxMs: 1000 }, {}), n);
    expect(await logOf(n)).toMatchObject({ state: 'delivered', attemptCount: 4 });
    const g = gaps(path);
    [60, 120, 240].forEach((exp, i) => {
      expect(g[i], g.join(', ')).toBeGreaterThanOrEqual(exp / 2 - 2);
      expect(g[i], g.join(', ')).toBeLessThan(exp + 45);
    });
  });

  it("honours a 429's Retry-After (seconds or an HTTP date) over the backoff, capped at the maximum wait", async () => {
    const secs = `/hook/${uniq()}`;
    const date = `/hook/${uniq()}`;
    const capped = `/hook/${uniq()}`;
    let dateTarget = 0;
    http.script.set(secs, [{ status: 429, headers: { 'retry-after': '1' } }]);
    http.fallback.set(date, (q) => {
      if (dateTarget) return {};
      dateTarget = Math.ceil((q.at + 1000) / 1000) * 1000; // a whole second, 1 … 2 s ahead
      return { status: 429, headers: { 'retry-after': new Date(dateTarget).toUTCString() } };
    });
    http.script.set(capped, [{ status: 429, headers: { 'retry-after': '120' } }]);
    const recipients = await Promise.all(
      [secs, date, capped].map((p) => createRecipient(t, 'webhook', { webhook_name: `retry-after ${uniq()}`, webhook_url: hookUrl(p) })),
    );
    const ns = recipients.map((r) => notification(r));
    // Without Retry-After the wait would be 10 ms (random 0.5 of a 20 ms base).
    await deliverWith(direct({ maxAttempts: 3, retryBaseMs: 20, retryMaxMs: 2000 }, {}, { random: () => 0.5 }), ...ns);
    for (const n of ns) expect(await logOf(n)).toMatchObject({ state: 'delivered', attemptCount: 2, attempts: [{ outcome: 'retry', httpStatus: 429 }, { outcome: 'delivered' }] });
    const [gs] = gaps(secs);
    expect(gs).toBeGreaterThanOrEqual(998);
    expect(gs).toBeLessThan(1100);
    const [first, second] = http.at(date);
    expect(second.at).toBeGreaterThanOrEqual(dateTarget - 2);
    expect(second.at - first.at).toBeLessThan(dateTarget - first.at + 100);
    const [gc] = gaps(capped);
    expect(gc).toBeGreaterThanOrEqual(1998);
    expect(gc).toBeLessThan(2100);
    http.fallback.delete(date);
  });
});
