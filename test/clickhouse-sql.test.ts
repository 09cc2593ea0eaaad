// The one function that writes values into ClickHouse SQL (18.16 has no server-side
// parameters): hostile input stays a value. Checked as text, and by a round trip through a real
// clickhouse-server (SELECT of the literal answers the value itself).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindParams, clickhouseIdent, clickhouseLiteral } from '../src/stores/events/clickhouse-sql.js';
import { ClickHouseClient } from '../src/stores/events/clickhouse-client.js';
import { parseClickHouseUrl } from '../src/stores/events/clickhouse-store.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';

const HOSTILE = [
  "it's",
  "'; DROP TABLE x; --",
  '\\',
  "\\'",
  "\\\\'",
  "a'' OR ''='",
  'x\u0000y',
  '\u0000',
  'line\nbreak\r\ttab',
  '"double" `back`',
  '$1 $2',
  'ünïcødé 🐝 中文',
  '\ud800 lone surrogate',
  '\\x41 \\0 \\n',
  '',
];

describe('clickhouseLiteral', () => {
  it('quotes text, escaping only backslash, quote and NUL', () => {
    expect(clickhouseLiteral("it's")).toBe("'it\\'s'");
    expect(clickhouseLiteral('a\\b')).toBe("'a\\\\b'");
    expect(clickhouseLiteral('x\u0000y')).toBe("'x\\0y'");
    expect(clickhouseLiteral("\\'")).toBe("'\\\\\\''");
    for (const s of HOSTILE) {
      const lit = clickhouseLiteral(s);
      // Inside the quotes every quote is escaped by an odd run of backslashes.
      const inner = lit.slice(1, -1);
      for (let i = 0; i < inner.length; i++) {
        if (inner[i] !== "'") continue;
        let n = 0;
        while (inner[i - 1 - n] === '\\') n++;
        expect(n % 2, `${JSON.stringify(s)} → ${lit}`).toBe(1);
      }
    }
  });

  it('writes numbers exactly, refuses NaN and infinities, booleans as 1/0, null as NULL', () => {
    expect(clickhouseLiteral(42)).toBe('42');
    expect(clickhouseLiteral(-0)).toBe('0');
    expect(clickhouseLiteral(2.5)).toBe('2.5');
    expect(clickhouseLiteral(1e300)).toBe('1e+300');
    expect(clickhouseLiteral(-1.7976931348623157e308)).toBe('-1.7976931348623157e+308');
    expect(clickhouseLiteral(123456789012345678901234567890n)).toBe('123456789012345678901234567890');
    expect(() => clickhouseLiteral(NaN)).toThrow(/finite/);
    expect(() => clickhouseLiteral(Infinity)).toThrow(/finite/);
    expect(clickhouseLiteral(true)).toBe('1');
    expect(clickhouseLiteral(null)).toBe('NULL');
    expect(() => clickhouseLiteral({})).toThrow(/unsupported/);
  });

  it('bindParams replaces placeholders outside quoted text only, and refuses a missing value', () => {
    expect(bindParams("SELECT $1, '$1', \"$2\", `$1`, $2", ["'", 3])).toBe("SELECT '\\'', '$1', \"$2\", `$1`, 3");
    expect(bindParams("SELECT 'it\\'s $1', $1", ['x'])).toBe("SELECT 'it\\'s $1', 'x'");
    expect(bindParams('SELECT $10, $1', Array.from({ length: 10 }, (_, i) => i + 1))).toBe('SELECT 10, 1');
    expect(() => bindParams('SELECT $2', [1])).toThrow(/no value for \$2/);
  });

  it('quotes identifiers with backticks', () => {
    expect(clickhouseIdent('ds_1')).toBe('`ds_1`');
    expect(clickhouseIdent('a`b\\c')).toBe('`a\\`b\\\\c`');
  });

  it('parses WAGGLE_EVENT_STORE URLs and refuses malformed ones', () => {
    expect(parseClickHouseUrl('clickhouse://u:p%40ss@db.example:8123/events')).toEqual({
      nodes: [{ url: 'http://db.example:8123', user: 'u', password: 'p@ss', database: 'events' }],
      cluster: undefined,
    });
    expect(parseClickHouseUrl('clickhouse://ch1:8123,ch2:8123/events?cluster=waggle').nodes.map((n) => n.url)).toEqual(['http://ch1:8123', 'http://ch2:8123']);
    expect(() => parseClickHouseUrl('clickhouse://a:1,b:2/events')).toThrow(/cluster/);
    expect(() => parseClickHouseUrl('clickhouse://a:1/ev-il')).toThrow(/database name/);
    expect(() => parseClickHouseUrl('clickhouse://a:1/db?cluster=x;y')).toThrow(/cluster/);
  });
});

describe.skipIf(!clickhouseBinary)('clickhouseLiteral against clickhouse-server', () => {
  let server: ClickHouseCluster;
  let client: ClickHouseClient;
  beforeAll(async () => {
    server = await startClickHouse(1);
    client = new ClickHouseClient({ url: `http://127.0.0.1:${server.httpPorts[0]}`, user: 'default', password: '', database: 'default' });
  }, 60_000);
  afterAll(() => server?.stop());

  it('every hostile string comes back as itself (a lone surrogate as U+FFFD)', async () => {
    for (const s of HOSTILE) {
      const [row] = await client.rows(bindParams('SELECT $1 AS v, length($1) AS n', [s]));
      const expected = Buffer.from(s, 'utf8').toString('utf8');
      expect(row.v, JSON.stringify(s)).toBe(expected);
      expect(row.n).toBe(Buffer.byteLength(expected));
    }
  });

  it('huge and tiny numbers keep their value', async () => {
    const [row] = await client.rows(bindParams('SELECT $1 AS a, $2 AS b, $3 AS c, toString($4) AS d', [1e300, -5e-324, 9007199254740991, 123456789012345678901234567890n]));
    expect(row).toEqual({ a: 1e300, b: -5e-324, c: 9007199254740991, d: '1.2345678901234568e29' });
    expect(clickhouseLiteral(5e-324)).toMatch(/^\([0-9.e+-]+ \* [0-9.e+-]+\)$/);
  });
});
if (!clickhouseBinary) warnClickHouseSkipped('the ClickHouse literal round trips');
