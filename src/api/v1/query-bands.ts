// GET /1/query_results/{datasetSlug|__all__}/{queryResultId}/bands (a Waggle extension;
// docs/queries.md, "Anomaly bands"): the expected band of each series of a completed query result
// from the same query over its history, and the points outside it (src/domain/anomaly-bands.ts
// says how). Query string: `seasonality` (day | week, default day), `periods` (2…12; default 7
// days or 4 weeks), `sensitivity` (low | medium | high, default medium); a bad value → 422. Same
// permissions as the result (Manage Queries and Columns, Run Queries); another environment's
// result → 404; a result still running → 409 (poll it first). The result's own answer is
// unchanged.
import { Type } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { ApiError } from '../../errors.js';
import { querySources } from '../../query/sources.js';
import type { ApiContext, App } from '../context.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { QUERY_RESULT_KIND } from '../../domain/kinds.js';
import { bandOptions, resultBands } from '../../domain/anomaly-bands.js';
import type { ResultBody } from '../../domain/query-results.js';
import { findOwned } from '../resource.js';
import { itemParams } from './schemas.js';

/** How long a result still pending is waited for before the 409. */
const STORED_WAIT_MS = 1000;
const Num = Type.Union([Type.Number(), Type.Null()]);
const Answer = Type.Object({
  seasonality: Type.String({ description: 'day or week' }),
  period_seconds: Type.Integer(),
  periods: Type.Integer(),
  sensitivity: Type.String(),
  granularity: Type.Integer({ description: 'The buckets’ width, seconds' }),
  series: Type.Array(
    Type.Object({
      group: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
      calculation: Type.String(),
      outside: Type.Integer({ description: 'Points outside their band' }),
      points: Type.Array(Type.Object({ time: Type.String(), value: Num, expected: Num, lower: Num, upper: Num, outside: Type.Boolean() })),
    }),
  ),
});
const Query = Type.Object({
  seasonality: Type.Optional(Type.String()),
  periods: Type.Optional(Type.String()),
  sensitivity: Type.Optional(Type.String()),
});

export function registerQueryBands(app: App, ctx: ApiContext): void {
  const { store, events, settings } = ctx;
  app.get(
    '/1/query_results/:datasetSlug/:queryResultId/bands',
    {
      schema: {
        tags: ['Query Data'],
        security: [{ configuration_key: [] }],
        params: itemParams('queryResultId'),
        querystring: Query,
        description:
          'Waggle extension: the expected band of each series of a completed result, learned from the same query over the same window on earlier days or weeks, and the points outside it.',
        response: { 200: Answer },
      },
      config: { auth: { kind: 'team', permission: ['manage_columns', 'run_queries'] } },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      let obj = await findOwned<ResultBody>(store, QUERY_RESULT_KIND, request.params.queryResultId, 'query result', env, dataset);
      const options = bandOptions(request.query);
      // A completed result is stored a moment after its answer is given: wait for it a little.
      for (let i = 0; !obj.body.complete && i < STORED_WAIT_MS / 20; i++) {
        await new Promise((r) => setTimeout(r, 20));
        obj = (await store.getObject<ResultBody>(QUERY_RESULT_KIND, obj.id)) ?? obj;
      }
      const b = obj.body;
      if (!b.complete) throw new ApiError(409, 'the query result is still running: poll it until complete, then ask for its bands');
      const sources = await querySources(store, env, await datasetOrAll(store, env, b.datasetSlug));
      const data = b.data ?? { series: [], results: [] };
      return resultBands(events, sources, { query: b.query, start: b.start, end: b.end, limit: b.limit, data }, options, settings.queryTimeoutMs, ctx.cache);
    },
  );
}
