// Markers as stored configuration objects (kind `marker`): what the Markers API
// (src/api/v1/markers.ts) and trigger evaluation (marker recipients, src/jobs/triggers.ts)
// both write.
import { shortId } from './ids.js';
import type { ConfigStore, Dataset, Environment, StoredObject } from '../stores/config/types.js';
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
