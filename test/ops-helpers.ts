// Helpers of the operations tests (backup, disk full, upgrades, memory): queries and ingest
// against a started `waggle serve`, over HTTP.
import { expect } from 'vitest';
import { call, teamHeaders } from './cli-helpers.js';

/** Runs a query through /1/queries and /1/query_results on a started server (its series only when `series`); the completed result. */
export async function serverQuery(url: string, configKey: string, dataset: string, query: Record<string, unknown>, series = false): Promise<any> {
  const h = { ...teamHeaders(configKey), 'content-type': 'application/json' };
  const saved = await call(url, `/1/queries/${dataset}`, { method: 'POST', headers: h, body: query });
  expect(saved.status, saved.text).toBe(200);
  const created = await call(url, `/1/query_results/${dataset}`, { method: 'POST', headers: h, body: series ? { query_id: saved.body.id } : { query_id: saved.body.id, limit: 10_000, disable_series: true } });
  expect(created.status, created.text).toBe(201);
  const path = new URL(created.headers.get('location')!).pathname;
  for (let i = 0; i < 600; i++) {
    const res = await call(url, path, { headers: h });
    expect(res.status, res.text).toBe(200);
    if (res.body.complete) return res.body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('query result never completed');
}

/** COUNT of a dataset's events of the last `seconds`, through the query API. */
export async function serverCount(url: string, configKey: string, dataset: string, seconds = 86_400): Promise<number> {
  const r = await serverQuery(url, configKey, dataset, { calculations: [{ op: 'COUNT' }], time_range: seconds });
  expect(r.error).toBeUndefined();
  return Number(r.data.results[0]?.data.COUNT ?? 0);
}

/** POSTs a batch to /1/batch; the HTTP status, Retry-After and per-event statuses. */
export async function postBatch(url: string, ingestKey: string, dataset: string, events: unknown[]) {
  const res = await fetch(`${url}/1/batch/${dataset}`, {
    method: 'POST',
    headers: { ...teamHeaders(ingestKey), 'content-type': 'application/json' },
    body: JSON.stringify(events),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body, text };
}
