// A body over the route's size limit reaches a client that is still sending it as the answer
// (413, or ingest's 400 "Request body is too large."), never as a reset connection: the server
// reads and discards the rest of the body before it answers and closes (src/http/unread-body.ts).
// Through Node's fetch against `waggle serve` in its own process, where the race is real: before
// the fix, most of these requests failed with EPIPE / ECONNRESET.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, initJson, killAll, removeTempDirs, serve, teamHeaders, tempDir, type InitJson, type Served } from './cli-helpers.js';

const SIX_MB = 6_000_000;
const REPEATS = 4;

describe('oversized bodies reach the client as answers', () => {
  let s: Served;
  let init: InitJson;
  beforeAll(async () => {
    const dir = tempDir();
    init = await initJson(dir);
    s = await serve(['--data-dir', dir]);
  }, 30_000);
  afterAll(async () => {
    await killAll();
    removeTempDirs();
  });

  /** The body as one string (fetch sends Content-Length), or streamed in 100 KB chunks (no length). */
  async function post(path: string, headers: Record<string, string>, streamed: boolean) {
    const chunk = new TextEncoder().encode('x'.repeat(100_000));
    const body = streamed
      ? new ReadableStream<Uint8Array>({
          start(c) {
            for (let sent = 0; sent < SIX_MB; sent += chunk.length) c.enqueue(chunk);
            c.close();
          },
        })
      : `[{"data":{"a":"${'x'.repeat(SIX_MB)}"}}]`;
    const res = await fetch(s.url + path, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(20_000),
      ...(streamed ? { duplex: 'half' } : {}),
    } as RequestInit);
    return { status: res.status, type: res.headers.get('content-type'), body: JSON.parse(await res.text()) };
  }

  const json = { 'content-type': 'application/json' };
  const cases = () => [
    {
      what: 'a configuration route: the 413 problem',
      path: '/1/boards',
      headers: { ...teamHeaders(init.keys.configuration), ...json },
      check(r: Awaited<ReturnType<typeof post>>) {
        expect(r.status).toBe(413);
        expect(r.type).toMatch(/^application\/problem\+json/);
        expect(r.body).toMatchObject({ status: 413, title: 'Request body is too large.', error: 'Body size is larger than maximum size of 1000000 bytes' });
        expect(r.body.type).toMatch(/\/problems\/payload-too-large$/);
      },
    },
    {
      what: 'a /2/ route: the 413 JSON:API error',
      path: `/2/teams/${init.team.slug}/environments`,
      headers: { ...bearer(init.keys.management.id, init.keys.management.secret), 'content-type': 'application/vnd.api+json' },
      check(r: Awaited<ReturnType<typeof post>>) {
        expect(r.status).toBe(413);
        expect(r.type).toBe('application/vnd.api+json');
        expect(r.body.errors[0].detail).toBe('Body size is larger than maximum size of 100000 bytes');
      },
    },
    ...['/1/batch/big', '/1/events/big'].map((path) => ({
      what: `${path}: ingest's 400 "Request body is too large."`,
      path,
      headers: { ...teamHeaders(init.keys.ingest), ...json },
      check(r: Awaited<ReturnType<typeof post>>) {
        expect(r.status).toBe(400);
        expect(r.body).toEqual({ error: 'Request body is too large.' });
      },
    })),
    {
      what: "Kinesis: Firehose's error shape",
      path: '/1/kinesis_events/big',
      headers: { 'x-amz-firehose-access-key': init.keys.ingest, 'x-amz-firehose-request-id': 'rid-1', ...json },
      check(r: Awaited<ReturnType<typeof post>>) {
        expect(r.status).toBe(413);
        expect(r.body).toMatchObject({ requestId: 'rid-1', errorMessage: 'Request body is too large.' });
      },
    },
  ];

  for (const streamed of [false, true]) {
    it(`a 6 MB body ${streamed ? 'streamed without Content-Length' : 'with Content-Length'}, ${REPEATS} times on each route`, async () => {
      for (const c of cases()) {
        for (let i = 0; i < REPEATS; i++) {
          let r;
          try {
            r = await post(c.path, c.headers, streamed);
          } catch (err) {
            throw new Error(`${c.what}, try ${i + 1}: ${String((err as { cause?: unknown }).cause ?? err)}`);
          }
          c.check(r);
        }
      }
      // The server is still well, and nothing was stored.
      const auth = await fetch(`${s.url}/1/auth`, { headers: teamHeaders(init.keys.configuration) });
      expect(auth.status).toBe(200);
      const ds = await fetch(`${s.url}/1/datasets/big`, { headers: teamHeaders(init.keys.configuration) });
      expect(ds.status).toBe(404);
    }, 120_000);
  }
});
