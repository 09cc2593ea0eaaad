// Durability of acknowledged events across `kill -9`: a real `waggle serve` process takes
// uniquely numbered events (field `seq`) from several concurrent clients and is SIGKILLed while
// requests are in flight, twice, with a restart (WAL replay) after each kill. Afterwards every
// event that was answered 202 must be stored exactly once; events whose request got no answer
// may be missing, but nothing is ever stored twice, and a batch is stored whole or not at all
// (one request's events commit in one transaction).
//
// There is no query API yet, so the check opens the DuckDB file directly, after the last
// server has been stopped (DuckDB allows one process per file).
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { initJson, killAll, removeTempDirs, serve, tempDir, type Served } from './cli-helpers.js';
import { openSqliteStore } from '../src/stores/config/store.js';
import { DuckDbEventStore } from '../src/stores/events/duckdb-store.js';
import { tableName } from '../src/stores/events/types.js';
import { quoteIdent } from '../src/stores/events/duckdb-store.js';

afterEach(killAll);
afterAll(removeTempDirs);

const DATASET = 'durable';
const CLIENTS = 6;
const BATCH = 100;

/** What one streaming phase sent and which of it the server acknowledged. */
interface Phase {
  /** seq → the batch (request) it was sent in. */
  batchOf: Map<number, number>;
  acked: Set<number>;
  ackedBatches: number;
  /** Requests still waiting for an answer at the moment of the kill. */
  inFlightAtKill: number;
}

let nextSeq = 1;
let nextBatch = 1;

function batchBody(seqs: number[], batch: number, client: number) {
  return JSON.stringify(
    seqs.map((seq) => ({
      time: new Date().toISOString(),
      data: {
        seq,
        batch,
        client,
        service: `svc-${client}`,
        route: `/api/items/${seq % 17}`,
        duration_ms: (seq % 1000) / 7,
        ok: seq % 5 !== 0,
        note: 'x'.repeat(64 + (seq % 32)),
      },
    })),
  );
}

/**
 * Streams batches from CLIENTS concurrent clients. With `killAfter`, SIGKILLs the server the
 * moment the killAfter-th batch is acknowledged, without waiting for the others in flight, and
 * then lets every client finish with whatever answer (or connection error) it gets. Without
 * `killAfter`, sends `batches` batches and stops.
 */
async function stream(s: Served, key: string, opts: { killAfter?: number; batches?: number }): Promise<Phase> {
  const phase: Phase = { batchOf: new Map(), acked: new Set(), ackedBatches: 0, inFlightAtKill: -1 };
  let killed = false;
  let sent = 0;
  let inFlight = 0;
  const client = async (c: number) => {
    for (let n = 0; !killed && (opts.batches === undefined || sent < opts.batches); n++) {
      sent++;
      const batch = nextBatch++;
      const seqs = Array.from({ length: BATCH }, () => nextSeq++);
      for (const seq of seqs) phase.batchOf.set(seq, batch);
      const json = batchBody(seqs, batch, c);
      const gzip = (c + n) % 2 === 0;
      let res: Response;
      let text: string;
      inFlight++;
      try {
        res = await fetch(`${s.url}/1/batch/${DATASET}`, {
          method: 'POST',
          headers: { 'x-honeycomb-team': key, 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
          body: gzip ? gzipSync(json) : json,
          signal: AbortSignal.timeout(30_000),
        });
        text = await res.text();
      } catch (err) {
        // No answer: the server died under this request. Only acceptable after the kill.
        if (killed) return;
        throw err;
      } finally {
        inFlight--;
      }
      expect(res.status, text).toBe(200);
      const results = JSON.parse(text) as { status: number }[];
      expect(results).toHaveLength(BATCH);
      results.forEach((r, i) => {
        expect(r.status).toBe(202);
        phase.acked.add(seqs[i]);
      });
      phase.ackedBatches++;
      if (opts.killAfter !== undefined && !killed && phase.ackedBatches >= opts.killAfter) {
        killed = true;
        phase.inFlightAtKill = inFlight;
        s.proc.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  if (opts.killAfter !== undefined) {
    expect(killed).toBe(true);
    expect(await s.exited(15_000)).toEqual({ code: null, signal: 'SIGKILL' });
  }
  return phase;
}

describe('durability across kill -9', { timeout: 180_000 }, () => {
  it('keeps every acknowledged event exactly once through two kills and WAL replays', async () => {
    const d = tempDir();
    const { keys } = await initJson(d);
    const phases: Phase[] = [];

    // Phase 1: stream, kill -9 mid-stream.
    let s = await serve(['--data-dir', d]);
    phases.push(await stream(s, keys.ingest, { killAfter: 30 }));

    // Phase 2: restart (replays the WAL), stream more, kill -9 again.
    s = await serve(['--data-dir', d]);
    phases.push(await stream(s, keys.ingest, { killAfter: 40 }));

    // Phase 3: restart once more, a few more batches, then a graceful stop.
    s = await serve(['--data-dir', d]);
    phases.push(await stream(s, keys.ingest, { batches: 12 }));
    expect(await s.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    // Each kill hit the server with requests in flight, i.e. mid-stream.
    for (const p of phases.slice(0, 2)) expect(p.inFlightAtKill).toBeGreaterThan(0);

    // Where `seq` lives: the dataset's table and the physical column of the field.
    const config = openSqliteStore(join(d, 'config.sqlite'));
    let table: string;
    let seqColumn: string;
    let batchColumn: string;
    try {
      const [team] = await config.listTeams();
      const env = await config.getEnvironmentBySlug(team.id, 'production');
      const ds = await config.getDataset(env!.id, DATASET);
      expect(ds).toBeDefined();
      const columns = await config.listColumns(ds!.id);
      const byName = new Map(columns.map((c) => [c.keyName, c]));
      expect(byName.get('seq')?.storedType).toBe('integer');
      table = tableName(ds!.id);
      seqColumn = byName.get('seq')!.physical;
      batchColumn = byName.get('batch')!.physical;
    } finally {
      await config.close();
    }

    const events = new DuckDbEventStore(join(d, 'events.duckdb'));
    await events.open();
    let rows: Record<string, unknown>[];
    try {
      rows = await events.query(`SELECT ${quoteIdent(seqColumn)} AS seq, ${quoteIdent(batchColumn)} AS batch FROM ${quoteIdent(table)}`);
    } finally {
      await events.close();
    }

    const batchOf = new Map<number, number>();
    for (const p of phases) for (const [seq, b] of p.batchOf) batchOf.set(seq, b);
    const stored = new Map<number, number>(); // seq → how many times stored
    for (const r of rows) {
      const seq = Number(r.seq);
      stored.set(seq, (stored.get(seq) ?? 0) + 1);
      // Every stored event was sent, in the batch it says.
      expect(batchOf.get(seq), `stored seq ${seq} was never sent`).toBeDefined();
      expect(Number(r.batch)).toBe(batchOf.get(seq));
    }
    const duplicated = [...stored].filter(([, n]) => n > 1).map(([seq]) => seq);
    expect(duplicated, 'events stored more than once').toEqual([]);

    let ackedTotal = 0;
    for (const [i, p] of phases.entries()) {
      const missing = [...p.acked].filter((seq) => !stored.has(seq));
      expect(missing, `phase ${i + 1}: acknowledged events missing after restart`).toEqual([]);
      ackedTotal += p.acked.size;
    }
    expect(ackedTotal).toBeGreaterThanOrEqual((30 + 40 + 12) * BATCH);

    // A batch is stored whole or not at all: count stored events per batch.
    const perBatch = new Map<number, number>();
    for (const seq of stored.keys()) perBatch.set(batchOf.get(seq)!, (perBatch.get(batchOf.get(seq)!) ?? 0) + 1);
    const torn = [...perBatch].filter(([, n]) => n !== BATCH);
    expect(torn, 'batches stored in part').toEqual([]);
  });
});
