// Baseline for the ingest benchmark, in its own process: the least work that stores the same
// events durably. Bodies are gunzipped up front (not measured); the measured loop is
// `JSON.parse` of each body plus a raw DuckDB Appender insert of its 1,000 events into one table
// with the events' 20 typed columns (and time, sample rate, ingest time), one appender per batch,
// each flush a committed (WAL-logged) write to a DuckDB file, default DuckDB settings. Prints one
// JSON line.
//
//   node bench/ingest-baseline.mjs <bodies dir> <seconds> <duckdb file>
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DuckDBInstance, DuckDBTimestampValue } from '@duckdb/node-api';
import { FIELDS } from './events.mjs';

const [dir, secondsArg, dbFile] = process.argv.slice(2);
const seconds = Number(secondsArg);
const bodies = readdirSync(dir)
  .filter((f) => f.endsWith('.json.gz'))
  .sort()
  .map((f) => gunzipSync(readFileSync(join(dir, f))));

const instance = await DuckDBInstance.create(dbFile);
const db = await instance.connect();
const columns = FIELDS.map(([, type], i) => `f${i} ${type}`).join(', ');
await db.run(`CREATE TABLE events (time TIMESTAMP NOT NULL, samplerate BIGINT NOT NULL, ingested TIMESTAMP NOT NULL, ${columns})`);
const keys = FIELDS.map(([name]) => name);
const types = FIELDS.map(([, type]) => type);

async function insert(body) {
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
db.closeSync();
instance.closeSync();
console.log(JSON.stringify(r));
