// `waggle serve` as a process: first start on an empty data dir, the README walkthrough,
// structured logs without secrets, and graceful shutdown on SIGTERM/SIGINT.
import { existsSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { bearer, call, initJson, killAll, removeTempDirs, serve, teamHeaders, tempDir, type Res } from './cli-helpers.js';

afterEach(killAll);
afterAll(removeTempDirs);

const BANNER_RULE = /^={20,}$/m;

/** The keys printed by the first start, read from the banner. */
function parseBanner(stdout: string) {
  const configuration = / configuration key \(X-Honeycomb-Team\): ([A-Za-z0-9]{22})$/m.exec(stdout)?.[1];
  const ingest = / ingest key +\(X-Honeycomb-Team\): (hcxik_[a-z0-9]{26}[A-Za-z0-9]{32})$/m.exec(stdout)?.[1];
  const mgmt = / management key +\(Authorization: Bearer ID:SECRET\): (hcxmk_[a-z0-9]{26}):([A-Za-z0-9]{32})$/m.exec(stdout);
  return { configuration, ingest, managementId: mgmt?.[1], managementSecret: mgmt?.[2] };
}

describe('first start', { timeout: 120_000 }, () => {
  it('initialises an empty data dir, prints its keys once, and they work', async () => {
    const d = tempDir();
    const s = await serve(['--data-dir', d]);
    const out = s.stdout();
    // The banner comes first, before any log line, and says what it is.
    expect(out.trimStart().startsWith('=====')).toBe(true);
    expect(out.match(new RegExp(BANNER_RULE, 'gm'))).toHaveLength(2);
    expect(out).toMatch(/shown ONCE/);
    expect(out).toMatch(/ team: my-team +environment: production/);
    const keys = parseBanner(out);
    expect(keys.configuration).toBeDefined();
    expect(keys.ingest).toBeDefined();
    expect(keys.managementId).toBeDefined();
    expect(keys.managementSecret).toBeDefined();
    expect(out.split(keys.configuration!)).toHaveLength(2); // printed once

    expect((await call(s.url, '/healthz')).status).toBe(200);
    const conf = await call(s.url, '/1/auth', { headers: teamHeaders(keys.configuration!) });
    expect(conf.status).toBe(200);
    expect(conf.body.type).toBe('configuration');
    const ingest = await call(s.url, '/1/auth', { headers: teamHeaders(keys.ingest!) });
    expect(ingest.status).toBe(200);
    expect(ingest.body.type).toBe('ingest');
    const mgmt = await call(s.url, '/2/auth', { headers: bearer(keys.managementId!, keys.managementSecret!) });
    expect(mgmt.status).toBe(200);
    expect(mgmt.body.data.id).toBe(keys.managementId);
    expect((await call(s.url, '/1/auth')).status).toBe(401);
    expect(await s.stop()).toEqual({ code: 0, signal: null });

    // A restart on the same dir prints no keys, and the keys from the first start still work.
    const again = await serve(['--data-dir', d]);
    expect(again.stdout()).not.toMatch(BANNER_RULE);
    expect(again.stdout()).not.toMatch(/shown ONCE|key \(/);
    for (const secret of [keys.configuration!, keys.ingest!.slice(32), keys.managementSecret!]) {
      expect(again.stdout()).not.toContain(secret);
      expect(again.stderr()).not.toContain(secret);
    }
    expect((await call(again.url, '/1/auth', { headers: teamHeaders(keys.configuration!) })).status).toBe(200);
    expect((await call(again.url, '/1/auth', { headers: teamHeaders(keys.ingest!) })).status).toBe(200);
    expect((await call(again.url, '/2/auth', { headers: bearer(keys.managementId!, keys.managementSecret!) })).status).toBe(200);
    expect(await again.stop()).toEqual({ code: 0, signal: null });
    expect(again.stdout()).not.toMatch(BANNER_RULE);
  });

  it('does not print keys for a data dir made by `waggle init`', async () => {
    const d = tempDir();
    const init = await initJson(d);
    const s = await serve(['--data-dir', d]);
    expect(s.stdout()).not.toMatch(BANNER_RULE);
    expect(s.stdout()).not.toContain(init.keys.configuration);
    expect((await call(s.url, '/healthz')).status).toBe(200);
  });
});

describe('README walkthrough', { timeout: 120_000 }, () => {
  it('init --json, create a dataset with the configuration key, list it', async () => {
    const d = tempDir();
    const init = await initJson(d);
    const s = await serve(['--data-dir', d]);
    const key = teamHeaders(init.keys.configuration);

    const created = await call(s.url, '/1/datasets', {
      method: 'POST',
      headers: { ...key, 'content-type': 'application/json' },
      body: { name: 'My Service', description: 'from the walkthrough' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'My Service', slug: 'my-service', description: 'from the walkthrough' });

    const list = await call(s.url, '/1/datasets', { headers: key });
    expect(list.status).toBe(200);
    expect(list.body.map((ds: { slug: string }) => ds.slug)).toEqual(['my-service']);

    // curl -d sends a form Content-Type; /1/ still reads the body as JSON.
    const again = await call(s.url, '/1/datasets', {
      method: 'POST',
      headers: { ...key, 'content-type': 'application/x-www-form-urlencoded' },
      body: '{"name":"My Service"}',
    });
    expect(again.status).toBe(200);
    expect((await call(s.url, '/1/datasets/my-service', { headers: key })).body.name).toBe('My Service');
  });
});

describe('structured logs', { timeout: 120_000 }, () => {
  it('log every request as JSON with its reqId (= X-Request-Id) and never a secret', async () => {
    const d = tempDir();
    const s = await serve(['--data-dir', d]);
    const k = parseBanner(s.stdout());
    const wrong = {
      configuration: 'Zz9Zz9Zz9Zz9Zz9Zz9Zz9Z', // 22 alphanumerics, no such key
      ingestSecret: 'WrongWrongWrongWrongWrongWrong12',
      managementSecret: 'BadSecretBadSecretBadSecretBad12',
    };
    const conf = teamHeaders(k.configuration!);
    const responses: Res[] = [];
    const req = async (path: string, init: Parameters<typeof call>[2] = {}) => {
      const r = await call(s.url, path, init);
      responses.push(r);
      return r;
    };

    // Configuration key: valid, via X-Service-Team, unknown, in a bad body, on a missing route.
    expect((await req('/1/auth', { headers: conf })).status).toBe(200);
    expect((await req('/1/auth', { headers: { 'x-service-team': k.configuration! } })).status).toBe(200);
    expect((await req('/1/datasets', { method: 'POST', headers: conf, body: { name: 'logs' } })).status).toBe(201);
    expect((await req('/1/datasets', { headers: teamHeaders(wrong.configuration) })).status).toBe(401);
    expect((await req('/1/datasets', { method: 'POST', headers: conf, body: `{"name":"${k.configuration}"` })).status).toBe(400);
    expect((await req('/1/nowhere', { headers: conf })).status).toBe(404);
    // Ingest key: valid, wrong secret, on a configuration-only route.
    expect((await req('/1/auth', { headers: teamHeaders(k.ingest!) })).status).toBe(200);
    expect((await req('/1/auth', { headers: teamHeaders(k.ingest!.slice(0, 32) + wrong.ingestSecret) })).status).toBe(401);
    expect((await req('/1/datasets', { headers: teamHeaders(k.ingest!) })).status).toBe(401);
    // Management key: valid, wrong secret, malformed, in the wrong header; and a key created over /2/.
    const mgmt = { ...bearer(k.managementId!, k.managementSecret!), 'content-type': 'application/vnd.api+json' };
    expect((await req('/2/auth', { headers: mgmt })).status).toBe(200);
    expect((await req('/2/auth', { headers: bearer(k.managementId!, wrong.managementSecret) })).status).toBe(401);
    expect((await req('/2/auth', { headers: { authorization: `Bearer ${k.managementSecret}` } })).status).toBe(401);
    expect((await req('/2/auth', { headers: { authorization: `Basic ${k.managementId}:${k.managementSecret}` } })).status).toBe(401);
    expect((await req('/1/auth', { headers: teamHeaders(`${k.managementId}:${k.managementSecret}`) })).status).toBe(401);
    const envs = await req('/2/teams/my-team/environments', { headers: mgmt });
    expect(envs.status).toBe(200);
    const newKey = await req('/2/teams/my-team/api-keys', {
      method: 'POST',
      headers: mgmt,
      body: {
        data: {
          type: 'api-keys',
          attributes: { key_type: 'configuration', name: 'made over /2/' },
          relationships: { environment: { data: { id: envs.body.data[0].id, type: 'environments' } } },
        },
      },
    });
    expect(newKey.status).toBe(201);
    const newSecret: string = newKey.body.data.attributes.secret;
    expect((await req('/1/auth', { headers: teamHeaders(newSecret) })).status).toBe(200);
    expect((await req('/healthz')).status).toBe(200);

    // Stop first so every log line is flushed.
    expect(await s.stop()).toEqual({ code: 0, signal: null });
    const stdout = s.stdout();
    const stderr = s.stderr();

    // Everything after the keys banner: JSON lines only.
    const rules = [...stdout.matchAll(new RegExp(BANNER_RULE, 'gm'))];
    expect(rules).toHaveLength(2);
    const afterBanner = stdout.slice(rules[1].index! + rules[1][0].length);
    const lines = afterBanner.split('\n').filter((l) => l.trim() !== '');
    const logs = lines.map((l) => {
      try {
        return JSON.parse(l) as Record<string, any>;
      } catch {
        throw new Error(`not a JSON log line: ${l}`);
      }
    });
    expect(logs.length).toBeGreaterThan(responses.length);

    // Every request line carries a reqId; every response's X-Request-Id is a logged reqId,
    // with one "request" line (at info: no other line per request) of the right status.
    for (const log of logs.filter((l) => l.msg === 'request')) expect(typeof log.reqId).toBe('string');
    const ids = new Set<string>();
    for (const r of responses) {
      const id = r.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      ids.add(id!);
      const mine = logs.filter((l) => l.reqId === id);
      expect(mine.filter((l) => l.msg === 'incoming request')).toHaveLength(0);
      const done = mine.filter((l) => l.msg === 'request');
      expect(done).toHaveLength(1);
      expect(done[0].status).toBe(r.status);
    }
    expect(ids.size).toBe(responses.length);

    // No secret, valid or not, anywhere after the banner (nor on stderr).
    const secrets = [
      k.configuration!,
      k.ingest!,
      k.ingest!.slice(32),
      k.managementSecret!,
      wrong.configuration,
      wrong.ingestSecret,
      wrong.managementSecret,
      newSecret,
    ];
    for (const secret of secrets) {
      expect(afterBanner, `secret ${secret} in the logs`).not.toContain(secret);
      expect(stderr, `secret ${secret} on stderr`).not.toContain(secret);
    }
  });
});

/** A POST whose body is sent in two halves: the second only when `finish()` is called. */
function slowPost(base: string, path: string, headers: Record<string, string>, body: string, agent: http.Agent) {
  const u = new URL(base);
  const req = http.request({
    host: u.hostname,
    port: u.port,
    path,
    method: 'POST',
    agent,
    headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
  });
  const response = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  const half = Math.floor(body.length / 2);
  req.write(body.slice(0, half));
  return { response, finish: () => req.end(body.slice(half)) };
}

/** Whether a new request is turned away (refused, reset, or 503). */
async function refused(base: string): Promise<boolean> {
  try {
    const r = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) });
    await r.arrayBuffer();
    return r.status === 503;
  } catch {
    return true;
  }
}

describe('graceful shutdown', { timeout: 120_000 }, () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('on %s: finishes the request in flight, exits 0, closes the store', async (signal) => {
    const d = tempDir();
    const init = await initJson(d);
    // At debug, each request's arrival is logged: how this test knows the slow request is in.
    const s = await serve(['--data-dir', d], { env: { WAGGLE_LOG_LEVEL: 'debug' } });
    const key = teamHeaders(init.keys.configuration);
    expect((await call(s.url, '/1/datasets', { method: 'POST', headers: key, body: { name: 'before' } })).status).toBe(201);

    // A request in flight: headers and half the body are in, the rest comes after the signal.
    const agent = new http.Agent({ keepAlive: true });
    try {
      // Valid JSON padded with whitespace to a large body.
      const body = `{"name":"in flight",${' '.repeat(200_000)}"description":"sent slowly"}`;
      const slow = slowPost(s.url, '/1/datasets', key, body, agent);
      await s.waitFor(/"method":"POST","url":"\/1\/datasets".*"incoming request"/, 10_000, 2);

      s.proc.kill(signal);
      await s.waitFor(new RegExp(`"signal":"${signal}".*"shutting down"`), 10_000);
      // New requests are turned away while the one in flight is still open.
      const deadline = Date.now() + 5000;
      let turnedAway = false;
      while (!turnedAway && Date.now() < deadline) {
        turnedAway = await refused(s.url);
        if (!turnedAway) await new Promise((r) => setTimeout(r, 50));
      }
      expect(turnedAway).toBe(true);
      expect(s.proc.exitCode).toBeNull();

      slow.finish();
      const res = await slow.response;
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'in flight', slug: 'in-flight' });

      expect(await s.exited(15_000)).toEqual({ code: 0, signal: null });
    } finally {
      agent.destroy();
    }
    // Closed cleanly: SQLite checkpointed and removed its write-ahead log.
    expect(existsSync(join(d, 'config.sqlite'))).toBe(true);
    expect(existsSync(join(d, 'config.sqlite-wal'))).toBe(false);
    expect(existsSync(join(d, 'config.sqlite-shm'))).toBe(false);

    // A restart on the same dir works and has the data from before the shutdown.
    const again = await serve(['--data-dir', d]);
    const list = await call(again.url, '/1/datasets', { headers: key });
    expect(list.status).toBe(200);
    expect(list.body.map((ds: { slug: string }) => ds.slug).sort()).toEqual(['before', 'in-flight']);
    expect(await again.stop(signal)).toEqual({ code: 0, signal: null });
  });

  it('exits promptly on SIGTERM while a client holds an idle keep-alive connection', async () => {
    const d = tempDir();
    const init = await initJson(d);
    const s = await serve(['--data-dir', d]);
    const agent = new http.Agent({ keepAlive: true });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        http
          .get(`${s.url}/1/auth`, { agent, headers: teamHeaders(init.keys.ingest) }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode!));
          })
          .on('error', reject);
      });
      expect(status).toBe(200);
      const started = Date.now();
      expect(await s.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      agent.destroy();
    }
  });
});
