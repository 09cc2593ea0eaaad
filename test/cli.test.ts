// The `waggle` command as an operator runs it: init, keys list/create/disable, and the
// settings (env vars and flags), each a real child process over a temp data directory.
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  MAIN,
  bearer,
  call,
  initJson,
  killAll,
  removeTempDirs,
  serve,
  teamHeaders,
  tempDir,
  waggle,
  waggleOk,
  type InitJson,
} from './cli-helpers.js';

afterEach(killAll);
afterAll(removeTempDirs);

interface ListedKey {
  id: string;
  type: string;
  disabled: boolean;
  permissions?: string[];
  scopes?: string[];
}
const listKeys = async (dataDir: string) =>
  JSON.parse(await waggleOk(['keys', 'list', '--data-dir', dataDir, '--json'])) as ListedKey[];

/** Every secret string init handed out (the ingest token's id part is not secret; its secret part is). */
const secretsOf = (init: InitJson) => [
  init.keys.configuration,
  init.keys.ingest,
  init.keys.ingest.slice(32),
  init.keys.management.secret,
  `${init.keys.management.id}:${init.keys.management.secret}`,
];

describe('waggle init', { timeout: 120_000 }, () => {
  it('prints exactly the documented JSON, with keys in the documented formats', async () => {
    const d = tempDir();
    const r = await waggle(['init', '--data-dir', d, '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const out = JSON.parse(lines[0]);
    expect(Object.keys(out).sort()).toEqual(['environment', 'keys', 'team']);
    expect(out.team).toEqual({ slug: 'my-team' });
    expect(out.environment).toEqual({ slug: 'production' });
    expect(Object.keys(out.keys).sort()).toEqual(['configuration', 'ingest', 'management']);
    expect(out.keys.configuration).toMatch(/^[A-Za-z0-9]{22}$/);
    expect(out.keys.ingest).toHaveLength(64);
    expect(out.keys.ingest).toMatch(/^hcxik_[a-z0-9]{26}[A-Za-z0-9]{32}$/);
    expect(Object.keys(out.keys.management).sort()).toEqual(['id', 'secret']);
    expect(out.keys.management.id).toMatch(/^hcxmk_[a-z0-9A-Z]{26}$/);
    expect(out.keys.management.secret).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(existsSync(join(d, 'config.sqlite'))).toBe(true);
  });

  it('--team and --environment names become the slugs', async () => {
    const d = tempDir();
    const out = await initJson(d, ['--team', 'Acme Corp', '--environment', 'Staging EU']);
    expect(out.team.slug).toBe('acme-corp');
    expect(out.environment.slug).toBe('staging-eu');
    const s = await serve(['--data-dir', d]);
    const auth = await call(s.url, '/1/auth', { headers: teamHeaders(out.keys.configuration) });
    expect(auth.status).toBe(200);
    expect(auth.body.team).toEqual({ name: 'Acme Corp', slug: 'acme-corp' });
    expect(auth.body.environment).toEqual({ name: 'Staging EU', slug: 'staging-eu' });
  });

  it('without --json prints the same result, readable', async () => {
    const d = tempDir();
    const out = JSON.parse(await waggleOk(['init', '--data-dir', d]));
    expect(out.keys.configuration).toMatch(/^[A-Za-z0-9]{22}$/);
  });

  it('a second init on the same directory fails clearly and changes nothing', async () => {
    const d = tempDir();
    const first = await initJson(d);
    const before = await listKeys(d);
    expect(before).toHaveLength(3);

    const again = await waggle(['init', '--data-dir', d, '--json', '--team', 'Other']);
    expect(again.code).not.toBe(0);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(/already initialised/);
    expect(again.stderr.trim().split('\n')).toHaveLength(1); // a message, not a stack trace

    expect(await listKeys(d)).toEqual(before);
    const s = await serve(['--data-dir', d]);
    const auth = await call(s.url, '/1/auth', { headers: teamHeaders(first.keys.configuration) });
    expect(auth.status).toBe(200);
    expect(auth.body.team.slug).toBe('my-team');
    expect((await call(s.url, '/1/auth', { headers: teamHeaders(first.keys.ingest) })).status).toBe(200);
    expect((await call(s.url, '/2/auth', { headers: bearer(first.keys.management.id, first.keys.management.secret) })).status).toBe(200);
  });
});

describe('waggle keys', { timeout: 120_000 }, () => {
  it('list shows the three initial keys and never a secret', async () => {
    const d = tempDir();
    const init = await initJson(d);
    for (const args of [['--json'], []]) {
      const r = await waggle(['keys', 'list', '--data-dir', d, ...args]);
      expect(r.code).toBe(0);
      for (const secret of secretsOf(init)) {
        expect(r.stdout).not.toContain(secret);
        expect(r.stderr).not.toContain(secret);
      }
    }
    const keys = await listKeys(d);
    expect(keys.map((k) => k.type).sort()).toEqual(['configuration', 'ingest', 'management']);
    expect(keys.find((k) => k.type === 'management')!.id).toBe(init.keys.management.id);
    expect(keys.find((k) => k.type === 'ingest')!.id).toBe(init.keys.ingest.slice(0, 32));
    expect(keys.every((k) => k.disabled === false)).toBe(true);
  });

  it('list on a directory that is no data directory fails clearly (test/cli-data-dir.test.ts: every command)', async () => {
    const d = tempDir();
    const r = await waggle(['keys', 'list', '--data-dir', d]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${d} is not a Waggle data directory (it is empty)`);
    expect(r.stderr).toMatch(/waggle init/);
  });

  it('create prints working tokens for each type; the new keys are listed without secrets', async () => {
    const d = tempDir();
    await initJson(d);
    const created: Record<string, { id: string; type: string; token?: string; secret?: string }> = {};
    for (const type of ['ingest', 'configuration', 'management']) {
      const r = await waggle(['keys', 'create', '--data-dir', d, '--type', type, '--name', `cli ${type}`, '--json']);
      expect(r.code, r.stderr).toBe(0);
      created[type] = JSON.parse(r.stdout);
      expect(created[type].type).toBe(type);
    }
    expect(created.ingest.token).toMatch(/^hcxik_[a-z0-9]{26}[A-Za-z0-9]{32}$/);
    expect(created.ingest.token!.startsWith(created.ingest.id)).toBe(true);
    expect(created.configuration.token).toMatch(/^[A-Za-z0-9]{22}$/);
    expect(created.management.id).toMatch(/^hcxmk_[a-z0-9A-Z]{26}$/);
    expect(created.management.secret).toMatch(/^[A-Za-z0-9]{32}$/);

    const s = await serve(['--data-dir', d]);
    const ingest = await call(s.url, '/1/auth', { headers: teamHeaders(created.ingest.token!) });
    expect(ingest.status).toBe(200);
    expect(ingest.body).toMatchObject({ id: created.ingest.id, type: 'ingest', api_key_access: { createDatasets: true } });
    const config = await call(s.url, '/1/auth', { headers: teamHeaders(created.configuration.token!) });
    expect(config.status).toBe(200);
    expect(config.body).toMatchObject({ id: created.configuration.id, type: 'configuration', environment: { slug: 'production' } });
    expect(Object.values(config.body.api_key_access).every((v) => v === true)).toBe(true);
    const mgmt = await call(s.url, '/2/auth', { headers: bearer(created.management.id, created.management.secret!) });
    expect(mgmt.status).toBe(200);
    expect(mgmt.body.data).toMatchObject({ id: created.management.id, attributes: { name: 'cli management', key_type: 'management' } });

    const listed = await waggle(['keys', 'list', '--data-dir', d, '--json']);
    expect(JSON.parse(listed.stdout)).toHaveLength(6);
    for (const secret of [created.ingest.token!, created.ingest.token!.slice(32), created.configuration.token!, created.management.secret!]) {
      expect(listed.stdout).not.toContain(secret);
    }
  });

  it('create without --json prints the header to send', async () => {
    const d = tempDir();
    await initJson(d);
    const conf = await waggleOk(['keys', 'create', '--data-dir', d, '--type', 'configuration']);
    const token = /X-Honeycomb-Team: ([A-Za-z0-9]+)/.exec(conf)?.[1];
    const mgmt = await waggleOk(['keys', 'create', '--data-dir', d, '--type', 'management']);
    const auth = /Authorization: (Bearer \S+)/.exec(mgmt)?.[1];
    expect(token).toBeDefined();
    expect(auth).toBeDefined();
    const s = await serve(['--data-dir', d]);
    expect((await call(s.url, '/1/auth', { headers: teamHeaders(token!) })).status).toBe(200);
    expect((await call(s.url, '/2/auth', { headers: { authorization: auth! } })).status).toBe(200);
  });

  it('--permissions limits what a configuration key may do', async () => {
    const d = tempDir();
    await initJson(d);
    const key = JSON.parse(
      await waggleOk(['keys', 'create', '--data-dir', d, '--type', 'configuration', '--permissions', 'send_events', '--json']),
    );
    expect((await listKeys(d)).find((k) => k.id === key.id)!.permissions).toEqual(['send_events']);
    const s = await serve(['--data-dir', d]);
    const auth = await call(s.url, '/1/auth', { headers: teamHeaders(key.token) });
    expect(auth.status).toBe(200);
    const granted = Object.entries(auth.body.api_key_access as Record<string, boolean>).filter(([, v]) => v).map(([k]) => k);
    expect(granted).toEqual(['events']);
    // It may read, but not create datasets.
    expect((await call(s.url, '/1/datasets', { headers: teamHeaders(key.token) })).status).toBe(200);
    const post = await call(s.url, '/1/datasets', { method: 'POST', headers: teamHeaders(key.token), body: { name: 'nope' } });
    expect(post.status).toBe(403);
  });

  it('--scopes limits what a management key may do', async () => {
    const d = tempDir();
    await initJson(d);
    const key = JSON.parse(
      await waggleOk(['keys', 'create', '--data-dir', d, '--type', 'management', '--scopes', 'environments:read', '--json']),
    );
    const s = await serve(['--data-dir', d]);
    const auth = await call(s.url, '/2/auth', { headers: bearer(key.id, key.secret) });
    expect(auth.status).toBe(200);
    expect(auth.body.data.attributes.scopes).toEqual(['environments:read']);
  });

  // Independent processes, no server: run side by side.
  it.concurrent.for([
    [['--type', 'bogus'], /--type must be ingest, configuration or management/],
    [['--type', 'configuration', '--permissions', 'send_events,fly'], /unknown permission.*: fly \(allowed: create_datasets, send_events/],
    [['--type', 'ingest', '--permissions', 'send_events'], /unknown permission of ingest keys: send_events \(allowed: create_datasets\)/],
    [['--type', 'management', '--permissions', 'send_events'], /--permissions applies to ingest and configuration keys/],
    [['--type', 'configuration', '--scopes', 'api-keys:read'], /--scopes applies to management keys only/],
    [['--type', 'management', '--scopes', 'teams:write'], /unknown scope: teams:write/],
    [['--type', 'ingest', '--ttl', 'tomorrow'], /--ttl/],
    [['--type', 'configuration', '--environment', 'nowhere'], /--environment/],
    [[], /--type/],
  ] as Array<[string[], RegExp]>)('create %j fails clearly and creates nothing', async ([args, message], { expect }) => {
    const d = tempDir();
    await initJson(d);
    const r = await waggle(['keys', 'create', '--data-dir', d, ...args]);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(await listKeys(d)).toHaveLength(3);
  });

  it('disable makes a key fail with 401 on a running server at once', async () => {
    const d = tempDir();
    const init = await initJson(d);
    const s = await serve(['--data-dir', d]);
    // A key created beside the running server works there at once, too.
    const created = JSON.parse(await waggleOk(['keys', 'create', '--data-dir', d, '--type', 'ingest', '--json']));
    expect((await call(s.url, '/1/auth', { headers: teamHeaders(created.token) })).status).toBe(200);
    expect((await call(s.url, '/1/auth', { headers: teamHeaders(init.keys.configuration) })).status).toBe(200);
    expect((await call(s.url, '/2/auth', { headers: bearer(init.keys.management.id, init.keys.management.secret) })).status).toBe(200);

    const keys = await listKeys(d);
    const configId = keys.find((k) => k.type === 'configuration' && k.id !== created.id)!.id;
    for (const id of [created.id, configId, init.keys.management.id]) {
      const r = await waggle(['keys', 'disable', id, '--data-dir', d]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(id);
    }

    for (const res of [
      await call(s.url, '/1/auth', { headers: teamHeaders(created.token) }),
      await call(s.url, '/1/datasets', { headers: teamHeaders(init.keys.configuration) }),
      await call(s.url, '/2/auth', { headers: bearer(init.keys.management.id, init.keys.management.secret) }),
    ]) {
      expect(res.status).toBe(401);
      expect(res.text).toMatch(/disabled/);
    }
    // The other keys are untouched.
    expect((await call(s.url, '/1/auth', { headers: teamHeaders(init.keys.ingest) })).status).toBe(200);
    const after = await listKeys(d);
    expect(after.filter((k) => k.disabled).map((k) => k.id).sort()).toEqual([created.id, configId, init.keys.management.id].sort());
  });

  it('disable of an unknown id fails clearly', async () => {
    const d = tempDir();
    await initJson(d);
    const r = await waggle(['keys', 'disable', 'hcxik_nosuchkeynosuchkeynosuchk', '--data-dir', d]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/no key with id hcxik_nosuchkeynosuchkeynosuchk/);
  });
});

describe('settings', { timeout: 120_000 }, () => {
  /** A port that was free a moment ago (bind port 0, read it, close). */
  async function freePort(): Promise<number> {
    const { createServer } = await import('node:net');
    return new Promise((resolve, reject) => {
      const srv = createServer();
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const port = (srv.address() as { port: number }).port;
        srv.close(() => resolve(port));
      });
    });
  }

  it('WAGGLE_PORT, WAGGLE_HOST and WAGGLE_DATA_DIR configure serve', async () => {
    const d = tempDir();
    const port = await freePort();
    const s = await serve([], { defaults: false, env: { WAGGLE_PORT: String(port), WAGGLE_HOST: '127.0.0.1', WAGGLE_DATA_DIR: d } });
    expect(s.url).toBe(`http://127.0.0.1:${port}`);
    expect((await call(`http://127.0.0.1:${port}`, '/healthz')).status).toBe(200);
    expect(existsSync(join(d, 'config.sqlite'))).toBe(true);
  });

  it('flags win over the environment variables', async () => {
    const envDir = tempDir();
    const flagDir = tempDir();
    const [envPort, flagPort] = [await freePort(), await freePort()];
    // 192.0.2.1 (TEST-NET-1) is no local address: serve would fail if WAGGLE_HOST were used.
    const s = await serve(['--port', String(flagPort), '--host', '127.0.0.1', '--data-dir', flagDir], {
      defaults: false,
      env: { WAGGLE_PORT: String(envPort), WAGGLE_HOST: '192.0.2.1', WAGGLE_DATA_DIR: envDir },
    });
    expect(s.url).toBe(`http://127.0.0.1:${flagPort}`);
    expect((await call(s.url, '/healthz')).status).toBe(200);
    expect(existsSync(join(flagDir, 'config.sqlite'))).toBe(true);
    expect(existsSync(join(envDir, 'config.sqlite'))).toBe(false);
  });

  it('WAGGLE_HOST is read (an address that is not local makes serve fail)', async () => {
    const r = await waggle(['serve', '--port', '0', '--data-dir', tempDir()], { env: { WAGGLE_HOST: '192.0.2.1' } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/^waggle: .*192\.0\.2\.1/m);
  });

  it('WAGGLE_DATA_DIR applies to init and keys, and --data-dir wins', async () => {
    const envDir = tempDir();
    const flagDir = tempDir();
    await waggleOk(['init', '--json'], { env: { WAGGLE_DATA_DIR: envDir } });
    expect(existsSync(join(envDir, 'config.sqlite'))).toBe(true);
    const listed = JSON.parse(await waggleOk(['keys', 'list', '--json'], { env: { WAGGLE_DATA_DIR: envDir } }));
    expect(listed).toHaveLength(3);
    await waggleOk(['init', '--json', '--data-dir', flagDir], { env: { WAGGLE_DATA_DIR: envDir } });
    expect(existsSync(join(flagDir, 'config.sqlite'))).toBe(true);
  });

  it('the default data directory is ./data', async () => {
    const cwd = tempDir();
    await waggleOk(['init', '--json'], { cwd });
    expect(existsSync(join(cwd, 'data', 'config.sqlite'))).toBe(true);
  });

  // Independent processes, no server: run side by side.
  it.concurrent.for([
    [['--port', 'abc'], {}],
    [['--port', '70000'], {}],
    [['--port', '-1'], {}],
    [['--port', '80.5'], {}],
    [[], { WAGGLE_PORT: 'eighty' }],
    [[], { WAGGLE_PORT: '65536' }],
  ] as Array<[string[], Record<string, string>]>)('an invalid port (%j %j) exits non-zero with a clear message', async ([args, env], { expect }) => {
    const d = tempDir();
    const r = await waggle(['serve', '--host', '127.0.0.1', '--data-dir', d, ...args], { env, timeout: 10_000 });
    expect(r.code).not.toBe(0);
    expect(r.code).not.toBeNull(); // it exited by itself, not by the timeout
    expect(r.stderr).toMatch(/port must be an integer from 0 to 65535/);
    expect(r.stdout).not.toMatch(/Server listening/);
    expect(existsSync(join(d, 'config.sqlite'))).toBe(false); // nothing initialised
  });

  it('an invalid port from the environment is ignored when --port is given', async () => {
    const s = await serve(['--data-dir', tempDir()], { env: { WAGGLE_PORT: 'eighty' } });
    expect((await call(s.url, '/healthz')).status).toBe(200);
  });
});

describe('how Node runs waggle', () => {
  it('the #! line of the bin and `npm start` give Node the same flags and MALLOC_ARENA_MAX, and the #! line runs', () => {
    const shebang = readFileSync(MAIN, 'utf8').split('\n', 1)[0];
    expect(shebang).toMatch(/^#!\/usr\/bin\/env -S MALLOC_ARENA_MAX=2 node /);
    const command = shebang.slice('#!/usr/bin/env -S '.length);
    const flags = shebang.split(' ').slice(4);
    expect(flags).toContain('--max-semi-space-size=64');
    const pkg = JSON.parse(readFileSync(join(MAIN, '../../package.json'), 'utf8')) as { scripts: { start: string } };
    // (`exec`: the script's shell becomes the server, so the signals npm passes on reach it: test/cli-launchers.test.ts)
    expect(pkg.scripts.start).toBe(`MALLOC_ARENA_MAX=\${MALLOC_ARENA_MAX:-2} exec node ${flags.join(' ')} dist/main.js serve`);
    // What the kernel runs for `./dist/main.js --help`: Node must accept the flags, and gets the variable.
    expect(execFileSync('/usr/bin/env', ['-S', command, '-p', 'process.env.MALLOC_ARENA_MAX'], { encoding: 'utf8', env: { PATH: process.env.PATH } }).trim()).toBe('2');
    const out = execFileSync('/usr/bin/env', ['-S', command, MAIN, '--help'], { encoding: 'utf8' });
    expect(out).toContain('Usage: waggle');
  });

  it("the ingest threads keep V8's default young generation under the #! line's larger one", async () => {
    const flags = readFileSync(MAIN, 'utf8').split('\n', 1)[0].split(' ').slice(4);
    // What a worker's heap may grow to under given flags (the same machine, so the same old generation).
    const workerLimit = (nodeFlags: string[]) =>
      Number(
        execFileSync(
          process.execPath,
          [...nodeFlags, '-e', `new (require('node:worker_threads').Worker)("require('node:worker_threads').parentPort.postMessage(require('node:v8').getHeapStatistics().heap_size_limit)", { eval: true }).on('message', (m) => { console.log(m); process.exit(0); })`],
          { encoding: 'utf8' },
        ),
      );
    const v8Default = workerLimit([]);
    expect(workerLimit(flags)).toBeGreaterThan(v8Default); // the flag alone would size the threads too

    const dataDir = tempDir();
    const init = await initJson(dataDir);
    const s = await serve(['--data-dir', dataDir], { nodeFlags: flags, env: { WAGGLE_INGEST_THREADS: '1' } });
    const sent = await call(s.url, '/1/batch/young', { method: 'POST', headers: { ...teamHeaders(init.keys.ingest), 'content-type': 'application/json' }, body: [{ data: { a: 1 } }] });
    expect(sent.status).toBe(200);
    const metrics = await call(s.url, '/metrics');
    const limit = Number(/^waggle_ingest_threads_heap_limit_bytes (\d+)$/m.exec(metrics.text)?.[1]);
    expect(limit).toBe(v8Default);
  });
});
