// `links.graph_image_url`: a query result's chart as a PNG (src/render/chart-image.ts), readable
// without a key or session by whoever holds the URL (an unguessable token in it). Checks the
// image (signature, size from the IHDR chunk), a result without series or data, a huge result,
// a result still pending, and that anything not matching the stored result — a wrong token,
// another result's token, another environment, team or dataset in the path — is a 404.
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { secondEnvironment, secondTeam } from './tenancy-fixtures.js';
import { ingest, runQuery, saveQuery } from './query-helpers.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height from the PNG's IHDR chunk (always the first, at byte 8). */
function pngSize(buf: Buffer): { width: number; height: number } {
  expect(buf.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  expect(buf.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

describe('graph_image_url', { timeout: 60_000 }, () => {
  let t: TestApp;
  let nowS: number;
  const path = (url: string) => new URL(url).pathname;
  /** GET without any credential. */
  const image = (url: string) => t.app.inject({ method: 'GET', url: path(url) });

  beforeAll(async () => {
    t = await makeApp({ settings: { queryResultRateLimit: null } });
    nowS = Math.floor(t.clock.ms / 1000);
    const events = [];
    for (let i = 0; i < 600; i++) {
      events.push({ time: new Date((nowS - 3500 + i * 5) * 1000).toISOString(), data: { service: ['api', 'web', 'db'][i % 3], duration_ms: 10 + (i % 50), host: `host-${i % 400}` } });
    }
    await ingest(t, 'shop', events);
  });
  afterAll(() => t.close());

  it('answers a PNG of the chart, without a key, with the token in the path', async () => {
    const r = await runQuery(t, 'shop', { calculations: [{ op: 'COUNT' }, { op: 'P95', column: 'duration_ms' }], breakdowns: ['service'], time_range: 3600 });
    expect(r.links.graph_image_url).toMatch(new RegExp(`^${r.links.query_url}/snapshot/[A-Za-z0-9]{32}$`));
    const res = await image(r.links.graph_image_url);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['cache-control']).toBe('private, max-age=86400');
    expect(pngSize(res.rawPayload)).toEqual({ width: 800, height: 400 });
    // (a chart of six lines is more than the blank frame of "no data")
    expect(res.rawPayload.length).toBeGreaterThan(8000);
    if (process.env.WAGGLE_GRAPH_IMAGE_OUT) writeFileSync(process.env.WAGGLE_GRAPH_IMAGE_OUT, res.rawPayload);
    // The same token on every read of the result.
    const again = await t.app.inject({ method: 'GET', url: `/1/query_results/shop/${r.id}`, headers: t.config });
    expect(json(again).links.graph_image_url).toBe(r.links.graph_image_url);
  });

  it('says so in the image when a result has no series or no data', async () => {
    const noSeries = await runQuery(t, 'shop', { calculations: [{ op: 'COUNT' }], time_range: 3600 }, { disable_series: true });
    const empty = await runQuery(t, 'shop', { calculations: [{ op: 'COUNT' }], filters: [{ column: 'service', op: '=', value: 'nothing' }], time_range: 600 });
    for (const r of [noSeries, empty]) {
      const res = await image(r.links.graph_image_url);
      expect(res.statusCode).toBe(200);
      expect(pngSize(res.rawPayload)).toEqual({ width: 800, height: 400 });
    }
  });

  it('bounds a huge result (400 groups) to a few lines, in the same size', async () => {
    const r = await runQuery(t, 'shop', { calculations: [{ op: 'COUNT' }], breakdowns: ['host'], time_range: 3600, granularity: 60 });
    expect(r.data.results.length).toBe(400);
    const started = performance.now();
    const res = await image(r.links.graph_image_url);
    expect(res.statusCode).toBe(200);
    expect(pngSize(res.rawPayload)).toEqual({ width: 800, height: 400 });
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('runs a result nobody has read yet before drawing it', async () => {
    const id = await saveQuery(t, 'shop', { calculations: [{ op: 'COUNT' }], time_range: 1800 });
    const created = await t.app.inject({ method: 'POST', url: '/1/query_results/shop', headers: t.config, payload: { query_id: id } });
    expect(created.statusCode).toBe(201);
    const res = await image(json(created).links.graph_image_url);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('private, max-age=86400');
    expect(pngSize(res.rawPayload).width).toBe(800);
  });

  it('is a 404 for anything but the stored result’s own URL', async () => {
    const r = await runQuery(t, 'shop', { calculations: [{ op: 'COUNT' }], time_range: 600 });
    const other = await runQuery(t, 'shop', { calculations: [{ op: 'MAX', column: 'duration_ms' }], time_range: 600 });
    const url = path(r.links.graph_image_url);
    const token = url.split('/').pop()!;
    const [, team, , env] = url.split('/');
    const swap = (i: number, v: string) => url.split('/').map((s, j) => (j === i ? v : s)).join('/');
    const staging = await secondEnvironment(t);
    const foreign = await secondTeam(t);
    const refused = [
      `${url.slice(0, -1)}${token.endsWith('a') ? 'b' : 'a'}`, // one character off
      url.replace(token, token.slice(0, 31)), // too short
      path(other.links.graph_image_url).replace(other.id, r.id), // another result's token
      swap(5, 'other-dataset'),
      swap(3, staging.environment.slug), // another environment of the team
      swap(1, foreign.team.slug), // another team
      swap(7, 'NoSuchResult'),
    ];
    expect(team).toBe(t.init.team.slug);
    expect(env).toBe(t.init.environment.slug);
    for (const u of refused) {
      const res = await t.app.inject({ method: 'GET', url: u });
      expect(res.statusCode, u).toBe(404);
      expect(res.headers['content-type'], u).not.toBe('image/png');
    }
    // The link without a token is no image (an address of the UI, whose page says it is not found).
    expect((await t.app.inject({ method: 'GET', url: url.replace(/\/snapshot\/.*/, '/snapshot') })).headers['content-type']).not.toBe('image/png');
    // A key does not open another environment's image either: the token is the only way in.
    expect((await t.app.inject({ method: 'GET', url: swap(3, staging.environment.slug), headers: staging.headers })).statusCode).toBe(404);
  });
});
