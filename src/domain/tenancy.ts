// Creating keys and first-time initialisation, shared by `waggle init`, `waggle serve` on an
// empty data dir, `waggle keys create` and the /2/ API.
import { prefixedId, slugify } from './ids.js';
import { allPermissions, MANAGEMENT_SCOPES, mintKey, normalisePermissions } from './keys.js';
import { createEnvironment } from './environments.js';
import type { ApiKey, ConfigStore, Environment, KeyType, Team } from '../stores/config/types.js';

export interface NewKeyInput {
  team: Team;
  environment: Environment | null;
  keyType: KeyType;
  name: string;
  permissions?: Record<string, boolean | undefined>;
  scopes?: string[];
  timeToLive?: string | null;
  disabled?: boolean;
}

/** Creates a key and returns it with its secret and client token (shown once, never stored). */
export async function createKey(store: ConfigStore, input: NewKeyInput) {
  const minted = mintKey(input.keyType);
  const key: ApiKey = await store.createApiKey({
    id: minted.id,
    teamId: input.team.id,
    environmentId: input.keyType === 'management' ? null : (input.environment?.id ?? null),
    keyType: input.keyType,
    name: input.name,
    secretHash: minted.secretHash,
    disabled: input.disabled ?? false,
    permissions: normalisePermissions(input.keyType, input.permissions),
    scopes: input.keyType === 'management' ? (input.scopes ?? [...MANAGEMENT_SCOPES]) : [],
    timeToLive: input.keyType === 'ingest' ? (input.timeToLive ?? null) : null,
  });
  return { key, secret: minted.secret, token: minted.token };
}

export interface InitResult {
  team: { slug: string };
  environment: { slug: string };
  keys: { configuration: string; ingest: string; management: { id: string; secret: string } };
}

export class AlreadyInitialised extends Error {}

/** Team + environment + one key of each kind with every permission. Refuses an initialised store. */
export async function initialise(
  store: ConfigStore,
  opts: { teamName?: string; environmentName?: string } = {},
): Promise<InitResult> {
  if ((await store.listTeams()).length > 0) {
    throw new AlreadyInitialised('this data directory is already initialised (a team exists); nothing was changed');
  }
  const teamName = opts.teamName ?? 'My Team';
  const team = await store.createTeam({
    id: prefixedId('hcxtm'),
    slug: slugify(teamName),
    name: teamName,
    createdAt: new Date().toISOString(),
  });
  const environment = await createEnvironment(store, team, { name: opts.environmentName ?? 'Production' });
  const configuration = await createKey(store, {
    team, environment, keyType: 'configuration', name: 'initial configuration key', permissions: allPermissions('configuration'),
  });
  const ingest = await createKey(store, {
    team, environment, keyType: 'ingest', name: 'initial ingest key', permissions: { create_datasets: true },
  });
  const management = await createKey(store, { team, environment: null, keyType: 'management', name: 'initial management key' });
  return {
    team: { slug: team.slug },
    environment: { slug: environment.slug },
    keys: {
      configuration: configuration.token,
      ingest: ingest.token,
      management: { id: management.key.id, secret: management.secret },
    },
  };
}
