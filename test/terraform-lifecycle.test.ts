// What `terraform apply` and `terraform destroy` do through Honeycomb's Terraform provider, for
// every resource kind it manages: create → read → partial update → read → destroy, with the
// bodies its Go client (github.com/honeycombio/terraform-provider-honeycombio, `client/`)
// sends. Go's encoding/json decides which empty fields go on the wire: a field tagged
// `omitempty` is left out when it is "", 0, false, nil or an empty list, but a struct (settings,
// links, positions) and a time.Time are always sent, zero or not (a zero time as
// 0001-01-01T00:00:00Z), and a field without `omitempty` is always sent ("", null). The bodies
// below are written out by hand from those struct tags, so each test shows what goes on the
// wire. Reads are the provider's: some resources (markers, marker settings) are read through
// their list. A read after destroy is a 404 (or an absent item), which the provider takes as
// "gone".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, json, type TestApp } from './helpers.js';
import { ingest } from './query-helpers.js';

/** Go's zero time.Time, as encoding/json writes it: sent for every `time.Time` field. */
const ZERO = '0001-01-01T00:00:00Z';
const DS = 'tf-main';

describe('Terraform provider lifecycle', () => {
  let t: TestApp;

  const call = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown, status?: number) => {
    const res = await t.app.inject({
      method,
      url,
      headers: { ...t.config, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    if (status !== undefined) expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(status);
    return { status: res.statusCode, body: res.body ? json(res) : undefined };
  };
  /** /2/: JSON:API bodies with the management key. */
  const call2 = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, status?: number) => {
    const res = await t.app.inject({ method, url, headers: t.mgmt, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
    if (status !== undefined) expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(status);
    expect(String(res.headers['content-type'] ?? 'application/vnd.api+json')).toBe('application/vnd.api+json');
    return { status: res.statusCode, body: res.body ? json(res) : undefined };
  };

  beforeAll(async () => {
    t = await makeApp({ settings: { evaluationTickMs: 0 } });
    // The dataset the other resources live in, with a few fields.
    await ingest(t, DS, [{ data: { status: 200, route: '/checkout', duration_ms: 12.5, service: 'api' } }]);
  });
  afterAll(async () => t?.close());

  it('honeycombio_dataset (delete protected until the plan turns it off)', async () => {
    // Create: Settings is a struct (always sent, here empty), the times are zero; slug and
    // expand_json_depth (0) are omitted.
    const created = await call('POST', '/1/datasets', { name: 'tf-dataset', description: 'managed by terraform', settings: {}, last_written_at: ZERO, created_at: ZERO }, 201);
    expect(created.body).toMatchObject({ name: 'tf-dataset', slug: 'tf-dataset', description: 'managed by terraform', expand_json_depth: 0, settings: { delete_protected: true } });
    expect((await call('GET', '/1/datasets/tf-dataset', undefined, 200)).body).toEqual(created.body);
    // A second create of the same name is 200, which the client reports as ErrDatasetExists.
    expect((await call('POST', '/1/datasets', { name: 'tf-dataset', settings: {}, last_written_at: ZERO, created_at: ZERO })).status).toBe(200);
    // Destroy while protected: 409, nothing deleted.
    expect((await call('DELETE', '/1/datasets/tf-dataset')).status).toBe(409);
    // Update of delete_protected only: name is "" (no omitempty), description and depth kept.
    const updated = await call('PUT', '/1/datasets/tf-dataset', { name: '', slug: 'tf-dataset', settings: { delete_protected: false }, last_written_at: ZERO, created_at: ZERO }, 200);
    expect(updated.body).toMatchObject({ name: 'tf-dataset', description: 'managed by terraform', expand_json_depth: 0, settings: { delete_protected: false } });
    // Update of the depth with description and protection as planned.
    const depth = await call('PUT', '/1/datasets/tf-dataset', { name: '', slug: 'tf-dataset', description: 'managed by terraform', expand_json_depth: 3, settings: { delete_protected: false }, last_written_at: ZERO, created_at: ZERO }, 200);
    expect(depth.body).toMatchObject({ expand_json_depth: 3, settings: { delete_protected: false } });
    expect((await call('GET', '/1/datasets/tf-dataset', undefined, 200)).body).toEqual(depth.body);
    await call('DELETE', '/1/datasets/tf-dataset', undefined, 202);
    expect((await call('GET', '/1/datasets/tf-dataset')).status).toBe(404);
  });

  it('honeycombio_derived_column and honeycombio_dataset_definition', async () => {
    // Derived column: id omitted on create, description omitempty.
    const dc = await call('POST', `/1/derived_columns/${DS}`, { alias: 'route_or_none', expression: 'COALESCE($route, "none")' }, 201);
    const id = dc.body.id;
    expect((await call('GET', `/1/derived_columns/${DS}/${id}`, undefined, 200)).body).toEqual(dc.body);
    const changed = await call('PUT', `/1/derived_columns/${DS}/${id}`, { id, alias: 'route_or_none', expression: 'COALESCE($route, "-")', description: 'the route' }, 200);
    expect(changed.body).toMatchObject({ alias: 'route_or_none', expression: 'COALESCE($route, "-")', description: 'the route' });
    expect((await call('GET', `/1/derived_columns/${DS}/${id}`, undefined, 200)).body).toEqual(changed.body);

    // Dataset definitions: only the configured keys, column_type omitted.
    const defs = await call('PATCH', `/1/dataset_definitions/${DS}`, { duration_ms: { name: 'duration_ms' }, route: { name: 'route_or_none' } }, 200);
    expect(defs.body.route).toEqual({ name: 'route_or_none', column_type: 'derived_column' });
    expect(defs.body.duration_ms).toEqual({ name: 'duration_ms', column_type: 'column' });
    expect((await call('GET', `/1/dataset_definitions/${DS}`, undefined, 200)).body).toEqual(defs.body);
    const partial = await call('PATCH', `/1/dataset_definitions/${DS}`, { route: { name: 'route' } }, 200);
    expect(partial.body).toMatchObject({ duration_ms: { name: 'duration_ms', column_type: 'column' }, route: { name: 'route', column_type: 'column' } });
    expect((await call('GET', `/1/dataset_definitions/${DS}`, undefined, 200)).body).toEqual(partial.body);
    // Destroy is ResetAll: every key with an empty name.
    const keys = ['duration_ms', 'error', 'name', 'parent_id', 'route', 'service_name', 'span_id', 'span_kind', 'annotation_type', 'link_trace_id', 'link_span_id', 'log_message', 'log_severity', 'status', 'trace_id', 'user'];
    await call('PATCH', `/1/dataset_definitions/${DS}`, Object.fromEntries(keys.map((k) => [k, { name: '' }])), 200);
    expect((await call('GET', `/1/dataset_definitions/${DS}`, undefined, 200)).body.route).toEqual({ name: 'http.route', column_type: 'column' });

    await call('DELETE', `/1/derived_columns/${DS}/${id}`, undefined, 204);
    expect((await call('GET', `/1/derived_columns/${DS}/${id}`)).status).toBe(404);
  });

  it('honeycombio_column', async () => {
    // hidden and type are pointers (sent when set, false included); the three times are zero.
    const created = await call('POST', `/1/columns/${DS}`, { key_name: 'tf_col', hidden: false, description: 'from terraform', type: 'float', last_written: ZERO, created_at: ZERO, updated_at: ZERO }, 201);
    expect(created.body).toMatchObject({ key_name: 'tf_col', hidden: false, description: 'from terraform', type: 'float' });
    const id = created.body.id;
    expect((await call('GET', `/1/columns/${DS}/${id}`, undefined, 200)).body).toEqual(created.body);
    const updated = await call('PUT', `/1/columns/${DS}/${id}`, { id, key_name: 'tf_col', hidden: true, description: 'from terraform', type: 'float', last_written: ZERO, created_at: ZERO, updated_at: ZERO }, 200);
    expect(updated.body).toMatchObject({ id, hidden: true, type: 'float' });
    expect((await call('GET', `/1/columns/${DS}?key_name=tf_col`, undefined, 200)).body).toEqual(updated.body);
    await call('DELETE', `/1/columns/${DS}/${id}`, undefined, 204);
    expect((await call('GET', `/1/columns/${DS}/${id}`)).status).toBe(404);
  });

  it('honeycombio_marker and honeycombio_marker_setting (read through their lists)', async () => {
    const setting = await call('POST', `/1/marker_settings/${DS}`, { type: 'deploy', color: '#F96E11' }, 201);
    const sid = setting.body.id;
    const listSettings = async () => (await call('GET', `/1/marker_settings/${DS}`, undefined, 200)).body as { id: string }[];
    expect((await listSettings()).find((s) => s.id === sid)).toEqual(setting.body);
    const colored = await call('PUT', `/1/marker_settings/${DS}/${sid}`, { id: sid, type: 'deploy', color: '#00FF00' }, 200);
    expect((await listSettings()).find((s) => s.id === sid)).toEqual(colored.body);

    // Marker: every field omitempty; start_time omitted means now.
    const marker = await call('POST', `/1/markers/${DS}`, { message: 'deployed v1', type: 'deploy', url: 'https://ci.example.com/1' }, 201);
    const mid = marker.body.id;
    expect(marker.body).toMatchObject({ message: 'deployed v1', type: 'deploy', color: '#00FF00' });
    const listMarkers = async () => (await call('GET', `/1/markers/${DS}`, undefined, 200)).body as { id: string }[];
    expect((await listMarkers()).find((m) => m.id === mid)).toEqual(marker.body);
    const moved = await call('PUT', `/1/markers/${DS}/${mid}`, { id: mid, start_time: marker.body.start_time, message: 'deployed v1.1', type: 'deploy' }, 200);
    expect(moved.body).toMatchObject({ message: 'deployed v1.1', start_time: marker.body.start_time });
    expect(moved.body.url).toBeUndefined();
    expect((await listMarkers()).find((m) => m.id === mid)).toEqual(moved.body);
    await call('DELETE', `/1/markers/${DS}/${mid}`, undefined, 200);
    expect((await listMarkers()).some((m) => m.id === mid)).toBe(false);
    await call('DELETE', `/1/marker_settings/${DS}/${sid}`, undefined, 200);
    expect((await listSettings()).some((s) => s.id === sid)).toBe(false);
  });

  it('honeycombio_query and honeycombio_query_annotation', async () => {
    // A query is immutable: a changed query_json is a new query; destroy has nothing to call.
    const spec = { calculations: [{ op: 'P99', column: 'duration_ms' }], filters: [{ column: 'status', op: '>=', value: 500 }], breakdowns: ['route'], time_range: 7200 };
    const q = await call('POST', `/1/queries/${DS}`, spec, 200);
    expect((await call('GET', `/1/queries/${DS}/${q.body.id}`, undefined, 200)).body).toEqual({ id: q.body.id, ...spec });
    // Annotation: description and source have no omitempty ("" when unset).
    const a = await call('POST', `/1/query_annotations/${DS}`, { name: 'Slow checkouts', description: '', query_id: q.body.id, source: '' }, 201);
    const aid = a.body.id;
    expect((await call('GET', `/1/query_annotations/${DS}/${aid}`, undefined, 200)).body).toEqual(a.body);
    const renamed = await call('PUT', `/1/query_annotations/${DS}/${aid}`, { id: aid, name: 'Slow checkouts', description: 'p99 by route', query_id: q.body.id, source: '' }, 200);
    expect(renamed.body).toMatchObject({ name: 'Slow checkouts', description: 'p99 by route', query_id: q.body.id });
    expect((await call('GET', `/1/query_annotations/${DS}/${aid}`, undefined, 200)).body).toEqual(renamed.body);
    await call('DELETE', `/1/query_annotations/${DS}/${aid}`, undefined, 204);
    expect((await call('GET', `/1/query_annotations/${DS}/${aid}`)).status).toBe(404);
  });

  it('honeycombio_flexible_board and honeycombio_board_view', async () => {
    const q = await call('POST', `/1/queries/${DS}`, { calculations: [{ op: 'COUNT' }], time_range: 3600 }, 200);
    const a = await call('POST', `/1/query_annotations/${DS}`, { name: 'Requests', description: '', query_id: q.body.id, source: '' }, 201);
    // No positions in the configuration: each panel's position is a zero struct (always sent)
    // and layout_generation is auto; links is an empty struct; tags null; preset_filters [].
    const zeroPosition = { x_coordinate: 0, y_coordinate: 0, height: 0, width: 0 };
    const board = {
      type: 'flexible',
      layout_generation: 'auto',
      panels: [
        { type: 'query', position: zeroPosition, query_panel: { query_id: q.body.id, query_annotation_id: a.body.id, query_style: 'graph' } },
        { type: 'text', position: zeroPosition, text_panel: { content: '## Runbook' } },
      ],
      name: 'Service health',
      links: {},
      tags: null,
      preset_filters: [],
    };
    const created = await call('POST', '/1/boards', board, 201);
    const id = created.body.id;
    expect(created.body).not.toHaveProperty('tags');
    expect(created.body.panels[0].query_panel).not.toHaveProperty('visualization_settings');
    expect(created.body.panels.map((p: { position: unknown }) => p.position)).toEqual([
      { x_coordinate: 0, y_coordinate: 0, height: 6, width: 6 },
      { x_coordinate: 6, y_coordinate: 0, height: 4, width: 6 },
    ]);
    expect((await call('GET', `/1/boards/${id}`, undefined, 200)).body).toEqual(created.body);
    // Update: tags added, the query panel's visualization settings set, description set.
    const update = {
      ...board,
      id,
      description: 'the checkout service',
      panels: [
        { ...board.panels[0], query_panel: { ...board.panels[0].query_panel, visualization_settings: { utc_xaxis: true, charts: [{ chart_index: 0, chart_type: 'line' }] } } },
        board.panels[1],
      ],
      tags: [{ key: 'team', value: 'checkout' }],
    };
    const updated = await call('PUT', `/1/boards/${id}`, update, 200);
    expect(updated.body).toMatchObject({ description: 'the checkout service', tags: [{ key: 'team', value: 'checkout' }] });
    expect(updated.body.panels[0].query_panel.visualization_settings).toMatchObject({ utc_xaxis: true, charts: [{ chart_index: 0, chart_type: 'line' }] });
    expect((await call('GET', `/1/boards/${id}`, undefined, 200)).body).toEqual(updated.body);

    // Board view: filters always sent, value omitempty.
    const view = await call('POST', `/1/boards/${id}/views`, { name: 'Errors', filters: [{ column: 'status', operation: '>=', value: 500 }] }, 201);
    const vid = view.body.id;
    expect((await call('GET', `/1/boards/${id}/views/${vid}`, undefined, 200)).body).toEqual(view.body);
    const view2 = await call('PUT', `/1/boards/${id}/views/${vid}`, { id: vid, name: 'Errors', filters: [{ column: 'status', operation: 'exists' }] }, 200);
    expect((await call('GET', `/1/boards/${id}/views/${vid}`, undefined, 200)).body).toEqual(view2.body);
    await call('DELETE', `/1/boards/${id}/views/${vid}`, undefined, 204);
    expect((await call('GET', `/1/boards/${id}/views/${vid}`)).status).toBe(404);

    await call('DELETE', `/1/boards/${id}`, undefined, 204);
    expect((await call('GET', `/1/boards/${id}`)).status).toBe(404);
  });

  it('honeycombio_email/slack/pagerduty/webhook/msteams_workflow_recipient', async () => {
    // RecipientDetails: every field omitempty except webhook_headers (null when unset); the
    // times are zero. Each recipient: create, read, change, read, destroy.
    const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['email', { email_address: 'tf@example.com', webhook_headers: null }, { email_address: 'tf-oncall@example.com', webhook_headers: null }],
      ['slack', { slack_channel: '#tf', webhook_headers: null }, { slack_channel: '#tf-alerts', webhook_headers: null }],
      [
        'pagerduty',
        { pagerduty_integration_key: 'abcdefghijklmnopqrstuvwxyz012345', pagerduty_integration_name: 'TF PD', webhook_headers: null },
        { pagerduty_integration_key: 'abcdefghijklmnopqrstuvwxyz012345', pagerduty_integration_name: 'TF PD renamed', webhook_headers: null },
      ],
      [
        'webhook',
        { webhook_name: 'TF hook', webhook_url: 'https://hooks.example.com/tf', webhook_headers: null },
        {
          webhook_name: 'TF hook',
          webhook_url: 'https://hooks.example.com/tf',
          webhook_secret: 's3cret',
          webhook_headers: [{ header: 'X-Team', value: 'checkout' }],
          // PayloadTemplates is a struct (always sent); a template variable's default is always sent.
          webhook_payloads: { payload_templates: { trigger: { body: '{"name": {{ .Name | toJson }}}' } }, template_variables: [{ name: 'severity', default_value: '' }] },
        },
      ],
      [
        'msteams_workflow',
        { webhook_name: 'TF flow', webhook_url: 'https://prod.westus.logic.azure.com:443/workflows/tf', webhook_headers: null },
        { webhook_name: 'TF flow 2', webhook_url: 'https://prod.westus.logic.azure.com:443/workflows/tf', webhook_headers: null },
      ],
    ];
    for (const [type, details, changedDetails] of cases) {
      const created = await call('POST', '/1/recipients', { type, details, created_at: ZERO, updated_at: ZERO }, 201);
      const id = created.body.id;
      expect(created.body.type).toBe(type);
      expect((await call('GET', `/1/recipients/${id}`, undefined, 200)).body).toEqual(created.body);
      const updated = await call('PUT', `/1/recipients/${id}`, { id, type, details: changedDetails, created_at: ZERO, updated_at: ZERO }, 200);
      const { webhook_headers: headers, ...expected } = changedDetails;
      expect(updated.body.details).toMatchObject(headers === null ? expected : changedDetails);
      expect((await call('GET', `/1/recipients/${id}`, undefined, 200)).body).toEqual(updated.body);
      await call('DELETE', `/1/recipients/${id}`, undefined, 204);
      expect((await call('GET', `/1/recipients/${id}`)).status, type).toBe(404);
    }
    // The legacy msteams resource cannot create any more: a 422 that names msteams_workflow.
    const legacy = await call('POST', '/1/recipients', { type: 'msteams', details: { webhook_name: 'old', webhook_url: 'https://example.webhook.office.com/x', webhook_headers: null }, created_at: ZERO, updated_at: ZERO }, 422);
    expect(legacy.body.type_detail[0].description).toMatch(/msteams_workflow/);
  });

  it('honeycombio_trigger (query_id, marker and inline email recipients)', async () => {
    const q = await call('POST', `/1/queries/${DS}`, { calculations: [{ op: 'COUNT' }], filters: [{ column: 'status', op: '>=', value: 500 }] }, 200);
    // disabled, threshold and tags have no omitempty; frequency is sent (the provider's default).
    const create = {
      name: 'Errors',
      disabled: false,
      query_id: q.body.id,
      alert_type: 'on_change',
      threshold: { op: '>=', value: 0 },
      evaluation_schedule_type: 'frequency',
      frequency: 300,
      recipients: [{ type: 'marker', target: 'errors rising' }, { type: 'email', target: 'tf-trigger@example.com' }],
      baseline_details: { type: 'percentage', offset_minutes: 1440 },
      auto_investigate: false,
      tags: null,
    };
    const created = await call('POST', `/1/triggers/${DS}`, create, 201);
    const id = created.body.id;
    expect(created.body).toMatchObject({
      query_id: q.body.id,
      query: { calculations: [{ op: 'COUNT' }], filters: [{ column: 'status', op: '>=', value: 500 }], time_range: 300 },
      threshold: { op: '>=', value: 0, exceeded_limit: 1 },
      baseline_details: { type: 'percentage', offset_minutes: 1440 },
      auto_investigate: false,
    });
    expect(created.body).not.toHaveProperty('tags');
    const [marker, email] = created.body.recipients;
    expect(marker).toEqual({ id: expect.any(String), type: 'marker', target: 'errors rising' });
    expect(email).toEqual({ id: expect.any(String), type: 'email', target: 'tf-trigger@example.com' });
    expect((await call('GET', `/1/recipients/${email.id}`, undefined, 200)).body.details).toEqual({ email_address: 'tf-trigger@example.com' });
    expect((await call('GET', `/1/triggers/${DS}/${id}`, undefined, 200)).body).toEqual(created.body);

    // The provider's update with query_id: recipients as read back (id, type, target).
    const update = { ...create, id, description: 'errors above yesterday', threshold: { op: '>=', value: 10, exceeded_limit: 2 }, recipients: [marker, email], tags: [{ key: 'team', value: 'checkout' }] };
    const updated = await call('PUT', `/1/triggers/${DS}/${id}`, update, 200);
    expect(updated.body).toMatchObject({ description: 'errors above yesterday', threshold: { op: '>=', value: 10, exceeded_limit: 2 }, recipients: [marker, email], tags: [{ key: 'team', value: 'checkout' }] });
    expect((await call('GET', `/1/triggers/${DS}/${id}`, undefined, 200)).body).toEqual(updated.body);
    // The client's MarshalJSON with both query and query_id sends query_id and drops query and
    // baseline_details: the stored baseline stays.
    const { baseline_details: _b, ...withoutBaseline } = update;
    const kept = await call('PUT', `/1/triggers/${DS}/${id}`, { ...withoutBaseline, auto_investigate: true }, 200);
    expect(kept.body).toMatchObject({ baseline_details: { type: 'percentage', offset_minutes: 1440 }, auto_investigate: true });
    expect((await call('GET', `/1/triggers/${DS}/${id}`, undefined, 200)).body).toEqual(kept.body);

    await call('DELETE', `/1/triggers/${DS}/${id}`, undefined, 204);
    expect((await call('GET', `/1/triggers/${DS}/${id}`)).status).toBe(404);
    // The email recipient made for it is an ordinary recipient, free to delete now.
    await call('DELETE', `/1/recipients/${email.id}`, undefined, 204);
  });

  it('honeycombio_slo and honeycombio_burn_alert', async () => {
    await call('POST', `/1/derived_columns/${DS}`, { alias: 'tf_sli', expression: 'LT($status, 500)' }, 201);
    // SLO: dataset_slugs omitempty (a dataset path), tags no omitempty (null), zero times.
    const slo = { name: 'Checkout availability', time_period_days: 30, target_per_million: 999000, tags: null, sli: { alias: 'tf_sli' }, created_at: ZERO, updated_at: ZERO };
    const created = await call('POST', `/1/slos/${DS}`, slo, 201);
    const sloId = created.body.id;
    expect(created.body).not.toHaveProperty('tags');
    expect((await call('GET', `/1/slos/${DS}/${sloId}`, undefined, 200)).body).toEqual(created.body);
    const updated = await call('PUT', `/1/slos/${DS}/${sloId}`, { ...slo, id: sloId, description: 'the checkout', target_per_million: 995000, tags: [{ key: 'team', value: 'checkout' }] }, 200);
    expect(updated.body).toMatchObject({ description: 'the checkout', target_per_million: 995000, tags: [{ key: 'team', value: 'checkout' }] });
    expect((await call('GET', `/1/slos/${DS}/${sloId}`, undefined, 200)).body).toEqual(updated.body);

    // Burn alert: alert_type and description have no omitempty; an unset alert_type is "".
    // The recipient is given inline by address.
    const alert = { alert_type: '', exhaustion_minutes: 60, description: '', slo: { id: sloId }, created_at: ZERO, updated_at: ZERO, recipients: [{ type: 'email', target: 'tf-slo@example.com' }] };
    const a = await call('POST', `/1/burn_alerts/${DS}`, alert, 201);
    const aid = a.body.id;
    expect(a.body).toMatchObject({ alert_type: 'exhaustion_time', exhaustion_minutes: 60, auto_investigate: false });
    const [recipient] = a.body.recipients;
    expect(recipient).toEqual({ id: expect.any(String), type: 'email', target: 'tf-slo@example.com' });
    expect((await call('GET', `/1/burn_alerts/${DS}/${aid}`, undefined, 200)).body).toEqual(a.body);
    const budget = {
      id: aid,
      alert_type: 'budget_rate',
      budget_rate_window_minutes: 120,
      budget_rate_decrease_threshold_per_million: 1000,
      description: 'fast burn',
      auto_investigate: true,
      slo: { id: sloId },
      created_at: ZERO,
      updated_at: ZERO,
      recipients: [{ id: recipient.id, type: 'email', target: 'tf-slo@example.com' }],
    };
    const b = await call('PUT', `/1/burn_alerts/${DS}/${aid}`, budget, 200);
    expect(b.body).toMatchObject({ alert_type: 'budget_rate', budget_rate_window_minutes: 120, description: 'fast burn', auto_investigate: true, recipients: [recipient] });
    expect((await call('GET', `/1/burn_alerts/${DS}/${aid}`, undefined, 200)).body).toEqual(b.body);
    await call('DELETE', `/1/burn_alerts/${DS}/${aid}`, undefined, 204);
    expect((await call('GET', `/1/burn_alerts/${DS}/${aid}`)).status).toBe(404);
    await call('DELETE', `/1/slos/${DS}/${sloId}`, undefined, 204);
    expect((await call('GET', `/1/slos/${DS}/${sloId}`)).status).toBe(404);
  });

  it('honeycombio_environment and honeycombio_api_key (v2, JSON:API)', async () => {
    const team = t.init.team.slug;
    // Environment: slug has no omitempty (always sent, ""); description, color and settings are
    // omitempty pointers. The empty primary id is left out.
    const env = await call2('POST', `/2/teams/${team}/environments`, { data: { type: 'environments', attributes: { name: 'TF Env', slug: '', description: 'from terraform', color: 'blue' } } }, 201);
    const envId = env.body.data.id;
    expect(env.body.data.attributes).toMatchObject({ name: 'TF Env', slug: 'tf-env', settings: { delete_protected: true } });
    expect((await call2('GET', `/2/teams/${team}/environments/${envId}`, undefined, 200)).body.data).toEqual(env.body.data);
    // Update: name and slug "" (always sent), the rest as planned.
    const patch = { data: { type: 'environments', id: envId, attributes: { name: '', slug: '', description: 'still terraform', color: 'green', settings: { delete_protected: false } } } };
    const patched = await call2('PATCH', `/2/teams/${team}/environments/${envId}`, patch, 200);
    expect(patched.body.data.attributes).toMatchObject({ name: 'TF Env', slug: 'tf-env', description: 'still terraform', color: 'green', settings: { delete_protected: false } });
    expect((await call2('GET', `/2/teams/${team}/environments/${envId}`, undefined, 200)).body.data).toEqual(patched.body.data);

    // API key: permissions are omitempty booleans (only the true ones); the environment relation.
    const key = await call2(
      'POST',
      `/2/teams/${team}/api-keys`,
      {
        data: {
          type: 'api-keys',
          attributes: { name: 'tf key', key_type: 'configuration', disabled: false, permissions: { create_datasets: true, manage_markers: true } },
          relationships: { environment: { data: { type: 'environments', id: envId } } },
        },
      },
      201,
    );
    const keyId = key.body.data.id;
    expect(key.body.data.attributes.secret).toEqual(expect.any(String));
    const { secret: _s, ...keyAttributes } = key.body.data.attributes;
    expect((await call2('GET', `/2/teams/${team}/api-keys/${keyId}`, undefined, 200)).body.data.attributes).toEqual(keyAttributes);
    // Update: name and disabled; the nil environment relation is encoded as {"data": null}.
    const keyPatch = { data: { type: 'api-keys', id: keyId, attributes: { name: 'tf key (renamed)', disabled: true }, relationships: { environment: { data: null } } } };
    const renamed = await call2('PATCH', `/2/teams/${team}/api-keys/${keyId}`, keyPatch, 200);
    expect(renamed.body.data.attributes).toMatchObject({ name: 'tf key (renamed)', disabled: true, permissions: { create_datasets: true, manage_markers: true } });
    expect(renamed.body.data.relationships.environment.data.id).toBe(envId);
    expect((await call2('GET', `/2/teams/${team}/api-keys/${keyId}`, undefined, 200)).body.data).toEqual(renamed.body.data);
    await call2('DELETE', `/2/teams/${team}/api-keys/${keyId}`, undefined, 204);
    expect((await call2('GET', `/2/teams/${team}/api-keys/${keyId}`)).status).toBe(404);

    await call2('DELETE', `/2/teams/${team}/environments/${envId}`, undefined, 204);
    expect((await call2('GET', `/2/teams/${team}/environments/${envId}`)).status).toBe(404);
  });
});
