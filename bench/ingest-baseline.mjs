// Baseline for the ingest benchmark, in its own process: the least work that stores the same
// events durably. Bodies are gunzipped up front (not measured); the measured loop is
// `JSON.parse` of each body plus a raw DuckDB bulk insert of its 1,000 events into one table
// with the events' 20 typed columns (and time, sample rate, ingest time), each batch a committed
// (WAL-logged) write to a DuckDB file. Prints one JSON line.
//
//   node bench/ingest-baseline.mjs <bodies dir> <seconds> <duckdb file> [appender|chunks]
//
// Two ways to insert, each the plain way of its kind:
// - `appender`: one DuckDB Appender call per value (node-api's appendVarchar, appendBigInt, …).
// - `chunks` (the default, and the cheaper of the two): whole 2,048-row data chunks, the values
//   written column by column into typed arrays (short ASCII strings inline in DuckDB's 16-byte
//   string_t, longer ones one native call each) and copied into each vector with one native call
//   per column, then one appendDataChunk per chunk. This is how the server appends too, so the
//   CPU ratio is not flattered by a slower baseline insert. (INSERT … read_json of an NDJSON file
//   costs about 10 ms per call plus the JavaScript to write the file: more, per batch.)
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DuckDBDataChunk, DuckDBInstance, DuckDBTimestampValue } from '@duckdb/node-api';
import { FIELDS } from './events.mjs';

const [dir, secondsArg, dbFile, mode = 'chunks'] = process.argv.slice(2);
const seconds = Number(secondsArg);
const bodies = readdirSync(dir)
  .filter((f) => f.endsWith('.json.gz'))
  .sort()
  .map((f) => gunzipSync(readFileSync(join(dir, f))));

// The server's checkpoint threshold (src/stores/events/duckdb.ts), so that both fold their WAL
// into the file equally often; with DuckDB's default (16 MB) this baseline costs about a fifth more.
const instance = await DuckDBInstance.create(dbFile, { checkpoint_threshold: '64MB' });
const db = await instance.connect();
const columns = FIELDS.map(([, type], i) => `f${i} ${type}`).join(', ');
await db.run(`CREATE TABLE events (time TIMESTAMP NOT NULL, samplerate BIGINT NOT NULL, ingested TIMESTAMP NOT NULL, ${columns})`);
const keys = FIELDS.map(([name]) => name);
const types = FIELDS.map(([, type]) => type);

async function insertAppender(body) {
  const items = JSON.parse(body.toString('utf8'));
  const appender = await db.createAppender('events');
  const ingested = new DuckDBTimestampValue(BigInt(Date.now() * 1000));
  for (const item of items) {
    appender.appendTimestamp(new DuckDBTimestampValue(BigInt(Date.parse(item.time) * 1000)));
    appender.appendBigInt(BigInt(item.samplerate ?? 1));
    appender.appendTimestamp(ingested);
    const data = item.data;
    for (let i = 0; i < keys.length; i++) {
      const v = data[keys[i]];
      if (v === undefined || v === null) appender.appendNull();
      else if (types[i] === 'VARCHAR') appender.appendVarchar(v);
      else if (types[i] === 'BIGINT') appender.appendBigInt(BigInt(v));
      else if (types[i] === 'DOUBLE') appender.appendDouble(v);
      else appender.appendBoolean(v);
    }
    appender.endRow();
  }
  appender.flushSync();
  appender.closeSync();
  return items.length;
}

// --- data chunks through the raw C API bindings (the ones node-api itself loads)
const bindings = createRequire(createRequire(import.meta.url).resolve('@duckdb/node-api'))('@duckdb/node-bindings');
const VECTOR = bindings.vector_size();
const T = bindings.Type;
const KIND = { VARCHAR: 0, BIGINT: 1, DOUBLE: 2, BOOLEAN: 3 };
const kinds = types.map((t) => KIND[t]);
const logical = [T.TIMESTAMP, T.BIGINT, T.TIMESTAMP, ...types.map((t) => T[t])].map((t) => bindings.create_logical_type(t));
const buffers = [1, 1, 1, ...kinds].map((k) => {
  const bytes = new ArrayBuffer(VECTOR * (k === 0 ? 16 : 8));
  return { kind: k, bytes, u8: new Uint8Array(bytes), u32: new Uint32Array(bytes), i32: new Int32Array(bytes), f64: new Float64Array(bytes), validity: new Uint8Array(VECTOR / 8), longRows: [], longValues: [] };
});
const int64 = (b, row, v) => {
  const hi = Math.floor(v / 2 ** 32);
  b.u32[2 * row] = v - hi * 2 ** 32;
  b.i32[2 * row + 1] = hi;
};
function setString(b, row, v) {
  const n = v.length;
  if (n <= 12) {
    const at = row * 16 + 4;
    let i = 0;
    for (; i < n; i++) {
      const ch = v.charCodeAt(i);
      if (ch >= 0x80) break;
      b.u8[at + i] = ch;
    }
    if (i === n) {
      b.u32[row * 4] = n;
      return;
    }
  }
  b.longRows.push(row);
  b.longValues.push(v);
}

async function insertChunks(body) {
  const items = JSON.parse(body.toString('utf8'));
  const appender = await db.createAppender('events');
  const chunk = new DuckDBDataChunk(bindings.create_data_chunk(logical));
  const raw = chunk.chunk;
  const ingested = Date.now() * 1000;
  for (let start = 0; start < items.length; start += VECTOR) {
    const rows = Math.min(VECTOR, items.length - start);
    if (start > 0) bindings.data_chunk_reset(raw);
    for (const b of buffers) {
      b.validity.fill(0);
      if (b.kind === 0) b.u8.fill(0);
      b.longRows.length = 0;
      b.longValues.length = 0;
    }
    for (let row = 0; row < rows; row++) {
      const item = items[start + row];
      int64(buffers[0], row, Date.parse(item.time) * 1000);
      int64(buffers[1], row, item.samplerate ?? 1);
      int64(buffers[2], row, ingested);
      const data = item.data;
      for (let i = 0; i < keys.length; i++) {
        const v = data[keys[i]];
        if (v === undefined || v === null) continue;
        const b = buffers[i + 3];
        if (b.kind === 0) setString(b, row, v);
        else if (b.kind === 1) int64(b, row, v);
        else if (b.kind === 2) b.f64[row] = v;
        else b.u8[row] = v ? 1 : 0;
        b.validity[row >> 3] |= 1 << (row & 7);
      }
    }
    buffers.forEach((b, c) => {
      const vector = bindings.data_chunk_get_vector(raw, c);
      bindings.copy_data_to_vector(vector, 0, b.bytes, 0, b.kind === 3 ? rows : b.kind === 0 ? rows * 16 : rows * 8);
      for (let i = 0; i < b.longRows.length; i++) bindings.vector_assign_string_element(vector, b.longRows[i], b.longValues[i]);
      if (c >= 3) {
        bindings.vector_ensure_validity_writable(vector);
        bindings.copy_data_to_vector_validity(vector, 0, b.validity.buffer, 0, Math.ceil(rows / 64) * 8);
      }
    });
    bindings.data_chunk_set_size(raw, rows);
    appender.appendDataChunk(chunk);
  }
  appender.flushSync();
  appender.closeSync();
  return items.length;
}

if (mode !== 'appender' && mode !== 'chunks') throw new Error(`unknown baseline mode ${mode}`);
const insert = mode === 'appender' ? insertAppender : insertChunks;

/** CPU seconds of this process's main (JavaScript) thread. */
function mainCpuSeconds() {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function loop(forSeconds) {
  let events = 0;
  let i = 0;
  const cpu0 = process.cpuUsage();
  const main0 = mainCpuSeconds();
  const t0 = performance.now();
  while (performance.now() - t0 < forSeconds * 1000) events += await insert(bodies[i++ % bodies.length]);
  const cpu = process.cpuUsage(cpu0);
  return { events, seconds: (performance.now() - t0) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6, mainCpuSeconds: mainCpuSeconds() - main0 };
}

await loop(Math.min(2, seconds / 5)); // warm-up
const r = await loop(seconds);
const [[count]] = (await db.runAndReadAll('SELECT count(*) FROM events')).getRowsJS();
if (Number(count) < r.events) throw new Error(`the baseline stored ${count} events, expected at least ${r.events}`);
db.closeSync();
instance.closeSync();
console.log(JSON.stringify({ ...r, mode }));
