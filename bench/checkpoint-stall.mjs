// What a DuckDB checkpoint holds up, measured on DuckDB alone (no Waggle): the questions behind
// the ingest p99 (docs/benchmarks.md, "What bounds each figure"). `node bench/checkpoint-stall.mjs`
// (under a minute). Each case fills a table's WAL with CHECKPOINT_ROWS rows in 10,000-row commits
// (as group commits do), starts a CHECKPOINT on one connection and, on another, while it runs:
//
// - same table / other table: one 1,000-row insert and commit into the table being checkpointed,
//   or into another table of the same file that nothing wrote since the last checkpoint; "pre"
//   begins that transaction before the checkpoint starts. Printed: when the insert and the commit
//   ended, against the checkpoint's end (ms from its start).
// - other file: 1,000-row commits into a table of a second database file attached to the same
//   instance, one after another until the checkpoint ends: how many, and their latencies.
// - both files in one transaction: whether DuckDB lets one transaction write both.
// - row groups: after a checkpoint of 60,000 rows, whether the next commit's rows go into the
//   checkpointed row group (recompressing it at the next checkpoint) or into a new one.
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROWS = Number(process.env.CHECKPOINT_ROWS ?? 400_000);
const dir = mkdtempSync(join(tmpdir(), 'waggle-checkpoint-stall-'));
const COLUMNS = 'ts TIMESTAMP, service VARCHAR, route VARCHAR, duration_ms DOUBLE, status BIGINT, trace_id VARCHAR, message VARCHAR';
/** `rows` rows like the bench's events: a few low-cardinality strings, a number, a random id, a text. */
const insert = (table, rows) =>
  `INSERT INTO ${table} SELECT TIMESTAMP '2026-01-01' + to_microseconds(i), 'svc-' || (i % 20), '/api/v1/r' || (i % 300),
   random() * 100, 200 + (i % 5), md5(i::VARCHAR || random()::VARCHAR), 'message ' || (i % 5000) || ' ' || md5((i % 777)::VARCHAR)
   FROM range(${rows}) t(i)`;

let n = 0;
/** A fresh database with tables a and b checkpointed empty, and `ROWS` rows of a in its WAL. */
async function filled() {
  const file = join(dir, `stall-${n++}.duckdb`);
  const instance = await DuckDBInstance.create(file, { checkpoint_threshold: '1GB' });
  const w = await instance.connect();
  await w.run(`CREATE TABLE a (${COLUMNS})`);
  await w.run(`CREATE TABLE b (${COLUMNS})`);
  await w.run('CHECKPOINT');
  for (let done = 0; done < ROWS; done += 10_000) await w.run(insert('a', Math.min(10_000, ROWS - done)));
  return { instance, w, file };
}

async function oneCommit(target, pre) {
  const { instance, w } = await filled();
  const c = await instance.connect();
  if (pre) await c.run('BEGIN TRANSACTION');
  const t0 = performance.now();
  const at = () => Math.round(performance.now() - t0);
  let checkpointMs = 0;
  const checkpoint = w.run('CHECKPOINT').then(() => (checkpointMs = at()));
  await new Promise((r) => setTimeout(r, 20));
  if (!pre) await c.run('BEGIN TRANSACTION');
  await c.run(insert(target, 1000));
  const insertMs = at();
  await c.run('COMMIT');
  const commitMs = at();
  await checkpoint;
  instance.closeSync();
  return { case: `${target === 'a' ? 'same table' : 'other table'}${pre ? ', begun before' : ''}`, checkpointMs, insertEndedMs: insertMs, commitEndedMs: commitMs };
}

async function otherFile() {
  const { instance, w } = await filled();
  await w.run(`ATTACH '${join(dir, `hot-${n}.duckdb`)}' AS hot`);
  await w.run(`CREATE TABLE hot.c (${COLUMNS})`);
  await w.run('CHECKPOINT hot');
  const c = await instance.connect();
  const t0 = performance.now();
  let checkpointMs;
  const checkpoint = w.run('CHECKPOINT').then(() => (checkpointMs = Math.round(performance.now() - t0)));
  await new Promise((r) => setTimeout(r, 20));
  const latencies = [];
  while (checkpointMs === undefined) {
    const s = performance.now();
    await c.run('BEGIN TRANSACTION');
    await c.run(insert('hot.c', 1000));
    await c.run('COMMIT');
    latencies.push(performance.now() - s);
  }
  await checkpoint;
  latencies.sort((x, y) => x - y);
  let bothFiles;
  try {
    await c.run('BEGIN TRANSACTION');
    await c.run(insert('a', 10));
    await c.run(insert('hot.c', 10));
    await c.run('COMMIT');
    bothFiles = 'allowed';
  } catch (err) {
    await c.run('ROLLBACK').catch(() => undefined);
    bothFiles = `refused: ${String(err.message).split('\n')[0]}`;
  }
  instance.closeSync();
  return {
    case: 'other file',
    checkpointMs,
    commitsDuringIt: latencies.length,
    commitP50Ms: Math.round(latencies[Math.floor(latencies.length / 2)] ?? 0),
    commitMaxMs: Math.round(latencies.at(-1) ?? 0),
    oneTransactionBothFiles: bothFiles,
  };
}

async function rowGroups() {
  const instance = await DuckDBInstance.create(join(dir, 'row-groups.duckdb'), { checkpoint_threshold: '1GB' });
  const w = await instance.connect();
  await w.run(`CREATE TABLE a (${COLUMNS})`);
  for (let i = 0; i < 6; i++) await w.run(insert('a', 10_000));
  await w.run('CHECKPOINT');
  await w.run(insert('a', 10_000));
  await w.run('CHECKPOINT');
  const rows = (
    await w.runAndReadAll(
      `SELECT row_group_id, sum(count) AS rows FROM pragma_storage_info('a') WHERE column_name = 'duration_ms' AND segment_type <> 'VALIDITY' GROUP BY 1 ORDER BY 1`,
    )
  ).getRowObjectsJS();
  instance.closeSync();
  return { case: 'row groups after 60,000 rows, a checkpoint, 10,000 more, a checkpoint', rowsPerRowGroup: rows.map((r) => Number(r.rows)) };
}

try {
  for (const [target, pre] of [['a', false], ['a', true], ['b', false], ['b', true]]) console.log(JSON.stringify(await oneCommit(target, pre)));
  console.log(JSON.stringify(await otherFile()));
  console.log(JSON.stringify(await rowGroups()));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
