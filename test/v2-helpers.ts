// Helpers shared by the /2/ (management API) tests: JSON:API error checks, extra management
// keys with chosen scopes, and a second team.
import { expect } from 'vitest';
import { createEnvironment } from '../src/domain/environments.js';
import { prefixedId, slugify } from '../src/domain/ids.js';
import { createKey } from '../src/domain/tenancy.js';
import type { Environment, Team } from '../src/stores/config/types.js';
import { json, type TestApp } from './helpers.js';

/** Exactly the JSON:API media type, no parameters: Honeycomb's Go client matches it exactly. */
export const JSONAPI_TYPE = /^application\/vnd\.api\+json$/;

type Res = { statusCode: number; headers: Record<string, unknown>; body: string };

/** Asserts a JSON:API error response of the given status; returns its `errors` array. */
export function expectJsonApiError(res: Res, status: number): Array<Record<string, any>> {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(JSONAPI_TYPE);
  const body = json(res);
  expect(body).not.toHaveProperty('error');
  expect(Array.isArray(body.errors)).toBe(true);
  expect(body.errors.length).toBeGreaterThan(0);
  for (const e of body.errors) {
    expect(typeof e.id).toBe('string');
    expect(e.id.length).toBeGreaterThan(0);
    expect(typeof e.code).toBe('string');
    expect(e.status).toBe(String(status));
  }
  return body.errors;
}

/** Asserts a 200/201 JSON:API success response and returns the parsed body. */
export function expectJsonApi(res: Res, status: number): any {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(JSONAPI_TYPE);
  return json(res);
}

/** Bearer headers (with the JSON:API content type) for a management key id and secret. */
export function bearer(id: string, secret: string): Record<string, string> {
  return { authorization: `Bearer ${id}:${secret}`, 'content-type': 'application/vnd.api+json' };
}

/** A new management key of the team (the initial team by default) with the given scopes. */
export async function managementKey(t: TestApp, scopes: string[], team?: Team) {
  const owner = team ?? (await t.store.getTeamBySlug(t.init.team.slug))!;
  const { key, secret } = await createKey(t.store, {
    team: owner, environment: null, keyType: 'management', name: `mgmt ${scopes.join(',')}`, scopes,
  });
  return { key, secret, headers: bearer(key.id, secret) };
}

/** A second team with one environment and a management key holding every scope. */
export async function secondTeam(t: TestApp, name = 'Other Team') {
  const team = await t.store.createTeam({
    id: prefixedId('hcxtm'), slug: slugify(name), name, createdAt: new Date().toISOString(),
  });
  const environment: Environment = await createEnvironment(t.store, team, { name: 'Production' });
  const mgmt = await managementKey(t, ['api-keys:read', 'api-keys:write', 'environments:read', 'environments:write'], team);
  return { team, environment, mgmt };
}

export async function initialTeam(t: TestApp): Promise<Team> {
  return (await t.store.getTeamBySlug(t.init.team.slug))!;
}

export async function initialEnvironment(t: TestApp): Promise<Environment> {
  const team = await initialTeam(t);
  return (await t.store.getEnvironmentBySlug(team.id, t.init.environment.slug))!;
}

/** Follows `links.next` exactly as given from `firstUrl` until it is null; returns every page. */
export async function walkPages(t: TestApp, firstUrl: string, headers: Record<string, string>, maxPages = 100) {
  const pages: Array<{ data: any[]; links: { next: string | null }; url: string }> = [];
  let url: string | null = firstUrl;
  while (url !== null) {
    if (pages.length >= maxPages) throw new Error(`more than ${maxPages} pages; last url ${url}`);
    const res = await t.app.inject({ method: 'GET', url, headers });
    expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
    const body = json(res);
    expect(body.links).toBeDefined();
    expect(body.links).toHaveProperty('next');
    pages.push({ ...body, url });
    url = body.links.next;
  }
  return pages;
}
