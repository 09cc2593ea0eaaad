// Demo data for the browser tests (and the README's screenshots), sent to a running server
// through its public API like any client: two hours of checkout events with a planted
// difference (slow requests of the last 30 minutes come from eu-west), a trace across two
// datasets with a span event, a link and an error, a deploy marker, an SLO with a burn alert,
// a trigger, and a board with query, SLO and text panels.

export interface SeedKeys {
  configuration: string;
  ingest: string;
}

export interface Seeded {
  now: number;
  traceId: string;
  /** The trace's spans as sent: [span id, parent id, offset ms, duration ms], in waterfall order. */
  traceSpans: [string, string | null, number, number][];
  boardId: string;
  boardUrl: string;
  sloId: string;
  triggerId: string;
}

/** A deterministic pseudo-random sequence (mulberry32). */
export function random(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let r = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

const SERVICES = ['frontend', 'cart', 'payments', 'shipping', 'search'];
const ROUTES = ['/cart', '/checkout', '/api/items', '/api/pay', '/search'];

/** Events of the last two hours (less 5 minutes); see the header for the planted difference. */
export function checkoutEvents(now: number, count = 3000) {
  const rnd = random(7);
  const out: { time: string; samplerate?: number; data: Record<string, unknown> }[] = [];
  for (let i = 0; i < count; i++) {
    // (not the window's very edge: a 2-hour query run a minute later still holds every event)
    const t = now - 6900 + (i / count) * 6890;
    const recent = t >= now - 1800;
    const slow = recent && rnd() < 0.3;
    const duration = slow ? 600 + rnd() * 400 : 15 + Math.pow(rnd(), 2) * 280;
    const eu = slow ? rnd() < 0.9 : rnd() < 0.05;
    const s = Math.floor(rnd() * SERVICES.length);
    out.push({
      time: new Date(t * 1000).toISOString(),
      data: {
        'service.name': SERVICES[s],
        'http.route': ROUTES[s],
        duration_ms: Math.round(duration * 100) / 100,
        status: rnd() < 0.04 ? 500 : 200,
        region: eu ? 'eu-west' : rnd() < 0.5 ? 'us-east' : 'us-west',
        'user.id': `user-${Math.floor(rnd() * 400)}`,
        'trace.trace_id': `t${i.toString(16).padStart(8, '0')}`,
        'trace.span_id': `s${i.toString(16)}`,
        name: `${ROUTES[s]} handler`,
      },
    });
  }
  return out;
}

async function call(base: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-honeycomb-team': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

export async function seedDemo(base: string, keys: SeedKeys): Promise<Seeded> {
  const now = Math.floor(Date.now() / 1000);
  const cfg = (method: string, path: string, body?: unknown) => call(base, keys.configuration, method, path, body);
  const ingest = (path: string, body: unknown) => call(base, keys.ingest, 'POST', path, body);

  const events = checkoutEvents(now);
  for (let i = 0; i < events.length; i += 1000) await ingest('/1/batch/checkout', events.slice(i, i + 1000));

  // A trace: frontend → cart → (payments, db query with an error); a span event and a link.
  const traceId = 'demo-trace-0001';
  const t0 = (now - 600) * 1000;
  const at = (ms: number) => new Date(t0 + ms).toISOString();
  const span = (id: string, parent: string | null, name: string, service: string, offset: number, duration: number, extra: Record<string, unknown> = {}) => ({
    time: at(offset),
    data: { 'trace.trace_id': traceId, 'trace.span_id': id, ...(parent ? { 'trace.parent_id': parent } : {}), name, 'service.name': service, duration_ms: duration, ...extra },
  });
  await ingest('/1/batch/checkout', [
    span('root', null, 'POST /checkout', 'frontend', 0, 420, { 'http.route': '/checkout', status: 500 }),
    span('cart', 'root', 'cart.load', 'cart', 12, 95),
    span('pay', 'root', 'payments.charge', 'payments', 120, 280, { error: 'card declined' }),
    { time: at(30), data: { 'trace.trace_id': traceId, 'trace.parent_id': 'cart', name: 'cache miss', 'meta.annotation_type': 'span_event', 'service.name': 'cart' } },
    { time: at(120), data: { 'trace.trace_id': traceId, 'trace.parent_id': 'pay', 'trace.link.trace_id': 'fraud-check-77', 'trace.link.span_id': 'f1', 'meta.annotation_type': 'link', 'service.name': 'payments' } },
  ]);
  await ingest('/1/batch/db', [
    span('sql1', 'cart', 'SELECT items', 'postgres', 20, 60.5, { 'db.statement': 'SELECT * FROM items WHERE cart_id = $1' }),
    span('sql2', 'pay', 'UPDATE orders', 'postgres', 150, 35.25),
  ]);
  const traceSpans: Seeded['traceSpans'] = [
    ['root', null, 0, 420],
    ['cart', 'root', 12, 95],
    ['sql1', 'cart', 20, 60.5],
    ['pay', 'root', 120, 280],
    ['sql2', 'pay', 150, 35.25],
  ];

  await cfg('POST', '/1/marker_settings/checkout', { type: 'deploy', color: '#e8823a' });
  await cfg('POST', '/1/markers/checkout', { start_time: now - 35 * 60, type: 'deploy', message: 'checkout v2.14 rolled out' });

  await cfg('POST', '/1/derived_columns/checkout', { alias: 'sli_fast', expression: 'LT($duration_ms, 600)', description: 'requests under 600 ms' });
  const slo = await cfg('POST', '/1/slos/checkout', { name: 'Checkout latency', description: 'Checkout requests answer within 600 ms', sli: { alias: 'sli_fast' }, time_period_days: 7, target_per_million: 990000 });
  const recipient = await cfg('POST', '/1/recipients', { type: 'webhook', details: { webhook_name: 'on-call hook', webhook_url: 'http://127.0.0.1:9/hook', webhook_secret: 'not-shown-anywhere' } });
  await cfg('POST', '/1/burn_alerts/checkout', { alert_type: 'exhaustion_time', exhaustion_minutes: 240, slo: { id: slo.id }, recipients: [{ id: recipient.id }] });
  const trigger = await cfg('POST', '/1/triggers/checkout', {
    name: 'Slow checkouts',
    description: 'p99 latency above 500 ms',
    query: { calculations: [{ op: 'P99', column: 'duration_ms' }], time_range: 900 },
    threshold: { op: '>', value: 500 },
    frequency: 300,
    recipients: [{ id: recipient.id }],
  });

  const byService = await cfg('POST', '/1/queries/checkout', { calculations: [{ op: 'COUNT' }], breakdowns: ['service.name'], time_range: 7200 });
  const heat = await cfg('POST', '/1/queries/checkout', { calculations: [{ op: 'HEATMAP', column: 'duration_ms' }], time_range: 7200 });
  const a1 = await cfg('POST', '/1/query_annotations/checkout', { name: 'Requests by service', query_id: byService.id });
  const a2 = await cfg('POST', '/1/query_annotations/checkout', { name: 'Latency', query_id: heat.id });
  const board = await cfg('POST', '/1/boards', {
    name: 'Checkout overview',
    description: 'Traffic, latency and the latency SLO of checkout',
    type: 'flexible',
    panels: [
      { type: 'query', query_panel: { query_id: byService.id, query_annotation_id: a1.id }, position: { x_coordinate: 0, y_coordinate: 0, width: 6, height: 6 } },
      { type: 'query', query_panel: { query_id: heat.id, query_annotation_id: a2.id }, position: { x_coordinate: 6, y_coordinate: 0, width: 6, height: 6 } },
      { type: 'slo', slo_panel: { slo_id: slo.id }, position: { x_coordinate: 0, y_coordinate: 6, width: 6, height: 4 } },
      {
        type: 'text',
        text_panel: { content: '## Runbook\n\n- Check the **deploy** markers first\n- Escalate to [on-call](https://example.com/oncall)\n\n<script>alert(1)</script> stays text.' },
        position: { x_coordinate: 6, y_coordinate: 6, width: 6, height: 4 },
      },
    ],
    preset_filters: [{ column: 'region', alias: 'Region' }],
  });
  await cfg('POST', `/1/boards/${board.id}/views`, { name: 'Errors only', filters: [{ column: 'status', operation: '=', value: 500 }] });
  return { now, traceId, traceSpans, boardId: board.id, boardUrl: board.links.board_url, sloId: slo.id, triggerId: trigger.id };
}
