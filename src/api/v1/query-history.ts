// GET /1/query_history (Waggle extension; docs/queries.md, "Query history"): the team's query
// history — the queries run in the web UI by anyone in the key's environment (who, when, the spec,
// how long it took), newest first, searchable by dataset, column and text, or grouped into the
// most-run ones (`sort=most_run`, with `count`). Needs the permissions of query results (Manage
// Queries and Columns and Run Queries): whoever may run a query may see what others ran. Only the
// key's environment's entries, ever. What is kept and how a search matches (the decisions):
// src/domain/query-history.ts.
import { Type, type Static } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { DEFAULT_HISTORY_LIMIT, historyAnswer, MAX_HISTORY_LIMIT, searchHistory } from '../../domain/query-history.js';
import { resultPagePath } from '../../domain/ui-links.js';
import type { QuerySpec } from '../../query/spec.js';
import type { ApiContext, App } from '../context.js';
import { QuerySchema } from './schemas.js';

const Entry = Type.Object({
  id: Type.String(),
  run_at: Type.String({ format: 'date-time' }),
  dataset: Type.String({ description: 'The dataset slug, or `__all__`' }),
  query: Type.Unsafe<QuerySpec>({ ...QuerySchema, description: 'The spec as run (without its id)' }),
  query_id: Type.String({ description: 'The saved query (POST /1/queries) that ran' }),
  result_id: Type.String(),
  result_url: Type.String({ description: "The result's page in the web UI" }),
  run_by: Type.Object({ key_id: Type.String(), key_name: Type.String({ description: "The key's name when it ran" }) }),
  duration_ms: Type.Optional(Type.Number({ description: 'How long the run took, once complete' })),
  error: Type.Optional(Type.String({ description: 'Why the run failed, if it did' })),
  count: Type.Optional(Type.Integer({ description: '`sort=most_run`: the runs of this spec kept (the entry is the newest)' })),
});

const ListQuery = Type.Object({
  dataset: Type.Optional(Type.String({ maxLength: 255, description: 'Only runs in this dataset (its slug, or `__all__`)' })),
  column: Type.Optional(Type.String({ maxLength: 255, description: 'Only queries naming this column (case-insensitive)' })),
  q: Type.Optional(Type.String({ maxLength: 500, description: "Words that must all appear in the spec, the dataset or the key's name" })),
  sort: Type.Optional(Type.Unsafe<'recent' | 'most_run'>({ type: 'string', enum: ['recent', 'most_run'], description: 'recent (default) or most_run' })),
  limit: Type.Optional(Type.String({ pattern: '^([1-9][0-9]{0,2}|1000)$', description: `1…${MAX_HISTORY_LIMIT}, default ${DEFAULT_HISTORY_LIMIT}` })),
});

export function registerQueryHistory(app: App, { store }: ApiContext): void {
  app.get(
    '/1/query_history',
    {
      schema: {
        tags: ['Query Data'],
        security: [{ configuration_key: [] }],
        querystring: ListQuery,
        description: "The queries run in the web UI by anyone in the environment, newest first, or the most-run ones (Waggle extension).",
        response: { 200: Type.Array(Entry) },
      },
      config: { auth: { kind: 'team', permission: ['manage_columns', 'run_queries'] } },
    },
    async (request): Promise<Static<typeof Entry>[]> => {
      const env = envOf(request);
      const { dataset, column, q, sort, limit } = request.query as Static<typeof ListQuery>;
      const found = await searchHistory(store, env, {
        dataset,
        column,
        q,
        sort,
        limit: limit === undefined ? DEFAULT_HISTORY_LIMIT : Number(limit),
      });
      const team = request.auth!.team.slug;
      return found.map(({ entry, count }) =>
        historyAnswer(entry, request.publicBase + resultPagePath(team, env.slug, entry.body.dataset, entry.body.resultId), count),
      );
    },
  );
}
