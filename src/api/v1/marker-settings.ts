// /1/marker_settings/{datasetSlug|__all__}: list, create (201), PUT /{id} (200) and DELETE /{id}
// (200 with the deleted setting in the body, as Honeycomb answers). A marker setting gives every
// marker of one `type` a colour. Every route needs the configuration-key permission Manage
// Markers (`manage_markers`). What a setting may say and how it is answered (the decisions):
// src/domain/markers.ts.
//
// - A setting lives in one dataset or, with `__all__`, in the environment. It is listed, updated
//   and deleted only under the path it was made on (another dataset, `__all__` for a dataset's
//   setting, or another environment → 404). The list of a dataset does not include the
//   environment's settings: each of them could not be updated or deleted under that path.
import { Type } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { notFound } from '../../errors.js';
import { type ConfigStore, type Environment, type StoredObject } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import {
  duplicateMarkerSetting,
  listMarkerSettings,
  MARKER_SETTING_TYPE_MAX,
  markerSettingAnswer,
  markerSettingBody,
  newMarkerSetting,
  type StoredMarkerSetting,
} from '../../domain/markers.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { sendCreated, findOwned, orConflict } from '../resource.js';
import { SlugParams, itemParams } from './schemas.js';
import { MARKER_SETTING_KIND } from '../../domain/kinds.js';

const tags = ['Marker Settings'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_markers' } as const;

export const MarkerSetting = Type.Object({
  id: Type.String(),
  type: Type.String(),
  color: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

const MarkerSettingInput = Type.Object({
  type: Type.String({ minLength: 1, maxLength: MARKER_SETTING_TYPE_MAX, description: 'Unique per dataset (or environment); immutable after creation.' }),
  color: Type.String({ description: 'Hexadecimal RGB: `#RRGGBB` (for example `#F96E11`) or `#RGB`.' }),
});

const ItemParams = itemParams('markerSettingId');

/** The setting `id` of the dataset (or `__all__`) named by the path segment, in the environment; 404 otherwise. */
export async function getMarkerSetting(
  store: ConfigStore,
  env: Environment,
  datasetSlugOrAll: string,
  id: string,
): Promise<StoredObject<StoredMarkerSetting>> {
  const dataset = await datasetOrAll(store, env, datasetSlugOrAll);
  return findOwned<StoredMarkerSetting>(store, MARKER_SETTING_KIND, id, 'marker setting', env, dataset);
}

export function registerMarkerSettings(app: App, { store }: ApiContext): void {
  app.get(
    '/1/marker_settings/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        description: 'Lists the settings of the dataset, or of the environment with `__all__` (a dataset’s list does not include the environment’s).',
        response: { 200: Type.Array(MarkerSetting) },
      },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      return (await listMarkerSettings(store, env, dataset)).map(markerSettingAnswer);
    },
  );

  app.post(
    '/1/marker_settings/:datasetSlug',
    {
      schema: {
        tags,
        security,
        params: SlugParams,
        body: MarkerSettingInput,
        description: 'A second setting of the same type in the same dataset (or environment) → 422 `already_exists`.',
        response: { 201: MarkerSetting },
      },
      config: { auth },
    },
    async (request, reply) => {
      const env = envOf(request);
      const dataset = await datasetOrAll(store, env, request.params.datasetSlug);
      const body = markerSettingBody(request.body);
      const created = await orConflict(store.createObject(newMarkerSetting(env, dataset, body)), () => duplicateMarkerSetting(body.type));
      return sendCreated(reply, markerSettingAnswer(created));
    },
  );

  app.put(
    '/1/marker_settings/:datasetSlug/:markerSettingId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        body: MarkerSettingInput,
        description: 'Changes the colour. `type` may not change (422).',
        response: { 200: MarkerSetting },
      },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const { datasetSlug, markerSettingId: id } = request.params;
      const current = await getMarkerSetting(store, env, datasetSlug, id);
      const body = markerSettingBody(request.body, current.body);
      const updated = await store.updateObject<StoredMarkerSetting>(MARKER_SETTING_KIND, id, { body });
      if (!updated) throw notFound('marker setting');
      return markerSettingAnswer(updated);
    },
  );

  app.delete(
    '/1/marker_settings/:datasetSlug/:markerSettingId',
    {
      schema: {
        tags,
        security,
        params: ItemParams,
        description: 'Answers 200 with the deleted setting. Markers of its type lose the colour (or fall back to the environment’s setting).',
        response: { 200: MarkerSetting },
      },
      config: { auth },
    },
    async (request) => {
      const env = envOf(request);
      const { datasetSlug, markerSettingId: id } = request.params;
      const current = await getMarkerSetting(store, env, datasetSlug, id);
      if (!(await store.deleteObject(MARKER_SETTING_KIND, id))) throw notFound('marker setting');
      return markerSettingAnswer(current);
    },
  );
}
