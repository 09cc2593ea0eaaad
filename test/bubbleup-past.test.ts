// BubbleUp against the past (POST /1/bubbleup with `baseline: {kind: "past", offset_seconds}`),
// through HTTP on DuckDB and on a single ClickHouse node: events planted so that the two baselines
// rank the columns differently. Over the last two hours every event runs `version` v2, and the
// last 30 minutes (the selection) come from eu-west 80% of the time against 10% before. A week
// earlier the same 30 minutes also came from eu-west 80% of the time, but ran v1: against the
// rest of the window the region stands out; against last week, the version. Events a week ago
// outside the shifted range, and between, must not be read. Then bad input (DuckDB only).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, sendJson, type TestApp } from './helpers.js';
import { ingest } from './query-helpers.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';

const WEEK = 7 * 86_400;
const iso = (s: number) => new Date(s * 1000).toISOString();

function plantedEvents(now: number) {
  const out: unknown[] = [];
  const add = (time: number, data: Record<string, unknown>, samplerate = 1) => out.push({ time: iso(time), samplerate, data });
  for (let i = 0; i < 100; i++) {
    // The selection, and the same 30 minutes a week earlier (sample rate 2): half of each slow.
    const region = i % 5 === 0 ? 'us-east' : 'eu-west';
    const duration_ms = i % 2 === 0 ? 600 : 100;
    add(now - 1800 + i * 18, { region, version: 'v2', duration_ms });
    add(now - WEEK - 1800 + i * 18, { region, version: 'v1', duration_ms }, 2);
  }
  for (let i = 0; i < 300; i++) add(now - 7200 + i * 18, { region: i % 10 === 0 ? 'eu-west' : 'us-east', version: 'v2', duration_ms: 100 });
  // Never read by either baseline: a week ago before the shifted range, and three days ago.
  for (let i = 0; i < 50; i++) add(now - WEEK - 7200 + i * 60, { region: 'ap-south', version: 'v0', duration_ms: 900 });
  for (let i = 0; i < 50; i++) add(now - 3 * 86_400 + i * 60, { region: 'ap-south', version: 'v9', duration_ms: 900 });
  return out;
}

type Column = { column: string; score: number; values?: { value: string | null; selection: number; baseline: number }[] };
type Answer = { selection: { events: number; rows: number }; baseline: { kind: string; start_time?: number; end_time?: number; events: number; rows: number }; columns: Column[] };

async function bubble(t: TestApp, body: Record<string, unknown>) {
  const res = await sendJson(t, 'POST', '/1/bubbleup/shop', { query: { time_range: 7200 }, ...body });
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as Answer;
}
const col = (a: Answer, name: string) => a.columns.find((c) => c.column === name)!;
const share = (c: Column, value: string) => c.values!.find((v) => v.value === value);

function compares(engine: string, start: () => Promise<TestApp>, stop: () => Promise<void>) {
  describe(`BubbleUp against the past on ${engine}`, { timeout: 120_000 }, () => {
    let t: TestApp;
    let nowS: number;
    beforeAll(async () => {
      t = await start();
      nowS = Math.floor(t.clock.ms / 1000);
      await ingest(t, 'shop', plantedEvents(nowS));
    }, 120_000);
    afterAll(async () => {
      await t?.close();
      await stop();
    });
    const selection = () => ({ start_time: nowS - 1800, end_time: nowS });

    it('against the rest of the window, the region stands out and the version does not', async () => {
      for (const baseline of [undefined, null, { kind: 'rest' }]) {
        const a = await bubble(t, { selection: selection(), ...(baseline !== undefined && { baseline }) });
        expect(a.baseline.kind).toBe('rest');
        expect(a.baseline.start_time).toBeUndefined();
        expect([a.selection.rows, a.baseline.rows]).toEqual([100, 300]);
        expect(a.columns[0].column).toBe('region');
        expect(a.columns[0].score).toBeCloseTo(0.7, 9);
        expect(col(a, 'version').score).toBe(0);
      }
    });

    it('against the same 30 minutes a week earlier, the version stands out and the region does not', async () => {
      const a = await bubble(t, { selection: selection(), baseline: { kind: 'past', offset_seconds: WEEK } });
      expect(a.baseline).toMatchObject({ kind: 'past', start_time: nowS - WEEK - 1800, end_time: nowS - WEEK, rows: 100, events: 200 });
      expect(a.selection).toMatchObject({ rows: 100, events: 100 });
      expect(a.columns[0].column).toBe('version');
      expect(a.columns[0].score).toBe(1);
      const version = col(a, 'version');
      expect(share(version, 'v2')).toMatchObject({ selection: 1, baseline: 0 });
      expect(share(version, 'v1')).toMatchObject({ selection: 0, baseline: 1 });
      expect(version.values!.map((v) => v.value)).not.toContain('v0');
      expect(version.values!.map((v) => v.value)).not.toContain('v9');
      expect(col(a, 'region').score).toBeCloseTo(0, 9);
    });

    it('keeps the selection’s value bounds on the earlier side', async () => {
      const a = await bubble(t, { selection: { ...selection(), column: 'duration_ms', lower: 500 }, baseline: { kind: 'past', offset_seconds: WEEK } });
      expect([a.selection.rows, a.baseline.rows, a.baseline.events]).toEqual([50, 50, 100]);
      expect(a.columns[0].column).toBe('version');
      // One day back holds nothing (the three-day-old events are outside it): an empty baseline.
      const empty = await bubble(t, { selection: selection(), baseline: { kind: 'past', offset_seconds: 86_400 } });
      expect([empty.selection.rows, empty.baseline.rows, empty.baseline.events]).toEqual([100, 0, 0]);
    });
  });
}

let cluster: ClickHouseCluster | undefined;
compares('DuckDB', () => makeApp(), async () => {});
if (clickhouseBinary) {
  compares(
    'ClickHouse',
    async () => {
      cluster = await startClickHouse(1);
      return makeApp({ eventStore: cluster.setting() });
    },
    async () => void (await cluster?.stop()),
  );
} else warnClickHouseSkipped('BubbleUp against the past on ClickHouse');

describe('BubbleUp baseline: bad input', () => {
  let t: TestApp;
  let nowS: number;
  beforeAll(async () => {
    t = await makeApp();
    nowS = Math.floor(t.clock.ms / 1000);
    await ingest(t, 'shop', plantedEvents(nowS).slice(0, 20));
  });
  afterAll(() => t.close());

  it('answers 422 naming the field', async () => {
    const selection = { start_time: nowS - 1800, end_time: nowS };
    const cases: [unknown, string][] = [
      ['x', 'baseline'],
      [{}, 'baseline.kind'],
      [{ kind: 'nope' }, 'baseline.kind'],
      [{ kind: 'past' }, 'baseline.offset_seconds'],
      [{ kind: 'past', offset_seconds: null }, 'baseline.offset_seconds'],
      [{ kind: 'past', offset_seconds: 0 }, 'baseline.offset_seconds'],
      [{ kind: 'past', offset_seconds: -3600 }, 'baseline.offset_seconds'],
      [{ kind: 'past', offset_seconds: 1.5 }, 'baseline.offset_seconds'],
      [{ kind: 'past', offset_seconds: '3600' }, 'baseline.offset_seconds'],
      [{ kind: 'past', offset_seconds: 15_724_801 }, 'baseline.offset_seconds'],
      // Shorter than the selection: the two ranges would overlap.
      [{ kind: 'past', offset_seconds: 1799 }, 'baseline.offset_seconds'],
      [{ kind: 'rest', offset_seconds: 3600 }, 'baseline.offset_seconds'],
      [{ kind: 'past', offset_seconds: 3600, when: 'now' }, 'baseline.when'],
    ];
    for (const [baseline, field] of cases) {
      const res = await sendJson(t, 'POST', '/1/bubbleup/shop', { query: { time_range: 7200 }, selection, baseline });
      expect(res.statusCode, `${JSON.stringify(baseline)} → ${res.body}`).toBe(422);
      const b = json(res);
      expect(b.type_detail.map((d: { field: string }) => d.field), `${JSON.stringify(baseline)} → ${res.body}`).toContain(field);
    }
    // Exactly the selection's length is allowed (the ranges touch, [start, end) never overlap).
    expect((await sendJson(t, 'POST', '/1/bubbleup/shop', { query: { time_range: 7200 }, selection, baseline: { kind: 'past', offset_seconds: 1800 } })).statusCode).toBe(200);
  });
});
