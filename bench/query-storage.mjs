// Where the query benchmark's bytes on disk go (`node bench/query-storage.mjs`, not part of
// `npm run bench`): the query bench's events (bench/query-data.mjs, 19 fields) written into a
// fresh DuckDB file per storage variant, checkpointed, then the file's bytes per event and each
// column's (bytesByColumn). The variants are layouts Waggle does not use (yet): the trace ids as
// binary, larger row groups; the first is the table as Waggle makes it.
//
// BENCH_STORAGE_EVENTS (default 2,000,000), BENCH_STORAGE_VARIANTS=<name,…> (default all).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { FIELD_TYPES, bytesByColumn, generateSql } from './query-data.mjs';

const EVENTS = Number(process.env.BENCH_STORAGE_EVENTS ?? 2_000_000);
const SQL_TYPE = { string: 'VARCHAR', integer: 'BIGINT', float: 'DOUBLE', boolean: 'BOOLEAN' };
const physical = Object.fromEntries(Object.keys(FIELD_TYPES).map((f, i) => [f, `c${i + 1}`]));
const col = (f) => physical[f];
/** The 16 bytes of a 32-hex-digit id (DuckDB's to_hex, which the generator uses, writes upper case). */
const blob = (f) => ({ type: 'BLOB', sql: `unhex(${col(f)})` });
/** A 16-hex-digit id as the 64-bit number it spells. */
const u64 = (f) => ({ type: 'UBIGINT', sql: `('0x' || ${col(f)})::UBIGINT` });
/** A 32-hex-digit id as a 128-bit number (compresses only as runs of one value: RLE). */
const u128 = (f) => ({ type: 'UHUGEINT', sql: `(('0x' || ${col(f)}[1:16])::UBIGINT::UHUGEINT << 64) | ('0x' || ${col(f)}[17:32])::UBIGINT` });
const BIG_GROUPS = "STORAGE_VERSION 'v1.2.0', ROW_GROUP_SIZE 491520";
/** Rows shuffled within each 2,000 (a commit's worth): the spans of a trace no longer next to each other. */
const SHUFFLED = 'ORDER BY rowid // 2000, hash(rowid)';

const VARIANTS = {
  'as-stored': {},
  'trace-id-blob': { columns: { 'trace.trace_id': blob('trace.trace_id') } },
  'trace-id-uhugeint': { columns: { 'trace.trace_id': u128('trace.trace_id') } },
  'trace-id-uhugeint-shuffled': { columns: { 'trace.trace_id': u128('trace.trace_id') }, order: SHUFFLED },
  'shuffled': { order: SHUFFLED },
  'span-ids-ubigint': { columns: { 'trace.span_id': u64('trace.span_id'), 'trace.parent_id': u64('trace.parent_id') } },
  'span-ids-blob': { columns: { 'trace.span_id': blob('trace.span_id'), 'trace.parent_id': blob('trace.parent_id') } },
  'row-groups-491520': { attach: BIG_GROUPS },
  'trace-id-blob+row-groups': { columns: { 'trace.trace_id': blob('trace.trace_id') }, attach: BIG_GROUPS },
  'span-id-ubigint+row-groups': { columns: { 'trace.span_id': u64('trace.span_id') }, attach: BIG_GROUPS },
  'trace-blob+span-ubigint': { columns: { 'trace.trace_id': blob('trace.trace_id'), 'trace.span_id': u64('trace.span_id') } },
  'trace-blob+span-ubigint+row-groups': {
    columns: { 'trace.trace_id': blob('trace.trace_id'), 'trace.span_id': u64('trace.span_id') },
    attach: BIG_GROUPS,
  },
};

async function measure(dir, name, { columns = {}, attach, order = '' }) {
  const file = join(dir, `${name}.duckdb`);
  const inst = await DuckDBInstance.create(attach ? ':memory:' : file);
  const c = await inst.connect();
  try {
    if (attach) {
      await c.run(`ATTACH '${file}' AS db (${attach})`);
      await c.run('USE db');
    }
    const fields = Object.entries(FIELD_TYPES);
    const fixed = '__time TIMESTAMP NOT NULL, __samplerate BIGINT NOT NULL, __ingested TIMESTAMP NOT NULL';
    const decl = (types) => `${fixed}, ${fields.map(([f, t]) => `${col(f)} ${types(f, t)}`).join(', ')}`;
    // The events as Waggle's table holds them, in memory; then copied into the variant's table.
    await c.run(`CREATE TEMP TABLE g (${decl((_, t) => SQL_TYPE[t])})`);
    await c.run(`CREATE TABLE t (${decl((f, t) => columns[f]?.type ?? SQL_TYPE[t])})`);
    const now = Date.now() * 1000;
    await c.run(generateSql({ table: 'g', physical, n: EVENTS, startUs: now - 7200e6, spanUs: 7200e6, ingestedUs: now }).replace('INSERT INTO "g"', 'INSERT INTO temp.g'));
    const select = ['__time', '__samplerate', '__ingested', ...fields.map(([f]) => (columns[f] ? `${columns[f].sql} AS ${col(f)}` : col(f)))];
    await c.run(`INSERT INTO t SELECT ${select.join(', ')} FROM temp.g ${order}`);
    await c.run('DROP TABLE temp.g');
    await c.run('CHECKPOINT');
    const names = Object.fromEntries(Object.entries(physical).map(([f, p]) => [p, f]));
    return { bytes: statSync(file).size, byColumn: await bytesByColumn(c, 't', names, EVENTS) };
  } finally {
    c.closeSync();
    inst.closeSync();
  }
}

const only = process.env.BENCH_STORAGE_VARIANTS?.split(',');
const dir = mkdtempSync(join(tmpdir(), 'waggle-storage-'));
try {
  const rows = [];
  for (const [name, v] of Object.entries(VARIANTS)) {
    if (only && !only.includes(name)) continue;
    const r = await measure(dir, name, v);
    rows.push({ name, ...r });
    rmSync(join(dir, `${name}.duckdb`), { force: true });
    rmSync(join(dir, `${name}.duckdb.wal`), { force: true });
    console.error(`${name}: ${(r.bytes / EVENTS).toFixed(2)} bytes/event`);
  }
  const columns = [...new Set(rows.flatMap((r) => r.byColumn.map((x) => x.column)))];
  const per = (r, column) => r.byColumn.find((x) => x.column === column)?.perEvent ?? 0;
  console.log(`\nBytes on disk per event, ${EVENTS.toLocaleString('en')} events of the query bench (after a checkpoint):\n`);
  console.log(`| column | ${rows.map((r) => r.name).join(' | ')} |`);
  console.log(`|---|${rows.map(() => '---').join('|')}|`);
  console.log(`| **file** | ${rows.map((r) => `**${(r.bytes / EVENTS).toFixed(2)}**`).join(' | ')} |`);
  for (const column of columns.sort((a, b) => per(rows[0], b) - per(rows[0], a))) {
    console.log(`| ${column} | ${rows.map((r) => per(r, column).toFixed(2)).join(' | ')} |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
