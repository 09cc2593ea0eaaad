// The dataset of the query benchmark (bench/query.mjs): spans of an instrumented HTTP
// system, 19 fields. Two halves that describe the same events:
//
// - `seedEvents()`: a few events as JSON, sent through POST /1/batch so that Waggle creates the
//   dataset and its columns with the right types (then deleted again);
// - `generateSql()`: one INSERT … SELECT over range() that writes N such events straight into
//   the dataset's DuckDB table, deterministic (DuckDB's hash() of the row number and a field
//   number), times spread evenly over a window and written in time order, so that each row
//   group's min/max of `__time` is tight.
//
// Shape of the data: 10 services with their own latency (log-normal, slower on 5xx), 5 routes
// each (50 endpoints), weighted status codes, about 100,000 users (skewed: a few are much more
// active), traces of 8 chained spans, about 200 hosts, 5 regions.

export const SERVICES = ['api-gateway', 'checkout', 'cart', 'catalog', 'payments', 'users', 'search', 'recommendations', 'shipping', 'notifications'];
/** Median duration (ms) per service. */
const MEDIAN_MS = [12, 85, 25, 18, 140, 15, 60, 110, 45, 30];
const RESOURCES = ['users', 'orders', 'cart', 'products', 'search', 'checkout', 'payments', 'sessions', 'shipping', 'notifications'];
const SHAPES = [
  ['GET', '/api/v1/{r}'],
  ['GET', '/api/v1/{r}/{id}'],
  ['POST', '/api/v1/{r}'],
  ['PUT', '/api/v1/{r}/{id}'],
  ['DELETE', '/api/v1/{r}/{id}'],
];
/** 50 endpoints: service s owns routes 5s … 5s+4. */
export const ROUTES = SERVICES.flatMap((_, s) => SHAPES.map(([method, path]) => ({ method, route: path.replace('{r}', RESOURCES[s]) })));
/** Status codes, each entry equally likely (so 200 is 14 in 20). */
const STATUS = [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 201, 204, 400, 404, 500, 503];
const PLANS = ['free', 'pro', 'team', 'enterprise'];
export const REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-southeast-2'];

/** Field name → the stored type Waggle must give it (checked after the seed batch). */
export const FIELD_TYPES = {
  'service.name': 'string',
  name: 'string',
  'http.method': 'string',
  'http.route': 'string',
  'http.status_code': 'integer',
  duration_ms: 'float',
  'trace.trace_id': 'string',
  'trace.span_id': 'string',
  'trace.parent_id': 'string',
  'user.id': 'string',
  'user.plan': 'string',
  error: 'boolean',
  'cache.hit': 'boolean',
  'db.rows': 'integer',
  'db.duration_ms': 'float',
  'host.name': 'string',
  'cloud.region': 'string',
  'service.version': 'string',
  'http.response_size': 'integer',
};

/** A few events with every field set (floats with a fraction, so they are typed float). */
export function seedEvents(timeMs) {
  return Array.from({ length: 20 }, (_, i) => {
    const s = i % SERVICES.length;
    const r = ROUTES[s * 5 + (i % 5)];
    return {
      time: new Date(timeMs + i).toISOString(),
      data: {
        'service.name': SERVICES[s],
        name: `${r.method} ${r.route}`,
        'http.method': r.method,
        'http.route': r.route,
        'http.status_code': STATUS[i],
        duration_ms: 12.345 + i,
        'trace.trace_id': (i + 1).toString(16).padStart(32, '0'),
        'trace.span_id': (i + 1).toString(16).padStart(16, '0'),
        'trace.parent_id': i.toString(16).padStart(16, '0'),
        'user.id': `user-${i}`,
        'user.plan': PLANS[i % 4],
        error: i % 7 === 0,
        'cache.hit': i % 3 === 0,
        'db.rows': i * 3,
        'db.duration_ms': 1.5 + i,
        'host.name': `ip-10-${s}-${i}`,
        'cloud.region': REGIONS[i % 5],
        'service.version': `1.${s + 3}.${i % 4}`,
        'http.response_size': 1000 + i,
      },
    };
  });
}

const list = (xs) => `[${xs.map((x) => (typeof x === 'string' ? `'${x.replace(/'/g, "''")}'` : String(x))).join(', ')}]`;

/**
 * INSERT … SELECT of `n` events into `table`, times spread evenly over
 * [startUs, startUs + spanUs), in time order. `physical` maps field names to the table's column
 * names (all of FIELD_TYPES). Rows are numbered 0 … n-1; the values depend only on the row number
 * (plus `seed`), so two calls with the same n and seed write the same events. `from`/`to`
 * write only rows from … to-1 (to split the work between connections).
 */
export function generateSql({ table, physical, n, from = 0, to = n, startUs, spanUs, seed = 0, ingestedUs, rows = `range(${from}, ${to}) r(i)` }) {
  const h = (k) => `hash(i + ${seed}, ${k})`;
  /** Uniform in [0, 1). */
  const u = (k) => `((${h(k)} % 1000000)::DOUBLE / 1000000)`;
  const q = (name) => {
    const p = physical[name];
    if (!p) throw new Error(`no column for ${name}`);
    return `"${p.replace(/"/g, '""')}"`;
  };
  const hex16 = (x) => `lpad(to_hex(${x}), 16, '0')`;
  // Inner query: per-row choices used by several fields.
  const inner =
    `SELECT i, ` +
    `floor(10 * pow(${u(1)}, 1.6))::BIGINT AS s, ` + // service index, skewed towards the first ones
    `(${h(2)} % 5)::BIGINT AS rr, ` +
    `${list(STATUS)}[1 + (${h(3)} % ${STATUS.length})::BIGINT] AS st, ` +
    // standard normal (Box–Muller)
    `sqrt(-2 * ln(${u(4)} + 1e-7)) * cos(2 * pi() * ${u(5)}) AS z, ` +
    `floor(100000 * pow(${u(9)}, 2))::BIGINT AS uid ` +
    `FROM ${rows}`;
  const dur = `(${list(MEDIAN_MS)}[s + 1] * exp(0.8 * z) * CASE WHEN st >= 500 THEN 3 ELSE 1 END)`;
  const cols = [
    ['service.name', `${list(SERVICES)}[s + 1]`],
    ['name', `${list(ROUTES.map((r) => `${r.method} ${r.route}`))}[s * 5 + rr + 1]`],
    ['http.method', `${list(ROUTES.map((r) => r.method))}[s * 5 + rr + 1]`],
    ['http.route', `${list(ROUTES.map((r) => r.route))}[s * 5 + rr + 1]`],
    ['http.status_code', 'st'],
    ['duration_ms', `round(${dur}, 3)`],
    // traces of 8 consecutive spans, each span the child of the previous one
    ['trace.trace_id', `${hex16(`hash((i + ${seed}) // 8, 6)`)} || ${hex16(`hash((i + ${seed}) // 8, 7)`)}`],
    ['trace.span_id', hex16(`hash(i + ${seed}, 8)`)],
    ['trace.parent_id', `CASE WHEN (i + ${seed}) % 8 = 0 THEN NULL ELSE ${hex16(`hash(i + ${seed} - 1, 8)`)} END`],
    ['user.id', `'user-' || uid`],
    ['user.plan', `${list(PLANS)}[1 + uid % 4]`],
    ['error', 'st >= 500'],
    ['cache.hit', `${h(10)} % 10 < 4`],
    ['db.rows', `floor(pow(${u(11)}, 2) * 500)::BIGINT`],
    ['db.duration_ms', `round(${dur} * 0.6 * ${u(12)}, 3)`],
    ['host.name', `'ip-10-' || s || '-' || (${h(13)} % 20)`],
    ['cloud.region', `${list(REGIONS)}[1 + (${h(14)} % 5)::BIGINT]`],
    ['service.version', `'1.' || (s + 3) || '.' || (${h(15)} % 4)`],
    ['http.response_size', `floor(pow(${u(16)}, 3) * 200000)::BIGINT`],
  ];
  const names = ['__time', '__samplerate', '__ingested', ...cols.map(([f]) => q(f))];
  const values = [
    `make_timestamp(${Math.trunc(startUs)}::BIGINT + (i * ${Math.trunc(spanUs)}::HUGEINT // ${n})::BIGINT)`,
    '1',
    `make_timestamp(${Math.trunc(ingestedUs)}::BIGINT)`,
    ...cols.map(([, e]) => e),
  ];
  return `INSERT INTO "${table}" (${names.join(', ')}) SELECT ${values.join(', ')} FROM (${inner})`;
}

/**
 * INSERT … SELECT copying every event of table `from` into table `to` (both datasets of this
 * file, columns matched by field name), in `from`'s order; `time(t)` maps the event time `t`
 * (SQL) to the copy's (identity by default), `samplerate` is the copy's sample rate (SQL; the
 * original's by default).
 */
export function copySql({ from, to, physicalFrom, physicalTo, time = (t) => t, samplerate = '__samplerate' }) {
  const q = (p) => `"${p.replace(/"/g, '""')}"`;
  const fields = Object.keys(FIELD_TYPES);
  return (
    `INSERT INTO "${to}" (__time, __samplerate, __ingested, ${fields.map((f) => q(physicalTo[f])).join(', ')}) ` +
    `SELECT ${time('__time')}, ${samplerate}, __ingested, ${fields.map((f) => q(physicalFrom[f])).join(', ')} FROM "${from}"`
  );
}

/**
 * Bytes on disk per event of each column of `table` after a checkpoint (DuckDB connection `conn`),
 * largest first: each persistent segment counts from its offset in its block to the next
 * segment's (or the block's end), plus any further blocks it spans. An estimate (a block's unused
 * tail is charged to its last segment), within 0.2 % of the file's size on this data.
 * `names` maps physical column names to field names.
 */
export async function bytesByColumn(conn, table, names, events, blockBytes = 262144 - 8) {
  const segs = (
    await conn.runAndReadAll(
      `SELECT column_name, segment_type, block_id, block_offset, len(additional_block_ids) AS more ` +
        `FROM pragma_storage_info('${table.replace(/'/g, "''")}') WHERE persistent AND block_id >= 0`,
    )
  ).getRowObjects();
  const byBlock = new Map();
  for (const s of segs) {
    const b = Number(s.block_id);
    if (!byBlock.has(b)) byBlock.set(b, []);
    byBlock.get(b).push(s);
  }
  const bytes = new Map();
  for (const list of byBlock.values()) {
    list.sort((a, b) => Number(a.block_offset) - Number(b.block_offset));
    list.forEach((s, i) => {
      const end = i + 1 < list.length ? Number(list[i + 1].block_offset) : blockBytes;
      const name = `${names[s.column_name] ?? s.column_name}${s.segment_type === 'VALIDITY' ? ' (nulls)' : ''}`;
      bytes.set(name, (bytes.get(name) ?? 0) + end - Number(s.block_offset) + Number(s.more ?? 0) * blockBytes);
    });
  }
  return [...bytes].map(([column, b]) => ({ column, perEvent: b / events })).sort((a, b) => b.perEvent - a.perEvent);
}
