// GET /1/traces/{datasetSlug|__all__}/{traceId} (Waggle extension; docs/web-ui.md, "Traces"):
// every event of one trace, oldest first, at most 100,000 (MAX_TRACE_SPANS; `truncated` says
// when there were more: the oldest 100,000 are answered), for the web UI's trace waterfall. Each event is read with its dataset's definitions
// (trace id, span id, parent id, name, service, duration, error, annotation type: Beeline-style
// `trace.*` fields by default, the shape OpenTelemetry spans arrive in too), so each answer
// entry names them as `span_id`, `parent_id`, … beside every field in `data`. Span events and
// links (`meta.annotation_type` `span_event` / `link`) come as entries of `kind` `span_event` /
// `link` whose `parent_id` is their span's. `__all__` looks in every dataset of the environment
// (a trace's services often write to datasets of their own).
//
// `start_time` / `end_time` (Unix seconds) narrow the search; by default it covers everything
// kept (WAGGLE_RETENTION_DAYS; traceWindow, src/domain/queries.ts). Permissions as query results; another environment's dataset → 404.
//
// GET /1/traces/{datasetSlug|__all__}/{traceId}/typical (Waggle extension): a typical trace to
// compare the trace with, `trace_id` of one whose root span has the same service and name, with
// a duration nearest the median of such roots within 12 hours of the trace's
// (src/query/typical-trace.ts); 404 when the trace or such another trace is not found.
import { Type } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { ApiError } from '../../errors.js';
import { MAX_TRACE_SPANS, traceSpans } from '../../query/events.js';
import { querySources } from '../../query/sources.js';
import { QueryTimeout } from '../../stores/events/types.js';
import type { ApiContext, App } from '../context.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { NoTypicalTrace, typicalTrace } from '../../query/typical-trace.js';
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

const Params = Type.Object({ datasetSlug: Type.String(), traceId: Type.String({ minLength: 1, maxLength: 256 }) });
const Window = Type.Object({
  start_time: Type.Optional(Type.String({ pattern: '^[0-9]{1,12}$', description: 'Unix seconds' })),
  end_time: Type.Optional(Type.String({ pattern: '^[0-9]{1,12}$', description: 'Unix seconds' })),
});
const Typical = Type.Object({
  trace_id: Type.String(),
  duration_ms: Type.Number({ description: 'The typical trace’s root span duration' }),
  root: Type.Object({ dataset: Type.String(), service_name: nullable(Type.String()), name: Type.String(), duration_ms: nullable(Type.Number()) }, { description: 'The given trace’s root span' }),
  median_ms: Type.Number({ description: 'Median duration of the root spans of that service and name' }),
  roots: Type.Integer({ description: 'How many such root spans there were' }),
  start_time: Type.Integer({ description: 'The window searched, Unix seconds' }),
  end_time: Type.Integer(),
});

const timedOut = (ms: number, what: string) => new ApiError(503, `${what} exceeded the ${ms / 1000} s run time; give start_time and end_time`);

export function registerTraces(app: App, ctx: ApiContext): void {
  const { store, events, settings, now } = ctx;
  app.get(
    '/1/traces/:datasetSlug/:traceId',
    {
      schema: {
        tags: ['Traces (Waggle extension)'],
        security: [{ configuration_key: [] }],
        params: Params,
        querystring: Window,
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
        if (err instanceof QueryTimeout) throw timedOut(settings.queryTimeoutMs, 'the trace lookup');
        throw err;
      }
    },
  );
  app.get(
    '/1/traces/:datasetSlug/:traceId/typical',
    {
      schema: {
        tags: ['Traces (Waggle extension)'],
        security: [{ configuration_key: [] }],
        params: Params,
        querystring: Window,
        description:
          'A typical trace to compare the trace with: one whose root span has the same service and name, with the duration nearest the median of such root spans within 12 hours of the trace’s. 404 when there is none.',
        response: { 200: Typical },
      },
      config: { auth: { kind: 'team', permission: ['manage_columns', 'run_queries'] } },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      const { start, end } = traceWindow(request.query, Math.floor(now().getTime() / 1000), settings.retentionDays);
      const sources = await querySources(store, env, dataset);
      try {
        return await typicalTrace(events, sources, request.params.traceId, { start, end, limit: MAX_TRACE_SPANS, timeoutMs: settings.queryTimeoutMs });
      } catch (err) {
        if (err instanceof NoTypicalTrace) throw new ApiError(404, err.message);
        if (err instanceof QueryTimeout) throw timedOut(settings.queryTimeoutMs, 'the typical trace search');
        throw err;
      }
    },
  );
}
