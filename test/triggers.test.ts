// /1/triggers/{dataset|__all__}: create (201 + relative Location), list, get, full-replacement PUT,
// DELETE (204); inline query (saved as a query) or query_id; every validation rule at and past its
// boundary; Manage Triggers (403), ingest keys (401), other environments (404); recipients in use
// and GET /1/recipients/{id}/triggers in the trigger response shape. Responses are checked against
// Honeycomb's contract. Evaluation is in triggers-eval.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectContract } from './contract.js';
import { expectValidation } from './problems.js';
import { ingest, saveQuery } from './query-helpers.js';
import { addKey, initialTenancy, secondEnvironment } from './tenancy-fixtures.js';
import { allPermissions } from '../src/domain/keys.js';

const COLLECTION = '/1/triggers/{datasetSlug}';
const ITEM = '/1/triggers/{datasetSlug}/{triggerId}';

const valid = (over: Record<string, unknown> = {}) => ({
  name: 'Too many errors',
  query: { calculations: [{ op: 'COUNT' }], filters: [{ column: 'error', op: 'exists' }], time_range: 900 },
  threshold: { op: '>', value: 10 },
  ...over,
});

describe('/1/triggers', () => {
  let t: TestApp;
  const DS = 'trig-api';
  const OTHER = 'trig-other';

  const send = (method: 'POST' | 'PUT', url: string, body: unknown, headers = t.config) =>
    t.app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const create = (body: unknown, ds = DS, headers = t.config) => send('POST', `/1/triggers/${ds}`, body, headers);
  const update = (id: string, body: unknown, ds = DS, headers = t.config) => send('PUT', `/1/triggers/${ds}/${id}`, body, headers);
  const get = (id: string, ds = DS, headers = t.config) => t.app.inject({ method: 'GET', url: `/1/triggers/${ds}/${id}`, headers });
  const list = (ds = DS, headers = t.config) => t.app.inject({ method: 'GET', url: `/1/triggers/${ds}`, headers });
  const del = (id: string, ds = DS, headers = t.config) => t.app.inject({ method: 'DELETE', url: `/1/triggers/${ds}/${id}`, headers });
  const created = async (body: unknown, ds = DS) => {
    const res = await create(body, ds);
    expect(res.statusCode, res.body).toBe(201);
    return json(res);
  };
  const recipient = async (email: string) => {
    const res = await send('POST', '/1/recipients', { type: 'email', details: { email_address: email } });
    expect(res.statusCode, res.body).toBe(201);
    return json(res);
  };

  beforeAll(async () => {
    t = await makeApp({ settings: { evaluationTickMs: 0 } });
    await ingest(t, DS, [{ data: { error: 'boom' } }]);
    await ingest(t, OTHER, [{ data: { error: 'boom' } }]);
  });
  afterAll(async () => t?.close());

  describe('lifecycle', () => {
    it('POST → 201 with a relative Location, defaults filled, the inline query saved as a query', async () => {
      const res = await create(valid());
      expect(res.statusCode, res.body).toBe(201);
      expectContract(COLLECTION, 'POST', res);
      const body = json(res);
      expect(res.headers.location).toBe(`/1/triggers/${DS}/${body.id}`);
      expect(body).toMatchObject({
        name: 'Too many errors',
        description: '',
        dataset_slug: DS,
        threshold: { op: '>', value: 10, exceeded_limit: 1 },
        frequency: 900,
        alert_type: 'on_change',
        disabled: false,
        triggered: false,
        recipients: [],
        evaluation_schedule_type: 'frequency',
        query: valid().query,
      });
      expect(body.evaluation_schedule).toBeUndefined();
      expect(body.baseline_details).toBeUndefined();
      // No tags: the member is absent, not [] (as Honeycomb answers).
      expect(body).not.toHaveProperty('tags');
      expect(typeof body.query_id).toBe('string');
      expect(Date.parse(body.created_at)).not.toBeNaN();
      expect(Date.parse(body.updated_at)).not.toBeNaN();
      const q = await t.app.inject({ method: 'GET', url: `/1/queries/${DS}/${body.query_id}`, headers: t.config });
      expect(q.statusCode).toBe(200);
      expect(json(q)).toEqual({ id: body.query_id, ...valid().query });

      const got = await get(body.id);
      expect(got.statusCode).toBe(200);
      expectContract(ITEM, 'GET', got);
      expect(json(got)).toEqual(body);
    });

    it('takes a query_id of the same dataset; the answer carries both query and query_id', async () => {
      const spec = { calculations: [{ op: 'AVG', column: 'duration_ms' }], breakdowns: ['service'], time_range: 1800 };
      const qid = await saveQuery(t, DS, spec);
      const body = await created({ name: 'Slow', query_id: qid, threshold: { op: '>=', value: 500, exceeded_limit: 5 }, frequency: 600 });
      expect(body.query_id).toBe(qid);
      expect(body.query).toEqual(spec);
      expect(body.threshold).toEqual({ op: '>=', value: 500, exceeded_limit: 5 });
      // Both together: accepted when the inline query is that query.
      const both = await created({ name: 'Both', query_id: qid, query: { time_range: 1800, breakdowns: ['service'], calculations: [{ op: 'AVG', column: 'duration_ms' }] }, threshold: { op: '>', value: 1 }, frequency: 600 });
      expect(both.query_id).toBe(qid);
      expectValidation(await create({ name: 'Both', query_id: qid, query: { ...spec, time_range: 1200 }, threshold: { op: '>', value: 1 }, frequency: 600 }), 'query');
    });

    it('lists the triggers of the path only, in creation order; __all__ holds environment-wide ones', async () => {
      const ds = 'trig-list';
      await ingest(t, ds, [{ data: { a: 1 } }]);
      const a = await created(valid({ name: 'A' }), ds);
      const b = await created(valid({ name: 'B' }), ds);
      const env = await created(valid({ name: 'Env' }), '__all__');
      expect(env.dataset_slug).toBe('__all__');
      const res = await list(ds);
      expect(res.statusCode).toBe(200);
      expectContract(COLLECTION, 'GET', res);
      expect(json(res).map((x: { id: string }) => x.id)).toEqual([a.id, b.id]);
      expect(json(await list('__all__')).map((x: { id: string }) => x.id)).toContain(env.id);
      expect(json(await list('__all__')).map((x: { id: string }) => x.id)).not.toContain(a.id);
      // Found only under its own path.
      expect((await get(a.id, '__all__')).statusCode).toBe(404);
      expect((await get(a.id, OTHER)).statusCode).toBe(404);
      expect((await get(env.id, ds)).statusCode).toBe(404);
      expect((await get(env.id, '__all__')).statusCode).toBe(200);
      // The environment-wide inline query is an __all__ query.
      expect((await t.app.inject({ method: 'GET', url: `/1/queries/__all__/${env.query_id}`, headers: t.config })).statusCode).toBe(200);
    });

    it('PUT is a full replacement; a GET → PUT round trip changes nothing and makes no new query', async () => {
      const rcpt = await recipient('put-roundtrip@example.com');
      const first = await created(
        valid({
          description: 'errors in checkout',
          tags: [{ key: 'team', value: 'blue' }],
          recipients: [{ id: rcpt.id }],
          alert_type: 'on_true',
          baseline_details: { offset_minutes: 60, type: 'value' },
          threshold: { op: '>=', value: 5 },
          evaluation_schedule: { window: { days_of_week: ['monday', 'friday'], start_time: '9:00', end_time: '17:30' } },
        }),
      );
      expect(first.evaluation_schedule_type).toBe('window');
      expect(first.recipients).toEqual([{ id: rcpt.id, type: 'email', target: 'put-roundtrip@example.com' }]);
      const again = await update(first.id, first);
      expect(again.statusCode, again.body).toBe(200);
      expectContract(ITEM, 'PUT', again);
      const body = json(again);
      expect({ ...body, updated_at: first.updated_at }).toEqual(first);

      // Omitted fields take their defaults, but for baseline_details (kept until null or {}).
      const replaced = json(await update(first.id, { name: 'Renamed', query: first.query, threshold: { op: '<', value: 3 }, baseline_details: null }));
      expect(replaced).toMatchObject({
        id: first.id,
        name: 'Renamed',
        description: '',
        recipients: [],
        alert_type: 'on_change',
        evaluation_schedule_type: 'frequency',
        query_id: first.query_id,
        created_at: first.created_at,
      });
      expect(replaced.baseline_details).toBeUndefined();
      expect(replaced.evaluation_schedule).toBeUndefined();
      // A different inline query is saved as a new query.
      const changed = json(await update(first.id, { name: 'Renamed', query: { ...first.query, time_range: 1800 }, threshold: { op: '<', value: 3 } }));
      expect(changed.query_id).not.toBe(first.query_id);
      expect(changed.query.time_range).toBe(1800);
      // baseline_details {} clears it.
      const cleared = json(await update(first.id, { ...first, baseline_details: {} }));
      expect(cleared.baseline_details).toBeUndefined();
      // Read-only fields in the body are ignored.
      const ro = json(await update(first.id, { ...first, id: 'nope', triggered: true, dataset_slug: 'x', created_at: '2000-01-01T00:00:00Z' }));
      expect(ro.id).toBe(first.id);
      expect(ro.triggered).toBe(false);
      expect(ro.dataset_slug).toBe(DS);
    });

    it('DELETE → 204, then 404; unknown ids and datasets → 404', async () => {
      const body = await created(valid());
      const res = await del(body.id);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expect((await get(body.id)).statusCode).toBe(404);
      expect((await del(body.id)).statusCode).toBe(404);
      expect((await update(body.id, valid())).statusCode).toBe(404);
      expect((await get('nope')).statusCode).toBe(404);
      expect((await list('no-such-dataset')).statusCode).toBe(404);
      expect((await create(valid(), 'no-such-dataset')).statusCode).toBe(404);
    });
  });

  describe('recipients', () => {
    it('a trigger holds its recipients: recipient DELETE → 409 until the trigger is deleted; /recipients/{id}/triggers answers TriggerResponses', async () => {
      const rcpt = await recipient('in-use@example.com');
      const pd = json(await send('POST', '/1/recipients', { type: 'pagerduty', details: { pagerduty_integration_name: 'PD trig', pagerduty_integration_key: 'abcdefghijklmnopqrstuvwxyz012345' } }));
      const trig = await created(valid({ recipients: [{ id: rcpt.id }, { id: pd.id, details: { pagerduty_severity: 'warning' } }] }));
      expect(trig.recipients).toEqual([
        { id: rcpt.id, type: 'email', target: 'in-use@example.com' },
        { id: pd.id, type: 'pagerduty', target: 'PD trig', details: { pagerduty_severity: 'warning' } },
      ]);
      expect((await t.app.inject({ method: 'DELETE', url: `/1/recipients/${rcpt.id}`, headers: t.config })).statusCode).toBe(409);
      const usedBy = await t.app.inject({ method: 'GET', url: `/1/recipients/${rcpt.id}/triggers`, headers: t.config });
      expect(usedBy.statusCode).toBe(200);
      expectContract('/1/recipients/{recipientId}/triggers', 'GET', usedBy);
      expect(json(usedBy)).toEqual([json(await get(trig.id))]);
      expect((await del(trig.id)).statusCode).toBe(204);
      expect((await t.app.inject({ method: 'DELETE', url: `/1/recipients/${rcpt.id}`, headers: t.config })).statusCode).toBe(204);
      expectValidation(await create(valid({ recipients: [{ id: rcpt.id }] })), 'recipients.0.id');
    });
  });

  describe('what the Terraform provider relies on', () => {
    it('query.time_range defaults to the frequency, is returned, and is in the saved query', async () => {
      const trig = await created({ name: 'No range', query: { calculations: [{ op: 'COUNT' }] }, frequency: 300, threshold: { op: '>', value: 1 } });
      expect(trig.query).toEqual({ calculations: [{ op: 'COUNT' }], time_range: 300 });
      expect(json(await get(trig.id)).query).toEqual(trig.query);
      const q = await t.app.inject({ method: 'GET', url: `/1/queries/${DS}/${trig.query_id}`, headers: t.config });
      expect(json(q)).toEqual({ id: trig.query_id, calculations: [{ op: 'COUNT' }], time_range: 300 });
      // Without a frequency either: the default 900.
      expect((await created({ name: 'Defaults', query: {}, threshold: { op: '>', value: 1 } })).query).toEqual({ time_range: 900 });
      // A query_id whose query has no time range: the trigger's query shows the frequency, and
      // sending both back (as a GET answered them) is accepted as the same query.
      const qid = await saveQuery(t, DS, { calculations: [{ op: 'COUNT' }] });
      const byId = await created({ name: 'By id', query_id: qid, frequency: 600, threshold: { op: '>', value: 1 } });
      expect(byId.query).toEqual({ calculations: [{ op: 'COUNT' }], time_range: 600 });
      const back = await update(byId.id, byId);
      expect(back.statusCode, back.body).toBe(200);
      expect(json(back).query_id).toBe(qid);
    });

    it('a PUT without baseline_details keeps the stored one; null or {} clears it', async () => {
      const first = await created(valid({ threshold: { op: '>=', value: 5 }, baseline_details: { offset_minutes: 1440, type: 'percentage' } }));
      // What the provider sends when it has both query_id and query: query_id only, no baseline_details.
      const { query: _q, baseline_details: _b, ...rest } = first;
      const kept = await update(first.id, { ...rest, description: 'kept baseline' });
      expect(kept.statusCode, kept.body).toBe(200);
      expect(json(kept)).toMatchObject({ description: 'kept baseline', baseline_details: { offset_minutes: 1440, type: 'percentage' } });
      expect(json(await get(first.id)).baseline_details).toEqual({ offset_minutes: 1440, type: 'percentage' });
      // The kept baseline still needs a threshold it allows.
      expectValidation(await update(first.id, { ...rest, threshold: { op: '>', value: 5 } }), 'threshold.op');
      expect(json(await update(first.id, { ...first, baseline_details: null })).baseline_details).toBeUndefined();
      expect(json(await update(first.id, { ...first, baseline_details: { offset_minutes: 60, type: 'value' } })).baseline_details).toEqual({ offset_minutes: 60, type: 'value' });
      expect(json(await update(first.id, { ...first, baseline_details: {} })).baseline_details).toBeUndefined();
      // Not on create: omitted is none.
      expect((await created(valid())).baseline_details).toBeUndefined();
    });

    it('auto_investigate: a boolean, stored and echoed (false by default and when omitted on PUT)', async () => {
      const plain = await created(valid());
      expect(plain.auto_investigate).toBe(false);
      const on = await created(valid({ auto_investigate: true }));
      expect(on.auto_investigate).toBe(true);
      expect(json(await get(on.id)).auto_investigate).toBe(true);
      expect(json(await update(on.id, { ...on, auto_investigate: false })).auto_investigate).toBe(false);
      expect(json(await update(on.id, valid({ auto_investigate: true }))).auto_investigate).toBe(true);
      expect(json(await update(on.id, valid())).auto_investigate).toBe(false);
      expectValidation(await create(valid({ auto_investigate: 'yes' })), 'auto_investigate', 'incorrect_type');
    });

    it('auto_investigate on an environment-wide trigger: absent from every answer unless it was sent', async () => {
      // As Honeycomb answers: the Terraform provider's TestTriggersEnvironmentWide expects no auto_investigate.
      const env = await created(valid({ name: 'Env-wide, no auto_investigate' }), '__all__');
      const answers = async () => [
        json(await get(env.id, '__all__')),
        json(await list('__all__')).find((x: { id: string }) => x.id === env.id),
      ];
      expect(env).not.toHaveProperty('auto_investigate');
      for (const a of await answers()) expect(a).not.toHaveProperty('auto_investigate');
      const { id: _id, ...body } = env;
      const updated = json(await update(env.id, { ...body, description: 'updated' }, '__all__'));
      expect(updated.description).toBe('updated');
      expect(updated).not.toHaveProperty('auto_investigate');
      for (const a of await answers()) expect(a).not.toHaveProperty('auto_investigate');
      // Sent, it is stored and answered, false included; omitted on PUT, it is unset again.
      expect(json(await update(env.id, { ...body, auto_investigate: false }, '__all__')).auto_investigate).toBe(false);
      for (const a of await answers()) expect(a.auto_investigate).toBe(false);
      expect(json(await update(env.id, { ...body, auto_investigate: true }, '__all__')).auto_investigate).toBe(true);
      expect(json(await update(env.id, body, '__all__'))).not.toHaveProperty('auto_investigate');
      expect((await created(valid({ auto_investigate: true }), '__all__')).auto_investigate).toBe(true);
    });

    it('a marker recipient {type: marker, target}: accepted, answered with an id, kept through GET → PUT', async () => {
      const trig = await created(valid({ recipients: [{ type: 'marker', target: 'This marker is created by a trigger' }] }));
      expect(trig.recipients).toEqual([{ id: expect.stringMatching(/^[A-Za-z0-9]{11}$/), type: 'marker', target: 'This marker is created by a trigger' }]);
      const id = trig.recipients[0].id;
      // Round trip with id, type and target; with the id alone; with the provider's empty type.
      for (const r of [trig.recipients[0], { id }, { id, type: '' }]) {
        const res = await update(trig.id, { ...trig, recipients: [r] });
        expect(res.statusCode, res.body).toBe(200);
        expect(json(res).recipients).toEqual(trig.recipients);
      }
      // A new text is a new marker recipient, whatever id comes with it.
      const changed = json(await update(trig.id, { ...trig, recipients: [{ id, type: 'marker', target: 'another text' }] }));
      expect(changed.recipients).toEqual([{ id: expect.any(String), type: 'marker', target: 'another text' }]);
      expect(changed.recipients[0].id).not.toBe(id);
      // It is no team recipient.
      expect(json(await t.app.inject({ method: 'GET', url: '/1/recipients', headers: t.config })).some((r: { id: string }) => r.id === id)).toBe(false);
      expectValidation(await create(valid({ recipients: [{ type: 'marker' }] })), 'recipients.0.target', 'missing');
      expectValidation(await create(valid({ recipients: [{ type: 'marker', target: 'x'.repeat(4097) }] })), 'recipients.0.target');
      expectValidation(await create(valid({ recipients: [{ type: 'marker', target: 'a' }, { type: 'marker', target: 'a' }] })), 'recipients.1.id');
      expectValidation(await create(valid({ recipients: [{ type: 'marker', target: 'a', details: { pagerduty_severity: 'info' } }] })), 'recipients.0.details.pagerduty_severity');
      // An id alone names a marker recipient only of the trigger being replaced.
      expectValidation(await create(valid({ recipients: [{ id }] })), 'recipients.0.id');
    });

    it('an inline email recipient {type: email, target}: the team recipient of that address, or a new one', async () => {
      const listEmails = async () =>
        (json(await t.app.inject({ method: 'GET', url: '/1/recipients', headers: t.config })) as { id: string; type: string; details: { email_address?: string } }[])
          .filter((r) => r.type === 'email');
      const existing = await recipient('Known@Example.com');
      const trig = await created(valid({ recipients: [{ type: 'email', target: 'known@example.com' }, { type: 'email', target: 'fresh-inline@example.com' }] }));
      const made = (await listEmails()).find((r) => r.details.email_address === 'fresh-inline@example.com');
      expect(made).toBeDefined();
      expect(trig.recipients).toEqual([
        { id: existing.id, type: 'email', target: 'Known@Example.com' },
        { id: made!.id, type: 'email', target: 'fresh-inline@example.com' },
      ]);
      // The same address again uses the recipient made the first time.
      const second = await created(valid({ recipients: [{ type: 'email', target: 'FRESH-inline@example.com' }] }));
      expect(second.recipients).toEqual([{ id: made!.id, type: 'email', target: 'fresh-inline@example.com' }]);
      // A bad address, or the same address twice → 422; a body refused for any reason makes no recipient.
      const before = (await listEmails()).length;
      expectValidation(await create(valid({ recipients: [{ type: 'email', target: 'not an address' }] })), 'recipients.0.target');
      expectValidation(await create(valid({ recipients: [{ type: 'email', target: 'twice@example.com' }, { type: 'email', target: 'Twice@example.com' }] })), 'recipients.1.id');
      expectValidation(await create(valid({ name: '', recipients: [{ type: 'email', target: 'refused-body@example.com' }] })), 'name', 'missing');
      expect((await listEmails()).length).toBe(before);
    });
  });

  describe('permissions and tenancy', () => {
    it('needs Manage Triggers (403), a configuration key (401); another environment → 404', async () => {
      const body = await created(valid());
      const { team, environment } = await initialTenancy(t);
      const without = await addKey(t, team, environment, { permissions: { ...allPermissions('configuration'), manage_triggers: false } });
      for (const res of [
        await list(DS, without.headers),
        await create(valid(), DS, without.headers),
        await get(body.id, DS, without.headers),
        await update(body.id, valid(), DS, without.headers),
        await del(body.id, DS, without.headers),
      ]) {
        expect(res.statusCode, res.body).toBe(403);
        expect(Object.keys(json(res))).toEqual(['error']);
      }
      const only = await addKey(t, team, environment, { permissions: { manage_triggers: true } });
      expect((await get(body.id, DS, only.headers)).statusCode).toBe(200);
      expect((await list(DS, t.ingest)).statusCode).toBe(401);
      expect((await t.app.inject({ method: 'GET', url: `/1/triggers/${DS}` })).statusCode).toBe(401);

      const staging = await secondEnvironment(t, 'Trigger Staging');
      expect((await get(body.id, DS, staging.headers)).statusCode).toBe(404);
      expect((await get(body.id, '__all__', staging.headers)).statusCode).toBe(404);
      expect((await update(body.id, valid(), '__all__', staging.headers)).statusCode).toBe(404);
      expect((await del(body.id, '__all__', staging.headers)).statusCode).toBe(404);
      expect((await get(body.id)).statusCode).toBe(200);
    });

    it('query_id must be a query of this environment and of the same dataset (else 422 on query_id)', async () => {
      const thresh = { op: '>', value: 1 };
      const other = await saveQuery(t, OTHER, { time_range: 900 });
      expectValidation(await create({ name: 'x', query_id: other, threshold: thresh }), 'query_id');
      const env = await saveQuery(t, '__all__', { time_range: 900 });
      expectValidation(await create({ name: 'x', query_id: env, threshold: thresh }), 'query_id');
      const mine = await saveQuery(t, DS, { time_range: 900 });
      expectValidation(await create({ name: 'x', query_id: mine, threshold: thresh }, '__all__'), 'query_id');
      expectValidation(await create({ name: 'x', query_id: 'unknown', threshold: thresh }), 'query_id');
      expectValidation(await create({ name: 'x', query_id: '', threshold: thresh }), 'query_id');
      expectValidation(await create({ name: 'x', query_id: 12, threshold: thresh }), 'query_id', 'incorrect_type');
      const staging = await secondEnvironment(t, 'Query Staging');
      const res = await t.app.inject({ method: 'POST', url: '/1/queries/__all__', headers: staging.headers, payload: { time_range: 900 } });
      expectValidation(await create({ name: 'x', query_id: json(res).id, threshold: thresh }, '__all__'), 'query_id');
      expect((await create({ name: 'x', query_id: mine, threshold: thresh })).statusCode).toBe(201);
    });
  });

  describe('validation', () => {
    const s = (n: number, c = 'a') => c.repeat(n);
    type Case = [string, Record<string, unknown>, string | null, string?];
    const q = (query: Record<string, unknown>) => ({ query });
    const cases: Case[] = [
      // name
      ['name missing', { name: undefined }, 'name', 'missing'],
      ['name empty', { name: '' }, 'name', 'missing'],
      ['name blank', { name: '   ' }, 'name', 'missing'],
      ['name 120', { name: s(120) }, null],
      ['name 121', { name: s(121) }, 'name'],
      ['name number', { name: 12 }, 'name', 'incorrect_type'],
      // description
      ['description 1023', { description: s(1023) }, null],
      ['description 1024', { description: s(1024) }, 'description'],
      ['description null', { description: null }, null],
      ['description number', { description: 1 }, 'description', 'incorrect_type'],
      // tags
      ['tags 10', { tags: Array.from({ length: 10 }, (_, i) => ({ key: `k${'abcdefghij'[i]}`.replace(/\d/g, ''), value: 'v' })) }, null],
      ['tags 11', { tags: Array.from({ length: 11 }, (_, i) => ({ key: 'abcdefghijk'[i], value: 'v' })) }, 'tags'],
      ['tag key upper', { tags: [{ key: 'Team', value: 'blue' }] }, 'tags.0.key'],
      ['tag value digit first', { tags: [{ key: 'team', value: '1blue' }] }, 'tags.0.value'],
      // threshold
      ['threshold missing', { threshold: undefined }, 'threshold', 'missing'],
      ['threshold not object', { threshold: 5 }, 'threshold', 'incorrect_type'],
      ['threshold op missing', { threshold: { value: 1 } }, 'threshold.op', 'missing'],
      ['threshold op =', { threshold: { op: '=', value: 1 } }, 'threshold.op'],
      ['threshold value missing', { threshold: { op: '<' } }, 'threshold.value', 'missing'],
      ['threshold value string', { threshold: { op: '<', value: '1' } }, 'threshold.value', 'incorrect_type'],
      ['threshold value float', { threshold: { op: '<=', value: 0.25 } }, null],
      ['exceeded_limit 0', { threshold: { op: '>', value: 1, exceeded_limit: 0 } }, 'threshold.exceeded_limit'],
      ['exceeded_limit 1', { threshold: { op: '>', value: 1, exceeded_limit: 1 } }, null],
      ['exceeded_limit 5', { threshold: { op: '>', value: 1, exceeded_limit: 5 } }, null],
      ['exceeded_limit 6', { threshold: { op: '>', value: 1, exceeded_limit: 6 } }, 'threshold.exceeded_limit'],
      ['exceeded_limit 1.5', { threshold: { op: '>', value: 1, exceeded_limit: 1.5 } }, 'threshold.exceeded_limit', 'incorrect_type'],
      // frequency and the query duration
      ['frequency 60', { frequency: 60, ...q({ time_range: 60 }) }, null],
      ['frequency 0', { frequency: 0 }, 'frequency'],
      ['frequency 30', { frequency: 30, ...q({ time_range: 60 }) }, 'frequency'],
      ['frequency 90', { frequency: 90, ...q({ time_range: 180 }) }, 'frequency'],
      ['frequency 86400', { frequency: 86400, ...q({ time_range: 86400 }) }, null],
      ['frequency 86460', { frequency: 86460, ...q({ time_range: 86460 }) }, 'frequency'],
      ['frequency string', { frequency: '900' }, 'frequency', 'incorrect_type'],
      ['frequency float', { frequency: 900.5 }, 'frequency', 'incorrect_type'],
      ['frequency null = 900', { frequency: null }, null],
      ['time_range < frequency', { frequency: 900, ...q({ time_range: 899 }) }, 'frequency'],
      ['time_range = frequency', { frequency: 900, ...q({ time_range: 900 }) }, null],
      ['time_range = 4 × frequency', { frequency: 900, ...q({ time_range: 3600 }) }, null],
      ['time_range > 4 × frequency', { frequency: 900, ...q({ time_range: 3601 }) }, 'frequency'],
      ['no time_range: the frequency', { frequency: 300, ...q({}) }, null],
      // the trigger query subset
      ['no calculations = COUNT', q({ time_range: 900 }), null],
      ['two calculations', q({ calculations: [{ op: 'COUNT' }, { op: 'MAX', column: 'd' }], time_range: 900 }), 'query.calculations'],
      ['HEATMAP', q({ calculations: [{ op: 'HEATMAP', column: 'd' }], time_range: 900 }), 'query.calculations.0.op'],
      ['CONCURRENCY', q({ calculations: [{ op: 'CONCURRENCY' }], time_range: 900 }), 'query.calculations.0.op'],
      ['P99', q({ calculations: [{ op: 'P99', column: 'd' }], time_range: 900 }), null],
      ['orders', q({ calculations: [{ op: 'COUNT' }], orders: [{ op: 'COUNT', order: 'descending' }], time_range: 900 }), 'query.orders'],
      ['limit', q({ limit: 10, time_range: 900 }), 'query.limit'],
      ['start_time', q({ start_time: 1_700_000_000, time_range: 900 }), 'query.start_time'],
      ['end_time', q({ end_time: 1_700_000_000, time_range: 900 }), 'query.end_time'],
      ['one having', q({ havings: [{ calculate_op: 'COUNT', op: '>', value: 1 }], time_range: 900 }), null],
      ['two havings', q({ havings: [{ calculate_op: 'COUNT', op: '>', value: 1 }, { calculate_op: 'COUNT', op: '<', value: 9 }], time_range: 900 }), 'query.havings'],
      ['invalid query spec', q({ calculations: [{ op: 'NOPE' }], time_range: 900 }), 'query.calculations.0.op'],
      ['query not an object', { query: 'COUNT' }, 'query', 'incorrect_type'],
      ['neither query nor query_id', { query: undefined }, 'query', 'missing'],
      // alert type, disabled
      ['alert_type on_true', { alert_type: 'on_true' }, null],
      ['alert_type other', { alert_type: 'sometimes' }, 'alert_type'],
      ['disabled string', { disabled: 'yes' }, 'disabled', 'incorrect_type'],
      // evaluation schedule
      ['window without schedule', { evaluation_schedule_type: 'window' }, 'evaluation_schedule', 'missing'],
      ['frequency with schedule', { evaluation_schedule_type: 'frequency', evaluation_schedule: { window: { days_of_week: ['monday'], start_time: '09:00', end_time: '17:00' } } }, 'evaluation_schedule'],
      ['schedule type other', { evaluation_schedule_type: 'cron' }, 'evaluation_schedule_type'],
      ['schedule without window', { evaluation_schedule: {} }, 'evaluation_schedule.window', 'missing'],
      ['no days', { evaluation_schedule: { window: { days_of_week: [], start_time: '09:00', end_time: '17:00' } } }, 'evaluation_schedule.window.days_of_week'],
      ['7 days', { evaluation_schedule: { window: { days_of_week: ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'], start_time: '00:00', end_time: '00:00' } } }, null],
      ['8 days', { evaluation_schedule: { window: { days_of_week: ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'], start_time: '00:00', end_time: '00:00' } } }, 'evaluation_schedule.window.days_of_week'],
      ['unknown day', { evaluation_schedule: { window: { days_of_week: ['funday'], start_time: '09:00', end_time: '17:00' } } }, 'evaluation_schedule.window.days_of_week.0'],
      ['Monday capitalised', { evaluation_schedule: { window: { days_of_week: ['Monday'], start_time: '09:00', end_time: '17:00' } } }, 'evaluation_schedule.window.days_of_week.0'],
      ['duplicate day', { evaluation_schedule: { window: { days_of_week: ['monday', 'monday'], start_time: '09:00', end_time: '17:00' } } }, 'evaluation_schedule.window.days_of_week.1'],
      ['start 23:59, end 0:00', { evaluation_schedule: { window: { days_of_week: ['monday'], start_time: '23:59', end_time: '0:00' } } }, null],
      ['start 24:00', { evaluation_schedule: { window: { days_of_week: ['monday'], start_time: '24:00', end_time: '17:00' } } }, 'evaluation_schedule.window.start_time'],
      ['end 12:60', { evaluation_schedule: { window: { days_of_week: ['monday'], start_time: '09:00', end_time: '12:60' } } }, 'evaluation_schedule.window.end_time'],
      ['end 9am', { evaluation_schedule: { window: { days_of_week: ['monday'], start_time: '09:00', end_time: '9am' } } }, 'evaluation_schedule.window.end_time'],
      ['start missing', { evaluation_schedule: { window: { days_of_week: ['monday'], end_time: '17:00' } } }, 'evaluation_schedule.window.start_time', 'missing'],
      ['start number', { evaluation_schedule: { window: { days_of_week: ['monday'], start_time: 900, end_time: '17:00' } } }, 'evaluation_schedule.window.start_time', 'incorrect_type'],
      // baseline
      ['baseline ok', { baseline_details: { offset_minutes: 1440, type: 'percentage' }, threshold: { op: '>=', value: 20 } }, null],
      ['baseline <= negative', { baseline_details: { offset_minutes: 40320, type: 'value' }, threshold: { op: '<=', value: -10 } }, null],
      ['baseline {}', { baseline_details: {} }, null],
      ['baseline offset 30', { baseline_details: { offset_minutes: 30, type: 'value' }, threshold: { op: '>=', value: 1 } }, 'baseline_details.offset_minutes'],
      ['baseline offset string', { baseline_details: { offset_minutes: '60', type: 'value' }, threshold: { op: '>=', value: 1 } }, 'baseline_details.offset_minutes', 'incorrect_type'],
      ['baseline type other', { baseline_details: { offset_minutes: 60, type: 'ratio' }, threshold: { op: '>=', value: 1 } }, 'baseline_details.type'],
      ['baseline type missing', { baseline_details: { offset_minutes: 60 }, threshold: { op: '>=', value: 1 } }, 'baseline_details.type', 'missing'],
      ['baseline with >', { baseline_details: { offset_minutes: 60, type: 'value' }, threshold: { op: '>', value: 1 } }, 'threshold.op'],
      ['baseline with <', { baseline_details: { offset_minutes: 60, type: 'value' }, threshold: { op: '<', value: -1 } }, 'threshold.op'],
      ['baseline >= negative', { baseline_details: { offset_minutes: 60, type: 'value' }, threshold: { op: '>=', value: -1 } }, 'threshold.value'],
      ['baseline <= positive', { baseline_details: { offset_minutes: 60, type: 'value' }, threshold: { op: '<=', value: 1 } }, 'threshold.value'],
      ['baseline >= 0', { baseline_details: { offset_minutes: 60, type: 'value' }, threshold: { op: '>=', value: 0 } }, null],
      // recipients
      ['recipients not an array', { recipients: 'x' }, 'recipients', 'incorrect_type'],
      ['unknown recipient', { recipients: [{ id: 'nope' }] }, 'recipients.0.id'],
    ];

    it.each(cases)('%s', async (_label, over, field, code) => {
      const body: Record<string, unknown> = { ...valid(), ...over };
      for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
      const res = await create(body);
      if (field === null) {
        expect(res.statusCode, res.body).toBe(201);
        expectContract(COLLECTION, 'POST', res);
      } else {
        expectValidation(res, field, code);
      }
    });

    it('a query_id whose query breaks the trigger rules → 422 on query_id', async () => {
      const two = await saveQuery(t, DS, { calculations: [{ op: 'COUNT' }, { op: 'MAX', column: 'd' }], time_range: 900 });
      expectValidation(await create({ name: 'x', query_id: two, threshold: { op: '>', value: 1 } }), 'query_id');
      const long = await saveQuery(t, DS, { time_range: 7200 });
      expectValidation(await create({ name: 'x', query_id: long, threshold: { op: '>', value: 1 } }), 'frequency');
      expect((await create({ name: 'x', query_id: long, threshold: { op: '>', value: 1 }, frequency: 1800 })).statusCode).toBe(201);
    });

    it('reports every problem at once; PUT validates the same way; bodies that are not objects', async () => {
      const res = await create({ name: '', threshold: { op: '!=' }, frequency: 61, alert_type: 1, query: { limit: 5 } });
      const body = expectValidation(res, 'name', 'missing');
      const fields = body.type_detail.map((d: { field: string }) => d.field);
      expect(fields).toEqual(expect.arrayContaining(['name', 'threshold.op', 'threshold.value', 'frequency', 'alert_type', 'query.limit']));
      const trig = await created(valid());
      expectValidation(await update(trig.id, { ...valid(), threshold: { op: '>', value: 1, exceeded_limit: 9 } }), 'threshold.exceeded_limit');
      expectValidation(await create([valid()]), 'body', 'incorrect_type');
      const empty = await t.app.inject({ method: 'POST', url: `/1/triggers/${DS}`, headers: t.config });
      expect(empty.statusCode).toBe(400);
      // Unknown fields are ignored.
      const extra = await created({ ...valid(), colour: 'red' });
      expect(extra.colour).toBeUndefined();
    });

    it('the schema validates: null members are not set; a wrong type is one problem; a path 404 before a 422', async () => {
      const nulls = { description: null, tags: null, query_id: null, frequency: null, alert_type: null, disabled: null, auto_investigate: null, recipients: null, evaluation_schedule_type: null, evaluation_schedule: null };
      const trig = await created(valid({ ...nulls, threshold: { op: '>', value: 1, exceeded_limit: null } }));
      expect(trig).toMatchObject({ description: '', frequency: 900, alert_type: 'on_change', disabled: false, recipients: [], evaluation_schedule_type: 'frequency', threshold: { exceeded_limit: 1 } });
      // A string where an enumeration's integer belongs: its type, not also the enumeration.
      const typed = json(await create(valid({ frequency: 900.5, baseline_details: { offset_minutes: '60', type: 'value' }, threshold: { op: '>=', value: 1 } })));
      expect(typed.type_detail.map((d: { field: string; code: string }) => `${d.field} ${d.code}`).sort()).toEqual(['baseline_details.offset_minutes incorrect_type', 'frequency incorrect_type']);
      // A trigger query's forbidden members, with the body's other problems.
      const res = await create(valid({ name: 12, query: { orders: [{ op: 'COUNT' }], start_time: 1, calculations: [{ op: 'HEATMAP', column: 'd' }] } }));
      const body = expectValidation(res, 'query.orders');
      expect(body.type_detail.find((d: { field: string }) => d.field === 'query.orders').description).toBe('must not be given here');
      expect(body.type_detail.map((d: { field: string }) => d.field).sort()).toEqual(['name', 'query.calculations.0.op', 'query.orders', 'query.start_time']);
      // A PUT of an unknown trigger is a 404 whatever its body.
      expect((await update('nope', { name: 5 })).statusCode).toBe(404);
      expect((await create({ name: 5 }, 'no-such-dataset')).statusCode).toBe(404);
    });
  });
});
