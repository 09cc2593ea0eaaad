// BubbleUp on ClickHouse (single node and 2 shards) answers as DuckDB does: the same events sent
// to an app on each engine, the same comparisons asked through POST /1/bubbleup, the answers
// compared. With fewer events than a sample holds, both engines read every event; only the
// histogram bounds (2nd and 98th percentiles) are approximate, and their approximations differ,
// so histogram columns are compared by their missing share, their total and their score.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, makeApp, type TestApp } from './helpers.js';
import { ingest } from './query-helpers.js';
import { rng } from './query-reference.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';

const SERVICES = ['api', 'web', 'db', "o'brien \\"];

function events(nowMs: number) {
  const r = rng(11);
  return Array.from({ length: 400 }, (_, i) => {
    const recent = i % 4 === 0; // the selection: the last 2 minutes, slower and failing more
    const data: Record<string, unknown> = {
      service: SERVICES[Math.floor(r() * SERVICES.length)],
      status: recent && r() < 0.5 ? 500 : [200, 200, 404][Math.floor(r() * 3)],
      ok: r() < (recent ? 0.3 : 0.9),
      duration_ms: Math.round((recent ? 200 : 50) * (0.5 + r()) * 100) / 100,
    };
    if (i % 7 === 0) delete data.duration_ms;
    const ageMs = recent ? 1_000 + r() * 100_000 : 130_000 + r() * 400_000;
    return { time: new Date(nowMs - ageMs).toISOString(), samplerate: 1 + (i % 3), data };
  });
}

type Column = { column: string; kind: string; score: number; values?: { value: string | null; selection: number; baseline: number }[]; bins?: { selection: number; baseline: number }[]; missing?: { selection: number; baseline: number } };

async function bubble(t: TestApp, selection: Record<string, unknown>) {
  const now = Math.floor(t.clock.ms / 1000);
  const res = await t.app.inject({
    method: 'POST',
    url: '/1/bubbleup/shop',
    headers: { ...t.config, 'content-type': 'application/json' },
    payload: { query: { time_range: 900 }, selection: { start_time: now - 120, end_time: now + 1, ...selection } },
  });
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as { selection: unknown; baseline: unknown; columns: Column[] };
}

const close = (a: number, b: number, what: string) => expect(Math.abs(a - b), `${what}: ${a} vs ${b}`).toBeLessThanOrEqual(1e-9);

for (const shards of [1, 2] as const) {
  const name = shards === 1 ? 'ClickHouse single node' : 'ClickHouse 2 shards';
  describe.skipIf(!clickhouseBinary)(`BubbleUp on ${name} answers as on DuckDB`, { timeout: 120_000 }, () => {
    let cluster: ClickHouseCluster;
    let duck: TestApp;
    let ch: TestApp;
    beforeAll(async () => {
      cluster = await startClickHouse(shards);
      [duck, ch] = await Promise.all([makeApp(), makeApp({ eventStore: cluster.setting() })]);
      await Promise.all([ingest(duck, 'shop', events(duck.clock.ms)), ingest(ch, 'shop', events(ch.clock.ms))]);
    }, 120_000);
    afterAll(async () => {
      await Promise.all([duck?.close(), ch?.close()]);
      await cluster?.stop();
    });

    it.each([
      ['a time range', {}],
      ['a time range and a range of duration_ms', { column: 'duration_ms', lower: 100, upper: 1000 }],
    ])('selection by %s', async (_, selection) => {
      const [a, b] = await Promise.all([bubble(duck, selection), bubble(ch, selection)]);
      expect(b.selection).toEqual(a.selection);
      expect(b.baseline).toEqual(a.baseline);
      expect(b.columns.map((c) => c.column).sort()).toEqual(a.columns.map((c) => c.column).sort());
      for (const x of a.columns) {
        const y = b.columns.find((c) => c.column === x.column)!;
        expect(y.kind, x.column).toBe(x.kind);
        if (x.kind === 'values') {
          expect(y.values!.map((v) => v.value), x.column).toEqual(x.values!.map((v) => v.value));
          x.values!.forEach((v, i) => {
            close(y.values![i].selection, v.selection, `${x.column} ${v.value} selection`);
            close(y.values![i].baseline, v.baseline, `${x.column} ${v.value} baseline`);
          });
          close(y.score, x.score, `${x.column} score`);
        } else {
          close(y.missing!.selection, x.missing!.selection, `${x.column} missing`);
          const total = (c: Column) => c.bins!.reduce((s, bin) => s + bin.selection, 0);
          close(total(y), total(x), `${x.column} binned share`);
          expect(Math.abs(y.score - x.score), `${x.column} score ${y.score} vs ${x.score}`).toBeLessThan(0.1);
        }
      }
      if (!('column' in selection)) expect(a.columns.find((c) => c.column === 'duration_ms')?.kind).toBe('histogram');
      // The differences found: status 500 and ok=false are over-represented in the selection.
      const status = b.columns.find((c) => c.column === 'status')!;
      expect(status.values!.find((v) => v.value === '500')!.selection).toBeGreaterThan(0.3);
    });
  });
}
if (!clickhouseBinary) warnClickHouseSkipped('BubbleUp on ClickHouse');
