// Backup and restore (`waggle backup`, `waggle restore`) as an operator runs them: a backup
// taken from a running `waggle serve` while several clients keep ingesting, restored into a new
// directory, and a server on it queried: every batch acknowledged before the backup began is
// there whole, no batch is there in part, and ingest went on during the backup. Then a backup
// of the stopped directory, a restore refused over a non-empty directory, and what the command
// says with PostgreSQL as the configuration store.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { call, initJson, killAll, removeTempDirs, serve, tempDir, waggle, waggleOk } from './cli-helpers.js';
import { postBatch, serverCount, serverQuery } from './ops-helpers.js';
import { createTestSchema, postgresUrl, warnPostgresSkipped } from './postgres.js';

afterEach(killAll);
afterAll(removeTempDirs);

const BATCH = 40;
const CLIENTS = 4;

describe('backup during sustained ingest, then restore', { timeout: 300_000 }, () => {
  it('holds every batch acknowledged before it began, none in part; a server on the restore answers with those counts', async () => {
    const d = tempDir();
    const init = await initJson(d);
    const s = await serve(['--data-dir', d]);
    const acked = new Map<number, number>(); // batch → time acknowledged (ms)
    const sent = new Set<number>();
    let nextBatch = 0;
    let stop = false;
    const client = async (c: number) => {
      while (!stop) {
        const b = nextBatch++;
        sent.add(b);
        const events = Array.from({ length: BATCH }, (_, i) => ({ data: { batch: b, client: c, i, route: `/r/${i % 7}`, note: 'n'.repeat(40) } }));
        const r = await postBatch(s.url, init.keys.ingest, 'orders', events);
        expect(r.status, r.text).toBe(200);
        expect(r.body.every((e: { status: number }) => e.status === 202)).toBe(true);
        acked.set(b, Date.now());
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
    // Ingest under way for a while before the backup.
    while (acked.size < 100) await new Promise((r) => setTimeout(r, 20));

    const to = join(tempDir(), 'backup');
    const began = Date.now();
    const before = new Set([...acked.keys()]);
    const backup = await waggle(['backup', '--data-dir', d, '--to', to], { timeout: 120_000 });
    expect(backup.code, backup.stderr).toBe(0);
    const out = backup.stdout;
    const ended = Date.now();
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await Promise.all(clients);

    expect(out).toMatch(/made by the server running on it/);
    expect(out).toMatch(/covers: event store \(events\.duckdb\); configuration store \(config\.sqlite\)/);
    // Ingest went on while the backup ran.
    const during = [...acked.values()].filter((t) => t > began && t < ended).length;
    expect(during, `batches acknowledged during the backup (${ended - began} ms)`).toBeGreaterThan(0);
    const manifest = JSON.parse(readFileSync(join(to, 'backup.json'), 'utf8'));
    expect(manifest.format).toBe(1);
    expect(JSON.parse(readFileSync(join(to, 'waggle-format.json'), 'utf8')).format).toBe(1);
    expect(await s.stop()).toEqual({ code: 0, signal: null });

    // Restore into a new directory; a non-empty one is refused untouched.
    const refused = await waggle(['restore', '--from', to, '--data-dir', d]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is not empty: restore into a new or empty directory \(nothing was changed\)/);
    const r = join(tempDir(), 'restored');
    expect(await waggleOk(['restore', '--from', to, '--data-dir', r])).toMatch(/restored the backup of/);
    expect(existsSync(join(r, 'waggle.sock'))).toBe(false);

    const restored = await serve(['--data-dir', r]);
    // The keys of the backed-up directory work, and the counts are those of the snapshot.
    const result = await serverQuery(restored.url, init.keys.configuration, 'orders', {
      calculations: [{ op: 'COUNT' }],
      breakdowns: ['batch'],
      time_range: 86_400,
    });
    const counts = new Map<number, number>(result.data.results.map((x: { data: { batch: number; COUNT: number } }) => [Number(x.data.batch), Number(x.data.COUNT)]));
    for (const b of before) expect(counts.get(b), `batch ${b}, acknowledged before the backup`).toBe(BATCH);
    for (const [b, n] of counts) {
      expect(n, `batch ${b} is whole`).toBe(BATCH);
      expect(sent.has(b)).toBe(true);
    }
    // Nothing acknowledged after the backup ended is in it.
    for (const [b, t] of acked) if (t > ended + 50 && !before.has(b)) expect(counts.has(b) && t > ended + 1000, `batch ${b} acknowledged after the backup`).toBe(false);
    expect(manifest.eventRows[Object.keys(manifest.eventRows).find((t: string) => t.startsWith('ds_'))!]).toBe(counts.size * BATCH);
    expect(await restored.stop()).toEqual({ code: 0, signal: null });

    // A backup of the stopped directory holds everything acknowledged.
    const offline = join(tempDir(), 'offline');
    expect(await waggleOk(['backup', '--data-dir', d, '--to', offline])).toMatch(/made with no server running/);
    const r2 = join(tempDir(), 'restored2');
    await waggleOk(['restore', '--from', offline, '--data-dir', r2]);
    const again = await serve(['--data-dir', r2]);
    expect(await serverCount(again.url, init.keys.configuration, 'orders')).toBe(acked.size * BATCH);
    expect((await call(again.url, '/1/auth', { headers: { 'x-honeycomb-team': init.keys.configuration } })).status).toBe(200);
    expect(await again.stop()).toEqual({ code: 0, signal: null });

    // A target that is not empty is refused.
    const full = await waggle(['backup', '--data-dir', d, '--to', offline]);
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(/is not empty/);
  });
});

if (!postgresUrl) warnPostgresSkipped('backup with PostgreSQL as the configuration store (test/ops-backup.test.ts)');

describe.skipIf(!postgresUrl)('backup with PostgreSQL as the configuration store', { timeout: 120_000 }, () => {
  it('copies the event store and says to back up PostgreSQL with pg_dump', async () => {
    const d = tempDir();
    const schema = await createTestSchema(postgresUrl!, 'backup');
    const url = new URL(schema.url);
    url.searchParams.set('options', `-c search_path=${schema.name}`);
    const to = join(tempDir(), 'pg-backup');
    const env = { WAGGLE_CONFIG_STORE: url.toString() };
    const out = await (async () => {
      // The data directory (its event store) is made by a server; backup refuses a path that holds none.
      const s = await serve(['--data-dir', d], { env });
      await s.stop();
      return waggleOk(['backup', '--data-dir', d, '--to', to], { env });
    })().finally(() => schema.drop());
    expect(out).toMatch(/covers: event store \(events\.duckdb\)/);
    expect(out).toMatch(/NOT covered: configuration store \(PostgreSQL\): back it up with pg_dump/);
    expect(existsSync(join(to, 'config.sqlite'))).toBe(false);
    expect(existsSync(join(to, 'events.duckdb'))).toBe(true);
  });
});
