// Disk full: `waggle serve` on a data directory in a small size-limited filesystem (a tmpfs the
// test mounts; skipped with a message where it cannot mount). Ingest fills it: new batches get
// 503 with Retry-After in the ingest dialect, configuration writes get 503, queries keep
// answering, every acknowledged event is stored (also after a restart), and once space is
// freed the server accepts writes again by itself. Twice: with the reserve (the server stops
// before the disk is full) and with no reserve (the event store itself meets the full disk).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { call, initJson, killAll, serve, teamHeaders } from './cli-helpers.js';
import { postBatch, serverCount } from './ops-helpers.js';

afterEach(killAll);

const MB = 1024 * 1024;
const mounts: string[] = [];

/** A tmpfs of `sizeMb` MB mounted on a new directory, or a reason it cannot be. */
function mountTmpfs(sizeMb: number): { dir: string } | { skip: string } {
  const dir = mkdtempSync(join(tmpdir(), 'waggle-fs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmdirSync(dir);
    return { skip: `cannot mount a tmpfs (${String((err as { stderr?: Buffer }).stderr ?? err).trim()}); run as root to test a full disk` };
  }
  mounts.push(dir);
  return { dir };
}

afterAll(() => {
  for (const dir of mounts) {
    try {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      rmdirSync(dir);
    } catch {
      // left for the OS
    }
  }
});

const probe = mountTmpfs(1);
const cannot = 'skip' in probe ? probe.skip : undefined;
if (cannot) console.warn(`disk-full tests skipped: ${cannot}`);

/** Fat events (about 1 KB each) so that a few MB fill quickly. */
const batch = (n: number, from: number) =>
  Array.from({ length: n }, (_, i) => ({ data: { seq: from + i, payload: `${from + i}:`.padEnd(1000, 'x') } }));

async function run(reserve: string) {
  const fs = mountTmpfs(40);
  if ('skip' in fs) throw new Error(fs.skip);
  const d = join(fs.dir, 'data');
  const init = await initJson(d);
  // Most of the filesystem taken by someone else's file, freed later.
  const filler = join(fs.dir, 'filler');
  writeFileSync(filler, Buffer.alloc(24 * MB, 1));
  const s = await serve(['--data-dir', d], { env: { WAGGLE_DISK_RESERVE: reserve, WAGGLE_RETENTION_DAYS: '0' } });
  const key = init.keys.configuration;
  const cfg = { ...teamHeaders(key), 'content-type': 'application/json' };

  let acked = 0;
  let seq = 0;
  let refused: Awaited<ReturnType<typeof postBatch>> | undefined;
  for (let i = 0; i < 200 && !refused; i++) {
    const r = await postBatch(s.url, init.keys.ingest, 'fill', batch(250, seq));
    seq += 250;
    if (r.status === 200) {
      expect(r.body.every((e: { status: number }) => e.status === 202), r.text).toBe(true);
      acked += 250;
    } else refused = r;
  }
  expect(refused, 'the filesystem never filled').toBeDefined();
  expect(acked).toBeGreaterThan(0);
  // Refused in the ingest dialect, with a time to come back.
  expect(refused!.status).toBe(503);
  expect(refused!.body).toEqual({ error: 'the data directory is out of disk space; retry later' });
  expect(refused!.retryAfter).toBeTruthy();
  // Still refused while the disk is full; configuration writes too; reads and queries answer.
  expect((await postBatch(s.url, init.keys.ingest, 'fill', batch(10, 1e9))).status).toBe(503);
  const write = await call(s.url, '/1/datasets', { method: 'POST', headers: cfg, body: { name: 'another' } });
  expect(write.status, write.text).toBe(503);
  expect(write.body.error).toMatch(/out of disk space/);
  expect((await call(s.url, '/1/datasets/fill', { headers: teamHeaders(key) })).status).toBe(200);
  expect(await serverCount(s.url, key, 'fill')).toBe(acked);

  // Space comes back: writes are accepted again without a restart.
  rmSync(filler);
  let back = false;
  for (let i = 0; i < 100 && !back; i++) {
    const r = await postBatch(s.url, init.keys.ingest, 'fill', batch(250, seq));
    seq += 250;
    if (r.status === 200) {
      acked += 250;
      back = true;
    } else {
      expect(r.status).toBe(503);
      await new Promise((res) => setTimeout(res, 100));
    }
  }
  expect(back).toBe(true);
  expect((await call(s.url, '/1/datasets', { method: 'POST', headers: cfg, body: { name: 'another' } })).status).toBe(201);
  expect(await serverCount(s.url, key, 'fill')).toBe(acked);
  await s.waitFor(/out of disk space/);
  expect(await s.stop()).toEqual({ code: 0, signal: null });

  // Nothing acknowledged was lost, and nothing refused was stored (the count is exact).
  const again = await serve(['--data-dir', d], { env: { WAGGLE_RETENTION_DAYS: '0' } });
  expect(await serverCount(again.url, key, 'fill')).toBe(acked);
  expect(await again.stop()).toEqual({ code: 0, signal: null });
  return s.stdout();
}

describe.skipIf(cannot !== undefined)('disk full (tmpfs of 40 MB)', { timeout: 300_000 }, () => {
  it('with the reserve: refused before the disk is full, queries answer, recovers when space returns', async () => {
    const log = await run('4MB');
    expect(log).toMatch(/"msg":"disk space is back: ingest and changes are accepted again"/);
  });

  it('with no reserve: the event store meets the full disk, the commit fails cleanly and nothing acknowledged is lost', async () => {
    await run('0');
  });
});
