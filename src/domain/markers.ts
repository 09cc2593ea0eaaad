// Markers and marker settings as stored configuration objects (kinds `marker` and
// `marker_setting`): what the Markers API (src/api/v1/markers.ts) and trigger evaluation (marker
// recipients, src/jobs/triggers.ts) both write, what a body may say, and how both are answered
// (src/api/v1/markers.ts, src/api/v1/marker-settings.ts; docs/markers.md).
//
// Decisions, markers:
// - `start_time` and `end_time` are integer Unix seconds in 0 ..= 253402300799 (9999-12-31, so a
//   millisecond timestamp sent by mistake is refused rather than stored 1000× in the future).
//   An omitted `start_time` is the request's arrival time by the app clock. `end_time` is
//   optional (`null` counts as omitted) and must be ≥ `start_time` (equal is allowed); otherwise
//   422 on `end_time`.
// - `message` at most 4096 characters, `type` at most 255 (the marker-setting limit), `url` at
//   most 2048; all optional, any content (an empty string is kept as sent; `url` is not checked
//   to be a URL). Omitted fields are absent from responses, not empty strings.
// - `color` is read-only (ignored in bodies) and filled on every response (list, create, update,
//   delete) from the marker settings of the marker's `type` (exact, case-sensitive match): for a
//   dataset's marker the dataset's setting wins, else the environment's (`__all__`) setting;
//   environment markers use the environment's setting only (markerColors). No setting → no
//   `color` member.
// - PUT replaces the marker: omitted `end_time`, `message`, `type` and `url` are erased, as the
//   contract says. An omitted `start_time` keeps the current one (erasing it has no meaning, and
//   moving the marker to "now" would be a surprise). Read-only fields (`id`, `created_at`,
//   `updated_at`, `color`) and unknown fields in the body are ignored.
//
// Decisions, marker settings:
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
import { BLANK, invalidField } from '../errors.js';
import { shortId } from './ids.js';
import type { ConfigStore, Dataset, Environment, NewObject, StoredObject } from '../stores/config/types.js';
import { MARKER_KIND, MARKER_SETTING_KIND } from './kinds.js';

/** 9999-12-31T23:59:59Z in Unix seconds: the latest marker time. */
export const MARKER_TIME_MAX = 253_402_300_799;
export const MARKER_MESSAGE_MAX = 4096;
export const MARKER_TYPE_MAX = 255;
export const MARKER_URL_MAX = 2048;

/** What the object store holds for a marker (id and timestamps come from the object). */
export interface StoredMarker {
  start_time: number;
  end_time?: number;
  message?: string;
  type?: string;
  url?: string;
}

/** A marker body as its route schema has checked it (limits and types). */
export interface MarkerInput {
  start_time?: number;
  end_time?: number | null;
  message?: string;
  type?: string;
  url?: string;
}

/** The stored marker for a request body; `startTime` is used when the body has none. 422 on an end before the start. */
export function markerBody(input: MarkerInput, startTime: number): StoredMarker {
  const start = input.start_time ?? startTime;
  const end = input.end_time ?? undefined;
  if (end !== undefined && end < start) throw invalidField('end_time', `must not be before start_time (${start})`);
  const body: StoredMarker = { start_time: start };
  if (end !== undefined) body.end_time = end;
  if (input.message !== undefined) body.message = input.message;
  if (input.type !== undefined) body.type = input.type;
  if (input.url !== undefined) body.url = input.url;
  return body;
}

/** A marker as the API answers it; `colors` are markerColors' for its dataset (or the environment). */
export function markerAnswer(o: StoredObject<StoredMarker>, colors: Map<string, string>) {
  const b = o.body;
  const color = b.type === undefined ? undefined : colors.get(b.type);
  return {
    id: o.id,
    start_time: b.start_time,
    ...(b.end_time !== undefined ? { end_time: b.end_time } : {}),
    ...(b.message !== undefined ? { message: b.message } : {}),
    ...(b.type !== undefined ? { type: b.type } : {}),
    ...(b.url !== undefined ? { url: b.url } : {}),
    ...(color !== undefined ? { color } : {}),
    created_at: o.createdAt,
    updated_at: o.updatedAt,
  };
}

/** Markers of one dataset, or of the environment (`dataset` null), in creation order. */
export function listMarkers(store: ConfigStore, env: Environment, dataset: Dataset | null): Promise<StoredObject<StoredMarker>[]> {
  return store.listObjects<StoredMarker>(MARKER_KIND, { environmentId: env.id, datasetId: dataset?.id ?? null });
}

/**
 * Creates a marker of the dataset (`datasetId`), or of the environment when it is null. With an
 * `id` (trigger evaluation passes one derived from the evaluation) a second create of the same id
 * returns the marker already made, so a retried evaluation makes no second marker.
 */
export async function createMarker(
  store: ConfigStore,
  where: { teamId: string; environmentId: string; datasetId: string | null },
  body: StoredMarker,
  id: string = shortId(),
): Promise<StoredObject<StoredMarker>> {
  try {
    return await store.createObject<StoredMarker>({
      id,
      kind: MARKER_KIND,
      teamId: where.teamId,
      environmentId: where.environmentId,
      datasetId: where.datasetId,
      scope: where.datasetId ?? where.environmentId,
      uniqueKey: null,
      body,
    });
  } catch (err) {
    const existing = await store.getObject<StoredMarker>(MARKER_KIND, id);
    if (existing) return existing;
    throw err;
  }
}

/** What the object store holds for a marker setting (id and timestamps come from the object). */
export interface StoredMarkerSetting {
  type: string;
  color: string;
}

export const MARKER_SETTING_TYPE_MAX = 255;
/** `#RRGGBB` or `#RGB`, either case. */
export const HEX_COLOR = /^#(?:[0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$/;

/**
 * The stored setting for a body its route schema has checked (type 1..255 characters);
 * `current` on PUT, whose type may not change. 422 on a blank type or a colour that is not
 * hexadecimal RGB.
 */
export function markerSettingBody(input: StoredMarkerSetting, current?: StoredMarkerSetting): StoredMarkerSetting {
  const { type, color } = input;
  if (current && type !== current.type) throw invalidField('type', 'may not be changed after creation');
  if (type.trim() === '') throw invalidField('type', BLANK, 'missing');
  if (!HEX_COLOR.test(color)) throw invalidField('color', 'must be a hexadecimal RGB colour such as #F96E11 (or #F61)');
  return { type, color };
}

/** A second setting of one type in one dataset (or environment): 422 `already_exists`, not 409 (see the header). */
export const duplicateMarkerSetting = (type: string) =>
  invalidField('type', `a marker setting of type ${JSON.stringify(type)} already exists here`, 'already_exists');

/** The new setting of `dataset` (null: the environment's) as the store takes it; its type is the unique key. */
export function newMarkerSetting(env: Environment, dataset: Dataset | null, body: StoredMarkerSetting): NewObject<StoredMarkerSetting> {
  return {
    id: shortId(),
    kind: MARKER_SETTING_KIND,
    teamId: env.teamId,
    environmentId: env.id,
    datasetId: dataset?.id ?? null,
    // Dataset ids (hcxds_…) and environment ids (hcxen_…) never collide.
    scope: dataset?.id ?? env.id,
    uniqueKey: body.type,
    body,
  };
}

/** A marker setting as the API answers it. */
export const markerSettingAnswer = (o: StoredObject<StoredMarkerSetting>) => ({
  id: o.id,
  type: o.body.type,
  color: o.body.color,
  created_at: o.createdAt,
  updated_at: o.updatedAt,
});

/** Settings of one dataset, or of the environment (`dataset` null). */
export function listMarkerSettings(store: ConfigStore, env: Environment, dataset: Dataset | null): Promise<StoredObject<StoredMarkerSetting>[]> {
  return store.listObjects<StoredMarkerSetting>(MARKER_SETTING_KIND, { environmentId: env.id, datasetId: dataset?.id ?? null });
}

/**
 * The colour of each marker type for markers of `dataset` (null: environment markers). A
 * setting of the dataset wins over the environment's (`__all__`) setting of the same type;
 * environment markers take only the environment's settings. Types without a setting are absent.
 */
export async function markerColors(store: ConfigStore, env: Environment, dataset: Dataset | null): Promise<Map<string, string>> {
  const colors = new Map<string, string>();
  for (const s of await listMarkerSettings(store, env, null)) colors.set(s.body.type, s.body.color);
  if (dataset) for (const s of await listMarkerSettings(store, env, dataset)) colors.set(s.body.type, s.body.color);
  return colors;
}
