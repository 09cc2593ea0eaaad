// Extra tenants and keys for HTTP tests: more keys in the initial environment, a second
// environment of the initial team, and a second team. Built with the same domain functions
// `waggle init` and the /2/ API use, over the test app's real store.
import { createEnvironment } from '../src/domain/environments.js';
import { prefixedId } from '../src/domain/ids.js';
import { allPermissions } from '../src/domain/keys.js';
import { createKey } from '../src/domain/tenancy.js';
import type { Environment, KeyType, Team } from '../src/stores/config/types.js';
import type { TestApp } from './helpers.js';

export interface KeyOptions {
  keyType?: KeyType;
  permissions?: Record<string, boolean>;
  disabled?: boolean;
  timeToLive?: string | null;
  name?: string;
}

/** The team and environment `makeApp` initialised. */
export async function initialTenancy(t: TestApp): Promise<{ team: Team; environment: Environment }> {
  const team = await t.store.getTeamBySlug(t.init.team.slug);
  if (!team) throw new Error('initial team missing');
  const environment = await t.store.getEnvironmentBySlug(team.id, t.init.environment.slug);
  if (!environment) throw new Error('initial environment missing');
  return { team, environment };
}

/** A key in the given environment (configuration with every permission unless told otherwise). */
export async function addKey(t: TestApp, team: Team, environment: Environment | null, opts: KeyOptions = {}) {
  const keyType = opts.keyType ?? 'configuration';
  const created = await createKey(t.store, {
    team,
    environment,
    keyType,
    name: opts.name ?? `test ${keyType} key`,
    permissions: opts.permissions ?? allPermissions(keyType),
    disabled: opts.disabled,
    timeToLive: opts.timeToLive,
  });
  return { ...created, headers: { 'x-honeycomb-team': created.token } as Record<string, string> };
}

/** A new environment in the initial team, with a configuration key holding every permission. */
export async function secondEnvironment(t: TestApp, name = 'Staging') {
  const { team } = await initialTenancy(t);
  const environment = await createEnvironment(t.store, team, { name });
  const key = await addKey(t, team, environment);
  return { team, environment, key, headers: key.headers };
}

/** A new team with one environment and a configuration key holding every permission. */
export async function secondTeam(t: TestApp, teamName = 'Other Team', environmentName = 'Production') {
  const team = await t.store.createTeam({
    id: prefixedId('hcxtm'),
    slug: teamName.toLowerCase().replace(/[^a-z0-9_-]/g, '-'),
    name: teamName,
    createdAt: new Date().toISOString(),
  });
  const environment = await createEnvironment(t.store, team, { name: environmentName });
  const key = await addKey(t, team, environment);
  return { team, environment, key, headers: key.headers };
}
