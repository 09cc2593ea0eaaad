// Bounded memory: the event store takes WAGGLE_EVENT_STORE_MEMORY, and a query that needs more
// than a low limit spills or fails with an error saying so, never taking the process down.
// `waggle serve` ingests 150,000 events with distinct 70-character ids (and ten "hot" ids of
// known counts) with the default memory, then restarts with 16 MB and breaks them down by id.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { call, initJson, killAll, removeTempDirs, serve, tempDir } from './cli-helpers.js';
import { postBatch, serverCount, serverQuery } from './ops-helpers.js';

afterEach(killAll);
afterAll(removeTempDirs);

const DISTINCT = 150_000;
const HOT = 10; // hot-k appears k + 2 times

function metric(text: string, name: string): number {
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

describe('a low event-store memory limit', { timeout: 300_000 }, () => {
  it('a query past it spills or fails with a clear error; the server keeps answering', async () => {
    const d = tempDir();
    const init = await initJson(d);
    const s = await serve(['--data-dir', d]);
    const events: { data: Record<string, unknown> }[] = [];
    for (let i = 0; i < DISTINCT; i++) events.push({ data: { id: `user-${i}-`.padEnd(70, 'x'), n: i } });
    for (let k = 0; k < HOT; k++) for (let j = 0; j < k + 2; j++) events.push({ data: { id: `hot-${k}`, n: -1 } });
    for (let i = 0; i < events.length; i += 10_000) {
      const r = await postBatch(s.url, init.keys.ingest, 'wide', events.slice(i, i + 10_000));
      expect(r.status, r.text).toBe(200);
    }
    const total = events.length;
    expect(await s.stop()).toEqual({ code: 0, signal: null });

    const low = await serve(['--data-dir', d], { env: { WAGGLE_EVENT_STORE_MEMORY: '16MB' } });
    const metrics = await (await fetch(`${low.url}/metrics`)).text();
    expect(metric(metrics, 'waggle_event_store_memory_limit_bytes')).toBe(16 * 1024 * 1024);

    const result = await serverQuery(low.url, init.keys.configuration, 'wide', {
      calculations: [{ op: 'COUNT' }],
      breakdowns: ['id'],
      orders: [{ op: 'COUNT', order: 'descending' }],
      time_range: 3600,
      limit: 5,
    });
    console.info(`16 MB event store, breakdown of ${total} events by id: ${result.error === undefined ? 'spilled, answered' : 'refused with a clear error'}`);
    if (result.error === undefined) {
      // Spilled: the answer is right.
      expect(result.data.results.map((r: { data: { id: string; COUNT: number } }) => [r.data.id, r.data.COUNT])).toEqual(
        [9, 8, 7, 6, 5].map((k) => [`hot-${k}`, k + 2]),
      );
    } else {
      expect(result.error).toBe('the query needs more memory than the event store may use (WAGGLE_EVENT_STORE_MEMORY) and could not spill to disk');
    }
    // Still serving: health, a query within the limit, ingest.
    expect((await call(low.url, '/healthz')).status).toBe(200);
    expect(await serverCount(low.url, init.keys.configuration, 'wide', 3600)).toBe(total);
    expect((await postBatch(low.url, init.keys.ingest, 'wide', [{ data: { id: 'after', n: 0 } }])).status).toBe(200);
    expect(low.proc.exitCode).toBeNull();
    expect(await low.stop()).toEqual({ code: 0, signal: null });
  });
});
