// Content-Encoding on configuration routes (/1/ and /2/): a body is read as its encoding says
// (none, identity, gzip, zstd), bounded by the route's limit once decoded; a body that is not
// what it says is a 400, an encoding Waggle cannot undo a 415, a bomb a 413 — each in the route's
// dialect, and never read as plain JSON. (Ingest routes: test/ingest-limits.test.ts.)
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { expectProblem } from './problems.js';
import { zstdFrame, zstdRaw } from './ingest-helpers.js';

const BOARD = JSON.stringify({ name: 'Encoded', type: 'flexible' });

describe('Content-Encoding on configuration routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(() => t.close());

  const postBoard = (payload: string | Buffer, encoding?: string) =>
    t.app.inject({
      method: 'POST',
      url: '/1/boards',
      headers: { ...t.config, 'content-type': 'application/json', ...(encoding === undefined ? {} : { 'content-encoding': encoding }) },
      payload,
    });
  const boards = async () => json(await t.app.inject({ method: 'GET', url: '/1/boards', headers: t.config })).length;

  it('decodes gzip, x-gzip and zstd bodies, and takes identity (or none) as it is', async () => {
    for (const [payload, encoding] of [
      [gzipSync(BOARD), 'gzip'],
      [gzipSync(BOARD), 'GZIP'],
      [gzipSync(BOARD), 'x-gzip'],
      [zstdRaw(BOARD), 'zstd'],
      [BOARD, 'identity'],
      [BOARD, undefined],
    ] as const) {
      const res = await postBoard(payload, encoding);
      expect(res.statusCode, `${encoding}: ${res.body}`).toBe(201);
      expect(json(res).name).toBe('Encoded');
    }
  });

  it('a body that is not what its encoding says is a 400 unparseable problem, never read as plain JSON', async () => {
    const before = await boards();
    for (const [payload, encoding, why] of [
      [BOARD, 'gzip', /invalid gzip data/],
      [gzipSync(BOARD).subarray(0, 12), 'gzip', /invalid gzip data/],
      [BOARD, 'zstd', /invalid zstd data/],
    ] as const) {
      const body = expectProblem(await postBoard(payload, encoding), 400, 'unparseable');
      expect(body.error).toBe('could not parse request body');
      expect(body.detail).toMatch(why);
    }
    // Decoded, it must still be JSON.
    expect(expectProblem(await postBoard(gzipSync('{"name":'), 'gzip'), 400, 'unparseable').detail).toMatch(/JSON/);
    expect(await boards()).toBe(before);
  });

  it('an encoding Waggle cannot undo is a 415 problem', async () => {
    const before = await boards();
    for (const encoding of ['br', 'deflate', 'compress', 'gzip, gzip', 'banana']) {
      const body = expectProblem(await postBoard(BOARD, encoding), 415, 'unsupported-media-type');
      expect(body.error).toContain(`unsupported Content-Encoding ${JSON.stringify(encoding)}`);
    }
    expect(await boards()).toBe(before);
  });

  it('a body that decodes past the route’s limit is a 413, however small it was sent', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1_100_000), type: 'flexible' });
    const gz = gzipSync(big);
    expect(gz.length).toBeLessThan(10_000);
    for (const [payload, encoding] of [
      [gz, 'gzip'],
      [zstdFrame([{ raw: Buffer.from('{"name":"') }, { rle: 0x78, count: 1_100_000 }, { raw: Buffer.from('"}') }]), 'zstd'],
    ] as const) {
      const body = expectProblem(await postBoard(payload, encoding), 413, 'payload-too-large');
      expect(body.error).toBe('Body size is larger than maximum size of 1000000 bytes');
    }
    // A bomb of a hundred megabytes is stopped at the limit, not unpacked.
    const bomb = gzipSync(Buffer.alloc(100_000_000, 0x20));
    expectProblem(await postBoard(bomb, 'gzip'), 413, 'payload-too-large');
  });

  it('an empty body with an encoding is an absent body (400 where one is needed)', async () => {
    expectProblem(await postBoard(gzipSync(''), 'gzip'), 400, 'unparseable');
  });

  describe('/2/ answers in JSON:API', () => {
    const post = (payload: string | Buffer, encoding: string) =>
      t.app.inject({
        method: 'POST',
        url: `/2/teams/${t.init.team.slug}/environments`,
        headers: { ...t.mgmt, 'content-encoding': encoding },
        payload,
      });
    const env = (name: string) => JSON.stringify({ data: { type: 'environments', attributes: { name } } });
    const errorOf = (res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number) => {
      expect(res.statusCode, res.body).toBe(status);
      expect(res.headers['content-type']).toBe('application/vnd.api+json');
      return json(res).errors[0];
    };

    it('gzip is decoded', async () => {
      const res = await post(gzipSync(env('Gzipped')), 'gzip');
      expect(res.statusCode, res.body).toBe(201);
      expect(json(res).data.attributes.name).toBe('Gzipped');
    });

    it('not gzip → 400 "invalid gzip data", unknown → 415, a bomb → 413', async () => {
      const bad = errorOf(await post(env('Plain'), 'gzip'), 400);
      expect(bad.title).toBe('request body could not be parsed');
      expect(bad.detail).toMatch(/invalid gzip data/);
      expect(errorOf(await post(env('Plain'), 'br'), 415).detail).toContain('unsupported Content-Encoding "br"');
      const bomb = gzipSync(env('y'.repeat(200_000)));
      expect(errorOf(await post(bomb, 'gzip'), 413).detail).toBe('Body size is larger than maximum size of 100000 bytes');
      const names = json(await t.app.inject({ method: 'GET', url: `/2/teams/${t.init.team.slug}/environments`, headers: t.mgmt })).data.map(
        (e: { attributes: { name: string } }) => e.attributes.name,
      );
      expect(names).not.toContain('Plain');
    });
  });
});
