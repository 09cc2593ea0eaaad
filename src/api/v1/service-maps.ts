// /1/maps/dependencies/requests: service map dependency requests. POST starts computing which
// service calls which over the key's environment (every dataset, no dataset in the path); GET
// reads the outcome one page at a time. Both need the configuration-key permission Read Service
// Maps (`read_service_maps`). The rules (the decisions), the stored request and its pages are
// src/domain/service-maps.ts's; src/jobs/service-map.ts computes the dependencies.
import { runClaimed } from '../../cluster/leadership.js';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envOf } from '../../http/auth.js';
import { timeWindow } from '../../query/spec.js';
import { computeDependencies } from '../../jobs/service-map.js';
import { QueryTimeout } from '../../stores/events/types.js';
import type { Environment, StoredObject } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { findOwned } from '../resource.js';
import { MAP_REQUEST_KIND } from '../../domain/kinds.js';
import { MAX_MAP_FILTERS, MAX_SECONDS, checkWindow, mapRequestAnswer, newMapRequest, readLimit, readPage, type RequestBody } from '../../domain/service-maps.js';

const tags = ['Service Maps'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'read_service_maps' } as const;

const BASE_PATH = '/1/maps/dependencies/requests';

const MapNode = Type.Object({
  name: Type.String({ minLength: 1, description: 'Service name.' }),
  type: Type.Optional(Type.Literal('service', { default: 'service' })),
});

const Seconds = (description: string) => Type.Integer({ minimum: 1, maximum: MAX_SECONDS, description });
const CreateBody = Type.Object({
  start_time: Type.Optional(Seconds('Unix seconds.')),
  end_time: Type.Optional(Seconds('Unix seconds.')),
  time_range: Type.Optional(Seconds('Seconds (7200 when neither this nor both times are given).')),
  filters: Type.Optional(Type.Array(MapNode, { maxItems: MAX_MAP_FILTERS, description: 'Keep only edges whose parent or child is one of these services.' })),
});

const Status = Type.Union([Type.Literal('pending'), Type.Literal('ready'), Type.Literal('error')]);
const CreateResponse = Type.Object({
  request_id: Type.String(),
  status: Status,
  error: Type.Optional(Type.String({ description: 'Why the request failed (status error).' })),
});
const NodeOut = Type.Object({ name: Type.String(), type: Type.Literal('service') });
const GetResponse = Type.Object({
  request_id: Type.String(),
  status: Status,
  dependencies: Type.Union([
    Type.Array(
      Type.Object({
        parent_node: NodeOut,
        child_node: NodeOut,
        call_count: Type.Integer(),
        error_count: Type.Optional(Type.Integer({ description: 'Waggle extension: the calls whose child span is an error (sample-weighted).' })),
      }),
    ),
    Type.Null(),
  ]),
  links: Type.Object({ next: Type.Union([Type.String(), Type.Null()]) }),
  error: Type.Optional(Type.String({ description: 'Why the request failed (status error).' })),
});

export function registerServiceMaps(app: App, ctx: ApiContext): void {
  const { store, events, settings, now } = ctx;
  const running = new Map<string, Promise<RequestBody>>();

  const location = (request: FastifyRequest, id: string) => `${request.publicBase}${BASE_PATH}/${id}`;
  const lastModified = (obj: StoredObject<RequestBody>, body: RequestBody) => new Date(body.completedAt ?? obj.createdAt).toUTCString();

  /** Runs a stored request once per process; the stored copy is updated when it is done. */
  const start = (env: Environment, obj: StoredObject<RequestBody>): Promise<RequestBody> => {
    const existing = running.get(obj.id);
    if (existing) return existing;
    const body = obj.body;
    // With several nodes on one store, one of them computes it (the claimant) and the others wait for its stored answer.
    const job = runClaimed(ctx.leadership, `map_request:${obj.id}`, settings.queryTimeoutMs + 10_000, async () => {
      let done: RequestBody;
      try {
        const deps = await computeDependencies(
          store,
          events,
          env,
          { start: body.start, end: body.end, limit: body.limit, services: body.services },
          settings.queryTimeoutMs,
        );
        done = { ...body, status: 'ready', edges: deps.map((d) => [d.parent, d.child, d.calls, d.errors]) };
      } catch (err) {
        if (!(err instanceof QueryTimeout)) app.log.error({ err, mapRequest: obj.id }, 'map dependency request failed');
        const error =
          err instanceof QueryTimeout ? `computing the dependencies exceeded the ${settings.queryTimeoutMs / 1000} s run time` : 'computing the dependencies failed';
        done = { ...body, status: 'error', error };
      }
      done.completedAt = now().toISOString();
      await store.updateObject<RequestBody>(MAP_REQUEST_KIND, obj.id, { body: done });
      return done;
    }, async () => {
      const o = await store.getObject<RequestBody>(MAP_REQUEST_KIND, obj.id);
      return o?.body.status !== 'pending' || closing ? (o?.body ?? body) : undefined;
    })
      .then((done) => done ?? body)
      .catch((err) => {
        app.log.error({ err, mapRequest: obj.id }, 'storing a map dependency request failed');
        return body;
      })
      .finally(() => running.delete(obj.id));
    running.set(obj.id, job);
    return job;
  };
  let closing = false;
  app.addHook('onClose', async () => {
    closing = true;
    await Promise.all(running.values());
  });

  app.post(
    BASE_PATH,
    {
      schema: {
        tags,
        security,
        querystring: Type.Object({ limit: Type.Optional(Type.String({ description: 'Most edges, 1..64000 (default 10000).' })) }),
        body: CreateBody,
        description:
          'Starts computing the service dependencies of the environment; 201 while pending, 200 once ready or failed. Poll the `Location`.',
        response: { 200: CreateResponse, 201: CreateResponse },
      },
      config: { auth },
      // The body is optional: absent means {}, and top-level nulls mean "not set".
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
        else if (request.body !== null && typeof request.body === 'object' && !Array.isArray(request.body)) {
          const b = request.body as Record<string, unknown>;
          for (const k of Object.keys(CreateBody.properties)) if (b[k] === null) delete b[k];
        }
      },
    },
    async (request, reply) => {
      const env = envOf(request);
      const limit = readLimit(request.query.limit);
      const b = request.body;
      checkWindow(b);
      const window = timeWindow({ start_time: b.start_time, end_time: b.end_time, time_range: b.time_range }, Math.floor(now().getTime() / 1000));
      const obj = await store.createObject(newMapRequest(env, window, limit, b.filters));
      const { id, body } = obj;
      const job = start(env, obj);
      // Wait a little (settings.serviceMapWaitMs) so that small maps answer 200 ready at once.
      let settled: RequestBody | undefined;
      if (settings.serviceMapWaitMs > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const waited = new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), settings.serviceMapWaitMs);
        });
        settled = await Promise.race([job, waited]);
        clearTimeout(timer);
      }
      const state = settled ?? body;
      reply.header('location', location(request, id));
      reply.header('last-modified', lastModified(obj, state));
      return reply
        .code(state.status === 'pending' ? 201 : 200)
        .send({ request_id: id, status: state.status, ...(state.error ? { error: state.error } : {}) });
    },
  );

  app.get(
    `${BASE_PATH}/:requestId`,
    {
      schema: {
        tags,
        security,
        params: Type.Object({ requestId: Type.String() }),
        querystring: Type.Object({
          'page[size]': Type.Optional(Type.String({ description: 'Edges per page, 1..100 (default 20).' })),
          'page[after]': Type.Optional(Type.String({ description: 'The cursor of `links.next`.' })),
        }),
        description: 'One page of the dependencies; `dependencies` is null until `status` is ready.',
        response: { 200: GetResponse },
      },
      config: { auth },
    },
    async (request, reply) => {
      const env = envOf(request);
      const obj = await findOwned<RequestBody>(store, MAP_REQUEST_KIND, request.params.requestId, 'map dependency request', env);
      const page = readPage(request.query, obj.id);
      const body = obj.body;
      if (body.status === 'pending' && !running.has(obj.id)) void start(env, obj);
      reply.header('last-modified', lastModified(obj, body));
      reply.header('cache-control', body.status === 'ready' ? 'private, max-age=86400' : 'no-store');
      return mapRequestAnswer(obj, page, BASE_PATH);
    },
  );
}
