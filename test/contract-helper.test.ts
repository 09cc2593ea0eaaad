// The contract check (test/contract.ts) on real answers: it passes only when it checked
// something, so a test that calls it cannot pass silently (issue 35: 41 calls ignored a `false`
// that meant "nothing checked", and one hid a JSON answer without a Content-Type).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_GAPS, expectContract } from './contract.js';
import { makeApp, json, type TestApp } from './helpers.js';

describe('expectContract', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(() => t.close());

  const auth = () => t.app.inject({ method: 'GET', url: '/1/auth', headers: t.config });
  const withoutType = async () => {
    const res = await auth();
    const { 'content-type': _gone, ...headers } = res.headers;
    return { statusCode: res.statusCode, headers, body: res.body };
  };

  it('checks a documented answer against its schema, and fails one that does not match', async () => {
    const res = await auth();
    expectContract('/1/auth', 'GET', res);
    const broken = { ...res, body: JSON.stringify({ ...json(res), id: 7 }) };
    expect(() => expectContract('/1/auth', 'GET', broken)).toThrow(/does not match the contract/);
  });

  it('fails an answer the contract has no schema for: no Content-Type, an undocumented status', async () => {
    const res = await withoutType();
    expect(() => expectContract('/1/auth', 'GET', res)).toThrow(/GET \/1\/auth 200 : the contract documents no such answer \(no schema in an answer without a Content-Type/);
    expect(() => expectContract('/1/recipients/{recipientId}', 'DELETE', { statusCode: 418, headers: {}, body: '' })).toThrow(/status 418 is not documented/);
  });

  it('a status documented without a body: checks that there is none', async () => {
    const created = await t.app.inject({
      method: 'POST', url: '/1/recipients', headers: t.config, payload: { type: 'email', details: { email_address: 'contract@example.com' } },
    });
    const res = await t.app.inject({ method: 'DELETE', url: `/1/recipients/${json(created).id}`, headers: t.config });
    expectContract('/1/recipients/{recipientId}', 'DELETE', res);
    expect(() => expectContract('/1/recipients/{recipientId}', 'DELETE', { ...res, body: '{}' })).toThrow(/documents no body/);
  });

  it('CONTRACT_GAPS lets a listed gap pass, and refuses an entry for an answer the contract documents', async () => {
    const res = await withoutType();
    CONTRACT_GAPS['GET /1/auth 200 '] = 'for this test';
    try {
      expectContract('/1/auth', 'GET', res);
    } finally {
      delete CONTRACT_GAPS['GET /1/auth 200 '];
    }
    const documented = await auth();
    CONTRACT_GAPS['GET /1/auth 200 application/json'] = 'for this test';
    try {
      expect(() => expectContract('/1/auth', 'GET', documented)).toThrow(/CONTRACT_GAPS lists GET \/1\/auth 200 application\/json, which the contract documents/);
    } finally {
      delete CONTRACT_GAPS['GET /1/auth 200 application/json'];
    }
  });
});
