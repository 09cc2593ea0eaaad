// /1/recipients: every type's create (201), get, list, full-replacement PUT (type immutable) and
// DELETE (204); per-type rules at and past each boundary; duplicates (409); in use by triggers or
// burn alerts (409 on delete) and GET /{id}/triggers across the team; secrets returned in full;
// Manage Recipients (403); team-wide visibility (another environment sees them, another team
// does not). The NotificationRecipient validation that triggers and burn alerts will use is
// exercised on recipients made through HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, sendJson, storeLegacyTeamsRecipient, type TestApp } from './helpers.js';
import { expectContract, expectSchema } from './contract.js';
import { expectProblem, expectValidation, expectLegacy, type Res } from './problems.js';
import { addKey, initialTenancy, secondEnvironment, secondTeam } from './tenancy-fixtures.js';
import { assertRecipientNotInUse, getRecipientForDelivery, recipientUsage } from '../src/domain/recipients.js';
import { refreshNotificationRecipients, validateNotificationRecipients } from '../src/domain/notification-recipients.js';
import { ApiError } from '../src/errors.js';
import { shortId } from '../src/domain/ids.js';
import type { Environment, Team } from '../src/stores/config/types.js';
import { BURN_ALERT_KIND, TRIGGER_KIND } from '../src/domain/kinds.js';

const COLLECTION = '/1/recipients';
const ITEM = '/1/recipients/{recipientId}';
const TRIGGERS = '/1/recipients/{recipientId}/triggers';

const KEY32 = 'abcdefghijklmnopqrstuvwxyz012345';
const s = (n: number, c = 'a') => c.repeat(n);

let counter = 0;
const uniq = () => `${Date.now().toString(36)}${(counter++).toString(36)}`;
/** Valid details of each type, unique per call. */
const sample = {
  pagerduty: () => ({ pagerduty_integration_name: `PD ${uniq()}`, pagerduty_integration_key: KEY32 }),
  email: () => ({ email_address: `oncall+${uniq()}@example.com` }),
  slack: () => ({ slack_channel: `#alerts-${uniq()}` }),
  webhook: () => ({ webhook_name: `hook ${uniq()}`, webhook_url: `https://hooks.example.com/${uniq()}` }),
  msteams: () => ({ webhook_name: `teams ${uniq()}`, webhook_url: `https://example.webhook.office.com/${uniq()}` }),
  msteams_workflow: () => ({ webhook_name: `flow ${uniq()}`, webhook_url: `https://prod.westus.logic.azure.com:443/workflows/${uniq()}` }),
};
type Kind = keyof typeof sample;
const TYPES = Object.keys(sample) as Kind[];

describe('/1/recipients', () => {
  let t: TestApp;
  let team: Team;
  let environment: Environment;

  const item = (id: string) => `/1/recipients/${encodeURIComponent(id)}`;
  const create = (body: unknown, headers = t.config) => sendJson(t, 'POST', '/1/recipients', body, headers);
  const update = (id: string, body: unknown, headers = t.config) => sendJson(t, 'PUT', item(id), body, headers);
  const get = (id: string, headers = t.config) => t.app.inject({ method: 'GET', url: item(id), headers });
  const del = (id: string, headers = t.config) => t.app.inject({ method: 'DELETE', url: item(id), headers });
  const list = (headers = t.config) => t.app.inject({ method: 'GET', url: '/1/recipients', headers });
  const triggers = (id: string, headers = t.config) => t.app.inject({ method: 'GET', url: `${item(id)}/triggers`, headers });

  async function created(type: string, details: unknown) {
    // Legacy msteams recipients can no longer be created: they exist only from before.
    if (type === 'msteams') return storeLegacyTeamsRecipient(t, details as { webhook_name: string; webhook_url: string });
    const res = await create({ type, details });
    expect(res.statusCode, res.body).toBe(201);
    expectContract(COLLECTION, 'POST', res);
    return json(res);
  }
  /** 201 when `details` (merged into a valid sample of `type`) is accepted; the 422 response otherwise. */
  const attempt = (type: Kind, change: Record<string, unknown>) => create({ type, details: { ...sample[type](), ...change } });
  async function accepted(type: Kind, change: Record<string, unknown>) {
    const res = await attempt(type, change);
    expect(res.statusCode, res.body).toBe(201);
    expectContract(COLLECTION, 'POST', res);
    return json(res);
  }

  beforeAll(async () => {
    t = await makeApp();
    ({ team, environment } = await initialTenancy(t));
  });
  afterAll(() => t.close());

  describe('every type: create, get, list, update, delete', () => {
    for (const type of TYPES) {
      it(type, async () => {
        const details = sample[type]();
        const rcpt = await created(type, details);
        expect(Object.keys(rcpt).sort()).toEqual(['created_at', 'details', 'id', 'type', 'updated_at']);
        expect(rcpt.type).toBe(type);
        expect(rcpt.details).toEqual(details);
        expect(rcpt.id).toMatch(/^[A-Za-z0-9]{11}$/);
        expect(Date.parse(rcpt.created_at)).not.toBeNaN();
        expect(rcpt.updated_at).toBe(rcpt.created_at);

        const got = await get(rcpt.id);
        expect(got.statusCode).toBe(200);
        expectContract(ITEM, 'GET', got);
        expect(json(got)).toEqual(rcpt);

        const all = await list();
        expect(all.statusCode).toBe(200);
        expectContract(COLLECTION, 'GET', all);
        expect(json(all)).toContainEqual(rcpt);

        await new Promise((r) => setTimeout(r, 5));
        const changed = sample[type]();
        const put = await update(rcpt.id, { ...rcpt, details: changed });
        expect(put.statusCode, put.body).toBe(200);
        expectContract(ITEM, 'PUT', put);
        const after = json(put);
        expect(after).toMatchObject({ id: rcpt.id, type, details: changed, created_at: rcpt.created_at });
        expect(after.updated_at > rcpt.updated_at).toBe(true);
        expect(json(await get(rcpt.id))).toEqual(after);

        const trig = await triggers(rcpt.id);
        expect(trig.statusCode).toBe(200);
        expectContract(TRIGGERS, 'GET', trig);
        expect(json(trig)).toEqual([]);

        const gone = await del(rcpt.id);
        expect(gone.statusCode).toBe(204);
        expect(gone.body).toBe('');
        expectLegacy(await get(rcpt.id), 404);
        expectLegacy(await del(rcpt.id), 404);
        expectLegacy(await update(rcpt.id, { type, details: changed }), 404);
        expectLegacy(await triggers(rcpt.id), 404);
        expect(json(await list()).map((r: { id: string }) => r.id)).not.toContain(rcpt.id);
      });
    }

    it('a webhook with every optional field round-trips', async () => {
      const details = {
        webhook_name: 'Full hook',
        webhook_url: 'https://hooks.example.com/full?x=1#frag',
        webhook_secret: 's3cr3t',
        webhook_headers: [{ header: 'Authorization', value: 'Bearer xyz123' }, { header: 'X-Empty' }],
        webhook_payloads: {
          template_variables: [{ name: 'severity', default_value: 'CRITICAL' }, { name: 'team' }],
          payload_templates: {
            trigger: { body: '{ "alert": "{{.Alert.Description}}" }' },
            budget_rate: { body: '{}' },
            exhaustion_time: { body: '{"v": "{{ .Vars.severity }}"}' },
          },
        },
      };
      const rcpt = await created('webhook', details);
      expect(rcpt.details).toEqual(details);
      expect(json(await get(rcpt.id)).details).toEqual(details);
    });

    it('ignores unknown fields and read-only fields, and keeps only the type’s own details', async () => {
      const details = { ...sample.email(), slack_channel: '#nope', colour: 'blue', webhook_secret: 'x' };
      const rcpt = await created('email', details);
      expect(rcpt.details).toEqual({ email_address: details.email_address });
      const other = await create({ type: 'slack', details: sample.slack(), id: 'mine', created_at: '2000-01-01T00:00:00Z', extra: 1 });
      expect(other.statusCode).toBe(201);
      expect(json(other).id).not.toBe('mine');
      expect(json(other).created_at).not.toBe('2000-01-01T00:00:00Z');
      // optional fields sent as null count as absent
      const nulls = await accepted('webhook', { webhook_secret: null, webhook_headers: null, webhook_payloads: null });
      expect(Object.keys(nulls.details).sort()).toEqual(['webhook_name', 'webhook_url']);
    });

    it('lists the whole team’s recipients in creation order', async () => {
      const a = await created('slack', sample.slack());
      const b = await created('email', sample.email());
      const ids = json(await list()).map((r: { id: string }) => r.id);
      expect(ids.indexOf(a.id)).toBeLessThan(ids.indexOf(b.id));
    });
  });

  describe('validation (422 naming the field)', () => {
    it('type and details are required; type must be known', async () => {
      expectValidation(await create({ details: sample.email() }), 'type', 'missing');
      expectValidation(await create({ type: 'email' }), 'details', 'missing');
      expectValidation(await create({ type: 'carrier-pigeon', details: {} }), 'type');
      expectValidation(await create({ type: 'marker', details: {} }), 'type');
      expectValidation(await create({ type: 7, details: sample.email() }), 'type', 'incorrect_type');
      expectValidation(await create({ type: 'email', details: 'a@b.co' }), 'details', 'incorrect_type');
      expectValidation(await create({ type: 'email', details: [] }), 'details', 'incorrect_type');
    });

    it('a malformed or empty body is a 400', async () => {
      expectProblem(await create('{"type": "email",'), 400, 'unparseable');
      expectProblem(await t.app.inject({ method: 'POST', url: '/1/recipients', headers: t.config }), 400, 'unparseable');
    });

    const required: Record<Kind, string[]> = {
      pagerduty: ['pagerduty_integration_name', 'pagerduty_integration_key'],
      email: ['email_address'],
      slack: ['slack_channel'],
      webhook: ['webhook_name', 'webhook_url'],
      msteams: ['webhook_name', 'webhook_url'],
      msteams_workflow: ['webhook_name', 'webhook_url'],
    };
    // A new msteams recipient is refused on its type before its details are read (below).
    for (const type of TYPES.filter((k) => k !== 'msteams')) {
      it(`${type}: required details are missing, of the wrong type or blank`, async () => {
        for (const field of required[type]) {
          const details: Record<string, unknown> = sample[type]();
          delete details[field];
          expectValidation(await create({ type, details }), `details.${field}`, 'missing');
          expectValidation(await attempt(type, { [field]: null }), `details.${field}`, 'missing');
          expectValidation(await attempt(type, { [field]: 42 }), `details.${field}`, 'incorrect_type');
          expectValidation(await attempt(type, { [field]: '   ' }), `details.${field}`, 'missing');
        }
        // every problem at once
        const body = expectValidation(await create({ type, details: {} }), `details.${required[type][0]}`, 'missing');
        expect(body.type_detail.map((d: { field: string }) => d.field)).toEqual(required[type].map((f) => `details.${f}`));
      });
    }

    it('pagerduty: the integration key is exactly 32 characters', async () => {
      expectValidation(await attempt('pagerduty', { pagerduty_integration_key: s(31) }), 'details.pagerduty_integration_key');
      await accepted('pagerduty', { pagerduty_integration_key: s(32, 'b') });
      expectValidation(await attempt('pagerduty', { pagerduty_integration_key: s(33) }), 'details.pagerduty_integration_key');
      expectValidation(await attempt('pagerduty', { pagerduty_integration_key: '' }), 'details.pagerduty_integration_key', 'missing');
    });

    it('email: the address must be valid', async () => {
      for (const good of ['a@b.co', 'first.last+tag@sub.example.com', `${s(64)}@example.com`, "o'brien@example.ie", 'x@xn--bcher-kva.example']) {
        await accepted('email', { email_address: good });
      }
      for (const bad of [
        'plainaddress', '@example.com', 'user@', 'user@localhost', 'user@@example.com', 'user @example.com',
        'user@exa mple.com', '.user@example.com', 'user.@example.com', 'us..er@example.com', 'user@-example.com',
        'user@example-.com', 'user@example..com', `${s(65)}@example.com`, `a@${s(63)}.${s(63)}.${s(63)}.${s(63)}.com`,
        'user@example.com\n', '"quoted"@example.com',
      ]) {
        expectValidation(await attempt('email', { email_address: bad }), 'details.email_address');
      }
    });

    it('msteams: a new one is refused (422 on type, pointing to msteams_workflow); an existing one works', async () => {
      const res = await create({ type: 'msteams', details: sample.msteams() });
      const body = expectValidation(res, 'type');
      expect(body.type_detail).toHaveLength(1);
      expect(body.type_detail[0].description).toMatch(/msteams_workflow/);
      expectContract(COLLECTION, 'POST', res);
      expect(json(await list()).some((r: { type: string }) => r.type === 'msteams')).toBe(false);
      // One made before the change: read, listed, updated, used by a trigger, deleted.
      const legacy = await storeLegacyTeamsRecipient(t, sample.msteams());
      expect(json(await get(legacy.id))).toEqual(legacy);
      expect(json(await list())).toContainEqual(legacy);
      const changed = sample.msteams();
      const put = await update(legacy.id, { type: 'msteams', details: changed });
      expect(put.statusCode, put.body).toBe(200);
      expect(json(put).details).toEqual(changed);
      const trigger = await sendJson(t, 'POST', '/1/triggers/__all__', {
        name: 'teams', query: { calculations: [{ op: 'COUNT' }], time_range: 900 }, threshold: { op: '>', value: 1 }, recipients: [{ id: legacy.id }],
      });
      expect(trigger.statusCode, trigger.body).toBe(201);
      expect(json(trigger).recipients).toEqual([{ id: legacy.id, type: 'msteams', target: changed.webhook_name }]);
      await t.app.inject({ method: 'DELETE', url: `/1/triggers/__all__/${json(trigger).id}`, headers: t.config });
      expect((await del(legacy.id)).statusCode).toBe(204);
      expectLegacy(await get(legacy.id), 404);
    });

    for (const type of ['webhook', 'msteams_workflow'] as const) {
      it(`${type}: name ≤255, URL ≤2048 and an absolute http(s) URL`, async () => {
        await accepted(type, { webhook_name: `${uniq()}${s(255)}`.slice(0, 255) });
        expectValidation(await attempt(type, { webhook_name: s(256) }), 'details.webhook_name');
        // multi-byte characters count as one
        await accepted(type, { webhook_name: `${uniq()}${s(255, 'é')}`.slice(0, 255) });
        const base = `https://hooks.example.com/${uniq()}/`;
        await accepted(type, { webhook_url: base + s(2048 - base.length) });
        expectValidation(await attempt(type, { webhook_url: base + s(2049 - base.length) }), 'details.webhook_url');
        for (const good of [
          'http://example.com', 'https://example.com/path?q=1', 'HTTPS://EXAMPLE.COM/up', 'http://127.0.0.1:8080/hook',
          'https://user:pass@example.com/x', 'http://[::1]:9000/', 'https://example.com/%20encoded',
        ]) {
          await accepted(type, { webhook_url: good + (good.includes('?') ? '&' : good.endsWith('/') ? '?' : '/?') + uniq() });
        }
        for (const bad of [
          'example.com', 'ftp://example.com', 'mailto:a@b.co', 'javascript:alert(1)', '/relative/path', '//example.com',
          'http://', 'https:///path', 'http:/example.com', 'https://exa mple.com', ' https://example.com', 'https://example.com/\n',
          'http://exa[mple.com', 'https://\\evil.example.com/', 'https://example.com\\path', 'http://?x', 'http://#x', '',
        ]) {
          expectValidation(await attempt(type, { webhook_url: bad }), 'details.webhook_url', bad === '' ? 'missing' : 'invalid');
        }
      });
    }

    it('webhook: secret ≤255', async () => {
      await accepted('webhook', { webhook_secret: s(255) });
      await accepted('webhook', { webhook_secret: '' });
      expectValidation(await attempt('webhook', { webhook_secret: s(256) }), 'details.webhook_secret');
      expectValidation(await attempt('webhook', { webhook_secret: 12 }), 'details.webhook_secret', 'incorrect_type');
    });

    it('webhook: at most 5 headers of {header* ≤64 (an HTTP token), value ≤750}', async () => {
      const headers = (n: number) => Array.from({ length: n }, (_, i) => ({ header: `X-H${i}`, value: `v${i}` }));
      await accepted('webhook', { webhook_headers: [] });
      expect((await accepted('webhook', { webhook_headers: headers(5) })).details.webhook_headers).toEqual(headers(5));
      expectValidation(await attempt('webhook', { webhook_headers: headers(6) }), 'details.webhook_headers');
      expectValidation(await attempt('webhook', { webhook_headers: { header: 'X' } }), 'details.webhook_headers', 'incorrect_type');
      expectValidation(await attempt('webhook', { webhook_headers: ['X-A'] }), 'details.webhook_headers.0', 'incorrect_type');
      expectValidation(await attempt('webhook', { webhook_headers: [{ value: 'v' }] }), 'details.webhook_headers.0.header', 'missing');
      await accepted('webhook', { webhook_headers: [{ header: s(64, 'H') }] });
      expectValidation(await attempt('webhook', { webhook_headers: [{ header: s(65, 'H') }] }), 'details.webhook_headers.0.header');
      for (const bad of ['X Header', 'X:Y', 'Ünïcode', '', '(x)']) {
        expectValidation(await attempt('webhook', { webhook_headers: [{ header: 'Ok' }, { header: bad }] }), 'details.webhook_headers.1.header', bad === '' ? 'missing' : 'invalid');
      }
      await accepted('webhook', { webhook_headers: [{ header: 'X', value: s(750) }] });
      await accepted('webhook', { webhook_headers: [{ header: 'X', value: '' }] });
      expectValidation(await attempt('webhook', { webhook_headers: [{ header: 'X', value: s(751) }] }), 'details.webhook_headers.0.value');
      expectValidation(await attempt('webhook', { webhook_headers: [{ header: 'X', value: 'a\r\nInjected: 1' }] }), 'details.webhook_headers.0.value');
      expectValidation(await attempt('webhook', { webhook_headers: [{ header: 'X', value: 5 }] }), 'details.webhook_headers.0.value', 'incorrect_type');
    });

    it('webhook: at most 10 template variables, names ^[a-z][a-zA-Z0-9]*$ ≤64, defaults ≤256, no repeats', async () => {
      const vars = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `var${i}`, default_value: `d${i}` }));
      const payloads = (template_variables: unknown) => ({ webhook_payloads: { template_variables } });
      expect((await accepted('webhook', payloads(vars(10)))).details.webhook_payloads.template_variables).toEqual(vars(10));
      expectValidation(await attempt('webhook', payloads(vars(11))), 'details.webhook_payloads.template_variables');
      for (const good of ['a', 'z', 'severity', 'aB', 'camelCase9', 'x1Y2', s(64)]) {
        await accepted('webhook', payloads([{ name: good }]));
      }
      for (const bad of ['A', 'Severity', '1abc', '_a', 'a_b', 'a-b', 'a b', 'é', '', 'abc\n', s(65)]) {
        expectValidation(await attempt('webhook', payloads([{ name: bad }])), 'details.webhook_payloads.template_variables.0.name', bad === '' ? 'missing' : 'invalid');
      }
      expectValidation(await attempt('webhook', payloads([{ default_value: 'x' }])), 'details.webhook_payloads.template_variables.0.name', 'missing');
      await accepted('webhook', payloads([{ name: 'a', default_value: s(256) }]));
      expectValidation(
        await attempt('webhook', payloads([{ name: 'a', default_value: s(257) }])),
        'details.webhook_payloads.template_variables.0.default_value',
      );
      expectValidation(await attempt('webhook', payloads([{ name: 'a' }, { name: 'a' }])), 'details.webhook_payloads.template_variables.1.name');
      expectValidation(await attempt('webhook', payloads('severity')), 'details.webhook_payloads.template_variables', 'incorrect_type');
    });

    it('webhook: payload templates {trigger, budget_rate, exhaustion_time: {body}}', async () => {
      const p = (payload_templates: unknown) => ({ webhook_payloads: { payload_templates } });
      await accepted('webhook', p({}));
      await accepted('webhook', p({ trigger: {} }));
      expectValidation(await attempt('webhook', p({ trigger: { body: 1 } })), 'details.webhook_payloads.payload_templates.trigger.body', 'incorrect_type');
      expectValidation(await attempt('webhook', p({ budget_rate: 'x' })), 'details.webhook_payloads.payload_templates.budget_rate', 'incorrect_type');
      expectValidation(await attempt('webhook', p([])), 'details.webhook_payloads.payload_templates', 'incorrect_type');
      expectValidation(await attempt('webhook', { webhook_payloads: 'x' }), 'details.webhook_payloads', 'incorrect_type');
    });

    it('PUT validates like POST', async () => {
      const rcpt = await created('pagerduty', sample.pagerduty());
      expectValidation(await update(rcpt.id, { type: 'pagerduty', details: { ...rcpt.details, pagerduty_integration_key: s(33) } }), 'details.pagerduty_integration_key');
      expectValidation(await update(rcpt.id, { type: 'pagerduty' }), 'details', 'missing');
      expect(json(await get(rcpt.id))).toEqual(rcpt);
    });
  });

  describe('PUT is a full replacement; type is immutable', () => {
    it('another type → 422 on type; no type → 422 missing', async () => {
      const rcpt = await created('email', sample.email());
      const body = expectValidation(await update(rcpt.id, { type: 'slack', details: sample.slack() }), 'type');
      expect(body.type_detail[0].description).toMatch(/cannot be changed/);
      expectValidation(await update(rcpt.id, { details: sample.email() }), 'type', 'missing');
      expect(json(await get(rcpt.id))).toEqual(rcpt);
    });

    it('msteams and msteams_workflow are different types', async () => {
      const rcpt = await created('msteams', sample.msteams());
      expectValidation(await update(rcpt.id, { type: 'msteams_workflow', details: rcpt.details }), 'type');
    });

    it('omitted optional details are removed', async () => {
      const rcpt = await created('webhook', {
        ...sample.webhook(),
        webhook_secret: 'x',
        webhook_headers: [{ header: 'A' }],
        webhook_payloads: { template_variables: [{ name: 'a' }] },
      });
      const res = await update(rcpt.id, { type: 'webhook', details: { webhook_name: rcpt.details.webhook_name, webhook_url: rcpt.details.webhook_url } });
      expect(res.statusCode).toBe(200);
      expect(json(res).details).toEqual({ webhook_name: rcpt.details.webhook_name, webhook_url: rcpt.details.webhook_url });
    });

    it('the id in the body is ignored', async () => {
      const rcpt = await created('slack', sample.slack());
      const res = await update(rcpt.id, { id: 'somethingElse', type: 'slack', details: { slack_channel: '#renamed-' + uniq() } });
      expect(res.statusCode).toBe(200);
      expect(json(res).id).toBe(rcpt.id);
    });
  });

  describe('duplicates (409)', () => {
    async function expectConflict(res: Res) {
      const body = expectProblem(res, 409, 'conflict');
      expect(body.error).toBe('A recipient with that target already exists.');
      return body;
    }

    it('concurrent creates of the same recipient: exactly one succeeds', async () => {
      const details = sample.webhook();
      const results = await Promise.all(Array.from({ length: 6 }, () => create({ type: 'webhook', details })));
      expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      expectContract(COLLECTION, 'POST', results.find((r) => r.statusCode === 409)!);
    });

    it('email: the same address, case-insensitively', async () => {
      const addr = `dup-${uniq()}@example.com`;
      await created('email', { email_address: addr });
      await expectConflict(await create({ type: 'email', details: { email_address: addr } }));
      await expectConflict(await create({ type: 'email', details: { email_address: addr.toUpperCase() } }));
      await created('email', { email_address: `other-${addr}` });
    });

    it('slack: the same channel', async () => {
      const ch = `#dup-${uniq()}`;
      await created('slack', { slack_channel: ch });
      await expectConflict(await create({ type: 'slack', details: { slack_channel: ch } }));
      await created('slack', { slack_channel: `${ch}-2` });
    });

    it('pagerduty: the same integration key and name', async () => {
      const name = `PD ${uniq()}`;
      await created('pagerduty', { pagerduty_integration_name: name, pagerduty_integration_key: KEY32 });
      await expectConflict(await create({ type: 'pagerduty', details: { pagerduty_integration_name: name, pagerduty_integration_key: KEY32 } }));
      await created('pagerduty', { pagerduty_integration_name: `${name} 2`, pagerduty_integration_key: KEY32 });
      await created('pagerduty', { pagerduty_integration_name: name, pagerduty_integration_key: s(32, 'z') });
    });

    it('webhook, msteams, msteams_workflow: the same URL and name, within one type', async () => {
      const url = `https://hooks.example.com/${uniq()}`;
      const details = { webhook_name: 'Dup', webhook_url: url };
      await created('webhook', details);
      await expectConflict(await create({ type: 'webhook', details: { ...details, webhook_secret: 'different' } }));
      await created('webhook', { ...details, webhook_name: 'Dup 2' });
      await created('webhook', { ...details, webhook_url: `${url}/2` });
      const legacy = await created('msteams', details);
      await created('msteams_workflow', details);
      await expectConflict(await create({ type: 'msteams_workflow', details }));
      // A legacy one is a duplicate of another legacy one with the same URL and name (PUT).
      const other = await created('msteams', { ...details, webhook_name: 'Dup 3' });
      await expectConflict(await update(other.id, { type: 'msteams', details }));
      expect(json(await get(legacy.id)).details).toEqual(details);
    });

    it('a PUT that would duplicate another recipient → 409; a PUT onto itself is fine', async () => {
      const a = await created('email', sample.email());
      const b = await created('email', sample.email());
      const res = await update(b.id, { type: 'email', details: a.details });
      await expectConflict(res);
      expect(json(await get(b.id))).toEqual(b);
      const same = await update(a.id, { type: 'email', details: { email_address: a.details.email_address.toUpperCase() } });
      expect(same.statusCode, same.body).toBe(200);
      // the freed identity can be reused
      const moved = await update(a.id, { type: 'email', details: sample.email() });
      expect(moved.statusCode).toBe(200);
      await created('email', { email_address: a.details.email_address });
    });

    it('a deleted recipient’s identity can be created again; another team may have the same', async () => {
      const details = sample.slack();
      const first = await created('slack', details);
      expect((await del(first.id)).statusCode).toBe(204);
      await created('slack', details);
      const other = await secondTeam(t, `Dup Team ${uniq()}`);
      expect((await create({ type: 'slack', details }, other.headers)).statusCode).toBe(201);
    });
  });

  describe('in use by triggers and burn alerts', () => {
    const addObject = (kind: string, env: Environment, body: unknown) =>
      t.store.createObject({ id: shortId(), kind, teamId: env.teamId, environmentId: env.id, datasetId: null, scope: env.id, uniqueKey: null, body });

    it('DELETE → 409 while a trigger of any environment of the team uses it; /triggers lists them', async () => {
      const rcpt = await created('email', sample.email());
      const unused = await created('email', sample.email());
      const staging = await secondEnvironment(t, `Staging ${uniq()}`);
      const trigger = await addObject(TRIGGER_KIND, staging.environment, {
        name: 'Slow',
        recipients: [{ id: unused.id }, { id: rcpt.id, type: 'email', target: rcpt.details.email_address }],
      });
      await addObject(TRIGGER_KIND, environment, { name: 'Other', recipients: [{ id: unused.id }] });
      await addObject(TRIGGER_KIND, environment, { name: 'None' });
      // another team's trigger naming the id does not count
      const other = await secondTeam(t, `Trigger Team ${uniq()}`);
      await addObject(TRIGGER_KIND, other.environment, { name: 'Foreign', recipients: [{ id: rcpt.id }] });

      const refused = await del(rcpt.id);
      const body = expectProblem(refused, 409, 'conflict');
      expectContract(ITEM, 'DELETE', refused);
      expect(body.detail).toMatch(/1 trigger/);
      expect((await get(rcpt.id)).statusCode).toBe(200);

      const res = await triggers(rcpt.id);
      expect(res.statusCode).toBe(200);
      const listed = json(res);
      expect(listed.map((x: { id: string }) => x.id)).toEqual([trigger.id]);
      expect(listed[0].name).toBe('Slow');
      // seen from the other environment too
      expect(json(await triggers(rcpt.id, staging.headers)).map((x: { id: string }) => x.id)).toEqual([trigger.id]);

      await t.store.deleteObject(TRIGGER_KIND, trigger.id);
      expect(json(await triggers(rcpt.id))).toEqual([]);
      expect((await del(rcpt.id)).statusCode).toBe(204);
    });

    it('DELETE → 409 while a burn alert uses it; the check is exported', async () => {
      const rcpt = await created('pagerduty', sample.pagerduty());
      const alert = await addObject(BURN_ALERT_KIND, environment, { alert_type: 'exhaustion_time', recipients: [{ id: rcpt.id }] });
      const body = expectProblem(await del(rcpt.id), 409, 'conflict');
      expect(body.detail).toMatch(/1 burn alert/);
      const usage = await recipientUsage(t.store, team.id, rcpt.id);
      expect(usage.triggers).toEqual([]);
      expect(usage.burnAlerts.map((o) => o.id)).toEqual([alert.id]);
      await expect(assertRecipientNotInUse(t.store, team.id, rcpt.id)).rejects.toMatchObject({ status: 409 });
      // burn alerts are not triggers
      expect(json(await triggers(rcpt.id))).toEqual([]);
      await t.store.deleteObject(BURN_ALERT_KIND, alert.id);
      await expect(assertRecipientNotInUse(t.store, team.id, rcpt.id)).resolves.toBeUndefined();
      expect((await del(rcpt.id)).statusCode).toBe(204);
    });
  });

  describe('secrets', () => {
    it('webhook_secret and pagerduty_integration_key are returned in full, as Honeycomb does', async () => {
      const hook = await created('webhook', { ...sample.webhook(), webhook_secret: 'so-secret-value' });
      const pd = await created('pagerduty', { pagerduty_integration_name: `PD ${uniq()}`, pagerduty_integration_key: '7zOwh1edS8xHGcwfb2bA4sqY8E6PJzSK' });
      expect(hook.details.webhook_secret).toBe('so-secret-value');
      expect(pd.details.pagerduty_integration_key).toBe('7zOwh1edS8xHGcwfb2bA4sqY8E6PJzSK');
      expect(json(await get(hook.id)).details.webhook_secret).toBe('so-secret-value');
      expect(json(await get(pd.id)).details.pagerduty_integration_key).toBe('7zOwh1edS8xHGcwfb2bA4sqY8E6PJzSK');
      const all = json(await list());
      expect(all.find((r: { id: string }) => r.id === hook.id).details.webhook_secret).toBe('so-secret-value');
      // a PUT that sends them back unchanged keeps them; one that omits the secret removes it
      const put = await update(hook.id, hook);
      expect(json(put).details.webhook_secret).toBe('so-secret-value');
      const cleared = await update(hook.id, { type: 'webhook', details: { webhook_name: hook.details.webhook_name, webhook_url: hook.details.webhook_url } });
      expect(json(cleared).details.webhook_secret).toBeUndefined();
    });

    it('getRecipientForDelivery gives the full details of the team’s recipient only', async () => {
      const hook = await created('webhook', { ...sample.webhook(), webhook_secret: 'deliver-me', webhook_headers: [{ header: 'Authorization', value: 'Bearer t' }] });
      const r = await getRecipientForDelivery(t.store, team.id, hook.id);
      expect(r).toMatchObject({ id: hook.id, teamId: team.id, type: 'webhook', details: hook.details, createdAt: hook.created_at });
      expect(r?.type === 'webhook' && r.details.webhook_secret).toBe('deliver-me');
      const other = await secondTeam(t, `Delivery Team ${uniq()}`);
      expect(await getRecipientForDelivery(t.store, other.team.id, hook.id)).toBeUndefined();
      expect(await getRecipientForDelivery(t.store, team.id, 'nope')).toBeUndefined();
    });
  });

  describe('permissions and tenancy', () => {
    it('no key → 401; a key without Manage Recipients → 403 on every route', async () => {
      const rcpt = await created('email', sample.email());
      expectLegacy(await list({}), 401);
      expectLegacy(await create({ type: 'email', details: sample.email() }, {}), 401);
      expectLegacy(await t.app.inject({ method: 'GET', url: '/1/recipients', headers: t.ingest }), 401);

      const permissions = { manage_triggers: true, manage_slos: true, manage_columns: true, create_datasets: true, manage_recipients: false };
      const { headers } = await addKey(t, team, environment, { permissions });
      const before = json(await list());
      for (const res of [
        await list(headers),
        await create({ type: 'email', details: sample.email() }, headers),
        await get(rcpt.id, headers),
        await update(rcpt.id, { type: 'email', details: sample.email() }, headers),
        await del(rcpt.id, headers),
        await triggers(rcpt.id, headers),
        await get('does-not-exist', headers),
      ]) {
        expectLegacy(res, 403);
        expect(json(res).error).toMatch(/manage_recipients/);
      }
      expect(json(await list())).toEqual(before);

      const only = await addKey(t, team, environment, { permissions: { manage_recipients: true } });
      const mine = await create({ type: 'slack', details: sample.slack() }, only.headers);
      expect(mine.statusCode).toBe(201);
      expect((await get(json(mine).id, only.headers)).statusCode).toBe(200);
      expect((await del(json(mine).id, only.headers)).statusCode).toBe(204);
    });

    it('another environment of the team sees and changes the same recipients', async () => {
      const rcpt = await created('email', sample.email());
      const staging = await secondEnvironment(t, `Env ${uniq()}`);
      expect(json(await list(staging.headers))).toEqual(json(await list()));
      expect(json(await get(rcpt.id, staging.headers))).toEqual(rcpt);
      const changed = sample.email();
      const res = await update(rcpt.id, { type: 'email', details: changed }, staging.headers);
      expect(res.statusCode).toBe(200);
      expect(json(await get(rcpt.id)).details).toEqual(changed);
      const made = await create({ type: 'slack', details: sample.slack() }, staging.headers);
      expect(made.statusCode).toBe(201);
      expect(json(await get(json(made).id)).id).toBe(json(made).id);
      // a duplicate made from another environment is still a duplicate
      expectProblem(await create({ type: 'email', details: changed }, staging.headers), 409, 'conflict');
      expect((await del(rcpt.id, staging.headers)).statusCode).toBe(204);
    });

    it('another team’s recipients are invisible (404) and its list is its own', async () => {
      const rcpt = await created('email', sample.email());
      const other = await secondTeam(t, `Tenant ${uniq()}`);
      expect(json(await list(other.headers))).toEqual([]);
      expectLegacy(await get(rcpt.id, other.headers), 404);
      expectLegacy(await update(rcpt.id, { type: 'email', details: sample.email() }, other.headers), 404);
      expectLegacy(await update(rcpt.id, { type: 'slack', details: sample.slack() }, other.headers), 404);
      expectLegacy(await del(rcpt.id, other.headers), 404);
      expectLegacy(await triggers(rcpt.id, other.headers), 404);
      expect(json(await get(rcpt.id))).toEqual(rcpt);
      const theirs = json(await create({ type: 'email', details: sample.email() }, other.headers));
      expectLegacy(await get(theirs.id), 404);
      expect(json(await list()).map((r: { id: string }) => r.id)).not.toContain(theirs.id);
      expect(json(await list(other.headers)).map((r: { id: string }) => r.id)).toEqual([theirs.id]);
    });

    it('an unknown id → 404 on every item route', async () => {
      expectLegacy(await get('nope'), 404);
      expectLegacy(await update('nope', { type: 'email', details: sample.email() }), 404);
      expectLegacy(await del('nope'), 404);
      expectLegacy(await triggers('nope'), 404);
    });
  });

  describe('NotificationRecipient validation (for triggers and burn alerts)', () => {
    let pd: any, hook: any, mail: any, slack: any, teams: any;
    beforeAll(async () => {
      pd = await created('pagerduty', sample.pagerduty());
      hook = await created('webhook', { ...sample.webhook(), webhook_payloads: { template_variables: [{ name: 'severity', default_value: 'low' }, { name: 'team' }] } });
      mail = await created('email', sample.email());
      slack = await created('slack', sample.slack());
      teams = await created('msteams_workflow', sample.msteams_workflow());
    });
    const check = (input: unknown, opts?: { field?: string; minItems?: number }) => validateNotificationRecipients(t.store, team.id, input, opts);
    async function rejects(input: unknown, field: string, code = 'invalid', opts?: { field?: string; minItems?: number }) {
      const err = await check(input, opts).then(() => undefined, (e) => e);
      expect(err, `expected a 422 on ${field}`).toBeInstanceOf(ApiError);
      expect(err.status).toBe(422);
      const entry = err.extra.typeDetail.find((d: { field: string }) => d.field === field);
      expect(entry, `${field} in ${JSON.stringify(err.extra.typeDetail)}`).toBeDefined();
      expect(entry.code).toBe(code);
    }

    it('fills the deprecated type and target from the recipient, and the PagerDuty severity default', async () => {
      const out = await check([{ id: pd.id }, { id: hook.id, type: '' }, { id: mail.id }, { id: slack.id, type: 'slack' }, { id: teams.id }]);
      expect(out).toEqual([
        { id: pd.id, type: 'pagerduty', target: pd.details.pagerduty_integration_name, details: { pagerduty_severity: 'critical' } },
        { id: hook.id, type: 'webhook', target: hook.details.webhook_name },
        { id: mail.id, type: 'email', target: mail.details.email_address },
        { id: slack.id, type: 'slack', target: slack.details.slack_channel },
        { id: teams.id, type: 'msteams_workflow', target: teams.details.webhook_name },
      ]);
      for (const r of out) expectSchema('NotificationRecipient', r);
      expect(await check(undefined)).toEqual([]);
      expect(await check([])).toEqual([]);
    });

    it('pagerduty_severity: critical|error|warning|info, on PagerDuty recipients only', async () => {
      for (const sev of ['critical', 'error', 'warning', 'info']) {
        expect((await check([{ id: pd.id, details: { pagerduty_severity: sev } }]))[0].details).toEqual({ pagerduty_severity: sev });
      }
      await rejects([{ id: pd.id, details: { pagerduty_severity: 'CRITICAL' } }], 'recipients.0.details.pagerduty_severity');
      await rejects([{ id: pd.id, details: { pagerduty_severity: 'fatal' } }], 'recipients.0.details.pagerduty_severity');
      await rejects([{ id: pd.id, details: { pagerduty_severity: 1 } }], 'recipients.0.details.pagerduty_severity', 'incorrect_type');
      await rejects([{ id: mail.id, details: { pagerduty_severity: 'info' } }], 'recipients.0.details.pagerduty_severity');
    });

    it('variables: webhook recipients only, names of its template variables, pattern, lengths, no repeats', async () => {
      const out = await check([{ id: hook.id, details: { variables: [{ name: 'severity', value: 'high' }, { name: 'team' }] } }]);
      expect(out[0].details).toEqual({ variables: [{ name: 'severity', value: 'high' }, { name: 'team' }] });
      expectSchema('NotificationRecipient', out[0]);
      const v = (variables: unknown, id = hook.id) => [{ id, details: { variables } }];
      await check(v([{ name: 'severity', value: s(256) }]));
      await rejects(v([{ name: 'severity', value: s(257) }]), 'recipients.0.details.variables.0.value');
      await rejects(v([{ name: 'Severity' }]), 'recipients.0.details.variables.0.name');
      await rejects(v([{ name: '1a' }]), 'recipients.0.details.variables.0.name');
      await rejects(v([{ name: s(65) }]), 'recipients.0.details.variables.0.name');
      await rejects(v([{ value: 'x' }]), 'recipients.0.details.variables.0.name', 'missing');
      await rejects(v([{ name: 'unknownVar' }]), 'recipients.0.details.variables.0.name');
      await rejects(v([{ name: 'team' }, { name: 'team' }]), 'recipients.0.details.variables.1.name');
      await rejects(v('x'), 'recipients.0.details.variables', 'incorrect_type');
      await rejects(v(Array.from({ length: 11 }, () => ({ name: 'team' }))), 'recipients.0.details.variables');
      await rejects(v([{ name: 'severity' }], slack.id), 'recipients.0.details.variables');
    });

    it('ids must be the team’s, once each; type and target must agree with the recipient', async () => {
      await rejects([{ id: 'nope' }], 'recipients.0.id');
      const other = await secondTeam(t, `NR Team ${uniq()}`);
      const foreign = json(await create({ type: 'email', details: sample.email() }, other.headers));
      await rejects([{ id: foreign.id }], 'recipients.0.id');
      await rejects([{ id: mail.id }, { id: mail.id }], 'recipients.1.id');
      await rejects([{ id: mail.id, type: 'slack' }], 'recipients.0.type');
      await rejects([{ id: mail.id, type: 'fax' }], 'recipients.0.type');
      await rejects([{ id: mail.id, target: 'someone@else.example' }], 'recipients.0.target');
      expect((await check([{ id: mail.id, target: mail.details.email_address.toUpperCase() }]))[0].id).toBe(mail.id);
      await rejects([{}], 'recipients.0.id', 'missing');
      await rejects([{ id: 5 }], 'recipients.0.id', 'incorrect_type');
      await rejects(['x'], 'recipients.0', 'incorrect_type');
      await rejects({ id: mail.id }, 'recipients', 'incorrect_type');
      await rejects([], 'recipients', 'missing', { minItems: 1 });
      await rejects([{ id: 'nope' }], 'burn_alert.recipients.0.id', 'invalid', { field: 'burn_alert.recipients' });
    });

    it('refreshNotificationRecipients gives stored references the recipient’s current target', async () => {
      const r = await created('email', sample.email());
      const stored = await check([{ id: r.id }]);
      const changed = sample.email();
      expect((await update(r.id, { type: 'email', details: changed })).statusCode).toBe(200);
      expect(await refreshNotificationRecipients(t.store, team.id, stored)).toEqual([{ id: r.id, type: 'email', target: changed.email_address }]);
      const gone = [{ id: 'deleted1234', type: 'slack' as const, target: '#old' }];
      expect(await refreshNotificationRecipients(t.store, team.id, gone)).toEqual(gone);
    });

    it('the deprecated form without an id finds the recipient by type and target', async () => {
      const out = await check([{ type: 'slack', target: slack.details.slack_channel }, { type: 'webhook', target: hook.details.webhook_name }]);
      expect(out.map((r) => r.id)).toEqual([slack.id, hook.id]);
      await rejects([{ type: 'slack', target: '#no-such-channel' }], 'recipients.0.target');
      await rejects([{ type: 'slack' }], 'recipients.0.id', 'missing');
    });
  });
});
