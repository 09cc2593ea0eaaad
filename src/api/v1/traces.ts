// GET /1/traces/{datasetSlug|__all__}/{traceId} (Waggle extension; docs/web-ui.md, "Traces"):
// every event of one trace, oldest first, at most 10,000 (`truncated` says when there were
// more), for the web UI's trace waterfall. Each event is read with its dataset's definitions
// (trace id, span id, parent id, name, service, duration, error, annotation type: Beeline-style
// `trace.*` fields by default, the shape OpenTelemetry spans arrive in too), so each answer
// entry names them as `span_id`, `parent_id`, … beside every field in `data`. Span events and
// links (`meta.annotation_type` `span_event` / `link`) come as entries of `kind` `span_event` /
// `link` whose `parent_id` is their span's. `__all__` looks in every dataset of the environment
// (a trace's services often write to datasets of their own).
//
// `start_time` / `end_time` (Unix seconds) narrow the search; by default it covers everything
// kept (WAGGLE_RETENTION_DAYS; traceWindow, src/domain/queries.ts). Permissions as query results; another environment's dataset → 404.
import { Type } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { ApiError } from '../../errors.js';
import { MAX_TRACE_SPANS, traceSpans } from '../../query/events.js';
import { querySources } from '../../query/sources.js';
import { QueryTimeout } from '../../stores/events/types.js';
import type { ApiContext, App } from '../context.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { traceWindow } from '../../domain/queries.js';

const Value = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);
const nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Number>>(t: T) => Type.Union([t, Type.Null()]);
const Span = Type.Object({
  dataset: Type.String(),
  time: Type.String({ description: 'Event time (the span’s start), RFC 3339 with microseconds' }),
  span_id: nullable(Type.String()),
  parent_id: nullable(Type.String()),
  name: nullable(Type.String()),
  service_name: nullable(Type.String()),
  duration_ms: nullable(Type.Number()),
  error: Type.Boolean(),
  kind: Type.Union([Type.Literal('span'), Type.Literal('span_event'), Type.Literal('link')]),
  link: Type.Optional(Type.Object({ trace_id: nullable(Type.String()), span_id: nullable(Type.String()) })),
  data: Type.Record(Type.String(), Value),
});

export function registerTraces(app: App, ctx: ApiContext): void {
  const { store, events, settings, now } = ctx;
  app.get(
    '/1/traces/:datasetSlug/:traceId',
    {
      schema: {
        tags: ['Traces (Waggle extension)'],
        security: [{ configuration_key: [] }],
        params: Type.Object({ datasetSlug: Type.String(), traceId: Type.String({ minLength: 1, maxLength: 256 }) }),
        querystring: Type.Object({
          start_time: Type.Optional(Type.String({ pattern: '^[0-9]{1,12}$', description: 'Unix seconds' })),
          end_time: Type.Optional(Type.String({ pattern: '^[0-9]{1,12}$', description: 'Unix seconds' })),
        }),
        description: `Every event of a trace (spans, span events, links), oldest first, at most ${MAX_TRACE_SPANS}.`,
        response: { 200: Type.Object({ trace_id: Type.String(), truncated: Type.Boolean(), spans: Type.Array(Span) }) },
      },
      config: { auth: { kind: 'team', permission: ['manage_columns', 'run_queries'] } },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      const { start, end } = traceWindow(request.query, Math.floor(now().getTime() / 1000), settings.retentionDays);
      const sources = await querySources(store, env, dataset);
      try {
        const { spans, truncated } = await traceSpans(events, sources, request.params.traceId, {
          start,
          end,
          limit: MAX_TRACE_SPANS,
          timeoutMs: settings.queryTimeoutMs,
        });
        return { trace_id: request.params.traceId, truncated, spans };
      } catch (err) {
        if (err instanceof QueryTimeout) throw new ApiError(503, `the trace lookup exceeded the ${settings.queryTimeoutMs / 1000} s run time; give start_time and end_time`);
        throw err;
      }
    },
  );
}
