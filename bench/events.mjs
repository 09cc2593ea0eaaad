// Realistic events for the ingest benchmark: what an instrumented HTTP service sends. Each
// event has 20 fields (services, routes, status codes, durations, trace/span ids, user ids,
// booleans, floats) and is about 500 bytes as JSON. Deterministic (seeded), so every run and
// both sides of the comparison see the same bytes.

/** The 20 data fields with their stored types, in a fixed order (the baseline's table). */
export const FIELDS = [
  ['service.name', 'VARCHAR'],
  ['name', 'VARCHAR'],
  ['http.method', 'VARCHAR'],
  ['http.route', 'VARCHAR'],
  ['http.target', 'VARCHAR'],
  ['http.status_code', 'BIGINT'],
  ['duration_ms', 'DOUBLE'],
  ['trace.trace_id', 'VARCHAR'],
  ['trace.span_id', 'VARCHAR'],
  ['trace.parent_id', 'VARCHAR'],
  ['user.id', 'VARCHAR'],
  ['user.plan', 'VARCHAR'],
  ['error', 'BOOLEAN'],
  ['cache.hit', 'BOOLEAN'],
  ['db.rows', 'BIGINT'],
  ['db.duration_ms', 'DOUBLE'],
  ['host.name', 'VARCHAR'],
  ['cloud.region', 'VARCHAR'],
  ['service.version', 'VARCHAR'],
  ['http.response_size', 'BIGINT'],
];

/** mulberry32: a small seeded PRNG. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SERVICES = ['api-gateway', 'checkout', 'cart', 'catalog', 'payments', 'users', 'search', 'recommendations', 'shipping', 'notifications'];
const ROUTES = [
  '/api/v1/users/{id}', '/api/v1/users/{id}/orders', '/api/v1/orders/{id}', '/api/v1/orders', '/api/v1/cart',
  '/api/v1/cart/items/{id}', '/api/v1/products/{id}', '/api/v1/products', '/api/v1/search', '/api/v1/checkout',
  '/api/v1/payments/{id}', '/api/v1/shipping/quotes', '/healthz', '/api/v2/recommendations/{id}', '/api/v1/sessions',
];
const METHODS = ['GET', 'GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'DELETE'];
const STATUS = [200, 200, 200, 200, 200, 200, 200, 201, 204, 301, 400, 401, 404, 429, 500, 503];
const PLANS = ['free', 'pro', 'team', 'enterprise'];
const REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-southeast-2'];

/** `count` events as batch items `{time, data}`; `seed` picks the stream. */
export function makeEvents(count, seed, baseMs = Date.now()) {
  const r = rng(seed);
  const hex = (n) => {
    let s = '';
    while (s.length < n) s += Math.floor(r() * 0x100000000).toString(16).padStart(8, '0');
    return s.slice(0, n);
  };
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    const route = pick(ROUTES);
    const status = pick(STATUS);
    const service = pick(SERVICES);
    const id = Math.floor(r() * 1_000_000);
    const data = {
      'service.name': service,
      name: `${pick(METHODS)} ${route}`,
      'http.method': pick(METHODS),
      'http.route': route,
      'http.target': route.replace('{id}', String(id)),
      'http.status_code': status,
      duration_ms: Math.round(r() * r() * 250_000) / 1000,
      'trace.trace_id': hex(32),
      'trace.span_id': hex(16),
      'trace.parent_id': hex(16),
      'user.id': `user-${Math.floor(r() * 100_000)}`,
      'user.plan': pick(PLANS),
      error: status >= 500,
      'cache.hit': r() < 0.4,
      'db.rows': Math.floor(r() * r() * 500),
      'db.duration_ms': Math.round(r() * r() * 80_000) / 1000,
      'host.name': `ip-10-0-${Math.floor(r() * 64)}-${Math.floor(r() * 256)}`,
      'cloud.region': pick(REGIONS),
      'service.version': `1.${Math.floor(r() * 30)}.${Math.floor(r() * 10)}`,
      'http.response_size': Math.floor(r() * 200_000),
    };
    out[i] = { time: new Date(baseMs - Math.floor(r() * 60_000)).toISOString(), data };
  }
  return out;
}
