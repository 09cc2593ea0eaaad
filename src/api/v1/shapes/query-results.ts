// The request and answer shapes of /1/query_results (src/api/v1/query-results.ts).
import { Type } from '@sinclair/typebox';
import type { StoredQuery } from '../../../query/spec.js';
import { QuerySchema } from '../schemas.js';

export const CreateResultBody = Type.Object({
  query_id: Type.String({ minLength: 1 }),
  disable_series: Type.Optional(Type.Boolean()),
  disable_total_by_aggregate: Type.Optional(Type.Boolean({ default: true })),
  disable_other_by_aggregate: Type.Optional(Type.Boolean({ default: true })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, description: 'Only honoured with disable_series: true.' })),
});

const Data = Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]));
const Row = Type.Object({ data: Data });
const SeriesRow = Type.Object({ time: Type.String(), data: Data });
const dataParts = {
  series: Type.Array(SeriesRow),
  results: Type.Array(Row),
  total_by_aggregate: Type.Optional(Row),
  total_by_aggregate_series: Type.Optional(Type.Array(SeriesRow)),
  other_by_aggregate: Type.Optional(Row),
};
export const QueryResult = Type.Object({
  id: Type.String(),
  complete: Type.Boolean(),
  query: Type.Unsafe<StoredQuery>(QuerySchema),
  links: Type.Object({ query_url: Type.String(), graph_image_url: Type.String() }),
  data: Type.Optional(
    Type.Object({
      ...dataParts,
      comparison: Type.Optional(
        Type.Object(
          {
            offset_seconds: Type.Integer(),
            start_time: Type.Integer(),
            end_time: Type.Integer(),
            ...dataParts,
          },
          { description: "Waggle extension: the same query over the window shifted back by the query's compare_time_offset_seconds (docs/queries.md)." },
        ),
      ),
    }),
  ),
  error: Type.Optional(Type.String({ description: 'Why a complete result has no data (run time exceeded, failure).' })),
});
