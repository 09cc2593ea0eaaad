// `waggle` as the README starts it: through `npm start` and `npx waggle`. SIGTERM to the
// launcher's PID (SIGINT too to npm start's), or Ctrl-C, stops the server gracefully; the bin
// runs after `npm install` (its `prepare` script builds dist/); `waggle --version`.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ROOT, alive, call, killAll, launch, removeTempDirs, tempDir, waggle, type Served } from './cli-helpers.js';

afterEach(killAll);
afterAll(removeTempDirs);

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; scripts: Record<string, string>; bin: Record<string, string> };

/** Resolves once process `pid` has ended (it is not our child: polled). */
async function ended(pid: number, timeout = 20_000): Promise<void> {
  const deadline = Date.now() + timeout;
  while (alive(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} still runs ${timeout} ms after the signal`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** After the launcher got `signal`: the server stopped as on its own SIGTERM, and closed its stores. */
async function expectStoppedGracefully(s: Served, dataDir: string) {
  await ended(s.pid);
  expect(s.pid).not.toBe(s.proc.pid);
  const lines = s.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { pid: number; msg: string });
  expect(lines.filter((l) => l.pid === s.pid && l.msg === 'shutting down')).toHaveLength(1);
  expect(lines.some((l) => l.msg === 'shutdown failed')).toBe(false);
  // Closed cleanly: SQLite checkpointed and removed its write-ahead log; the port is free.
  expect(existsSync(join(dataDir, 'config.sqlite'))).toBe(true);
  expect(existsSync(join(dataDir, 'config.sqlite-wal'))).toBe(false);
  await expect(call(s.url, '/healthz')).rejects.toThrow();
  await s.exited(); // and the launcher is gone too
}

// `npm start --ignore-scripts` runs the start script itself without its prestart build (the
// suite's pretest has built dist/).
const launchers: Array<[string, string, string[]]> = [
  ['npm start', 'npm', ['start', '--ignore-scripts', '--']],
  ['npx waggle serve', 'npx', ['waggle', 'serve']],
];

describe('stopping the launcher stops the server', { timeout: 120_000 }, () => {
  for (const [name, command, args] of launchers) {
    it(`${name}: SIGTERM to its PID`, async () => {
      const d = tempDir();
      const s = await launch(command, [...args, '--host', '127.0.0.1', '--port', '0', '--data-dir', d], { timeout: 60_000 });
      expect((await call(s.url, '/healthz')).status).toBe(200);
      s.proc.kill('SIGTERM');
      await expectStoppedGracefully(s, d);
    });
  }

  it('npm start: SIGINT to its PID', async () => {
    const d = tempDir();
    const s = await launch('npm', ['start', '--ignore-scripts', '--', '--host', '127.0.0.1', '--port', '0', '--data-dir', d], { timeout: 60_000 });
    s.proc.kill('SIGINT');
    await expectStoppedGracefully(s, d);
  });

  // npx runs the bin through \`sh -c\`, which keeps a SIGINT sent to it alone until its command
  // ends (docs/cli.md); Ctrl-C signals the terminal's whole foreground process group.
  it.each(launchers)('%s: Ctrl-C (SIGINT to its process group)', async (_name, command, args) => {
    const d = tempDir();
    const s = await launch(command, [...args, '--host', '127.0.0.1', '--port', '0', '--data-dir', d], { timeout: 60_000, group: true });
    process.kill(-s.proc.pid!, 'SIGINT');
    await expectStoppedGracefully(s, d);
  });

  it('a server started by npm also stops when its launcher is killed outright', async () => {
    const d = tempDir();
    const s = await launch('npm', ['start', '--ignore-scripts', '--', '--host', '127.0.0.1', '--port', '0', '--data-dir', d], { timeout: 60_000 });
    s.proc.kill('SIGKILL');
    await expectStoppedGracefully(s, d);
    expect(s.stdout()).toMatch(/"reason":"the process that started waggle has exited","msg":"shutting down"/);
  });
});

describe('the bin', { timeout: 60_000 }, () => {
  it('`npm install` builds dist/ (prepare), so that `npx waggle` works in a fresh clone', () => {
    expect(pkg.scripts.prepare).toBe('npm run build');
    expect(pkg.scripts.build).toMatch(/^tsc -p tsconfig.build.json && node scripts\/bin-executable.mjs && npm run build:web$/);
    // (sh runs the project's bin for npx: it must be executable)
    expect(statSync(join(ROOT, pkg.bin.waggle)).mode & 0o111).not.toBe(0);
  });

  it('waggle --version and npx waggle -v print the version', async () => {
    const r = await waggle(['--version']);
    expect(r).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    const { execFile } = await import('node:child_process');
    const out = await new Promise<string>((resolve, reject) =>
      execFile('npx', ['waggle', '-v'], { cwd: ROOT, timeout: 30_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
    );
    expect(out).toBe(`${pkg.version}\n`);
  });
});
