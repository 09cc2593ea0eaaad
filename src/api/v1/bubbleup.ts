// POST /1/bubbleup/{datasetSlug|__all__} (Waggle extension; docs/web-ui.md, "BubbleUp"):
// compares a selection of a query's events with the rest of them on every column and answers
// the columns that differ most, each with both distributions (src/query/bubbleup.ts).
//
// Body: `{query, selection: {start_time, end_time, column?, lower?, upper?}, limit?}`.
// `query` is a query spec (the Queries API's rules; only its time range, filters and calculated
// fields matter here), its window truncated as query results truncate theirs; the selection is a
// time range inside that window, and optionally a range of one field's values (a heatmap region).
// Same permissions as query results (Manage Queries and Columns, Run Queries). Another
// environment's dataset → 404. A comparison longer than the query timeout → 503; an event engine without BubbleUp → 501.
import { Type } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { ApiError } from '../../errors.js';
import { bodyObject, isObject, Problems } from '../../validation.js';
import { bubbleUp, MAX_COLUMNS } from '../../query/bubbleup.js';
import { querySources } from '../../query/sources.js';
import { validateNestedQuerySpec } from '../../query/validate.js';
import { QueryTimeout } from '../../stores/events/types.js';
import type { ApiContext, App } from '../context.js';
import { resultWindow } from '../../domain/queries.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { SlugParams, QuerySchema } from './schemas.js';

const DEFAULT_LIMIT = 50;

const Share = { selection: Type.Number({ description: 'Share of the selection (0…1, weighted by sample rate)' }), baseline: Type.Number() };
const Side = Type.Object({
  events: Type.Number({ description: 'Events, weighted by sample rate' }),
  rows: Type.Integer({ description: 'Stored events' }),
  sampled: Type.Integer({ description: 'Stored events the distributions were computed from' }),
});
const Answer = Type.Object({
  selection: Side,
  baseline: Side,
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
const Body = Type.Object({
  query: Type.Optional(QuerySchema),
  selection: Type.Object({
    start_time: Type.Integer({ description: 'Unix seconds' }),
    end_time: Type.Integer({ description: 'Unix seconds, after start_time' }),
    column: Type.Optional(Type.String({ description: 'A field whose values bound the selection (a heatmap’s column)' })),
    lower: Type.Optional(Type.Number()),
    upper: Type.Optional(Type.Number()),
  }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_COLUMNS, default: DEFAULT_LIMIT })),
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
          'Compares the selected events of a query (a time range, optionally a range of one field) with the rest of its events on every column; ' +
          'answers the columns that differ most, with both distributions.',
        response: { 200: Answer },
      },
      validatorCompiler: () => () => true,
      config: { auth: { kind: 'team', permission: ['manage_columns', 'run_queries'] } },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      const input = bodyObject(request.body);
      const p = new Problems();
      const spec = validateNestedQuerySpec(input.query, 'query', p);
      const sel = input.selection;
      let selection: { start: number; end: number; column?: string; lower?: number; upper?: number } | undefined;
      if (sel === undefined || sel === null) p.missing('selection');
      else if (!isObject(sel)) p.type('selection', 'an object', sel);
      else {
        const okStart = p.integer('selection.start_time', sel.start_time, 0);
        const okEnd = p.integer('selection.end_time', sel.end_time, 0);
        if (okStart && okEnd && (sel.end_time as number) <= (sel.start_time as number)) p.add('selection.end_time', 'invalid', 'must be after selection.start_time');
        const column = sel.column === undefined || sel.column === null ? undefined : sel.column;
        if (column !== undefined) p.string('selection.column', column, { max: 255 });
        const bound = (k: 'lower' | 'upper') => {
          const v = sel[k];
          if (v === undefined || v === null) return undefined;
          if (typeof v !== 'number' || !Number.isFinite(v)) return void p.type(`selection.${k}`, 'a number', v);
          if (column === undefined) return void p.add(`selection.${k}`, 'invalid', 'needs selection.column');
          return v;
        };
        const lower = bound('lower');
        const upper = bound('upper');
        if (lower !== undefined && upper !== undefined && upper < lower) p.add('selection.upper', 'invalid', 'must not be below selection.lower');
        selection = { start: sel.start_time as number, end: sel.end_time as number, column: column as string | undefined, lower, upper };
      }
      const limit = input.limit === undefined || input.limit === null ? DEFAULT_LIMIT : input.limit;
      p.integer('limit', limit, 1, MAX_COLUMNS);
      p.throwIfAny();

      const window = resultWindow({ id: '', ...spec }, Math.floor(now().getTime() / 1000));
      const s = selection!;
      const start = Math.max(s.start, window.start);
      const end = Math.min(s.end, window.end);
      if (end <= start) p.add('selection', 'invalid', "must overlap the query's time range");
      const sources = await querySources(store, env, dataset);
      if (s.column !== undefined) {
        const known = sources.some((src) => src.columns.some((c) => c.keyName === s.column) || src.calculated.some((c) => c.name === s.column)) ||
          (spec.calculated_fields ?? []).some((c) => c.name === s.column);
        if (!known) p.add('selection.column', 'invalid', `is not a column or calculated field of ${dataset ? `dataset ${dataset.slug}` : 'the environment'}`);
      }
      p.throwIfAny();
      try {
        return await bubbleUp(events, sources, spec, {
          start: window.start,
          end: window.end,
          selection: { ...s, start, end },
          limit: limit as number,
          timeoutMs: settings.queryTimeoutMs,
        });
      } catch (err) {
        if (err instanceof QueryTimeout) throw new ApiError(503, `BubbleUp exceeded the ${settings.queryTimeoutMs / 1000} s run time; narrow the query's time range or filters`);
        throw err;
      }
    },
  );
}
