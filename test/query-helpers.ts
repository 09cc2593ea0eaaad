// Running queries through the HTTP API the way a client does: save the spec, create a result,
// poll until complete.
import { expect } from 'vitest';
import { json, type TestApp } from './helpers.js';

export async function ingest(t: TestApp, dataset: string, events: unknown[]): Promise<void> {
  for (let i = 0; i < events.length; i += 1000) {
    const res = await t.app.inject({ method: 'POST', url: `/1/batch/${dataset}`, headers: t.ingest, payload: events.slice(i, i + 1000) });
    expect(res.statusCode, res.body).toBe(200);
    const statuses = json(res).map((r: { status: number }) => r.status);
    expect(statuses.every((s: number) => s === 202), res.body).toBe(true);
  }
}

export async function saveQuery(t: TestApp, dataset: string, spec: unknown): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: `/1/queries/${dataset}`, headers: t.config, payload: spec as object });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).id;
}

export interface ResultOptions {
  disable_series?: boolean;
  disable_total_by_aggregate?: boolean;
  disable_other_by_aggregate?: boolean;
  limit?: number;
}

/** Polls a created query result until complete; returns the final body. */
export async function pollResult(t: TestApp, location: string, headers = t.config): Promise<any> {
  const path = new URL(location).pathname;
  for (let i = 0; i < 2000; i++) {
    const res = await t.app.inject({ method: 'GET', url: path, headers });
    expect(res.statusCode, res.body).toBe(200);
    const body = json(res);
    if (body.complete) return body;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('query result never completed');
}

/** Saves the spec, runs it and returns the completed result body. */
export async function runQuery(t: TestApp, dataset: string, spec: unknown, opts: ResultOptions = {}): Promise<any> {
  const id = await saveQuery(t, dataset, spec);
  const res = await t.app.inject({ method: 'POST', url: `/1/query_results/${dataset}`, headers: t.config, payload: { query_id: id, ...opts } });
  expect(res.statusCode, res.body).toBe(201);
  const body = await pollResult(t, String(res.headers.location));
  expect(body.error, JSON.stringify(body.error)).toBeUndefined();
  return body;
}
