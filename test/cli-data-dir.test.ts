// The data directory as the `waggle` command treats it: `init --keys-file` (keys that cannot be
// lost), only `init` and `serve` making a data directory, and errors that say where (a read-only
// or unwritable directory, a second server on one directory, an event store another process
// holds). Real child processes over temp directories.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MAIN, call, initJson, killAll, removeTempDirs, serve, teamHeaders, tempDir, waggle, waggleOk } from './cli-helpers.js';

afterEach(killAll);
afterAll(removeTempDirs);

describe('waggle init --keys-file', { timeout: 120_000 }, () => {
  it('writes the keys to a new owner-only file and prints no secret; the keys work', async () => {
    const cwd = tempDir();
    const r = await waggle(['init', '--data-dir', './demo', '--keys-file', 'keys.json'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('initialised ./demo: team my-team, environment production; the keys are in keys.json (shown nowhere else: keep it)');
    const file = join(cwd, 'keys.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const keys = JSON.parse(readFileSync(file, 'utf8'));
    expect(keys.team).toEqual({ slug: 'my-team' });
    expect(keys.keys.configuration).toMatch(/^[A-Za-z0-9]{22}$/);
    expect(r.stdout).not.toContain(keys.keys.configuration);
    const s = await serve(['--data-dir', join(cwd, 'demo')]);
    expect((await call(s.url, '/1/auth', { headers: teamHeaders(keys.keys.configuration) })).status).toBe(200);
    expect((await call(s.url, '/1/auth', { headers: teamHeaders(keys.keys.ingest) })).status).toBe(200);
  });

  it('run again (the README walkthrough twice): the file holds this directory\'s keys, so it succeeds and changes nothing', async () => {
    const cwd = tempDir();
    await waggleOk(['init', '--data-dir', './demo', '--keys-file', 'keys.json'], { cwd });
    const before = readFileSync(join(cwd, 'keys.json'), 'utf8');
    const again = await waggle(['init', '--data-dir', './demo', '--keys-file', 'keys.json'], { cwd });
    expect(again).toEqual({ code: 0, stdout: './demo is initialised already and keys.json holds its keys; nothing was changed\n', stderr: '' });
    expect(readFileSync(join(cwd, 'keys.json'), 'utf8')).toBe(before);
    const keys = await waggleOk(['keys', 'list', '--data-dir', './demo', '--json'], { cwd });
    expect(JSON.parse(keys)).toHaveLength(3); // no key was added
  });

  it('never writes over a keys file that is not the directory\'s: another directory, or keys that do not work there', async () => {
    const cwd = tempDir();
    await waggleOk(['init', '--data-dir', './demo', '--keys-file', 'keys.json'], { cwd });
    await waggleOk(['init', '--data-dir', './second', '--keys-file', 'second.json'], { cwd });
    const before = readFileSync(join(cwd, 'keys.json'), 'utf8');
    for (const dataDir of ['./other', './second']) {
      const again = await waggle(['init', '--data-dir', dataDir, '--keys-file', 'keys.json'], { cwd });
      expect(again.code).toBe(1);
      expect(again.stdout).toBe('');
      expect(again.stderr.trim()).toBe(
        'waggle: keys.json already exists; nothing was changed. init never writes over a keys file (the keys in it are shown nowhere else): name a new file, or use the keys it holds',
      );
      expect(readFileSync(join(cwd, 'keys.json'), 'utf8')).toBe(before);
    }
    expect(existsSync(join(cwd, 'other'))).toBe(false);
  });

  it('leaves no keys file when init fails', async () => {
    const cwd = tempDir();
    await initJson(join(cwd, 'demo'));
    const r = await waggle(['init', '--data-dir', './demo', '--keys-file', 'new-keys.json'], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('waggle: the data directory ./demo is already initialised (a team exists); nothing was changed');
    expect(existsSync(join(cwd, 'new-keys.json'))).toBe(false);
    // A keys file that cannot be made stops init before the data directory is made.
    const bad = await waggle(['init', '--data-dir', './fresh', '--keys-file', 'no/such/dir/keys.json'], { cwd });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^waggle: cannot create the keys file no\/such\/dir\/keys.json \(ENOENT\); nothing was changed$/m);
    expect(existsSync(join(cwd, 'fresh'))).toBe(false);
  });
});

describe('only init and serve make a data directory', { timeout: 120_000 }, () => {
  // Every other command, on a mistyped path (missing) and on an empty directory: refused, naming
  // the path; nothing is created, not even the backup's target.
  const commands: Array<[string, (dir: string, scratch: string) => string[]]> = [
    ['backup', (d, x) => ['backup', '--data-dir', d, '--to', join(x, 'backup')]],
    ['keys list', (d) => ['keys', 'list', '--data-dir', d]],
    ['keys create', (d) => ['keys', 'create', '--type', 'ingest', '--data-dir', d]],
    ['keys disable', (d) => ['keys', 'disable', 'hcxik_0000000000000000000000000', '--data-dir', d]],
    ['deliveries', (d) => ['deliveries', '--data-dir', d]],
  ];
  it.concurrent.for(commands)('%s refuses a path that is not a data directory and creates nothing', async ([, args], { expect }) => {
    const scratch = tempDir();
    const typo = join(scratch, 'typo');
    const empty = join(scratch, 'empty');
    mkdirSync(empty);
    for (const [dir, what] of [
      [typo, 'it does not exist'],
      [empty, 'it is empty'],
    ]) {
      const r = await waggle(args(dir, scratch));
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim()).toBe(
        `waggle: ${dir} is not a Waggle data directory (${what}); nothing was created. Check --data-dir (or WAGGLE_DATA_DIR), or make one with \`waggle init --data-dir ${dir}\` (or \`waggle serve\`).`,
      );
    }
    expect(readdirSync(scratch)).toEqual(['empty']);
    expect(readdirSync(empty)).toEqual([]);
  });

  it('the default ./data counts too: run where there is none, a command creates nothing', async () => {
    const cwd = tempDir();
    const r = await waggle(['deliveries'], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^waggle: \.\/data is not a Waggle data directory \(it does not exist\)/);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('restore refuses a --from that is no backup and creates no data directory', async () => {
    const scratch = tempDir();
    const r = await waggle(['restore', '--from', join(scratch, 'typo'), '--data-dir', join(scratch, 'restored')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${join(scratch, 'typo')} is not a Waggle backup`);
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('init and serve do make one, and the other commands then accept it', async () => {
    const scratch = tempDir();
    await initJson(join(scratch, 'by-init'));
    const s = await serve(['--data-dir', join(scratch, 'by-serve')]);
    await s.stop();
    for (const d of ['by-init', 'by-serve']) {
      expect(JSON.parse(await waggleOk(['keys', 'list', '--json', '--data-dir', join(scratch, d)]))).toHaveLength(3);
      expect(await waggleOk(['deliveries', '--data-dir', join(scratch, d)])).toBe('no deliveries\n');
    }
  });
});

/**
 * How a test makes a directory the command cannot write: as root (who may write anything) the
 * command runs as `nobody`; as anyone else the permission bits alone stop it. Undefined when
 * `nobody` cannot run the command here (the checkout not readable by other users).
 */
function asOtherUser(): { uid?: number; gid?: number } | undefined {
  if (process.getuid?.() !== 0) return {};
  const nobody = { uid: 65534, gid: 65534 };
  const probe = spawnSync(process.execPath, [MAIN, '--version'], { ...nobody, encoding: 'utf8' });
  return probe.status === 0 ? nobody : undefined;
}
const other = asOtherUser();
if (!other) console.warn('*** the unwritable-data-directory tests are SKIPPED: user nobody cannot read this checkout ***');

/** Takes write permission away from `dir` and what it holds (given back before the temp dirs are removed). */
function makeReadOnly(dir: string): void {
  for (const f of readdirSync(dir)) chmodSync(join(dir, f), 0o444);
  chmodSync(dir, 0o555);
  afterAll(() => {
    chmodSync(dir, 0o755);
    for (const f of readdirSync(dir)) chmodSync(join(dir, f), 0o644);
  });
}

describe.skipIf(!other)('errors that say where', { timeout: 120_000 }, () => {
  /** A temp directory other users may enter (mkdtemp makes it owner-only). */
  const openTempDir = () => {
    const d = tempDir();
    chmodSync(d, 0o755);
    return d;
  };

  it('a read-only data directory: every command and serve name the directory, the file and the cause', async () => {
    const d = join(openTempDir(), 'data');
    await initJson(d);
    makeReadOnly(d);
    const expected =
      `the data directory ${d} is not writable: ${d}/config.sqlite cannot be written (permission denied to uid ${other!.uid ?? process.getuid!()}, the user running Waggle). ` +
      'Waggle keeps its stores there and writes to them; give this user write access to the directory and its files, or choose another one (--data-dir or WAGGLE_DATA_DIR).';
    for (const args of [['keys', 'list'], ['keys', 'create', '--type', 'ingest'], ['deliveries'], ['backup', '--to', join(openTempDir(), 'b')], ['serve', '--port', '0']]) {
      const r = await waggle([...args, '--data-dir', d], other);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr.trim(), args.join(' ')).toBe(`waggle: ${expected}`);
      expect(r.stdout).not.toMatch(/Server listening/);
    }
  });

  it('an unwritable directory given to init or serve: named with the cause, nothing created', async () => {
    const d = join(openTempDir(), 'data');
    mkdirSync(d);
    makeReadOnly(d);
    for (const args of [['init'], ['serve', '--port', '0']]) {
      const r = await waggle([...args, '--data-dir', d], other);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toMatch(
        new RegExp(`^waggle: the data directory ${d} is not writable: no file can be made in ${d} \\(permission denied to uid \\d+, the user running Waggle\\)\\.`),
      );
      expect(readdirSync(d)).toEqual([]);
    }
    // One that does not exist, under a directory that cannot be written: it cannot be made.
    const missing = join(d, 'new');
    const r = await waggle(['serve', '--port', '0', '--data-dir', missing], other);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^waggle: the data directory ${missing} is not writable: ${missing} cannot be created \\(permission denied`));
  });
});

describe('one server per data directory', { timeout: 120_000 }, () => {
  it('a second server on the same directory is told which process has it, and the first goes on', async () => {
    const d = tempDir();
    const init = await initJson(d);
    const first = await serve(['--data-dir', d]);
    const second = await waggle(['serve', '--port', '0', '--data-dir', d]);
    expect(second.code).toBe(1);
    expect(second.stdout).toBe('');
    expect(second.stderr.trim()).toBe(
      `waggle: another Waggle server, PID ${first.pid}, is using this data directory: ${d} (it answered on ${d}/waggle.sock). Stop it first, or choose another --data-dir.`,
    );
    expect((await call(first.url, '/1/auth', { headers: teamHeaders(init.keys.configuration) })).status).toBe(200);
    expect(await first.stop()).toEqual({ code: 0, signal: null });
  });

  it('an event store held by another process (not a server): the lock error names it, the file and the directory', async () => {
    const d = tempDir();
    await initJson(d);
    // This test's process holds the event store, as a `waggle backup` with no server would.
    const holder = await DuckDBInstance.create(join(d, 'events.duckdb'));
    try {
      const r = await waggle(['serve', '--port', '0', '--data-dir', d]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toMatch(
        new RegExp(
          `^waggle: another Waggle server or command, PID ${process.pid} \\(.*\\), is using the data directory ${d}: it holds the lock on ${d}/events\\.duckdb\\. ` +
            'Stop it first, or choose another data directory \\(--data-dir or WAGGLE_DATA_DIR\\)\\.$',
        ),
      );
      expect(r.stdout).not.toMatch(/Server listening/);
    } finally {
      holder.closeSync();
    }
    const s = await serve(['--data-dir', d]);
    expect((await call(s.url, '/healthz')).status).toBe(200);
  });
});
