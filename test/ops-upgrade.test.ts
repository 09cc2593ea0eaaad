// Data-directory upgrades. test/fixtures/data-dir-format0 is a data directory written by Waggle
// before formats were recorded (main at 40e5158: `waggle init`, 120 events in `checkout` on
// 2026-01-15 12:00–12:02 UTC, a marker; its keys in data-dir-format0.keys.json). A newer Waggle
// migrates it at start and serves its data; a directory of a newer format is refused with a
// clear message, and not one byte of it changes.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { call, killAll, removeTempDirs, serve, teamHeaders, tempDir, waggle } from './cli-helpers.js';
import { serverQuery } from './ops-helpers.js';
import { openSqliteStore } from '../src/stores/config/store.js';
import { DuckDbEventStore, quoteIdent } from '../src/stores/events/duckdb-store.js';
import { tableName } from '../src/stores/events/types.js';

afterEach(killAll);
afterAll(removeTempDirs);

const FIXTURE = fileURLToPath(new URL('./fixtures/data-dir-format0', import.meta.url));
const KEYS = JSON.parse(readFileSync(fileURLToPath(new URL('./fixtures/data-dir-format0.keys.json', import.meta.url)), 'utf8'));
const T = Date.UTC(2026, 0, 15, 12, 0, 0) / 1000;
// The fixture's events are older than any retention default.
const ENV = { WAGGLE_RETENTION_DAYS: '0' };

function copyFixture(): string {
  const d = join(tempDir(), 'data');
  cpSync(FIXTURE, d, { recursive: true });
  return d;
}

/** Every file of a directory with a hash of its bytes. */
function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((f) => [f, createHash('sha256').update(readFileSync(join(dir, f))).digest('hex')]));
}

describe('data directory format', { timeout: 120_000 }, () => {
  it('migrates a directory of the format before versions (today\'s fixture) and serves its data', async () => {
    const d = copyFixture();
    expect(existsSync(join(d, 'waggle-format.json'))).toBe(false);
    const s = await serve(['--data-dir', d], { env: ENV });
    const line = JSON.parse(await s.waitFor(/"msg":"data directory upgraded"/));
    expect(line).toMatchObject({ from: 0, to: 1, steps: ['0 → 1: record the format version (waggle-format.json)'] });
    const format = JSON.parse(readFileSync(join(d, 'waggle-format.json'), 'utf8'));
    expect(format).toMatchObject({ format: 1, writtenBy: expect.stringMatching(/^waggle \d+\.\d+\.\d+/) });

    // Its keys, datasets, columns and markers are all there, and new events go in beside the old.
    const conf = teamHeaders(KEYS.keys.configuration);
    expect((await call(s.url, '/1/auth', { headers: conf })).status).toBe(200);
    const columns = await call(s.url, '/1/columns/checkout', { headers: conf });
    expect(columns.body.map((c: { key_name: string }) => c.key_name).sort()).toEqual(['duration_ms', 'path', 'service', 'status']);
    const markers = await call(s.url, '/1/markers/checkout', { headers: conf });
    expect(markers.body.map((m: { message: string }) => m.message)).toEqual(['deploy 41']);
    const ingest = await call(s.url, '/1/batch/checkout', {
      method: 'POST',
      headers: { ...teamHeaders(KEYS.keys.ingest), 'content-type': 'application/json' },
      body: [{ data: { service: 'api', duration_ms: 7.5, status: 200 } }],
    });
    expect(ingest.status).toBe(200);
    expect(ingest.body).toEqual([{ status: 202 }]);
    // (Query results read at most the last 7 days: the fixture's events are older, so they are
    // counted in the store below; the new event through the query API.)
    const result = await serverQuery(s.url, KEYS.keys.configuration, 'checkout', {
      calculations: [{ op: 'COUNT' }, { op: 'MAX', column: 'duration_ms' }],
      breakdowns: ['service'],
      time_range: 3600,
    });
    expect(result.data.results.map((r: { data: Record<string, unknown> }) => r.data), JSON.stringify(result)).toEqual([{ service: 'api', COUNT: 1, 'MAX(duration_ms)': 7.5 }]);
    expect(await s.stop()).toEqual({ code: 0, signal: null });

    // The fixture's 120 events are in the migrated event store, under the registered columns.
    const config = openSqliteStore(join(d, 'config.sqlite'));
    const events = new DuckDbEventStore(join(d, 'events.duckdb'));
    await events.open();
    try {
      const env = (await config.listEnvironments((await config.listTeams())[0].id, { limit: 10 }))[0];
      const dataset = (await config.getDataset(env.id, 'checkout'))!;
      const service = (await config.listColumns(dataset.id)).find((c) => c.keyName === 'service')!.physical;
      const rows = await events.query(
        `SELECT ${quoteIdent(service)} AS service, count(*) AS n FROM ${quoteIdent(tableName(dataset.id))} WHERE __time < make_timestamp(?::BIGINT) GROUP BY 1 ORDER BY 1`,
        [(T + 3600) * 1_000_000],
      );
      expect(rows.map((r) => [r.service, Number(r.n)])).toEqual([['api', 60], ['web', 60]]);
    } finally {
      await events.close();
      await config.close();
    }

    // The next start has nothing to migrate.
    const again = await serve(['--data-dir', d], { env: ENV });
    expect(await again.stop()).toEqual({ code: 0, signal: null });
    expect(again.stdout()).not.toMatch(/data directory upgraded/);
  });

  it('refuses a directory of a newer format with a clear message and leaves it untouched', async () => {
    const d = copyFixture();
    writeFileSync(join(d, 'waggle-format.json'), JSON.stringify({ format: 99, writtenBy: 'waggle 9.0.0', updatedAt: '2030-01-01T00:00:00.000Z' }));
    const before = snapshot(d);
    const r = await waggle(['serve', '--data-dir', d, '--port', '0'], { env: ENV });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/has format 99 \(written by waggle 9\.0\.0\); this Waggle \(\d+\.\d+\.\d+\) reads formats up to 1\. Nothing was changed/);
    expect(r.stdout).not.toMatch(/Server listening/);
    // Commands that open the stores refuse it too.
    const keys = await waggle(['keys', 'list', '--data-dir', d]);
    expect(keys.code).toBe(1);
    expect(keys.stderr).toMatch(/has format 99/);
    const backup = await waggle(['backup', '--data-dir', d, '--to', join(tempDir(), 'b')]);
    expect(backup.code).toBe(1);
    expect(backup.stderr).toMatch(/has format 99/);
    expect(snapshot(d)).toEqual(before);
  });

  it('refuses an unreadable format file', async () => {
    const d = copyFixture();
    writeFileSync(join(d, 'waggle-format.json'), '{"format": "one"');
    const before = snapshot(d);
    const r = await waggle(['serve', '--data-dir', d, '--port', '0'], { env: ENV });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/waggle-format\.json cannot be read .*nothing was changed/);
    expect(snapshot(d)).toEqual(before);
  });

  it('records the format in a new directory', async () => {
    const d = join(tempDir(), 'fresh');
    const s = await serve(['--data-dir', d]);
    expect(JSON.parse(readFileSync(join(d, 'waggle-format.json'), 'utf8')).format).toBe(1);
    expect(s.stdout()).not.toMatch(/data directory upgraded/);
    expect(await s.stop()).toEqual({ code: 0, signal: null });
  });
});
