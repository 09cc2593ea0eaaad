// The layouts considered for wide, sparse datasets, measured on DuckDB alone (no Waggle): what
// docs/wide-events.md chose the attribute buckets by. `node bench/wide-layouts.mjs` (about two
// minutes). Three questions:
//
// 1. Reading one field: 1M events of ~38 attributes each from a pool of 3,000 keys (a few keys
//    common, most rare), stored as a typed column per field (the old layout), as one MAP of all
//    attributes, as 8, 16 and 32 MAPs (the key's bucket known from the registry), as a pair
//    of lists (keys, values), and as 16 texts of entries `\x01<key>=<value>` (the layout kept,
//    src/stores/events/duckdb-attributes.ts). Query: a breakdown of one rare and one common
//    field, p50 of 5.
// 2. Writing: CPU per field value of inserting 200,000 events (20 typed fields and 40 attributes,
//    half strings, half numbers) in 10,000-row transactions with a checkpoint every eighth, as
//    60 typed columns, as 20 columns and 16 MAPs, and as 20 columns and 16 texts.
// 3. How many columns a table can have: tables of N columns at a memory limit, 50-row commits
//    with a checkpoint every third (the commit after a checkpoint and the checkpoint itself pin a
//    block per column), for VARCHAR columns and for MAP columns: the largest N that held.
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'waggle-wide-layouts-'));
const ROWS = Number(process.env.WIDE_LAYOUT_ROWS ?? 1_000_000);

async function lookups() {
  const instance = await DuckDBInstance.create(join(dir, 'lookups.duckdb'), { memory_limit: '2GB' });
  const c = await instance.connect();
  const q = async (sql) => (await c.runAndReadAll(sql)).getRowObjectsJS();
  const p50 = async (sql) => {
    const ms = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await q(sql);
      ms.push(performance.now() - t);
    }
    return ms.sort((a, b) => a - b)[2];
  };
  // Each event: ~38 distinct keys, key k drawn with density falling steeply (k = 5 common, 2500 rare).
  await c.run(`CREATE TABLE base AS SELECT i, TIMESTAMP '2026-01-01' + to_seconds(i // 100) AS ts,
    list_distinct(list_transform(range(40), j -> CAST(floor(pow(random(), 2.5) * 3000) AS INTEGER))) AS ks FROM range(${ROWS}) r(i)`);
  const value = `'v' || ((i + k) % 37)`;
  await c.run(`CREATE TABLE columns AS SELECT ts, CASE WHEN list_contains(ks, 2500) THEN 'v' || ((i + 2500) % 37) END AS rare,
    CASE WHEN list_contains(ks, 5) THEN 'v' || ((i + 5) % 37) END AS common FROM base`);
  await c.run(`CREATE TABLE map1 AS SELECT ts, map_from_entries(list_transform(ks, k -> {'k': k, 'v': ${value}})) AS m0 FROM base`);
  for (const b of [8, 16, 32]) {
    const maps = Array.from({ length: b }, (_, n) => `map_from_entries(list_transform(list_filter(ks, k -> k % ${b} = ${n}), k -> {'k': k, 'v': ${value}})) AS m${n}`);
    await c.run(`CREATE TABLE map${b} AS SELECT ts, ${maps.join(', ')} FROM base`);
  }
  await c.run(`CREATE TABLE lists AS SELECT ts, ks, list_transform(ks, k -> ${value}) AS vs FROM base`);
  const texts = Array.from({ length: 16 }, (_, n) => `nullif(array_to_string(list_transform(list_filter(ks, k -> k % 16 = ${n}), k -> chr(1) || k || '=' || ${value}), ''), '') AS t${n}`);
  await c.run(`CREATE TABLE texts16 AS SELECT ts, ${texts.join(', ')} FROM base`);
  await c.run('CHECKPOINT');
  const per = Number((await q('SELECT avg(len(ks)) AS n FROM base'))[0].n).toFixed(1);
  const breakdown = (field, table) => `SELECT ${field} AS x, count(*) FROM ${table} WHERE ts >= TIMESTAMP '2026-01-01' GROUP BY 1 ORDER BY 2 DESC LIMIT 10`;
  const rows = [['a column per field', (k) => breakdown(k === 5 ? 'common' : 'rare', 'columns')]];
  rows.push(['one MAP', (k) => breakdown(`m0[${k}]`, 'map1')]);
  for (const b of [8, 16, 32]) rows.push([`${b} MAPs`, (k) => breakdown(`m${k % b}[${k}]`, `map${b}`)]);
  rows.push(['keys and values lists', (k) => breakdown(`vs[list_position(ks, ${k})]`, 'lists')]);
  rows.push(['16 texts', (k) => {
    const [b, head] = [`t${k % 16}`, `chr(1) || '${k}='`];
    return breakdown(`CASE WHEN contains(${b}, ${head}) THEN split_part(split_part(${b}, ${head}, 2), chr(1), 1) END`, 'texts16');
  }]);
  const out = [];
  for (const [name, sql] of rows) out.push({ layout: name, rareMs: await p50(sql(2500)), commonMs: await p50(sql(5)) });
  const base = out[0];
  console.log(`\nReading one field of ${ROWS.toLocaleString()} events (${per} attributes each), p50 of 5 (ms, and x the column):`);
  for (const r of out) console.log(`  ${r.layout.padEnd(24)} rare ${r.rareMs.toFixed(1).padStart(7)} (${(r.rareMs / base.rareMs).toFixed(1)}x)   common ${r.commonMs.toFixed(1).padStart(7)} (${(r.commonMs / base.commonMs).toFixed(1)}x)`);
  c.closeSync();
  instance.closeSync();
}

/** Whether a table of `n` columns of `type` takes 30 commits of 50 rows, with a checkpoint every third, at `limit`. */
async function holds(type, n, limit) {
  const file = join(dir, `cols-${type.length}-${n}-${limit}.duckdb`);
  const instance = await DuckDBInstance.create(file, { memory_limit: limit, temp_directory: join(dir, 'tmp') });
  const c = await instance.connect();
  const value = type === 'VARCHAR' ? `'value-' || i || '-' || j` : `MAP {j: 'value-' || i}`;
  try {
    await c.run(`CREATE TABLE t (ts TIMESTAMP, ${Array.from({ length: n }, (_, j) => `c${j} ${type}`).join(', ')})`);
    for (let k = 0; k < 30; k++) {
      const cols = Array.from({ length: n }, (_, j) => value.replaceAll('j', String(j)) + ` AS c${j}`).join(', ');
      await c.run(`INSERT INTO t SELECT now()::TIMESTAMP, ${cols} FROM range(50) r(i)`);
      if (k % 3 === 2) await c.run('CHECKPOINT');
    }
    return true;
  } catch {
    return false;
  } finally {
    try {
      c.closeSync();
      instance.closeSync();
    } catch {
      // (a database a fatal error invalidated)
    }
    rmSync(file, { force: true });
    rmSync(`${file}.wal`, { force: true });
  }
}

async function widest(type, limit, candidates) {
  let best = 0;
  for (const n of candidates) {
    if (!(await holds(type, n, limit))) break;
    best = n;
  }
  return best;
}

async function columnLimits() {
  console.log('\nColumns a table held through commits after checkpoints (dense values):');
  for (const limit of ['64MB', '256MB']) {
    const varchar = await widest('VARCHAR', limit, [25, 50, 75, 100, 150, 200, 250, 300]);
    const maps = await widest('MAP(INTEGER, VARCHAR)', limit, [5, 10, 20, 40, 60, 80, 100, 120]);
    console.log(`  ${limit.padStart(6)}: ${varchar} VARCHAR columns, ${maps} MAP columns`);
  }
}

/** CPU seconds per million field values of inserting the same events in each layout (DuckDB alone). */
async function writes() {
  const EVENTS = 200_000;
  const TX = 10_000;
  const [HOT, ATTRIBUTES, BUCKETS] = [20, 40, 16];
  const typed = (j, as) => (j % 2 ? `(hash(r * 11 + ${j}) % 1000000)::BIGINT AS ${as}` : `'w-' || (hash(r * 13 + ${j}) % 3000) || '-xyzuvw' AS ${as}`);
  const hot = Array.from({ length: HOT }, (_, j) => typed(j + 100, `h${j}`));
  const key = (j) => `((r * 7 + ${j} * 131) % 3000)`;
  const text = (j) => (j % 2 ? `((hash(r * 11 + ${j}) % 1000000)::VARCHAR)` : `('w-' || (hash(r * 13 + ${j}) % 3000) || '-xyzuvw')`);
  const inBucket = (b) => Array.from({ length: ATTRIBUTES }, (_, j) => j).filter((j) => j % BUCKETS === b);
  const layouts = [
    ['60 typed columns', Array.from({ length: ATTRIBUTES }, (_, j) => typed(j, `a${j}`))],
    ['20 columns and 16 MAPs', Array.from({ length: BUCKETS }, (_, b) => `MAP([${inBucket(b).map((j) => `${key(j)}::INTEGER`).join(', ')}], [${inBucket(b).map(text).join(', ')}]) AS m${b}`)],
    ['20 columns and 16 texts', Array.from({ length: BUCKETS }, (_, b) => `concat(${inBucket(b).map((j) => `chr(1), ${key(j)}, '=', ${text(j)}`).join(', ')}) AS t${b}`)],
  ];
  console.log(`\nWriting ${EVENTS.toLocaleString()} events of ${HOT} fields and ${ATTRIBUTES} attributes, ${TX.toLocaleString()}-row transactions, a checkpoint every eighth (CPU per M field values):`);
  let base;
  for (const [name, attributes] of layouts) {
    const instance = await DuckDBInstance.create(join(dir, `writes-${name.length}.duckdb`), { memory_limit: '256MB' });
    const c = await instance.connect();
    await c.run(`ATTACH ':memory:' AS m`);
    await c.run(`CREATE TABLE m.src AS SELECT ${[...hot, ...attributes].join(', ')} FROM range(${EVENTS}) t(r)`);
    await c.run('CREATE TABLE t AS SELECT * FROM m.src LIMIT 0');
    const before = process.cpuUsage();
    for (let at = 0, n = 0; at < EVENTS; at += TX, n++) {
      await c.run('BEGIN');
      await c.run(`INSERT INTO t SELECT * FROM m.src LIMIT ${TX} OFFSET ${at}`);
      await c.run('COMMIT');
      if (n % 8 === 7) await c.run('CHECKPOINT');
    }
    await c.run('CHECKPOINT');
    const used = process.cpuUsage(before);
    const perM = (used.user + used.system) / 1e6 / ((EVENTS * (HOT + ATTRIBUTES)) / 1e6);
    base ??= perM;
    console.log(`  ${name.padEnd(24)} ${perM.toFixed(3)} s (${(perM / base).toFixed(2)}x)`);
    c.closeSync();
    instance.closeSync();
  }
}

try {
  await lookups();
  await writes();
  await columnLimits();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
