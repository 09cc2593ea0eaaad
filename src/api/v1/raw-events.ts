// POST /1/raw_events/{datasetSlug|__all__} (Waggle extension; docs/web-ui.md, "Events"): the
// newest events of a query's window that pass its filters, with every field (the 500 most
// recently written columns), for the web UI's event browser (Honeycomb's "Explore data").
//
// Body: `{query?, limit?}`; `query` is a query spec (the Queries API's rules; its time range,
// filters and calculated fields are used), its window truncated as query results truncate
// theirs; `limit` 1…1000, default 100. Permissions as query results; another environment's
// dataset → 404.
// The query's rules, its window and the read: src/domain/raw-events.ts.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envOf } from '../../http/auth.js';
import type { ApiContext, App } from '../context.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { DEFAULT_LIMIT, readRawEvents, type RawEventsInput } from '../../domain/raw-events.js';
import { SlugParams, orNull } from './schemas.js';
import { QueryInput } from './shapes/query.js';

const MAX_LIMIT = 1000;
// A JSON body, read whole (not an ingest body, which may be gzip or msgpack): its schema validates
// it (ajv); the query's own rules are checkQuerySpec's (readRawEvents).
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
      return readRawEvents(store, events, env, dataset, request.body as RawEventsInput, Math.floor(now().getTime() / 1000), settings.queryTimeoutMs);
    },
  );
}
