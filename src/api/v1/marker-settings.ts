// /1/marker_settings/{datasetSlug|__all__}: list, create (201), PUT /{id} (200) and DELETE /{id}
// (200 with the deleted setting in the body, as Honeycomb answers). A marker setting gives every
// marker of one `type` a colour. Every route needs the configuration-key permission Manage
// Markers (`manage_markers`).
//
// Decisions:
// - A setting lives in one dataset or, with `__all__`, in the environment. It is listed, updated
//   and deleted only under the path it was made on (another dataset, `__all__` for a dataset's
//   setting, or another environment → 404). The list of a dataset does not include the
//   environment's settings: each of them could not be updated or deleted under that path.
// - `type` is 1..255 characters and not blank; it is unique per dataset (or per environment for
//   `__all__`). A second setting of the same type there → 422 with `type_detail` code
//   `already_exists`: the contract documents 404, 422 and 429 for this route and no 409. The same
//   type may have a dataset setting and an environment setting; the dataset's wins for that
//   dataset's markers (see markerColors()).
// - `color` is a hexadecimal RGB colour: `#RRGGBB` as the contract's example (`#F96E11`), or the
//   short form `#RGB`, which the Terraform provider's validator accepts (`^#([A-Fa-f0-9]{6}|
//   [A-Fa-f0-9]{3})$`). Either case; stored and answered exactly as sent (the provider compares
//   what it sent with what it reads back). Anything else → 422 on `color`.
// - PUT takes the full setting (`type` and `color` required, as in the contract). `type` may not
//   change (422 on `type`). Read-only fields in the body (`id`, timestamps) and unknown fields are
//   ignored.
import { Type, type Static } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { invalidField, notFound, BLANK } from '../../errors.js';
import { shortId } from '../../domain/ids.js';
import { type ConfigStore, type Dataset, type Environment, type StoredObject } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { listMarkerSettings, type StoredMarkerSetting } from '../../domain/markers.js';
import { datasetOrAll } from '../../domain/datasets.js';
import { sendCreated, findOwned, orConflict } from '../resource.js';
import { SlugParams, itemParams } from './schemas.js';
import { MARKER_SETTING_KIND } from '../../domain/kinds.js';

const tags = ['Marker Settings'];
const security = [{ configuration_key: [] }];
const auth = { kind: 'team', permission: 'manage_markers' } as const;

export const MARKER_SETTING_TYPE_MAX = 255;
/** `#RRGGBB` or `#RGB`, either case. */
export const HEX_COLOR = /^#(?:[0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$/;

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
type MarkerSettingInput = Static<typeof MarkerSettingInput>;

const ItemParams = itemParams('markerSettingId');

export function markerSettingResponse(o: StoredObject<StoredMarkerSetting>): Static<typeof MarkerSetting> {
  return { id: o.id, type: o.body.type, color: o.body.color, created_at: o.createdAt, updated_at: o.updatedAt };
}

function checkInput(input: MarkerSettingInput): void {
  if (input.type.trim() === '') throw invalidField('type', BLANK, 'missing');
  if (!HEX_COLOR.test(input.color)) throw invalidField('color', 'must be a hexadecimal RGB colour such as #F96E11 (or #F61)');
}

const duplicate = (type: string) => invalidField('type', `a marker setting of type ${JSON.stringify(type)} already exists here`, 'already_exists');

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
      return (await listMarkerSettings(store, env, dataset)).map(markerSettingResponse);
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
      const { type, color } = request.body;
      checkInput({ type, color });
      const created = await orConflict(
        store.createObject<StoredMarkerSetting>({
          id: shortId(),
          kind: MARKER_SETTING_KIND,
          teamId: env.teamId,
          environmentId: env.id,
          datasetId: dataset?.id ?? null,
          // Dataset ids (hcxds_…) and environment ids (hcxen_…) never collide.
          scope: dataset?.id ?? env.id,
          uniqueKey: type,
          body: { type, color },
        }),
        () => duplicate(type),
      );
      return sendCreated(reply, markerSettingResponse(created));
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
      const { type, color } = request.body;
      if (type !== current.body.type) throw invalidField('type', 'may not be changed after creation');
      checkInput({ type, color });
      const updated = await store.updateObject<StoredMarkerSetting>(MARKER_SETTING_KIND, id, { body: { type, color } });
      if (!updated) throw notFound('marker setting');
      return markerSettingResponse(updated);
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
      return markerSettingResponse(current);
    },
  );
}
