// Deploy markers without work (src/ingest/deploy-markers.ts): a new service.version in a
// dataset's events makes one `deploy` marker, once per change, never a storm on a rolling deploy
// or a flapping value, remembered across a restart; off with WAGGLE_DEPLOY_MARKER_FIELD=off; the
// field is a setting; the sightings a request gives are bounded.
import { afterAll, describe, expect, it } from 'vitest';
import { json, makeApp, type TestApp } from './helpers.js';
import { ingest } from './query-helpers.js';
import { columnsOf } from '../src/stores/events/columns.js';
import { versionSightings } from '../src/ingest/deploy-markers.js';
import { loadSettings } from '../src/settings.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';

const apps: TestApp[] = [];
afterAll(async () => {
  for (const t of apps) await t.close().catch(() => undefined);
});

const at = (t: TestApp, secondsAgo: number) => new Date(t.clock.ms - secondsAgo * 1000).toISOString();
const spans = (t: TestApp, service: string, versions: string[], secondsAgo = 60) =>
  versions.map((v, i) => ({ time: at(t, secondsAgo - i), data: { 'service.name': service, 'service.version': v, duration_ms: 5 } }));
async function markers(t: TestApp, ds = 'api') {
  await t.app.writer.settle();
  const res = await t.app.inject({ method: 'GET', url: `/1/markers/${ds}`, headers: t.config });
  expect(res.statusCode, res.body).toBe(200);
  return (json(res) as { type: string; message: string; start_time: number }[]).filter((m) => m.type === 'deploy').sort((a, b) => a.start_time - b.start_time);
}

describe('deploy markers', { timeout: 60_000 }, () => {
  it('a new version makes one marker at its first event; the first version, repeats, a rolling deploy and other services make none', async () => {
    const t = await makeApp();
    apps.push(t);
    await ingest(t, 'api', spans(t, 'checkout', ['v1', 'v1', 'v1'], 300));
    expect(await markers(t)).toEqual([]);
    await ingest(t, 'api', spans(t, 'checkout', ['v2', 'v1', 'v2', 'v1', 'v2'], 200));
    const first = await markers(t);
    expect(first).toEqual([expect.objectContaining({ type: 'deploy', message: 'checkout v2', start_time: Math.floor(t.clock.ms / 1000) - 200 })]);
    // Interleaved old and new versions (a rolling deploy), in several requests: nothing more.
    for (let i = 0; i < 3; i++) await ingest(t, 'api', spans(t, 'checkout', ['v1', 'v2', 'v1'], 100 - i * 10));
    await ingest(t, 'api', spans(t, 'cart', ['c1'], 50));
    expect(await markers(t)).toHaveLength(1);
    await ingest(t, 'api', spans(t, 'cart', ['c2'], 40));
    await ingest(t, 'api', spans(t, 'checkout', ['v3'], 30));
    expect((await markers(t)).map((m) => m.message)).toEqual(['checkout v2', 'cart c2', 'checkout v3']);
  });

  it('a field that changes per event (a build id, a random value) makes no storm: none past 3 versions within the hour', async () => {
    const t = await makeApp();
    apps.push(t);
    for (let i = 0; i < 4; i++) await ingest(t, 'api', spans(t, 'noisy', Array.from({ length: 10 }, (_, j) => `b${(i * 10 + j) % 25}`), 300 - i * 20));
    expect((await markers(t)).length).toBeLessThanOrEqual(2);
  });

  it('a version back after an hour is a deploy again (a rollback); a restart remembers what was seen', async () => {
    const t = await makeApp();
    apps.push(t);
    await ingest(t, 'api', spans(t, 'checkout', ['v1'], 60));
    await ingest(t, 'api', spans(t, 'checkout', ['v2'], 30));
    expect(await markers(t)).toHaveLength(1);
    t.clock.advance(2 * 3600);
    await ingest(t, 'api', spans(t, 'checkout', ['v2'], 30));
    await ingest(t, 'api', spans(t, 'checkout', ['v1'], 20));
    expect((await markers(t)).map((m) => m.message)).toEqual(['checkout v2', 'checkout v1']);
    // Opened again: v1 and v2 were seen within the hour, so neither is new.
    await t.stop();
    const again = await makeApp({ reopen: t });
    apps.push(again);
    again.clock.ms = t.clock.ms + 60_000;
    await ingest(again, 'api', spans(again, 'checkout', ['v2', 'v1'], 10));
    expect((await markers(again)).map((m) => m.message)).toEqual(['checkout v2', 'checkout v1']);
  });

  it('reads the field WAGGLE_DEPLOY_MARKER_FIELD names, and makes none when it is off', async () => {
    expect(loadSettings({ WAGGLE_DEPLOY_MARKER_FIELD: 'off' }).deployMarkerField).toBe('');
    expect(loadSettings({ WAGGLE_DEPLOY_MARKER_FIELD: 'git.sha' }).deployMarkerField).toBe('git.sha');
    expect(loadSettings({}).deployMarkerField).toBe('service.version');
    const off = await makeApp({ settings: { deployMarkerField: '' } });
    apps.push(off);
    await ingest(off, 'api', spans(off, 'checkout', ['v1'], 60));
    await ingest(off, 'api', spans(off, 'checkout', ['v2'], 30));
    expect(await markers(off)).toEqual([]);
    const sha = await makeApp({ settings: { deployMarkerField: 'git.sha' } });
    apps.push(sha);
    await ingest(sha, 'api', [{ time: at(sha, 60), data: { 'service.name': 'web', 'git.sha': 'abc' } }]);
    await ingest(sha, 'api', [{ time: at(sha, 30), data: { 'service.name': 'web', 'git.sha': 'def' } }]);
    expect((await markers(sha)).map((m) => m.message)).toEqual(['web def']);
  });

  it('reads at most 16 service/version pairs of a request, each with its first time; numbers and missing services count', () => {
    const rows = Array.from({ length: 100 }, (_, i) => ({ timeUs: 1000 - i, samplerate: 1, fields: new Map<string, string | number>([['service.name', `s${i}`], ['service.version', i]]) }));
    const many = versionSightings(columnsOf(rows), 'service.name', 'service.version');
    expect(many).toHaveLength(16);
    expect(many[0]).toEqual({ service: 's0', version: '0', timeUs: 1000 });
    const same = Array.from({ length: 5 }, (_, i) => ({ timeUs: 100 - i, samplerate: 1, fields: new Map<string, string>([['service.version', 'v9']]) }));
    expect(versionSightings(columnsOf(same), 'service.name', 'service.version')).toEqual([{ service: '', version: 'v9', timeUs: 96 }]);
    expect(versionSightings(columnsOf(same), 'service.name', 'other')).toEqual([]);
  });
});

describe.skipIf(!clickhouseBinary)('deploy markers on ClickHouse', { timeout: 120_000 }, () => {
  let cluster: ClickHouseCluster | undefined;
  afterAll(async () => void (await cluster?.stop()));
  it('a new version in events stored on ClickHouse makes one marker', async () => {
    cluster = await startClickHouse(1);
    const t = await makeApp({ eventStore: cluster.setting() });
    apps.push(t);
    await ingest(t, 'api', spans(t, 'checkout', ['v1', 'v1'], 120));
    await ingest(t, 'api', spans(t, 'checkout', ['v2', 'v1', 'v2'], 60));
    expect((await markers(t)).map((m) => m.message)).toEqual(['checkout v2']);
  });
});
if (!clickhouseBinary) warnClickHouseSkipped('deploy markers on ClickHouse');
