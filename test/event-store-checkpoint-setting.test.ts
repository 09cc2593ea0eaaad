// WAGGLE_EVENT_STORE_CHECKPOINT: the WAL size at which the embedded event store checkpoints
// (default 64 MB; lower trades a little ingest CPU for shorter commit stalls, docs/settings.md).
// `waggle serve` with a 256 KB threshold and one with the default take the same events through
// /1/batch: the first keeps its write-ahead log small, the second's grows past a megabyte, and
// both hold every event, also after a restart.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../src/settings.js';
import { initJson, killAll, removeTempDirs, serve, tempDir } from './cli-helpers.js';
import { postBatch, serverCount } from './ops-helpers.js';

afterEach(killAll);
afterAll(removeTempDirs);

const BATCHES = 30;
const PER_BATCH = 2_000;
const walBytes = (dataDir: string) => {
  const wal = join(dataDir, 'events.duckdb.wal');
  return existsSync(wal) ? statSync(wal).size : 0;
};

/** Serves dataDir with env, sends the same BATCHES × PER_BATCH events, answers the WAL size then. */
async function ingest(dataDir: string, env: Record<string, string>): Promise<{ wal: number; count: number; ingestKey: string; configKey: string }> {
  const init = await initJson(dataDir);
  const s = await serve(['--data-dir', dataDir], { env });
  for (let b = 0; b < BATCHES; b++) {
    const events = Array.from({ length: PER_BATCH }, (_, i) => ({ data: { batch: b, i, route: `/api/v1/items/${i % 97}`, note: `event ${b}-${i} `.padEnd(60, '.') } }));
    const r = await postBatch(s.url, init.keys.ingest, 'wal', events);
    expect(r.status, r.text).toBe(200);
  }
  const wal = walBytes(dataDir);
  const count = await serverCount(s.url, init.keys.configuration, 'wal', 3600);
  expect(await s.stop()).toEqual({ code: 0, signal: null });
  return { wal, count, ingestKey: init.keys.ingest, configKey: init.keys.configuration };
}

describe('WAGGLE_EVENT_STORE_CHECKPOINT', { timeout: 120_000 }, () => {
  it('bounds the write-ahead log; every event is kept, also across a restart', async () => {
    const small = tempDir();
    const low = await ingest(small, { WAGGLE_EVENT_STORE_CHECKPOINT: '256KB' });
    const byDefault = await ingest(tempDir(), {});
    console.info(`WAL after ${BATCHES * PER_BATCH} events: ${low.wal} bytes at 256 KB, ${byDefault.wal} bytes at the default`);
    expect(byDefault.wal).toBeGreaterThan(1024 * 1024);
    expect(low.wal).toBeLessThan(1024 * 1024);
    expect(low.count).toBe(BATCHES * PER_BATCH);
    expect(byDefault.count).toBe(BATCHES * PER_BATCH);

    const again = await serve(['--data-dir', small]);
    expect(await serverCount(again.url, low.configKey, 'wal', 3600)).toBe(BATCHES * PER_BATCH);
    expect(await again.stop()).toEqual({ code: 0, signal: null });
  });

  it('takes a size from 64 KB to 256 MB', () => {
    expect(loadSettings({}).eventStoreCheckpoint).toBeUndefined();
    expect(loadSettings({ WAGGLE_EVENT_STORE_CHECKPOINT: '32MB' }).eventStoreCheckpoint).toBe(32 * 1024 ** 2);
    expect(() => loadSettings({ WAGGLE_EVENT_STORE_CHECKPOINT: '1GB' })).toThrow('WAGGLE_EVENT_STORE_CHECKPOINT must be at most 256MB');
    expect(() => loadSettings({ WAGGLE_EVENT_STORE_CHECKPOINT: '1KB' })).toThrow(/WAGGLE_EVENT_STORE_CHECKPOINT must be a size of at least 65536 bytes/);
    expect(() => loadSettings({ WAGGLE_EVENT_STORE_CHECKPOINT: 'often' })).toThrow(/WAGGLE_EVENT_STORE_CHECKPOINT/);
  });
});
