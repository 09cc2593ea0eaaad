// /1/query_results/{datasetSlug|__all__}: run a saved query (POST → 201, `complete: false`,
// `Location`), then poll (GET) until `complete: true` with `data`. Both routes need the
// configuration-key permissions Manage Queries and Columns and Run Queries. The rules (the
// decisions) and the stored result are src/domain/query-results.ts's. A result made through the
// web UI's session is also kept in the team's query history (src/domain/query-history.ts).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envOf } from '../../http/auth.js';
import { ApiError } from '../../errors.js';
import { runClaimed } from '../../cluster/leadership.js';
import { RateLimiter } from '../../http/rate-limit.js';
import { shortId } from '../../domain/ids.js';
import { runCompared } from '../../query/compare.js';
import { querySources } from '../../query/sources.js';
import { QueryTimeout } from '../../stores/events/types.js';
import type { Environment, StoredObject } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { getQueryObject } from '../../domain/queries.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { findOwned, sendCreated } from '../resource.js';
import { SlugParams, itemParams } from './schemas.js';
import { CreateResultBody as CreateBody, QueryResult } from './shapes/query-results.js';
import { QUERY_RESULT_KIND } from '../../domain/kinds.js';
import { resultChartPng } from '../../render/chart-image.js';
import { graphImagePath, resultPagePath } from '../../domain/ui-links.js';
import { completeRun, isRecorded, recordRun, SKIP_HEADER } from '../../domain/query-history.js';
import { checkLimit, failureText, newResult, newResultObject, resultAnswer, resultOfImage, usesRelationalFields, type ResultBody } from '../../domain/query-results.js';

/**
 * A GET of a pending result waits up to this long for it to complete before answering
 * `complete: false` (a long poll): a client polling every few ms would otherwise spend the
 * server's CPU on answers that say "not yet" while the query needs it (bench/query.mjs).
 */
const PENDING_WAIT_MS = 1000;
const tags = ['Query Data'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: ['manage_columns', 'run_queries'] } as const;

/** A result being computed: its answer, then its write to the store. */
interface Running {
  answer: Promise<ResultBody | undefined>;
  stored: Promise<void>;
}

export function registerQueryResults(app: App, ctx: ApiContext): void {
  const { store, events, settings, now } = ctx;
  const limiter = new RateLimiter(() => now().getTime(), () => ctx.leadership.liveNodes());
  const running = new Map<string, Running>();

  const respond = (request: FastifyRequest, env: Environment, body: ResultBody): Static<typeof QueryResult> => {
    // Honeycomb's UI address of the result: /<team>/environments/<env>/datasets/<dataset>/result/<id>.
    const team = request.auth?.team.slug ?? '';
    const queryUrl = request.publicBase + resultPagePath(team, env.slug, body.datasetSlug, body.id);
    // Results stored before graph images existed have no token: their image URL stays a 404.
    const imageUrl = body.imageToken ? request.publicBase + graphImagePath(team, env.slug, body.datasetSlug, body.id, body.imageToken) : `${queryUrl}/snapshot`;
    return resultAnswer(body, queryUrl, imageUrl);
  };

  /**
   * Runs a stored result once per process; the stored copy is updated when it completes. `answer`
   * resolves with the completed body as soon as it is computed (undefined on an unexpected
   * failure), before it is stored: GETs waiting for it answer without waiting for the write.
   * `stored` settles once the write is done.
   */
  const start = (env: Environment, obj: StoredObject<ResultBody>): Running => {
    const existing = running.get(obj.id);
    if (existing) return existing;
    const body = obj.body;
    let answered!: (done: ResultBody | undefined) => void;
    const answer = new Promise<ResultBody | undefined>((resolve) => (answered = resolve));
    // With several nodes on one store, one of them runs it (the claimant) and the others wait for its stored answer.
    const stored = runClaimed(ctx.leadership, `query_result:${obj.id}`, settings.queryTimeoutMs + 10_000, async () => {
      let done: ResultBody;
      const started = performance.now();
      let status = 'ok';
      try {
        const dataset = await datasetOrAll(store, env, body.datasetSlug);
        const sources = await querySources(store, env, dataset);
        const data = await runCompared(events, sources, body.query, {
          start: body.start,
          end: body.end,
          limit: body.limit,
          disableSeries: body.disableSeries,
          disableTotalByAggregate: body.disableTotalByAggregate,
          disableOtherByAggregate: body.disableOtherByAggregate,
          timeoutMs: settings.queryTimeoutMs,
          cache: ctx.cache,
        });
        done = { ...body, complete: true, data };
      } catch (err) {
        status = err instanceof QueryTimeout ? 'timeout' : 'error';
        if (!(err instanceof QueryTimeout)) app.log.error({ err, queryResult: obj.id }, 'query result failed');
        done = { ...body, complete: true, data: { series: [], results: [] }, error: failureText(err, settings.queryTimeoutMs) };
      }
      const tookMs = performance.now() - started;
      ctx.metrics.queries.observe({ status }, tookMs / 1000);
      done.completedAt = now().toISOString();
      answered(done);
      // The write (JSON of every series row) waits for the waiting GETs to have answered.
      await new Promise((resolve) => setImmediate(resolve));
      // A run the UI's query history keeps (src/domain/query-history.ts): how long it took.
      if (body.historyId) await completeRun(store, body.historyId, tookMs, done.error).catch((err) => app.log.error({ err }, 'query history'));
      await store.updateObject<ResultBody>(QUERY_RESULT_KIND, obj.id, { body: done });
      return done;
    }, async () => {
      const o = await store.getObject<ResultBody>(QUERY_RESULT_KIND, obj.id);
      // (closing: stop waiting; the GET answers what is stored)
      return o?.body.complete || closing ? (o?.body ?? body) : undefined;
    })
      .then(answered)
      .catch((err) => app.log.error({ err, queryResult: obj.id }, 'storing a query result failed'))
      .finally(() => {
        answered(undefined); // (no effect once answered)
        running.delete(obj.id);
      });
    const run = { answer, stored };
    running.set(obj.id, run);
    return run;
  };
  let closing = false;
  app.addHook('onClose', async () => {
    closing = true;
    await Promise.all([...running.values()].map((r) => r.stored));
  });

  app.post(
    '/1/query_results/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        body: CreateBody,
        description: 'Starts running a saved query; poll the `Location` until `complete` is true.',
        response: { 201: QueryResult },
      },
      config: { auth },
    },
    async (request, reply) => {
      const env = envOf(request);
      const { datasetSlug } = request.params;
      const b = request.body;
      checkLimit(b);
      const queryObj = await getQueryObject(store, env, datasetSlug, b.query_id);
      const query = queryObj.body;

      // The web UI (a session, not a header key) has a bucket of its own: a person exploring runs
      // many queries, and a board runs one per panel.
      const ui = request.auth!.viaSession;
      const policy = ui ? settings.uiQueryResultRateLimit : settings.queryResultRateLimit;
      if (policy) {
        const relational = usesRelationalFields(query);
        const bucket = `${ui ? 'ui-' : ''}${relational ? 'relational' : 'plain'}:${request.auth!.key.id}`;
        const d = limiter.take(bucket, relational ? { limit: 1, windowSeconds: 60 } : policy);
        reply.header('ratelimit', d.header).header('ratelimitpolicy', d.policyHeader);
        // Query Data 429s carry no Retry-After (documented).
        if (!d.allowed) throw new ApiError(429, 'You have exceeded your rate limit.');
      }

      // Rounded up: the window's end is exclusive, so an event received earlier in this second
      // (which may be a minute boundary, where the window is not widened) is still inside it.
      const nowSeconds = Math.ceil(now().getTime() / 1000);
      const id = shortId();
      const body = newResult(id, datasetSlug, query, b, nowSeconds);
      if (isRecorded(ui, request.headers[SKIP_HEADER], settings.queryHistoryMax)) {
        const run = { dataset: datasetSlug, datasetId: queryObj.datasetId, query, resultId: id, key: request.auth!.key, at: now() };
        body.historyId = await recordRun(store, env, run, settings.queryHistoryMax);
      }
      const obj = await store.createObject(newResultObject(env, queryObj.datasetId, body));
      void start(env, obj);
      reply.header('x-waggle-window', `${body.start},${body.end}`);
      return sendCreated(reply, respond(request, env, body), `${request.publicBase}/1/query_results/${encodeURIComponent(datasetSlug)}/${id}`);
    },
  );

  app.get(
    '/1/query_results/:datasetSlug/:queryResultId',
    {
      schema: {
        tags,
        security,
        params: itemParams('queryResultId'),
        description: '`complete: false` while running; once complete the result never changes and may be cached.',
        response: { 200: QueryResult },
      },
      config: { auth },
    },
    async (request, reply) => {
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      let obj = await findOwned<ResultBody>(store, QUERY_RESULT_KIND, request.params.queryResultId, 'query result', env, dataset);
      if (!obj.body.complete) {
        // Runs it if nothing does (a result left pending by a restart), then waits a while for it.
        const { answer } = start(env, obj);
        let timer: NodeJS.Timeout | undefined;
        const done = await Promise.race([answer, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), PENDING_WAIT_MS)))]);
        clearTimeout(timer);
        // (the completed body from memory: not read and parsed back, perhaps not yet stored)
        if (done) obj = { ...obj, body: done };
      }
      // (an extension: the window the result covers, Unix seconds [start, end), which the body,
      // Honeycomb's, does not say for a relative time range; the web UI draws its time axis with it)
      reply.header('x-waggle-window', `${obj.body.start},${obj.body.end}`);
      if (obj.body.complete) {
        reply.header('cache-control', 'private, max-age=86400');
        reply.header('last-modified', new Date(obj.body.completedAt ?? obj.updatedAt).toUTCString());
      } else {
        reply.header('cache-control', 'no-store');
      }
      return respond(request, env, obj.body);
    },
  );

  // The result's chart as a PNG (`links.graph_image_url`; src/render/chart-image.ts draws it). No
  // key and no session: the unguessable token in the path is the authorisation (a Slack message
  // shows the image by its URL). Anything that does not match the stored result exactly — an
  // unknown result, another team, environment or dataset in the path, a wrong token, a result
  // without one — is the same 404, and nothing else is read.
  app.get(
    '/:team/environments/:env/datasets/:dataset/result/:resultId/snapshot/:token',
    {
      schema: {
        tags,
        params: Type.Object({ team: Type.String(), env: Type.String(), dataset: Type.String(), resultId: Type.String(), token: Type.String() }),
        description: "The result's chart as a PNG (`links.graph_image_url`); needs no key: the token in the path is the authorisation (Waggle: docs/queries.md).",
        response: { 200: Type.Unsafe<Buffer>({ description: 'image/png' }) },
      },
      config: { auth: { kind: 'none' } },
    },
    async (request, reply) => {
      const { obj, env } = await resultOfImage(store, request.params);
      let body = obj.body;
      if (!body.complete) {
        // A result nobody has read yet (a trigger's): run it now, within the query run time.
        body = (await start(env, obj).answer) ?? body;
      }
      const png = resultChartPng(body, env.name);
      reply.header('cache-control', body.complete ? 'private, max-age=86400' : 'no-store');
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
      return reply.type('image/png').send(png);
    },
  );
}
