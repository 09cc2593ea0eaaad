// Deploy markers without work: when a service's version (`service.version`, or the field
// WAGGLE_DEPLOY_MARKER_FIELD names; `off` turns this off) changes in the events a dataset takes,
// Waggle makes a `deploy` marker on that dataset — "<service> <version>" at the first event of the
// new version — as a person would after a deploy.
//
// Decisions:
// - A version is new when it was not seen for that dataset and service (the dataset's
//   `service_name` definition, default `service.name`; events without one count as service "")
//   within the last hour, and is not the version seen last. A rolling deploy that interleaves the old and the new version for
//   minutes, or a value that flaps between two versions, makes one marker per version, not a
//   storm; a rollback to a version last seen hours ago makes one. The first version ever seen
//   makes none (nothing changed). A service with more than 3 versions within the hour (a field
//   that changes per build or per event, not per deploy) makes none until it has 3 or fewer.
// - What was seen is kept in the configuration store (kind `deploy_versions`, one object per
//   dataset and service, written when a version is new and at most every 10 minutes otherwise),
//   so a restart does not take every version for new.
// - The marker's id is derived from the dataset, service, version and hour of the change, so
//   several nodes that see the same change at once make one marker, and a crash between the
//   marker and the state write makes no second one.
// - Only the events of a committed group count (acknowledged events), and a request names at most
//   16 distinct service/version pairs here (a hostile body cannot make thousands of markers).
//   Marker writes never hold ingest: they run after the commit, and a failure is logged.
import { derivedId } from '../domain/ids.js';
import { DEPLOY_VERSIONS_KIND } from '../domain/kinds.js';
import { createMarker } from '../domain/markers.js';
import { DEFINITION_DEFAULTS } from '../query/definitions.js';
import type { ConfigStore, Dataset } from '../stores/config/types.js';
import { Value, textAt, type EventColumns, type FieldColumn } from '../stores/events/columns.js';

/** A version not seen for this long is new again. */
export const VERSION_WINDOW_MS = 3_600_000;
/** How often the last-seen times are written while nothing is new. */
const SAVE_EVERY_MS = 600_000;
/** Distinct service/version pairs read from one request. */
const MAX_PAIRS = 16;
/** Versions kept per service (the most recently seen). */
const MAX_VERSIONS = 64;
/**
 * More versions than this seen within the window: the field does not follow deploys (a build id
 * per event, a random value), and the service makes no markers until it calms down.
 */
export const MAX_LIVE_VERSIONS = 3;

export interface Sighting {
  service: string;
  version: string;
  /** The first event of the pair in the request, Unix µs. */
  timeUs: number;
}

/** A row's value of a column as text (numbers as JSON writes them), or undefined. */
function textOf(cols: EventColumns, f: FieldColumn | undefined, row: number): string | undefined {
  if (!f) return undefined;
  const slot = f.rows ? binarySlot(f, row) : row;
  if (slot < 0) return undefined;
  switch (f.kinds[slot]) {
    case Value.String:
      return textAt(cols, f.spans![2 * slot], f.spans![2 * slot + 1]);
    case Value.Integer:
    case Value.Float:
      return String(f.nums[slot]);
    case Value.Boolean:
      return f.nums[slot] !== 0 ? 'true' : 'false';
    default:
      return undefined;
  }
}

function binarySlot(f: FieldColumn, row: number): number {
  let lo = 0;
  let hi = f.present;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (f.rows![mid] < row) lo = mid + 1;
    else hi = mid;
  }
  return lo < f.present && f.rows![lo] === row ? lo : -1;
}

/** Whether two rows' string values of a column are the same bytes (without making strings). */
function sameText(cols: EventColumns, f: FieldColumn | undefined, a: number, b: number): boolean {
  if (!f) return true;
  if (f.constant) return true;
  if (f.rows) return textOf(cols, f, a) === textOf(cols, f, b);
  if (f.kinds[a] !== f.kinds[b]) return false;
  if (f.kinds[a] !== Value.String) return f.nums[a] === f.nums[b];
  const [s1, e1, s2, e2] = [f.spans![2 * a], f.spans![2 * a + 1], f.spans![2 * b], f.spans![2 * b + 1]];
  if (e1 - s1 !== e2 - s2) return false;
  for (let i = 0; i < e1 - s1; i++) if (cols.text[s1 + i] !== cols.text[s2 + i]) return false;
  return true;
}

/** The distinct service/version pairs of a request's events, with the first time of each. */
export function versionSightings(cols: EventColumns, serviceField: string, versionField: string): Sighting[] {
  const version = cols.fields.find((f) => f.name === versionField);
  if (!version) return [];
  const service = cols.fields.find((f) => f.name === serviceField);
  const out = new Map<string, Sighting>();
  let last = -1;
  let lastSeen: Sighting | undefined;
  for (let row = 0; row < cols.count; row++) {
    // (most requests carry one service at one version: compare bytes with the last row read)
    if (last >= 0 && sameText(cols, version, row, last) && sameText(cols, service, row, last)) {
      if (lastSeen && cols.timeUs[row] < lastSeen.timeUs) lastSeen.timeUs = cols.timeUs[row];
      continue;
    }
    last = row;
    lastSeen = undefined;
    const v = textOf(cols, version, row);
    if (v === undefined || v === '') continue;
    const s = textOf(cols, service, row) ?? '';
    const key = `${s}\u0000${v}`;
    lastSeen = out.get(key);
    if (!lastSeen) {
      if (out.size >= MAX_PAIRS) break;
      out.set(key, (lastSeen = { service: s, version: v, timeUs: cols.timeUs[row] }));
    } else if (cols.timeUs[row] < lastSeen.timeUs) lastSeen.timeUs = cols.timeUs[row];
  }
  return [...out.values()];
}

interface Seen {
  /** Version → last seen, ms. */
  versions: Record<string, number>;
  /** The version seen last. */
  latest?: string;
}

interface State extends Seen {
  savedAt: number;
  /** Runs this key's updates one after another. */
  chain: Promise<void>;
  loaded: boolean;
  teamId?: string;
}

export interface DeployMarkerOptions {
  store: ConfigStore;
  /** The version field; empty: off. */
  versionField: string;
  now: () => Date;
  log: { warn: (obj: object, msg: string) => void };
}

export class DeployMarkers {
  private readonly states = new Map<string, State>();

  constructor(private readonly opts: DeployMarkerOptions) {}

  /** What to do once a request's events are committed (undefined: nothing to look at). */
  watch(dataset: Dataset, events: EventColumns): (() => Promise<void>) | undefined {
    const serviceField = dataset.definitions.service_name || DEFINITION_DEFAULTS.service_name;
    const sightings = versionSightings(events, serviceField, this.opts.versionField);
    if (sightings.length === 0) return undefined;
    return async () => {
      await Promise.all(sightings.map((s) => this.seen(dataset, s)));
    };
  }

  private seen(dataset: Dataset, s: Sighting): Promise<void> {
    const key = `${dataset.id}\u0000${s.service}`;
    let state = this.states.get(key);
    if (!state) this.states.set(key, (state = { versions: {}, savedAt: 0, chain: Promise.resolve(), loaded: false }));
    const st = state;
    st.chain = st.chain
      .then(() => this.update(dataset, s, st))
      .catch((err: unknown) => this.opts.log.warn({ err, dataset: dataset.slug, service: s.service }, 'deploy marker not made'));
    return st.chain;
  }

  private async update(dataset: Dataset, s: Sighting, st: State): Promise<void> {
    const { store } = this.opts;
    const id = derivedId(`deploy versions\u0000${dataset.id}\u0000${s.service}`);
    if (!st.teamId) {
      const env = await store.getEnvironmentById(dataset.environmentId);
      if (!env) return; // (the environment was deleted meanwhile)
      st.teamId = env.teamId;
    }
    const teamId = st.teamId;
    if (!st.loaded) {
      const stored = await store.getObject<Seen>(DEPLOY_VERSIONS_KIND, id);
      st.versions = { ...(stored?.body.versions ?? {}), ...st.versions };
      st.latest ??= stored?.body.latest;
      st.loaded = true;
    }
    const now = this.opts.now().getTime();
    const last = st.versions[s.version];
    // Not the version seen last: a service back after a quiet spell with the version it had is no deploy.
    const changed = (last === undefined || now - last > VERSION_WINDOW_MS) && st.latest !== undefined && st.latest !== s.version;
    st.versions[s.version] = now;
    st.latest = s.version;
    let live = 0;
    for (const t of Object.values(st.versions)) if (now - t <= VERSION_WINDOW_MS) live++;
    const isNew = changed && live <= MAX_LIVE_VERSIONS;
    if (isNew) {
      const atMs = Math.floor(s.timeUs / 1000);
      await createMarker(
        store,
        { teamId, environmentId: dataset.environmentId, datasetId: dataset.id },
        { start_time: Math.floor(atMs / 1000), message: s.service ? `${s.service} ${s.version}` : s.version, type: 'deploy' },
        derivedId(`deploy marker\u0000${dataset.id}\u0000${s.service}\u0000${s.version}\u0000${Math.floor(now / VERSION_WINDOW_MS)}`),
      );
    }
    // Written when a version is new or first seen; otherwise at most every 10 minutes (a rolling
    // deploy flips the latest version at every request: not a write each time).
    if (!isNew && (last !== undefined || live > MAX_LIVE_VERSIONS) && now - st.savedAt < SAVE_EVERY_MS) return;
    // Keep the most recently seen versions only.
    const kept = Object.entries(st.versions).sort((a, b) => b[1] - a[1]).slice(0, MAX_VERSIONS);
    st.versions = Object.fromEntries(kept);
    const body: Seen = { versions: st.versions, latest: st.latest };
    const existing = await store.getObject<Seen>(DEPLOY_VERSIONS_KIND, id);
    if (existing) await store.updateObject<Seen>(DEPLOY_VERSIONS_KIND, id, { body });
    else {
      await store
        .createObject<Seen>({ id, kind: DEPLOY_VERSIONS_KIND, teamId, environmentId: dataset.environmentId, datasetId: dataset.id, scope: dataset.id, uniqueKey: null, body })
        // (another node made it meanwhile: take its place)
        .catch(() => store.updateObject<Seen>(DEPLOY_VERSIONS_KIND, id, { body }));
    }
    st.savedAt = now;
  }
}
