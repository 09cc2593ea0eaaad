// POST /1/bubbleup/{datasetSlug|__all__} (Waggle extension; docs/web-ui.md, "BubbleUp"):
// compares a selection of a query's events with the rest of them on every column and answers
// the columns that differ most, each with both distributions (src/query/bubbleup.ts).
//
// Body: `{query, selection: {start_time, end_time, column?, lower?, upper?}, baseline?, limit?}`.
// `query` is a query spec (the Queries API's rules; only its time range, filters and calculated
// fields matter here), its window truncated as query results truncate theirs; the selection is a
// time range inside that window, and optionally a range of one field's values (a heatmap region).
// `baseline` is what the selection is compared with: `{kind: "rest"}` (the default) the rest of
// the query's events, `{kind: "past", offset_seconds}` the same selection that much earlier.
// Same permissions as query results (Manage Queries and Columns, Run Queries). Another
// environment's dataset → 404. A comparison longer than the query timeout → 503; an event engine without BubbleUp → 501.
// The rules the body's schema cannot say, and the comparison's run: src/domain/bubbleup.ts.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envOf } from '../../http/auth.js';
import { MAX_COLUMNS } from '../../query/bubbleup.js';
import type { ApiContext, App } from '../context.js';
import { DEFAULT_LIMIT, MAX_BASELINE_OFFSET, runBubbleUp, type BubbleUpInput } from '../../domain/bubbleup.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { SlugParams, enumOf, orNull } from './schemas.js';
import { QueryInput } from './shapes/query.js';

const Share = { selection: Type.Number({ description: 'Share of the selection (0…1, weighted by sample rate)' }), baseline: Type.Number() };
const Side = Type.Object({
  events: Type.Number({ description: 'Events, weighted by sample rate' }),
  rows: Type.Integer({ description: 'Stored events' }),
  sampled: Type.Integer({ description: 'Stored events the distributions were computed from' }),
});
const Answer = Type.Object({
  selection: Side,
  baseline: Type.Object({
    kind: Type.Union([Type.Literal('rest'), Type.Literal('past')]),
    start_time: Type.Optional(Type.Integer({ description: 'Past: the start of its time range, Unix seconds' })),
    end_time: Type.Optional(Type.Integer({ description: 'Past: the end of its time range (exclusive), Unix seconds' })),
    ...Side.properties,
  }),
  columns: Type.Array(
    Type.Object({
      column: Type.String(),
      type: Type.Union([Type.Literal('string'), Type.Literal('integer'), Type.Literal('float'), Type.Literal('boolean')]),
      score: Type.Number({ description: 'How far apart the two distributions are, 0…1' }),
      kind: Type.Union([Type.Literal('values'), Type.Literal('histogram')]),
      values: Type.Optional(Type.Array(Type.Object({ value: Type.Union([Type.String(), Type.Null()]), ...Share }))),
      bins: Type.Optional(Type.Array(Type.Object({ lower: Type.Number(), upper: Type.Number(), ...Share }))),
      missing: Type.Optional(Type.Object(Share)),
    }),
  ),
});
// The body's schema validates it (ajv); runBubbleUp (src/domain/bubbleup.ts) checks what it cannot
// say: the query's own rules, the selection's times and bounds against each other and the query's
// window, and that its column is one of the dataset's.
const Body = Type.Object({
  query: Type.Optional(orNull(QueryInput, 'Omitted or null: the empty query (the last 2 hours).')),
  selection: Type.Object({
    start_time: Type.Integer({ minimum: 0, description: 'Unix seconds' }),
    end_time: Type.Integer({ minimum: 0, description: 'Unix seconds, after start_time' }),
    column: Type.Optional(orNull(Type.String({ minLength: 1, maxLength: 255 }), 'A field whose values bound the selection (a heatmap’s column)')),
    lower: Type.Optional(orNull(Type.Number(), 'Needs column.')),
    upper: Type.Optional(orNull(Type.Number(), 'Needs column; not below lower.')),
  }),
  limit: Type.Optional(orNull(Type.Integer({ minimum: 1, maximum: MAX_COLUMNS }), `Omitted or null: ${DEFAULT_LIMIT}.`)),
  baseline: Type.Optional(
    orNull(
      Type.Object(
        {
          kind: enumOf(['rest', 'past'] as const),
          offset_seconds: Type.Optional(
            orNull(Type.Integer({ minimum: 1, maximum: MAX_BASELINE_OFFSET }), "past: how far back, seconds (at least the selection's length; at most 26 weeks); rest: none."),
          ),
        },
        { additionalProperties: false, if: { properties: { kind: { const: 'past' } }, required: ['kind'] }, then: { required: ['offset_seconds'], properties: { offset_seconds: { type: 'integer' } } } },
      ),
      'What the selection is compared with: the rest of the query’s events (`rest`, the default: omitted or null), or the same selection `offset_seconds` earlier (`past`).',
    ),
  ),
});

export function registerBubbleUp(app: App, ctx: ApiContext): void {
  const { store, events, settings, now } = ctx;
  app.post(
    '/1/bubbleup/:datasetSlug',
    {
      schema: {
        tags: ['BubbleUp (Waggle extension)'],
        security: [{ configuration_key: [] }],
        params: SlugParams,
        body: Body,
        description:
          'Compares the selected events of a query (a time range, optionally a range of one field) with the rest of its events, or with the same selection earlier, on every column; ' +
          'answers the columns that differ most, with both distributions.',
        response: { 200: Answer },
      },
      // A path's 404 (its dataset) comes before a body's 422.
      preValidation: async (request: FastifyRequest) => void (await datasetOrAll(store, envOf(request), (request.params as { datasetSlug: string }).datasetSlug)),
      config: { auth: { kind: 'team', permission: ['manage_columns', 'run_queries'] } },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      return runBubbleUp(store, events, env, dataset, request.body as BubbleUpInput, Math.floor(now().getTime() / 1000), settings.queryTimeoutMs);
    },
  );
}
