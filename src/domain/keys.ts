// API keys: formats, permissions and scopes, and the one place that turns a presented
// credential into a key record.
//
// Token formats (what a client puts in a header):
//   ingest         X-Honeycomb-Team: <id><secret>   id = hcxik_ + 26, secret = 32 alphanumerics (64 in all)
//   configuration  X-Honeycomb-Team: <secret>       secret = 22 alphanumerics; never 32 characters,
//                                                   which libhoney and Terraform treat as a Classic key
//   management     Authorization: Bearer <id>:<secret>   id = hcxmk_ + 26, secret = 32 alphanumerics
// Only SHA-256 of a secret is stored. The secrets are 131+ random bits, so a fast hash is enough
// (no password-stretching needed), and it lets a configuration key be found by its hash.
import { prefixedId, randomString, sameHash, sha256 } from './ids.js';
import type { ApiKey, ConfigStore, Environment, KeyType, Team } from '../stores/config/types.js';

export const KEY_PREFIX: Record<KeyType, string> = { ingest: 'hcxik', configuration: 'hcxlk', management: 'hcxmk' };
const SECRET_LENGTH: Record<KeyType, number> = { ingest: 32, configuration: 22, management: 32 };
const ID_LENGTH = 32; // prefix (5) + '_' + 26

/**
 * Waggle's own configuration-key permissions, for areas whose permission Honeycomb names but its
 * API-key contract has no flag for: Manage Signals (`manage_signals`, anomaly detection). They
 * are granted and revoked like the others, but a key's permissions list them only when granted,
 * so a key without them reads exactly as Honeycomb's contract lists its flags. `GET /1/auth`
 * never shows them (its `api_key_access` is a fixed set).
 */
export const EXTENSION_PERMISSIONS = ['manage_signals'] as const;

/** Permission flags of configuration keys (v2 attribute names). */
export const CONFIGURATION_PERMISSIONS = [
  'create_datasets',
  'send_events',
  'manage_markers',
  'manage_triggers',
  'manage_boards',
  'run_queries',
  'manage_columns',
  'manage_slos',
  'manage_recipients',
  'manage_privateBoards',
  'read_service_maps',
  'visible_team_members',
  ...EXTENSION_PERMISSIONS,
] as const;
export type Permission = (typeof CONFIGURATION_PERMISSIONS)[number];
export const INGEST_PERMISSIONS = ['create_datasets'] as const;

/** Management-key scopes. */
export const MANAGEMENT_SCOPES = [
  'api-keys:read',
  'api-keys:write',
  'environments:read',
  'environments:write',
] as const;
export type Scope = (typeof MANAGEMENT_SCOPES)[number];

/** `GET /1/auth` names for the permission flags. */
const AUTH_V1_ACCESS: Record<string, Permission> = {
  events: 'send_events',
  markers: 'manage_markers',
  triggers: 'manage_triggers',
  boards: 'manage_boards',
  queries: 'run_queries',
  columns: 'manage_columns',
  createDatasets: 'create_datasets',
  slos: 'manage_slos',
  recipients: 'manage_recipients',
  privateBoards: 'manage_privateBoards',
};

export function apiKeyAccess(key: ApiKey): Record<string, boolean> {
  if (key.keyType === 'ingest') return { createDatasets: !!key.permissions.create_datasets };
  return Object.fromEntries(Object.entries(AUTH_V1_ACCESS).map(([k, p]) => [k, !!key.permissions[p]]));
}

/** What `GET /1/auth` answers for the team (ingest or configuration) key making the request. */
export function keyAuthAnswer(key: ApiKey, team: Team, environment: Environment | null) {
  return {
    id: key.id,
    type: key.keyType as 'configuration' | 'ingest',
    ...(key.timeToLive ? { time_to_live: key.timeToLive } : {}),
    api_key_access: apiKeyAccess(key),
    environment: { name: environment?.name ?? '', slug: environment?.slug ?? '' },
    team: { name: team.name, slug: team.slug },
  };
}

/** What `GET /2/auth` answers for the management key making the request: the key, with its team included (JSON:API). */
export function managementAuthAnswer(key: ApiKey, team: Team) {
  return {
    data: {
      id: key.id,
      type: 'api-keys' as const,
      attributes: {
        name: key.name,
        key_type: 'management' as const,
        disabled: key.disabled,
        scopes: key.scopes,
        timestamps: { created: key.createdAt, updated: key.updatedAt },
      },
      relationships: { team: { data: { id: team.id, type: 'teams' as const } } },
    },
    included: [{ id: team.id, type: 'teams', attributes: { name: team.name, slug: team.slug } }],
  };
}

/** Normalises a permission object to exactly the flags of the key type, defaulting to false (extensions: absent unless granted). */
export function normalisePermissions(keyType: KeyType, given: Record<string, boolean | undefined> = {}) {
  const names: readonly string[] = keyType === 'ingest' ? INGEST_PERMISSIONS : keyType === 'configuration' ? CONFIGURATION_PERMISSIONS : [];
  const extension: readonly string[] = EXTENSION_PERMISSIONS;
  return Object.fromEntries(names.filter((n) => given[n] === true || !extension.includes(n)).map((n) => [n, given[n] === true]));
}

export const allPermissions = (keyType: KeyType) =>
  normalisePermissions(keyType, Object.fromEntries(CONFIGURATION_PERMISSIONS.map((p) => [p, true])));

export interface MintedKey {
  id: string;
  secret: string;
  secretHash: string;
  /** What the client sends: see the table at the top of this file. */
  token: string;
}

export function mintKey(keyType: KeyType): MintedKey {
  const id = prefixedId(KEY_PREFIX[keyType]);
  const secret = randomString(SECRET_LENGTH[keyType]);
  const token = keyType === 'ingest' ? id + secret : keyType === 'configuration' ? secret : `${id}:${secret}`;
  return { id, secret, secretHash: sha256(secret), token };
}

export type Rejection = 'missing' | 'unknown' | 'disabled' | 'expired';

/** Resolves an `X-Honeycomb-Team` value to an ingest or configuration key. */
export async function resolveTeamHeader(
  store: ConfigStore,
  token: string | undefined,
  now: Date,
): Promise<ApiKey | Rejection> {
  if (!token) return 'missing';
  let key: ApiKey | undefined;
  if (token.length === ID_LENGTH + SECRET_LENGTH.ingest && token.startsWith(`${KEY_PREFIX.ingest}_`)) {
    const candidate = await store.getApiKey(token.slice(0, ID_LENGTH));
    if (candidate?.keyType === 'ingest' && sameHash(candidate.secretHash, sha256(token.slice(ID_LENGTH)))) key = candidate;
  } else if (token.length === SECRET_LENGTH.configuration) {
    const hash = sha256(token);
    const candidate = await store.getApiKeyBySecretHash(hash);
    if (candidate?.keyType === 'configuration' && sameHash(candidate.secretHash, hash)) key = candidate;
  }
  return checkUsable(key, now);
}

/** Resolves an `Authorization: Bearer <id>:<secret>` value to a management key. */
export async function resolveBearer(
  store: ConfigStore,
  header: string | undefined,
  now: Date,
): Promise<ApiKey | Rejection> {
  if (!header) return 'missing';
  const m = /^Bearer\s+([^:\s]+):(\S+)$/i.exec(header.trim());
  if (!m) return 'unknown';
  const candidate = await store.getApiKey(m[1]);
  const key =
    candidate?.keyType === 'management' && sameHash(candidate.secretHash, sha256(m[2])) ? candidate : undefined;
  return checkUsable(key, now);
}

function checkUsable(key: ApiKey | undefined, now: Date): ApiKey | Rejection {
  if (!key) return 'unknown';
  if (key.disabled) return 'disabled';
  if (key.timeToLive && Date.parse(key.timeToLive) <= now.getTime()) return 'expired';
  return key;
}
