// POST /1/raw_events/{datasetSlug|__all__} (Waggle extension; docs/web-ui.md, "Events"): the
// newest events of a query's window that pass its filters, with every field (the 500 most
// recently written columns), for the web UI's event browser (Honeycomb's "Explore data").
//
// Body: `{query?, limit?}`; `query` is a query spec (the Queries API's rules; its time range,
// filters and calculated fields are used), its window truncated as query results truncate
// theirs; `limit` 1…1000, default 100. Permissions as query results; another environment's
// dataset → 404.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envOf } from '../../http/auth.js';
import { ApiError } from '../../errors.js';
import { Problems } from '../../validation.js';
import { latestEvents } from '../../query/events.js';
import { querySources } from '../../query/sources.js';
import { checkQuerySpec } from '../../query/validate.js';
import { QueryTimeout } from '../../stores/events/types.js';
import type { ApiContext, App } from '../context.js';
import { resultWindow } from '../../domain/queries.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { SlugParams, orNull } from './schemas.js';
import { QueryInput } from './shapes/query.js';

const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 100;
// A JSON body, read whole (not an ingest body, which may be gzip or msgpack): its schema validates
// it (ajv); the query's own rules are checkQuerySpec's.
const Body = Type.Object({
  query: Type.Optional(orNull(QueryInput, 'Omitted or null: the empty query (the last 2 hours).')),
  limit: Type.Optional(orNull(Type.Integer({ minimum: 1, maximum: MAX_LIMIT }), `Omitted or null: ${DEFAULT_LIMIT}.`)),
});

export function registerRawEvents(app: App, ctx: ApiContext): void {
  const { store, events, settings, now } = ctx;
  app.post(
    '/1/raw_events/:datasetSlug',
    {
      schema: {
        tags: ['Events browser (Waggle extension)'],
        security: [{ configuration_key: [] }],
        params: SlugParams,
        body: Body,
        description: "The newest events of a query's time range that pass its filters, with every field.",
        response: {
          200: Type.Object({
            events: Type.Array(Type.Object({ time: Type.String(), data: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()])) })),
          }),
        },
      },
      // A path's 404 (its dataset) comes before a body's 422.
      preValidation: async (request: FastifyRequest) => void (await datasetOrAll(store, envOf(request), (request.params as { datasetSlug: string }).datasetSlug)),
      config: { auth: { kind: 'team', permission: ['manage_columns', 'run_queries'] } },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      const input = request.body as Static<typeof Body>;
      const p = new Problems();
      const spec = input.query ? checkQuerySpec(p, input.query, (f) => `query.${f}`) : {};
      const limit = input.limit ?? DEFAULT_LIMIT;
      p.throwIfAny();
      const window = resultWindow({ id: '', ...spec }, Math.floor(now().getTime() / 1000));
      const sources = await querySources(store, env, dataset);
      try {
        return { events: await latestEvents(events, sources, spec, { ...window, limit, timeoutMs: settings.queryTimeoutMs }) };
      } catch (err) {
        if (err instanceof QueryTimeout) throw new ApiError(503, `reading events exceeded the ${settings.queryTimeoutMs / 1000} s run time`);
        throw err;
      }
    },
  );
}
