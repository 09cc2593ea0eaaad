import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectContract } from './contract.js';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(() => t.close());

  it('GET /1/auth answers for the initial configuration key, as the contract says', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/1/auth', headers: t.config });
    expect(res.statusCode).toBe(200);
    expect(json(res).environment.slug).toBe('production');
    expectContract('/1/auth', 'get', res);
  });

  it('healthz needs no key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
  });
});
