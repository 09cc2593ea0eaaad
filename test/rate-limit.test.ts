// Per-key rate limits: a token bucket of `limit` requests per `windowSeconds`, reported on every
// authenticated response (success and error) in `Ratelimit` / `RateLimitPolicy`, and 429 with
// `Retry-After` once exhausted.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectContract, expectSchema } from './contract.js';
import { addKey, initialTenancy } from './tenancy-fixtures.js';
import { PROBLEM_BASE } from './problems.js';

type Res = { statusCode: number; headers: Record<string, unknown>; body: string };
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

function rate(res: Res) {
  const header = String(res.headers['ratelimit'] ?? '');
  const m = /^limit=(\d+), remaining=(\d+), reset=(\d+)$/.exec(header);
  expect(m, `Ratelimit header "${header}"`).not.toBeNull();
  expect(res.headers['ratelimitpolicy']).toBe('3;w=60');
  return { limit: Number(m![1]), remaining: Number(m![2]), reset: Number(m![3]) };
}

describe('rate limits (3 per 60 s)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeApp({ settings: { apiRateLimit: { limit: 3, windowSeconds: 60 } } });
  });
  afterEach(() => t.close());

  const authGet = (headers = t.config) => t.app.inject({ method: 'GET', url: '/1/auth', headers });

  it('counts down on successes: remaining 2, 1, 0 with the reset growing', async () => {
    const seen = [];
    for (let i = 0; i < 3; i++) {
      const res = await authGet();
      expect(res.statusCode).toBe(200);
      seen.push(rate(res));
    }
    expect(seen).toEqual([
      { limit: 3, remaining: 2, reset: 20 },
      { limit: 3, remaining: 1, reset: 40 },
      { limit: 3, remaining: 0, reset: 60 },
    ]);
  });

  it('reports the headers on 404 and 422 responses too, and they count', async () => {
    const nf = await t.app.inject({ method: 'GET', url: '/1/datasets/missing', headers: t.config });
    expect(nf.statusCode).toBe(404);
    expect(rate(nf)).toEqual({ limit: 3, remaining: 2, reset: 20 });

    const bad = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: '' } });
    expect(bad.statusCode).toBe(422);
    expect(rate(bad)).toMatchObject({ remaining: 1 });

    const ok = await t.app.inject({ method: 'GET', url: '/1/datasets', headers: t.config });
    expect(ok.statusCode).toBe(200);
    expect(rate(ok)).toMatchObject({ remaining: 0 });
  });

  it('the 4th request → 429 problem+json (rate-limited) with Retry-After as an HTTP-date', async () => {
    for (let i = 0; i < 3; i++) expect((await authGet()).statusCode).toBe(200);
    const res = await authGet();
    expect(res.statusCode).toBe(429);
    expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json\b/);
    expectContract('/1/auth', 'get', res);
    const body = json(res);
    expectSchema('DetailedError', body);
    expect(body).toMatchObject({
      status: 429,
      type: `${PROBLEM_BASE}/rate-limited`,
      title: 'You have exceeded your rate limit.',
      error: 'You have exceeded your rate limit.',
    });
    expect(body.detail).toMatch(/^Please try again after \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z\.$/);
    expect(body.instance).toBe(res.headers['x-request-id']);

    const retryAfter = String(res.headers['retry-after'] ?? '');
    expect(retryAfter).toMatch(HTTP_DATE);
    expect(rate(res)).toEqual({ limit: 3, remaining: 0, reset: 60 });
  });

  it('Retry-After and the detail both point one token (20 s) ahead on the app clock', async () => {
    t.clock.advance(7 * 24 * 3600); // far from the real time, so a wall-clock mix-up shows
    for (let i = 0; i < 3; i++) expect((await authGet()).statusCode).toBe(200);
    const res = await authGet();
    expect(res.statusCode).toBe(429);
    const expected = t.clock.ms + 20_000;
    const retryAt = Date.parse(String(res.headers['retry-after']));
    expect(Math.abs(retryAt - expected)).toBeLessThan(1000);
    const detailAt = Date.parse(/after (\S+)\.$/.exec(json(res).detail)![1]);
    expect(Math.abs(detailAt - expected)).toBeLessThan(1000);
  });

  it('refused requests do nothing', async () => {
    for (let i = 0; i < 3; i++) await authGet();
    const res = await t.app.inject({ method: 'POST', url: '/1/datasets', headers: t.config, payload: { name: 'late' } });
    expect(res.statusCode).toBe(429);
    t.clock.advance(60);
    const list = await t.app.inject({ method: 'GET', url: '/1/datasets', headers: t.config });
    expect(json(list)).toEqual([]);
  });

  it('buckets are per key: another key is unaffected', async () => {
    const { team, environment } = await initialTenancy(t);
    const other = await addKey(t, team, environment);
    for (let i = 0; i < 3; i++) await authGet();
    expect((await authGet()).statusCode).toBe(429);

    const res = await authGet(other.headers);
    expect(res.statusCode).toBe(200);
    expect(rate(res)).toEqual({ limit: 3, remaining: 2, reset: 20 });

    // The ingest key of the same environment has its own bucket as well.
    const ingest = await authGet(t.ingest);
    expect(ingest.statusCode).toBe(200);
    expect(rate(ingest).remaining).toBe(2);

    // And the first key is still limited.
    expect((await authGet()).statusCode).toBe(429);
  });

  it('the same key through X-Service-Team shares its bucket', async () => {
    for (let i = 0; i < 3; i++) await authGet();
    const res = await authGet({ 'x-service-team': t.init.keys.configuration });
    expect(res.statusCode).toBe(429);
  });

  it('requests without a valid key are not counted against anyone (401, no headers)', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await authGet({ 'x-honeycomb-team': 'nope' });
      expect(res.statusCode).toBe(401);
      expect(res.headers['ratelimit']).toBeUndefined();
    }
    expect(rate(await authGet()).remaining).toBe(2);
  });

  it('time refills the bucket: one token per 20 s, never beyond the limit', async () => {
    for (let i = 0; i < 3; i++) await authGet();
    expect((await authGet()).statusCode).toBe(429);

    t.clock.advance(19);
    expect((await authGet()).statusCode).toBe(429);

    t.clock.advance(1);
    const one = await authGet();
    expect(one.statusCode).toBe(200);
    expect(rate(one)).toMatchObject({ remaining: 0 });
    expect((await authGet()).statusCode).toBe(429);

    t.clock.advance(3600);
    const full = await authGet();
    expect(full.statusCode).toBe(200);
    expect(rate(full)).toEqual({ limit: 3, remaining: 2, reset: 20 });
    expect((await authGet()).statusCode).toBe(200);
    expect((await authGet()).statusCode).toBe(200);
    expect((await authGet()).statusCode).toBe(429);
  });

  it('/2/ answers 429 in JSON:API with code rate-limited/may-retry and Retry-After', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/2/auth', headers: t.mgmt });
      expect(res.statusCode).toBe(200);
      expect(rate(res).remaining).toBe(2 - i);
    }
    const res = await t.app.inject({ method: 'GET', url: '/2/auth', headers: t.mgmt });
    expect(res.statusCode).toBe(429);
    expect(String(res.headers['content-type'])).toMatch(/^application\/vnd\.api\+json\b/);
    expectContract('/2/auth', 'get', res);
    const body = json(res);
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]).toMatchObject({ status: '429', code: 'rate-limited/may-retry' });
    expect(typeof body.errors[0].id).toBe('string');
    expect(String(res.headers['retry-after'])).toMatch(HTTP_DATE);
    expect(rate(res)).toMatchObject({ remaining: 0 });

    // The management key's bucket is its own: the configuration key still has its 3.
    expect(rate(await authGet()).remaining).toBe(2);
  });
});

describe('rate limits off', () => {
  it('with apiRateLimit null there are no rate-limit headers and no 429', async () => {
    const t = await makeApp({ settings: { apiRateLimit: null } });
    try {
      for (let i = 0; i < 20; i++) {
        const res = await t.app.inject({ method: 'GET', url: '/1/auth', headers: t.config });
        expect(res.statusCode).toBe(200);
        expect(res.headers['ratelimit']).toBeUndefined();
      }
    } finally {
      await t.close();
    }
  });
});
