// The calculated-field language evaluated for real: events ingested through POST /1/batch, every
// expression compiled with FieldScope + columnSources and run in DuckDB and in ClickHouse (single
// node: the same tables, the same reference values), and each result compared
// with a value computed independently here, in TypeScript, from the events as sent. Covers every
// function and operator, nulls, coercions, string→number rules, division by zero, regexes (and the
// RE2 syntax check against DuckDB itself), time functions, literals and escapes, calculated-field
// chains, cycles and the size limits.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { initialTenancy } from './tenancy-fixtures.js';
import {
  compileExpression,
  ExpressionError,
  FUNCTION_NAMES,
  MAX_EXPRESSION_DEPTH,
  parseExpression,
  references,
} from '../src/query/expr/index.js';
import { checkRegex } from '../src/query/expr/regex.js';
import { STRFTIME_SPECIFIERS } from '../src/query/expr/compile.js';
import { checkExpression, columnSources, FieldScope, type CalculatedSource } from '../src/query/fields.js';
import { tableName } from '../src/stores/events/types.js';
import { duckdbDialect } from '../src/stores/events/duckdb-dialect.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';
import type { Dataset } from '../src/stores/config/types.js';

type V = string | number | boolean | null | undefined;
type Row = Record<string, V>;

// ---- the events ------------------------------------------------------------------------------
const ROWS: Row[] = [
  { i: 3, f: 2.5, s: 'Hello', b: true, n: '12.5', bad: 'abc', st: 'true', e: '', u: 'héllo😀', ts: 1500549764.888, t: '2017-07-20T11:22:44.888Z', z: 0 },
  { i: -7, f: -1.25, s: 'world', b: false, n: ' -3 ', bad: '1x', st: 'TRUE', e: 'x', u: 'abc', ts: 0, t: '2017-07-20T11:22:44+02:00', z: 0 },
  { i: 0, f: 0.5, s: 'hello', b: true, n: '4e2', bad: '', st: 'false', e: '', u: '', ts: 86399.5, t: '2017-07-20', z: 0 },
  { i: 12, f: 100, s: 'Hello world', b: false, n: '7', bad: 'NaN?', st: '1', u: 'ß', ts: -1, t: 'garbage', z: 0 },
  {},
  { s: 'only' },
];
/** Odd field names, each with a value on the first event only. */
const ODD: Record<string, string> = {
  'quoted col': 'spaces',
  'a"; DROP TABLE x; --': 'injected',
  '1st': 'first',
  'http.status': 'dotted',
};

// ---- an independent reference of the documented semantics -------------------------------------
const NUMERIC = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;
const isNull = (x: V): x is null | undefined => x === null || x === undefined;
const truth = (x: V) => (typeof x === 'boolean' ? x : typeof x === 'number' ? x !== 0 : x === 'true');
const num = (x: V): number | null => (isNull(x) ? null : typeof x === 'number' ? x : typeof x === 'boolean' ? 0 : NUMERIC.test(x) ? Number(x) : 0);
const kind = (x: V) => (isNull(x) ? 'null' : typeof x === 'number' ? 'num' : typeof x);
const eq = (a: V, b: V) => (isNull(a) && isNull(b)) || (!isNull(a) && !isNull(b) && kind(a) === kind(b) && a === b);
const cmp = (a: V, b: V, f: (x: number) => boolean) => {
  if (isNull(a) || isNull(b) || kind(a) !== kind(b) || typeof a === 'boolean') return false;
  return f(a < b! ? -1 : a > b! ? 1 : 0);
};
/** DuckDB's text form of a DOUBLE for the moderate values used here ("2.5", "100.0"). */
const fmtFloat = (x: number) => (Number.isInteger(x) ? x.toFixed(1) : String(x));
const strOf = (x: V, float = false) => (isNull(x) ? null : typeof x === 'number' && float ? fmtFloat(x) : String(x));
const bucket = (x: V, size: number, bounds?: [number, number], float = false): string | null => {
  const v = num(x);
  if (v === null) return null;
  const f = (n: number) => (float ? fmtFloat(n) : String(n));
  if (bounds && v < bounds[0]) return `(-inf, ${f(bounds[0])})`;
  if (bounds && v >= bounds[1]) return `[${f(bounds[1])}, +inf)`;
  const origin = bounds ? bounds[0] : 0;
  const lo = origin + Math.floor((v - origin) / size) * size;
  const hi = bounds ? Math.min(lo + size, bounds[1]) : lo + size;
  return `[${f(lo)}, ${f(hi)})`;
};
const md5Signed = (s: string) => createHash('md5').update(s).digest().readBigInt64LE(8);
const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const fmtTime = (secs: number) => {
  const d = new Date(secs * 1000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
};
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/**
 * The expressions evaluated in an event engine's SQL: the tables below run on DuckDB and on
 * ClickHouse (single node), each answer compared with the same TypeScript reference, so both
 * engines give the same values. The compiler's own checks (cycles, sizes, nesting) are engine-free
 * and run on DuckDB only.
 */
function evaluatedIn(engine: { name: string; setting(): string | undefined; clickhouse: boolean }) {
  let t: TestApp;
  let ds: Dataset;
  let t0: number;
  const eventSecs = (k: number) => (t0 + k * 1000) / 1000;

  beforeAll(async () => {
    t = await makeApp({ eventStore: engine.setting() });
    t0 = Math.floor(t.clock.ms / 1000) * 1000 - 3_600_000;
    const events = ROWS.map((r, k) => {
      const data: Record<string, unknown> = { k };
      for (const [key, val] of Object.entries(r)) if (val !== undefined) data[key] = val;
      if (k === 0) Object.assign(data, ODD);
      return { time: new Date(t0 + k * 1000).toISOString(), data };
    });
    const res = await t.app.inject({ method: 'POST', url: '/1/batch/exprs', headers: t.ingest, payload: events });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toEqual(events.map(() => ({ status: 202 })));
    const { environment } = await initialTenancy(t);
    ds = (await t.store.getDataset(environment.id, 'exprs'))!;
  });
  afterAll(() => t.close());

  /** Compiles `text` in a scope over the dataset (plus calculated fields) and runs it per event. */
  async function evaluate(text: string, calculated: CalculatedSource[] = [], dataset = ds): Promise<unknown[]> {
    const params: unknown[] = [];
    const scope = new FieldScope({
      dialect: t.events.dialect,
      columns: columnSources(t.events.dialect, await t.store.listColumns(dataset.id)),
      calculated,
      eventTimeSql: '__time',
      ingestTimeSql: '__ingested',
      bind: (v) => {
        params.push(v);
        return `$${params.length}`;
      },
    });
    const compiled = checkExpression(text, scope);
    for (const p of params) if (typeof p === 'string' && p.length > 3 && !/^[\d.e+-]+$/.test(p)) expect(compiled.sql).not.toContain(p);
    const rows = await t.events.query(`SELECT ${compiled.sql} AS v FROM ${tableName(dataset.id)} ORDER BY __time`, params);
    return rows.map((r) => (typeof r.v === 'bigint' && r.v <= BigInt(Number.MAX_SAFE_INTEGER) && r.v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(r.v) : r.v));
  }

  const check = async (text: string, expected: (r: Row, k: number) => unknown) => {
    const got = await evaluate(text);
    const want = ROWS.map((r, k) => {
      const w = expected(r, k);
      return w === undefined ? null : w;
    });
    expect(got.length, text).toBe(ROWS.length);
    got.forEach((g, k) => {
      const w = want[k];
      if (typeof w === 'number' && typeof g === 'number' && !Number.isInteger(w)) expect(g, `${text} on event ${k}`).toBeCloseTo(w, 9);
      // (ClickHouse's JSON gives integers above 2^53 as doubles: docs/clickhouse.md)
      else if (engine.clickhouse && typeof w === 'bigint') expect(Number(g), `${text} on event ${k}`).toBe(Number(w));
      // (and booleans as UInt8 1/0; the query layer shows them as true/false by the field's type)
      else if (engine.clickhouse && typeof w === 'boolean') expect(g, `${text} on event ${k}`).toBe(w ? 1 : 0);
      else expect(g, `${text} on event ${k}`).toEqual(w);
    });
  };

  type Case = [string, (r: Row, k: number) => unknown];
  const table = (name: string, cases: Case[]) =>
    describe(name, () => {
      for (const [text, expected] of cases) it(text, () => check(text, expected));
    });

  table('arithmetic: + - * / % SUM SUB MUL DIV MOD, coercion and nulls', [
    ['$i + $f', (r) => (isNull(r.i) || isNull(r.f) ? null : r.i! as number + (r.f as number))],
    ['$i + 1', (r) => (isNull(r.i) ? null : (r.i as number) + 1)],
    ['SUM($i, $n, $bad)', (r) => (isNull(r.i) ? null : num(r.i)! + num(r.n)! + num(r.bad)!)],
    ['SUM($i, $b)', (r) => (isNull(r.i) ? null : (r.i as number) + 0)],
    ['SUM(1.0, 5, "2.3")', () => 8.3],
    ['$i - $f', (r) => (isNull(r.i) ? null : (r.i as number) - (r.f as number))],
    ['SUB($n, 1)', (r) => (isNull(r.n) ? null : num(r.n)! - 1)],
    ['10 - 4 - 3', () => 3],
    ['$i * 2', (r) => (isNull(r.i) ? null : (r.i as number) * 2)],
    ['MUL($i, $f, 2)', (r) => (isNull(r.i) ? null : (r.i as number) * (r.f as number) * 2)],
    ['$i / 2', (r) => (isNull(r.i) ? null : (r.i as number) / 2)],
    ['DIV($n, 4)', (r) => (isNull(r.n) ? null : num(r.n)! / 4)],
    ['$i / 0', () => null],
    ['DIV($f, $z)', () => null],
    ['$f / 0.0', () => null],
    ['$i % 5', (r) => (isNull(r.i) ? null : (r.i as number) % 5)],
    ['MOD($f, 2)', (r) => (isNull(r.f) ? null : (r.f as number) % 2)],
    ['MOD(-7, 3)', () => -1],
    ['MOD(-7.5, 2)', () => -1.5],
    ['MOD($i, 0)', () => null],
    ['$i % $z', () => null],
    ['-$i', (r) => (isNull(r.i) ? null : -(r.i as number) || 0)],
    ['- $n', (r) => (isNull(r.n) ? null : -num(r.n)! || 0)],
    ['$bad * 1', (r) => (isNull(r.bad) ? null : 0)],
    ['$nope + 1', () => null],
    ['SUM($i, $nope)', () => null],
    ['9223372036854775807 + 1', () => null],
    ['-9223372036854775808 - 1', () => null],
    ['9223372036854775807 * 2', () => null],
    ['MOD(-9223372036854775808, -1)', () => 0],
    ['9223372036854775806 + 1', () => 9223372036854775807n],
    ['MIN($i, $f, 1)', (r) => Math.min(...[r.i, r.f, 1].filter((x) => !isNull(x)).map(Number))],
    ['MAX($i, $f)', (r) => (isNull(r.i) ? null : Math.max(r.i as number, r.f as number))],
    ['MAX($s, $e)', (r) => [r.s, r.e].filter((x) => !isNull(x)).sort().pop() ?? null],
    ['MIN($s, $e)', (r) => [r.s, r.e].filter((x) => !isNull(x)).sort()[0] ?? null],
    ['MIN($i, $s)', (r) => (!isNull(r.i) ? String(r.i) : (r.s ?? null))],
    ['MAX($nope, null)', () => null],
    ['LOG10($i)', (r) => (typeof r.i === 'number' && r.i > 0 ? Math.log10(r.i) : null)],
    ['LOG10(100)', () => 2],
    ['LOG10($n)', (r) => (num(r.n) !== null && num(r.n)! > 0 ? Math.log10(num(r.n)!) : null)],
  ]);

  table('BUCKET (label "[lo, hi)", open-ended "(-inf, min)" and "[max, +inf)")', [
    ['BUCKET($i, 5)', (r) => bucket(r.i, 5)],
    ['BUCKET($i, 5, 0, 10)', (r) => bucket(r.i, 5, [0, 10])],
    ['BUCKET($i, 4, 1, 11)', (r) => bucket(r.i, 4, [1, 11])],
    ['BUCKET(10, 4, 1, 11)', () => '[9, 11)'],
    ['BUCKET(-1, 4, -10, 10)', () => '[-2, 2)'],
    ['BUCKET($f, 0.5)', (r) => bucket(r.f, 0.5, undefined, true)],
    ['BUCKET($i, 2.5)', (r) => bucket(r.i, 2.5, undefined, true)],
    ['BUCKET($n, 10, 0, 100)', (r) => bucket(r.n, 10, [0, 100], true)],
    ['BUCKET($nope, 10)', () => null],
  ]);

  table('casts: INT FLOAT BOOL STRING', [
    ['INT($f)', (r) => (isNull(r.f) ? null : Math.trunc(r.f as number) || 0)],
    ['INT($n)', (r) => (isNull(r.n) ? null : Math.trunc(num(r.n)!))],
    ['INT($bad)', (r) => (isNull(r.bad) ? null : 0)],
    ['INT($b)', (r) => (isNull(r.b) ? null : 0)],
    ['INT($i)', (r) => r.i ?? null],
    ['INT(1e300)', () => null],
    ['INT(null)', () => null],
    ['FLOAT($i)', (r) => r.i ?? null],
    ['FLOAT($n)', (r) => num(r.n)],
    ['FLOAT("3.1415926535")', () => 3.1415926535],
    ['BOOL($i)', (r) => truth(r.i)],
    ['BOOL($f)', (r) => truth(r.f)],
    ['BOOL($st)', (r) => truth(r.st)],
    ['BOOL($s)', (r) => truth(r.s)],
    ['BOOL($b)', (r) => truth(r.b)],
    ['BOOL("")', () => false],
    ['BOOL($nope)', () => false],
    ['STRING($i)', (r) => strOf(r.i) ?? ''],
    ['STRING($f)', (r) => strOf(r.f, true) ?? ''],
    ['STRING($b)', (r) => strOf(r.b) ?? ''],
    ['STRING($nope)', () => ''],
    ['STRING(4e+2)', () => '400.0'],
  ]);

  table('strings: CONCAT STARTS_WITH/PREFIX ENDS_WITH/SUFFIX CONTAINS TO_LOWER LENGTH', [
    ['CONCAT($s, "-", $i, $b, $nope)', (r) => [r.s, '-', r.i, r.b].filter((x) => !isNull(x)).map(String).join('')],
    ['CONCAT($f, $e)', (r) => [strOf(r.f, true), r.e].filter((x) => !isNull(x)).join('')],
    ['CONCAT("\'; DROP TABLE t; --", $s)', (r) => `'; DROP TABLE t; --${r.s ?? ''}`],
    ['STARTS_WITH($s, "He")', (r) => typeof r.s === 'string' && r.s.startsWith('He')],
    ['PREFIX($s, "He")', (r) => typeof r.s === 'string' && r.s.startsWith('He')],
    ['STARTS_WITH($i, "1")', () => false],
    ['ENDS_WITH($s, "world")', (r) => typeof r.s === 'string' && r.s.endsWith('world')],
    ['SUFFIX($s, "lo")', (r) => typeof r.s === 'string' && r.s.endsWith('lo')],
    ['CONTAINS($s, "o w")', (r) => typeof r.s === 'string' && r.s.includes('o w')],
    ['CONTAINS($s, $e)', (r) => typeof r.s === 'string' && typeof r.e === 'string' && r.s.includes(r.e)],
    ['CONTAINS($i, "1")', () => false],
    ['TO_LOWER($s)', (r) => (isNull(r.s) ? null : (r.s as string).toLowerCase())],
    ['TO_LOWER($u)', (r) => (isNull(r.u) ? null : (r.u as string).toLowerCase())],
    ['TO_LOWER($b)', (r) => strOf(r.b)],
    ['LENGTH($u)', (r) => (isNull(r.u) ? null : [...(r.u as string)].length)],
    ['LENGTH($u, "chars")', (r) => (isNull(r.u) ? null : [...(r.u as string)].length)],
    ['LENGTH($u, "bytes")', (r) => (isNull(r.u) ? null : Buffer.byteLength(r.u as string))],
    ['LENGTH($i)', (r) => (isNull(r.i) ? null : 0)],
  ]);

  const firstGroup = (re: RegExp, s: V) => {
    if (typeof s !== 'string') return null;
    const m = re.exec(s);
    const v = m ? (m.length > 1 ? m[1] : m[0]) : undefined;
    return v ? v : null;
  };
  table('regular expressions: REG_MATCH REG_VALUE REG_COUNT', [
    ['REG_MATCH($s, `^[A-Z]`)', (r) => typeof r.s === 'string' && /^[A-Z]/.test(r.s)],
    ['REG_MATCH($s, "(?i)^h")', (r) => typeof r.s === 'string' && /^h/i.test(r.s)],
    ['REG_MATCH($s, `\\w+\\s\\w+`)', (r) => typeof r.s === 'string' && /\w+\s\w+/.test(r.s)],
    ['REG_MATCH($i, `3`)', () => false],
    ['REG_VALUE($s, `l+(o)`)', (r) => firstGroup(/l+(o)/, r.s)],
    ['REG_VALUE($s, `[a-z]+`)', (r) => firstGroup(/[a-z]+/, r.s)],
    ['REG_VALUE($s, `(?P<word>w\\w*)`)', (r) => firstGroup(/(w\w*)/, r.s)],
    ['REG_VALUE($s, `zzz`)', () => null],
    ['REG_COUNT($s, `l`)', (r) => (typeof r.s === 'string' ? (r.s.match(/l/g) ?? []).length : 0)],
    ['REG_COUNT($s, `[a-z]+`)', (r) => (typeof r.s === 'string' ? (r.s.match(/[a-z]+/g) ?? []).length : 0)],
    ['REG_COUNT($i, `1`)', () => 0],
    ['REG_MATCH($"a\\"; DROP TABLE x; --", "^inj")', (_, k) => k === 0],
  ]);

  table('time: UNIX_TIMESTAMP EVENT_TIMESTAMP INGEST_TIMESTAMP FORMAT_TIME', [
    ['UNIX_TIMESTAMP($t)', (r) => {
      if (typeof r.t !== 'string' || r.t === 'garbage') return null;
      // Without a zone the time is UTC.
      return Date.parse(/T/.test(r.t) ? r.t : `${r.t}T00:00:00Z`) / 1000;
    }],
    ['UNIX_TIMESTAMP("2017-07-20T11:22:44.888Z")', () => 1500549764.888],
    ['UNIX_TIMESTAMP("2017-07-20 11:22:44")', () => 1500549764],
    ['UNIX_TIMESTAMP($ts)', (r) => r.ts ?? null],
    ['UNIX_TIMESTAMP($b)', () => null],
    ['EVENT_TIMESTAMP()', (_, k) => eventSecs(k)],
    ['EVENT_TIMESTAMP() - UNIX_TIMESTAMP($ts)', (r, k) => (isNull(r.ts) ? null : eventSecs(k) - (r.ts as number))],
    // (ClickHouse formats 1970 to 2105 only: docs/clickhouse.md)
    ['FORMAT_TIME("%Y-%m-%d %H:%M:%S", $ts)', (r) => (isNull(r.ts) || (engine.clickhouse && (r.ts as number) < 0) ? null : fmtTime(r.ts as number))],
    ['FORMAT_TIME("%A", EVENT_TIMESTAMP())', (_, k) => DAYS[new Date(eventSecs(k) * 1000).getUTCDay()]],
    ['FORMAT_TIME("%Y %%", $n)', (r) => (isNull(r.n) || (engine.clickhouse && num(r.n)! < 0) ? null : NUMERIC.test(r.n as string) ? `${new Date(Number(r.n) * 1000).getUTCFullYear()} %` : null)],
    ['FORMAT_TIME("%H", $t)', () => null],
    ['FORMAT_TIME("%Y", 1e300)', () => null],
  ]);

  it('INGEST_TIMESTAMP() is the receive time (the app clock when the batch was stored)', async () => {
    const got = await evaluate('INGEST_TIMESTAMP()');
    for (const g of got) expect(g).toBe(t.clock.ms / 1000);
  });

  it('RAND() is a float in [0, 1), different per event', async () => {
    const got = (await evaluate('RAND()')) as number[];
    for (const g of got) expect(g >= 0 && g < 1).toBe(true);
    expect(new Set(got).size).toBeGreaterThan(1);
  });

  it('METRO_HASH(x): the signed low 64 bits of the MD5 of the string form, stable', async () => {
    // (ClickHouse's JSON gives 64-bit integers as doubles: compared as doubles there)
    const bigs = (xs: unknown[]) => xs.map((x) => (x === null ? null : engine.clickhouse ? Number(x) : BigInt(x as number | bigint)));
    const md5Of = (s: string) => (engine.clickhouse ? Number(md5Signed(s)) : md5Signed(s));
    expect(bigs(await evaluate('METRO_HASH($s)'))).toEqual(ROWS.map((r) => (isNull(r.s) ? null : md5Of(r.s as string))));
    expect(bigs(await evaluate('METRO_HASH($i)'))).toEqual(ROWS.map((r) => (isNull(r.i) ? null : md5Of(String(r.i)))));
    expect(bigs(await evaluate('METRO_HASH("hello")'))[0]).toBe(engine.clickhouse ? Number(-7870859413830143559n) : -7870859413830143559n);
  });

  table('conditionals: IF SWITCH COALESCE', [
    ['IF($b, "yes", "no")', (r) => (truth(r.b) ? 'yes' : 'no')],
    ['IF($i, 1)', (r) => (truth(r.i) ? 1 : null)],
    ['IF(GT($i, 0), "pos", LT($i, 0), "neg", "zero")', (r) => (cmp(r.i, 0, (c) => c > 0) ? 'pos' : cmp(r.i, 0, (c) => c < 0) ? 'neg' : 'zero')],
    ['IF(GT($i, 0), "pos", LT($i, 0), "neg")', (r) => (cmp(r.i, 0, (c) => c > 0) ? 'pos' : cmp(r.i, 0, (c) => c < 0) ? 'neg' : null)],
    ['IF($b, $i, $s)', (r) => (truth(r.b) ? strOf(r.i) : (r.s ?? null))],
    ['IF($st, 1, 2.5)', (r) => (truth(r.st) ? 1 : 2.5)],
    ['IF($f, "nonzero", "zero-or-null")', (r) => (truth(r.f) ? 'nonzero' : 'zero-or-null')],
    ['if(true, null)', () => null],
    ['SWITCH($s, "Hello", 1, "world", 2, 0)', (r) => (r.s === 'Hello' ? 1 : r.s === 'world' ? 2 : 0)],
    ['SWITCH($s, "hello", "h")', (r) => (r.s === 'hello' ? 'h' : null)],
    ['SWITCH($i, "3", "three", "other")', () => 'other'],
    ['SWITCH($s, `Hello world`, $i, 2.5)', (r) => (r.s === 'Hello world' ? r.i : 2.5)],
    ['COALESCE($nope, $e, $s)', (r) => [r.e, r.s].find((x) => !isNull(x) && x !== '') ?? null],
    ['COALESCE($i, $s)', (r) => (!isNull(r.i) ? String(r.i) : (r.s ?? null))],
    ['COALESCE($e)', (r) => (r.e ? r.e : null)],
    ['COALESCE($i, 0)', (r) => r.i ?? 0],
  ]);

  table('comparisons: LT LTE GT GTE EQUALS IN NOT_IN and < <= > >= = !=', [
    ['LT($i, $f)', (r) => cmp(r.i, r.f, (c) => c < 0)],
    ['$i < $f', (r) => cmp(r.i, r.f, (c) => c < 0)],
    ['LTE($i, 3)', (r) => cmp(r.i, 3, (c) => c <= 0)],
    ['$i <= 3', (r) => cmp(r.i, 3, (c) => c <= 0)],
    ['GT($s, "m")', (r) => cmp(r.s, 'm', (c) => c > 0)],
    ['$s > "m"', (r) => cmp(r.s, 'm', (c) => c > 0)],
    ['GTE($s, "hello")', (r) => cmp(r.s, 'hello', (c) => c >= 0)],
    ['$i >= 0', (r) => cmp(r.i, 0, (c) => c >= 0)],
    ['LT($s, 1)', () => false],
    ['GT($b, false)', () => false],
    ['EQUALS($i, 3)', (r) => eq(r.i, 3)],
    ['$i = 3', (r) => eq(r.i, 3)],
    ['EQUALS($i, 3.0)', (r) => eq(r.i, 3)],
    ['EQUALS($i, "3")', () => false],
    ['EQUALS($nope, null)', () => true],
    ['EQUALS($i, $nope)', (r) => isNull(r.i)],
    ['EQUALS($b, true)', (r) => r.b === true],
    ['$s != "Hello"', (r) => !eq(r.s, 'Hello')],
    ['IN($s, "Hello", "world")', (r) => ['Hello', 'world'].some((o) => eq(r.s, o))],
    ['IN($i, 3, "3", 12.0)', (r) => [3, 12].some((o) => eq(r.i, o))],
    ['IN(TO_LOWER($s), "hello", "only")', (r) => typeof r.s === 'string' && ['hello', 'only'].includes(r.s.toLowerCase())],
    ['NOT_IN($i, 3, -7)', (r) => ![3, -7].some((o) => eq(r.i, o))],
    ['IN($nope, null)', () => true],
  ]);

  table('boolean: EXISTS/HAS_VALUE NOT AND OR ! and the AND/OR keywords', [
    ['EXISTS($s)', (r) => !isNull(r.s)],
    ['HAS_VALUE($e)', (r) => !isNull(r.e)],
    ['EXISTS($nope)', () => false],
    ['NOT($b)', (r) => !truth(r.b)],
    ['!$b', (r) => !truth(r.b)],
    ['NOT($i)', (r) => !truth(r.i)],
    ['AND($b, $i)', (r) => truth(r.b) && truth(r.i)],
    ['AND($b)', (r) => truth(r.b)],
    ['$b AND $i > 0', (r) => truth(r.b) && cmp(r.i, 0, (c) => c > 0)],
    ['OR($b, $st)', (r) => truth(r.b) || truth(r.st)],
    ['$b or $i > 0', (r) => truth(r.b) || cmp(r.i, 0, (c) => c > 0)],
    ['OR(EQUALS($s, "only"), AND($b, NOT(EXISTS($nope))))', (r) => r.s === 'only' || truth(r.b)],
  ]);

  table('precedence and literals', [
    ['1 + 2 * 3', () => 7],
    ['(1 + 2) * 3', () => 9],
    ['2 * 3 % 4', () => 2],
    ['-2 * -3', () => 6],
    ['--5', () => 5],
    ['1 < 2 = true', () => true],
    ['!false AND false', () => false],
    ['true OR false AND false', () => true],
    ['1 + 2 = 3 AND 2 > 1', () => true],
    ['$i * 2 + 1 > 6', (r) => !isNull(r.i) && (r.i as number) * 2 + 1 > 6],
    ['$i + $i * $i', (r) => (isNull(r.i) ? null : (r.i as number) + (r.i as number) ** 2)],
    ['.5 + 4e+2', () => 400.5],
    ['4e-2', () => 0.04],
    ['4E2', () => 400],
    ['"a\\tb\\n\\"\\\\\\u00e9\\U0001F600\\x41\\101\\a\\v"', () => 'a\tb\n"\\é😀AA\x07\x0b'],
    ['"\\xc3\\xa9"', () => 'é'],
    ['`raw\\n "quotes" $notacolumn`', () => 'raw\\n "quotes" $notacolumn'],
    ['true', () => true],
    ['FALSE', () => false],
    ['null', () => null],
    ['sum(1, 2,)', () => 3],
    ['Concat("a", "b",)', () => 'ab'],
    ['$"quoted col"', (_, k) => (k === 0 ? 'spaces' : null)],
    ['$`quoted col`', (_, k) => (k === 0 ? 'spaces' : null)],
    ['$"a\\"; DROP TABLE x; --"', (_, k) => (k === 0 ? 'injected' : null)],
    ['$"1st"', (_, k) => (k === 0 ? 'first' : null)],
    ['$http.status', (_, k) => (k === 0 ? 'dotted' : null)],
    ['$nope', () => null],
    ['CONCAT($nope, "x")', () => 'x'],
    ['9223372036854775807', () => 9223372036854775807n],
    ['-9223372036854775808', () => -9223372036854775808n],
  ]);

  it('the event table is intact after the injection attempts', async () => {
    const rows = await t.events.query(`SELECT count(*) AS n FROM ${tableName(ds.id)}`);
    expect(Number(rows[0].n)).toBe(ROWS.length);
  });

  it('every function of the table is exercised above (the function list is what the README documents)', () => {
    expect(FUNCTION_NAMES).toEqual(
      [
        'AND', 'BOOL', 'BUCKET', 'COALESCE', 'CONCAT', 'CONTAINS', 'DIV', 'ENDS_WITH', 'EQUALS', 'EVENT_TIMESTAMP', 'EXISTS',
        'FLOAT', 'FORMAT_TIME', 'GT', 'GTE', 'HAS_VALUE', 'IF', 'IN', 'INGEST_TIMESTAMP', 'INT', 'LENGTH', 'LOG10', 'LT', 'LTE',
        'MAX', 'METRO_HASH', 'MIN', 'MOD', 'MUL', 'NOT', 'NOT_IN', 'OR', 'PREFIX', 'RAND', 'REG_COUNT', 'REG_MATCH',
        'REG_VALUE', 'STARTS_WITH', 'STRING', 'SUB', 'SUFFIX', 'SUM', 'SWITCH', 'TO_LOWER', 'UNIX_TIMESTAMP',
      ].sort(),
    );
  });

  it('reads a column as its API type: a string column turned integer is TRY_CAST (unconvertible → null)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/1/batch/retyped',
      headers: t.ingest,
      payload: [
        { time: new Date(t0).toISOString(), data: { v: '5' } },
        { time: new Date(t0 + 1000).toISOString(), data: { v: 'x' } },
      ],
    });
    expect(res.statusCode).toBe(200);
    const { environment } = await initialTenancy(t);
    const retyped = (await t.store.getDataset(environment.id, 'retyped'))!;
    const col = (await t.store.listColumns(retyped.id)).find((c) => c.keyName === 'v')!;
    const put = await t.app.inject({ method: 'PUT', url: `/1/columns/retyped/${col.id}`, headers: t.config, payload: { type: 'integer' } });
    expect(put.statusCode, put.body).toBe(200);
    expect(await evaluate('$v + 1', [], retyped)).toEqual([6, null]);
    expect(await evaluate('$v', [], retyped)).toEqual([5, null]);
  });

  // (engine-free checks of the compiler, and its limits against DuckDB's own)
  if (!engine.clickhouse) describe('calculated fields through FieldScope', () => {
    it('a field can read another; memoised; calculated fields win over columns; later ones shadow earlier', async () => {
      const calc = [
        { name: 'double', expression: '$i * 2' },
        { name: 'quad', expression: '$double * 2' },
        { name: 's', expression: 'CONCAT("calc:", $i)' },
        { name: 'double', expression: '$i * 3' },
      ];
      expect(await evaluate('$quad + $double', calc)).toEqual(ROWS.map((r) => (isNull(r.i) ? null : (r.i as number) * 6 + (r.i as number) * 3)));
      expect(await evaluate('$s', calc)).toEqual(ROWS.map((r) => `calc:${r.i ?? ''}`));
    });

    it('cycles are refused, naming the chain, at the position of the reference', () => {
      const scope = new FieldScope({
        dialect: duckdbDialect,
        columns: [],
        calculated: [
          { name: 'a', expression: '$b + 1' },
          { name: 'b', expression: 'IF(true, $c)' },
          { name: 'c', expression: '$a' },
          { name: 'me', expression: '$me' },
        ],
        eventTimeSql: '__time',
        ingestTimeSql: '__ingested',
        bind: () => '$1',
      });
      expect(() => scope.resolve('a')).toThrow(/cycle: \$a → \$b → \$c → \$a/);
      expect(() => scope.compileAs('me')).toThrow(/cycle: \$me → \$me/);
      try {
        checkExpression('1 + $c', scope);
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(ExpressionError);
        expect((err as ExpressionError).position).toBe(4);
      }
    });

    it('an error inside a referenced field names the field and both positions', () => {
      const scope = new FieldScope({
        dialect: duckdbDialect,
        columns: [],
        calculated: [{ name: 'broken', expression: 'SUM(1, FOO(2))', origin: 'dataset field' }],
        eventTimeSql: '__time',
        ingestTimeSql: '__ingested',
        bind: () => '$1',
      });
      try {
        checkExpression('1 + $broken', scope);
        expect.unreachable();
      } catch (err) {
        expect((err as ExpressionError).position).toBe(4);
        expect((err as Error).message).toBe('in calculated field $broken: at position 7 of its expression (dataset field): unknown function FOO');
      }
    });

    it('fields that multiply each other’s size are refused with an ExpressionError, not built', () => {
      const calculated = [{ name: 'f0', expression: 'CONCAT($s, "x")' }];
      for (let k = 1; k <= 12; k++) calculated.push({ name: `f${k}`, expression: Array(10).fill(`$f${k - 1}`).join(' + ') });
      const scope = new FieldScope({ dialect: duckdbDialect, columns: [], calculated, eventTimeSql: '__time', ingestTimeSql: '__ingested', bind: () => '$1' });
      const started = Date.now();
      expect(() => scope.resolve('f12')).toThrow(/too large/);
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('deeply nested fields chained together either run or are refused with an ExpressionError', async () => {
      const deep = (inner: string) => {
        let text = inner;
        for (let d = 0; d < MAX_EXPRESSION_DEPTH - 2; d++) text = `SUM(${text}, 1)`;
        return text;
      };
      const calculated: CalculatedSource[] = [{ name: 'g0', expression: deep('$i') }];
      for (let k = 1; k < 12; k++) calculated.push({ name: `g${k}`, expression: deep(`$g${k - 1}`) });
      let refused = 0;
      for (let k = 0; k < 12; k++) {
        try {
          const got = await evaluate(`$g${k}`, calculated);
          expect(got[0]).toBe(3 + (MAX_EXPRESSION_DEPTH - 2) * (k + 1));
        } catch (err) {
          expect(err).toBeInstanceOf(ExpressionError);
          expect((err as Error).message).toMatch(/nested too deeply/);
          refused++;
        }
      }
      expect(refused).toBeGreaterThan(0);
      expect(refused).toBeLessThan(12);
    });

    it('an expression nested to the limit compiles and runs; one level more is refused', async () => {
      let text = '$i';
      for (let d = 1; d < MAX_EXPRESSION_DEPTH; d++) text = `IF(true, ${text})`;
      expect(await evaluate(text)).toEqual(ROWS.map((r) => r.i ?? null));
      let mixed = '$s';
      for (let d = 1; d < MAX_EXPRESSION_DEPTH; d++) mixed = d % 3 === 0 ? `TO_LOWER(${mixed})` : d % 3 === 1 ? `CONCAT(${mixed}, "")` : `COALESCE(${mixed})`;
      const simulate = (x: string | null) => {
        for (let d = 1; d < MAX_EXPRESSION_DEPTH; d++) x = d % 3 === 0 ? (x === null ? null : x.toLowerCase()) : d % 3 === 1 ? (x ?? '') : x === '' ? null : x;
        return x;
      };
      expect(await evaluate(mixed)).toEqual(ROWS.map((r) => simulate((r.s as string | undefined) ?? null)));
      expect(() => parseExpression(`IF(true, ${text})`)).toThrow(/nested too deeply/);
      // Functions DuckDB expands internally (NULLIF, simple CASE) must not make deep nests exponential.
      const nests = [
        (x: string) => `DIV(1, ${x})`,
        (x: string) => `MOD(7, ${x})`,
        (x: string) => `SWITCH(${x}, "a", "b", "c", "d", "e")`,
        (x: string) => `REG_VALUE(${x}, \`.*\`)`,
        (x: string) => `COALESCE(${x}, "")`,
        (x: string) => `IN(${x}, 1, 2, 3)`,
        (x: string) => `LOG10(${x})`,
        (x: string) => `MIN(${x}, "z", 3)`,
      ];
      for (const nest of nests) {
        let deep = '$s';
        for (let d = 1; d < MAX_EXPRESSION_DEPTH; d++) deep = nest(deep);
        const started = Date.now();
        const got = await evaluate(deep);
        expect(got).toHaveLength(ROWS.length);
        expect(Date.now() - started, nest('x')).toBeLessThan(5000);
      }
    });
  });
}

describe('calculated-field expressions evaluated in DuckDB', () => evaluatedIn({ name: 'DuckDB', setting: () => undefined, clickhouse: false }));

{
  let cluster: ClickHouseCluster | undefined;
  describe.skipIf(!clickhouseBinary)('calculated-field expressions evaluated in ClickHouse: the same values', { timeout: 60_000 }, () => {
    beforeAll(async () => {
      cluster = await startClickHouse(1);
    }, 60_000);
    afterAll(() => cluster?.stop());
    evaluatedIn({ name: 'ClickHouse', setting: () => cluster!.setting(), clickhouse: true });
  });
  if (!clickhouseBinary) warnClickHouseSkipped('the calculated-field expressions on ClickHouse');
}

describe('parse and compile errors name the position and the problem', () => {
  const scope = () =>
    new FieldScope({
      dialect: duckdbDialect,
      columns: [
        { keyName: 's', sql: '"c1"', type: 'string' },
        { keyName: 'i', sql: '"c2"', type: 'integer' },
      ],
      calculated: [],
      eventTimeSql: '__time',
      ingestTimeSql: '__ingested',
      bind: () => '$1',
    });
  const cases: [string, number, RegExp][] = [
    ['FOO(1)', 0, /unknown function FOO/],
    ['1 + foo(1)', 4, /unknown function FOO/],
    ['NOT_EQUALS(1, 2)', 0, /unknown function NOT_EQUALS/],
    ['SUB(1)', 0, /SUB takes 2 arguments, got 1/],
    ['IF(true,)', 0, /IF takes at least 2 arguments, got 1/],
    ['RAND(1)', 0, /RAND takes 0 arguments, got 1/],
    ['BUCKET($i, 1, 2)', 0, /BUCKET takes 2 arguments/],
    ['LENGTH($s, "words")', 11, /"chars" or "bytes"/],
    ['LENGTH($s, $s)', 11, /must be a string literal/],
    ['REG_MATCH($s, $s)', 14, /regular expression .* must be a string literal/],
    ['REG_MATCH($s, "(a)\\\\1")', 14, /backreferences/],
    ['REG_VALUE($s, `(?=x)`)', 14, /lookahead/],
    ['REG_COUNT($s, `a**`)', 14, /quantifier/],
    ['REG_MATCH($s, `[a`)', 14, /missing "]"/],
    ['REG_MATCH($s, `(a`)', 14, /missing "\)"/],
    ['SWITCH($s, $s, 1)', 11, /SWITCH case .* must be a string literal/],
    ['SWITCH($s, "a", 1, 2, 3)', 19, /SWITCH case/],
    ['BUCKET($i, 0)', 11, /greater than 0/],
    ['BUCKET($i, $i)', 11, /number literal/],
    ['BUCKET($i, 1, 5, 5)', 14, /minimum must be less than the maximum/],
    ['FORMAT_TIME($s, 1)', 12, /format .* must be a string literal/],
    ['FORMAT_TIME("%Q", 1)', 12, /unsupported conversion %Q/],
    ['FORMAT_TIME("100%", 1)', 12, /lone "%"/],
    ['', 0, /empty/],
    ['   ', 0, /empty/],
    ['1 +', 3, /unexpected end of expression/],
    ['(1', 2, /expected "\)" to close the "\(" at position 0/],
    ['1)', 1, /unbalanced "\)"/],
    ['SUM(1, 2', 8, /unbalanced "\(": SUM\( at position 0 is never closed/],
    ['SUM(1,,2)', 6, /unexpected ","/],
    ['SUM(1 2)', 6, /expected "," or "\)"/],
    ['1 2', 2, /unexpected number 2/],
    ['"abc', 0, /unterminated string/],
    ['"a\nb"', 2, /newline in string/],
    ['"\\q"', 1, /unknown escape sequence \\q/],
    ['"\\x4"', 1, /\\x needs two hexadecimal digits/],
    ['"\\u12"', 1, /\\u needs 4 hexadecimal digits/],
    ['"\\uD800"', 1, /not a valid Unicode code point/],
    ['"\\U00110000"', 1, /not a valid Unicode code point/],
    ['"\\400"', 1, /above \\377/],
    ['"\\12"', 1, /three octal digits/],
    ['"\\xff"', 0, /not valid UTF-8/],
    ['`abc', 0, /unterminated raw string/],
    ['$', 0, /expected a column name/],
    ['$ x', 0, /expected a column name/],
    ['$1a', 0, /starting with a digit must be quoted/],
    ['$"abc', 1, /unterminated column name/],
    ['$`abc', 1, /unterminated raw column name/],
    ['@', 0, /unexpected character "@"/],
    ['1.2.3', 3, /malformed number/],
    ['12abc', 2, /malformed number/],
    ['1e', 1, /exponent/],
    ['1e999', 0, /out of range/],
    ['9223372036854775808', 0, /64-bit range/],
    ['-9223372036854775809', 0, /64-bit range/],
    ['foo', 0, /a function needs "\("/],
    ['$a+$b', 3, /unexpected column \$b after a complete expression \(the column name \$a\+ includes the "\+": put spaces around operators/],
    ['*', 0, /unexpected "\*"/],
    ['AND', 0, /a function needs "\("/],
  ];
  for (const [text, position, message] of cases) {
    it(JSON.stringify(text), () => {
      try {
        checkExpression(text, scope());
        expect.unreachable(`no error for ${text}`);
      } catch (err) {
        expect(err, String(err)).toBeInstanceOf(ExpressionError);
        expect((err as Error).message).toMatch(message);
        expect((err as ExpressionError).position).toBe(position);
      }
    });
  }

  it('hostile sizes: over 4095 characters, thousands of parentheses, operators or arguments', () => {
    const tooLong = `"${'x'.repeat(4094)}"`;
    expect(() => parseExpression(tooLong)).toThrow(/longer than 4095 characters/);
    expect(parseExpression(`"${'x'.repeat(4093)}"`).kind).toBe('literal');
    for (const text of ['('.repeat(4000), '('.repeat(2000) + '1' + ')'.repeat(2000), '!'.repeat(4000) + 'true', '-'.repeat(4000) + '$a', 'NOT('.repeat(1000), Array(2000).fill('1').join('-')]) {
      expect(() => parseExpression(text), text.slice(0, 20)).toThrow(ExpressionError);
      expect(() => parseExpression(text)).toThrow(/nested too deeply|unexpected end/);
    }
    // A long flat chain of + or AND is one n-ary call: fine.
    expect(() => parseExpression(Array(2000).fill('1').join('+'))).not.toThrow();
    expect(() => parseExpression(Array(400).fill('true').join(' AND '))).not.toThrow();
    expect(() => checkExpression(`SUM(${Array(1000).fill('$i').join(',')})`, scope())).not.toThrow();
  });

  it('references() lists each $name once, in order', () => {
    expect(references(parseExpression('IF($a, $"b c", SUM($a, $`d`, 1)) + $e'))).toEqual(['a', 'b c', 'd', 'e']);
    expect(references(parseExpression('RAND()'))).toEqual([]);
    // Bare names may contain - + = ? . / : (as in the reference grammar): `$a-1` is one column.
    expect(references(parseExpression('$a-1'))).toEqual(['a-1']);
    expect(references(parseExpression('$a - 1'))).toEqual(['a']);
    expect(references(parseExpression('$k8s.pod/name:x'))).toEqual(['k8s.pod/name:x']);
  });

  it('literals are bound, never pasted into SQL; unknown columns compile to a typed NULL', () => {
    const params: unknown[] = [];
    const out = compileExpression(parseExpression(`CONCAT("'; DROP TABLE x; --", $"a\\"; DROP TABLE x; --", 12, 1.5, true)`), {
      dialect: duckdbDialect,
      field: () => undefined,
      eventTimeSql: '__time',
      ingestTimeSql: '__ingested',
      bind: (v) => {
        params.push(v);
        return `$${params.length}`;
      },
    });
    // Integers and floats are bound as text (exact 64-bit integers; no integer guess for 1e300).
    expect(params).toEqual(["'; DROP TABLE x; --", '12', '1.5', true]);
    expect(out.sql).not.toMatch(/DROP|12|1\.5/);
    expect(out.sql).toContain('CAST(NULL AS VARCHAR)');
    expect(out.type).toBe('string');
    expect(compileExpression(parseExpression('$missing'), { dialect: duckdbDialect, field: () => undefined, eventTimeSql: '', ingestTimeSql: '', bind: () => '$1' })).toEqual({
      sql: 'CAST(NULL AS VARCHAR)',
      type: 'null',
    });
  });
});

describe('regular expressions: the compile-time RE2 check agrees with DuckDB', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp();
  });
  afterAll(() => t.close());

  const PATTERNS = [
    '(?P<n>x)', '(?<name>x)', 'a**', 'a*?', 'a*+', 'a+?', 'a??', 'a{2}{3}', 'a{2}*', '^*', '\\b*', '\\12', '\\0', '\\08',
    '\\1', '\\8', '\\Z', '\\z', '\\A', '\\Q*\\E', '\\Q*', '[[:alpha:]]', '[[:foo:]]', '[[:^alpha:]]', '\\p{Greek}', '\\p{Foo}',
    '\\pL', '\\pX', '\\p{^Greek}', '\\PL', '(?i)a', '(?x)a', '(?#c)', '[z-a]', 'x{,3}', 'x{3', 'x{3,2}', 'a{1000}', 'a{1001}',
    '(a{100}){100}', '(a{10}){100}', '(?:a{2}){500}', '((a{500})b){3}', '\\e', '\\_', '\\ ', '\\é', '[\\d-z]', 'a|', '()', '(?:)', '\\C',
    '\\x{10FFFF}', '\\x{110000}', '\\xZ', '\\x4', '\\x41', '[^]', '[]a]', '(?U)a*', '(?s:.)', '(?-i)a', '(?i-s:a)', '(?i', '(?',
    'a)', '(a', '[a', '\\', '(?=a)', '(?!a)', '(?<=a)', '(?<!a)', '(?>a)', '\\k<n>', '[a-\\d]', '[\\w-]', '\\Pn', '*a', '+',
    '{', 'a{', '{1}', 'a{1,1001}', '\\cA', '\\h', '\\R', '\\G', '\\K', '[[.a.]]', '[a-]', '[-a]', 'x*?*', '.{0}', 'a{0,}',
    '\\Q\\E*', '[\\Q]\\E]', '(|a)+', '(?P=n)', '(?|a)', '\\p{Lu}', '\\p{Cyrillic}', '^[a-z]+\\[[0-9]+\\]$', '[\\w-_]+\\.(s3\\.)?amazonaws.com',
  ];
  for (const pattern of PATTERNS) {
    it(pattern, async () => {
      let duck = true;
      try {
        await t.events.query("SELECT regexp_matches('abc', $1) AS v", [pattern]);
      } catch {
        duck = false;
      }
      let ours = true;
      try {
        checkRegex(pattern, 0);
      } catch (err) {
        expect(err).toBeInstanceOf(ExpressionError);
        expect((err as Error).message).toMatch(/^invalid regular expression \(RE2 syntax\) at offset \d+ of the pattern: /);
        ours = false;
      }
      expect(ours, `DuckDB says ${duck ? 'valid' : 'invalid'}`).toBe(duck);
    });
  }

  it('capture groups are counted (REG_VALUE takes the first group when there is one)', () => {
    expect(checkRegex('a(b)(?:c)(?P<d>e)', 0).groups).toBe(2);
    expect(checkRegex('[(]\\(', 0).groups).toBe(0);
  });

  it('every strftime conversion FORMAT_TIME accepts works in DuckDB', async () => {
    const unpadded = ['d', 'm', 'y', 'H', 'I', 'M', 'S', 'j'].map((c) => `%-${c}`);
    for (const spec of [...STRFTIME_SPECIFIERS.map((c) => `%${c}`), ...unpadded]) {
      const rows = await t.events.query('SELECT strftime(make_timestamp(CAST(1500549764888123 AS BIGINT)), $1) AS v', [spec]);
      expect(typeof rows[0].v, spec).toBe('string');
    }
  });
});
