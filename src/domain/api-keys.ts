// The ingest and configuration keys of a team as the Management API shows them
// (/2/teams/{team}/api-keys, src/api/v2/api-keys.ts): finding one, what a create or PATCH may
// say, and the JSON:API resource a key is answered as. Minting a key is src/domain/tenancy.ts.
//
// Decisions:
// - Management keys are never shown or changed here; a key of another team, or a management
//   key, is a 404 `API key not found` like a missing one.
// - Permission names a key type does not have are a 422 naming each (`<field>.<name>`), not
//   silently dropped.
// - `time_to_live` (an expiry) is for ingest keys only and must be in the future (422 otherwise).
// - On PATCH an ingest key's permissions cannot change (422); a configuration key's omitted
//   permission values stay as they were.
// - The secret is in the create answer only.
import { invalidField, notFound, validationError } from '../errors.js';
import { CONFIGURATION_PERMISSIONS, INGEST_PERMISSIONS, normalisePermissions } from './keys.js';
import type { ApiKey, ApiKeyPatch, ConfigStore, KeyType, Team } from '../stores/config/types.js';

/** The team's ingest or configuration key `id`; 404 otherwise. */
export async function findTeamKey(store: ConfigStore, team: Team, id: string): Promise<ApiKey> {
  const key = await store.getApiKey(id);
  if (!key || key.teamId !== team.id || key.keyType === 'management') throw notFound('API key');
  return key;
}

/** 422 for each permission name a key of `keyType` does not have (`field` names where they were sent). */
export function checkPermissionNames(keyType: KeyType, permissions: Record<string, unknown> | undefined, field: string): void {
  const allowed: readonly string[] = keyType === 'ingest' ? INGEST_PERMISSIONS : CONFIGURATION_PERMISSIONS;
  const wrong = Object.keys(permissions ?? {}).filter((p) => !allowed.includes(p));
  if (wrong.length) {
    throw validationError(wrong.map((p) => ({ field: `${field}.${p}`, code: 'invalid', description: `not a permission of ${keyType} keys` })));
  }
}

/** A new key's expiry (ISO 8601) or null: only an ingest key's, and only in the future (`nowMs`); 422 on `field` otherwise. */
export function keyTimeToLive(keyType: KeyType, timeToLive: string | undefined, nowMs: number, field: string): string | null {
  if (timeToLive === undefined) return null;
  if (keyType !== 'ingest') throw invalidField(field, 'only ingest keys can expire');
  if (Date.parse(timeToLive) <= nowMs) throw invalidField(field, 'must be in the future');
  return new Date(timeToLive).toISOString();
}

/** What a PATCH changes of `key` (see the header); `field` names the permissions where they were sent. */
export function apiKeyChange(
  key: ApiKey,
  input: { name?: string; disabled?: boolean; permissions?: Record<string, boolean | undefined> },
  field: string,
): ApiKeyPatch {
  const { name, disabled, permissions } = input;
  if (permissions && key.keyType === 'ingest') throw invalidField(field, 'the permissions of an ingest key cannot be changed');
  checkPermissionNames(key.keyType, permissions, field);
  return {
    name,
    disabled,
    // Omitted permission values stay as they were.
    permissions: permissions ? normalisePermissions(key.keyType, { ...key.permissions, ...permissions }) : undefined,
  };
}

/** A key as the JSON:API resource `api-keys` of team `teamSlug`; `secret` only in the create answer. */
export function apiKeyAnswer(teamSlug: string, key: ApiKey, secret?: string) {
  return {
    id: key.id,
    type: 'api-keys' as const,
    attributes: {
      key_type: key.keyType as 'ingest' | 'configuration',
      name: key.name,
      disabled: key.disabled,
      permissions: key.permissions,
      ...(key.timeToLive ? { time_to_live: key.timeToLive } : {}),
      ...(secret ? { secret } : {}),
      timestamps: { created: key.createdAt, updated: key.updatedAt },
    },
    relationships: { environment: { data: { id: key.environmentId!, type: 'environments' as const } } },
    links: { self: `/2/teams/${teamSlug}/api-keys/${key.id}` },
  };
}
