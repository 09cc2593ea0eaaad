// /1/markers/{datasetSlug|__all__}: list, create (201), PUT /{id} (200) and DELETE /{id} (200
// with the deleted marker in the body, as Honeycomb answers). A marker is a point in time (or,
// with `end_time`, a range) shown on graphs: deploys, outages. `__all__` holds the environment's
// markers. Every route needs the configuration-key permission Manage Markers (`manage_markers`).
// What a marker may say, its `color` and how it is answered (the decisions): src/domain/markers.ts.
//
// - A marker belongs to one dataset, or to the environment with `__all__`. It is listed, updated
//   and deleted only under that path: listing a dataset does not include the environment markers
//   (Honeycomb lists "all Markers for a dataset", and each listed marker must be one that the
//   same path can update and delete); list `__all__` for those. Another dataset's, the
//   environment's (under a dataset path), or another environment's marker → 404.
// - The list is in creation order.
import { Type, type TUnsafe } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { notFound } from '../../errors.js';
import {
  createMarker,
  listMarkers,
  markerAnswer,
  markerBody,
  markerColors,
  MARKER_MESSAGE_MAX,
  MARKER_TIME_MAX,
  MARKER_TYPE_MAX,
  MARKER_URL_MAX,
  type MarkerInput as MarkerBody,
  type StoredMarker,
} from '../../domain/markers.js';
import type { ConfigStore, Dataset, Environment, StoredObject } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { sendCreated, findOwned } from '../resource.js';
import { SlugParams, itemParams } from './schemas.js';
import { MARKER_KIND } from '../../domain/kinds.js';

const tags = ['Markers'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_markers' } as const;

export const Marker = Type.Object({
  id: Type.String(),
  start_time: Type.Integer(),
  end_time: Type.Optional(Type.Integer()),
  message: Type.Optional(Type.String()),
  type: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
  color: Type.Optional(Type.String({ description: 'From the marker setting of this type (the dataset’s, else the environment’s); absent without one.' })),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

const OptionalEnd: TUnsafe<number | null> = Type.Unsafe<number | null>({
  type: ['integer', 'null'],
  minimum: 0,
  maximum: MARKER_TIME_MAX,
  description: 'Unix seconds, ≥ start_time; null or omitted: a point marker.',
});

const MarkerInput = Type.Object({
  start_time: Type.Optional(
    Type.Integer({ minimum: 0, maximum: MARKER_TIME_MAX, description: 'Unix seconds; default: the arrival time of the request (on PUT: unchanged).' }),
  ),
  end_time: Type.Optional(OptionalEnd),
  message: Type.Optional(Type.String({ maxLength: MARKER_MESSAGE_MAX })),
  type: Type.Optional(Type.String({ maxLength: MARKER_TYPE_MAX })),
  url: Type.Optional(Type.String({ maxLength: MARKER_URL_MAX })),
});

const ItemParams = itemParams('markerId');

/** The marker `id` of `dataset` (null: the environment's) in the environment; 404 otherwise. */
async function getMarker(store: ConfigStore, env: Environment, dataset: Dataset | null, id: string): Promise<StoredObject<StoredMarker>> {
  return findOwned<StoredMarker>(store, MARKER_KIND, id, 'marker', env, dataset);
}

export function registerMarkers(app: App, { store, now }: ApiContext): void {
  app.get(
    '/1/markers/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        description: 'Lists the markers of the dataset, or the environment markers with `__all__` (a dataset’s list does not include them). `color` is filled from the marker settings.',
        response: { 200: Type.Array(Marker) },
      },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      const colors = await markerColors(store, env, dataset);
      return (await listMarkers(store, env, dataset)).map((m) => markerAnswer(m, colors));
    },
  );

  app.post(
    '/1/markers/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        body: MarkerInput,
        description: 'Creates a marker in the dataset, or an environment marker with `__all__`. Every field is optional; `start_time` defaults to now.',
        response: { 201: Marker },
      },
      config: { auth },
    },
    async (request, reply) => {
      const arrival = Math.floor(now().getTime() / 1000);
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      const body = markerBody(request.body as MarkerBody, arrival);
      const created = await createMarker(store, { teamId: env.teamId, environmentId: env.id, datasetId: dataset?.id ?? null }, body);
      return sendCreated(reply, markerAnswer(created, await markerColors(store, env, dataset)));
    },
  );

  app.put(
    '/1/markers/:datasetSlug/:markerId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        body: MarkerInput,
        description: 'Replaces the marker: omitted end_time, message, type and url are erased; an omitted start_time is kept.',
        response: { 200: Marker },
      },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const { datasetSlug, markerId: id } = request.params;
      const dataset = await datasetOrAll(store, env, datasetSlug);
      const current = await getMarker(store, env, dataset, id);
      const body = markerBody(request.body as MarkerBody, current.body.start_time);
      const updated = await store.updateObject<StoredMarker>(MARKER_KIND, id, { body });
      if (!updated) throw notFound('marker');
      return markerAnswer(updated, await markerColors(store, env, dataset));
    },
  );

  app.delete(
    '/1/markers/:datasetSlug/:markerId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        description: 'Answers 200 with the deleted marker in the body.',
        response: { 200: Marker },
      },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const { datasetSlug, markerId: id } = request.params;
      const dataset = await datasetOrAll(store, env, datasetSlug);
      const current = await getMarker(store, env, dataset, id);
      const colors = await markerColors(store, env, dataset);
      if (!(await store.deleteObject(MARKER_KIND, id))) throw notFound('marker');
      return markerAnswer(current, colors);
    },
  );
}
