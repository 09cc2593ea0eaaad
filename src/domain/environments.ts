// Environments: naming, colours and delete protection, and how the Management API answers one
// (/2/teams/{team}/environments, src/api/v2/environments.ts).
//
// Decisions:
// - The slug is derived from the name. The Terraform provider always sends `name` and `slug`
//   (empty when it has nothing to say), so a create accepts a `slug` that is empty or the one the
//   name gives, and a PATCH accepts a `name` and `slug` that are empty or the current ones; a real
//   change of either is a 422 (an environment is never renamed).
// - A second environment of one name (slug) in a team → 409.
// - New environments are delete protected; a protected one cannot be deleted (409).
// - Another team's environment is a 404 `environment not found` like a missing one.
import { randomInt } from 'node:crypto';
import { prefixedId, slugify } from './ids.js';
import { ApiError, invalidField, notFound, BLANK } from '../errors.js';
import { UniqueViolation, type ConfigStore, type Environment, type EnvironmentPatch, type Team } from '../stores/config/types.js';

export const ENVIRONMENT_COLORS = [
  'blue', 'green', 'gold', 'red', 'purple',
  'lightBlue', 'lightGreen', 'lightGold', 'lightRed', 'lightPurple',
] as const;

/** New environments are delete protected, as in Honeycomb; clear `settings.delete_protected` to delete one. */
export async function createEnvironment(
  store: ConfigStore,
  team: Team,
  input: { name: string; slug?: string; description?: string; color?: string },
): Promise<Environment> {
  const name = input.name.trim();
  if (name === '') throw invalidField('data.attributes.name', BLANK, 'missing');
  const slug = slugify(name);
  // The slug is derived from the name; a client may echo it (or send "", as the Terraform provider does).
  if (input.slug !== undefined && input.slug !== '' && input.slug !== slug) {
    throw invalidField('data.attributes.slug', `is derived from the name (${JSON.stringify(slug)}) and cannot be chosen`);
  }
  if (await store.getEnvironmentBySlug(team.id, slug)) {
    throw new ApiError(409, `an environment named ${JSON.stringify(name)} already exists`);
  }
  try {
    return await store.createEnvironment({
      id: prefixedId('hcxen'),
      teamId: team.id,
      slug,
      name,
      description: input.description ?? '',
      color: input.color ?? ENVIRONMENT_COLORS[randomInt(ENVIRONMENT_COLORS.length)],
      deleteProtected: true,
    });
  } catch (err) {
    if (err instanceof UniqueViolation) throw new ApiError(409, `an environment named ${JSON.stringify(name)} already exists`);
    throw err;
  }
}

/** The team's environment `id`; 404 otherwise. */
export async function findEnvironment(store: ConfigStore, team: Team, id: string): Promise<Environment> {
  const env = await store.getEnvironment(team.id, id);
  if (!env) throw notFound('environment');
  return env;
}

/** What a PATCH changes of `env` (see the header): 422 on a real change of its name or slug. */
export function environmentChange(
  env: Environment,
  input: { name?: string; slug?: string; description?: string; color?: string; settings?: { delete_protected?: boolean } },
): EnvironmentPatch {
  const { name, slug, description, color, settings } = input;
  if (name !== undefined && name !== '' && name !== env.name) {
    throw invalidField('data.attributes.name', `cannot be changed (the environment is named ${JSON.stringify(env.name)}); create another environment`);
  }
  if (slug !== undefined && slug !== '' && slug !== env.slug) {
    throw invalidField('data.attributes.slug', `cannot be changed (it is ${JSON.stringify(env.slug)}); it is derived from the name`);
  }
  return { description, color, deleteProtected: settings?.delete_protected };
}

/** An environment as the JSON:API resource `environments` of team `teamSlug`. */
export function environmentAnswer(teamSlug: string, env: Environment) {
  return {
    id: env.id,
    type: 'environments' as const,
    links: { self: `/2/teams/${teamSlug}/environments/${env.id}` },
    attributes: {
      name: env.name,
      description: env.description,
      color: env.color,
      slug: env.slug,
      settings: { delete_protected: env.deleteProtected },
    },
  };
}

export async function deleteEnvironment(store: ConfigStore, team: Team, id: string): Promise<void> {
  const env = await findEnvironment(store, team, id);
  if (env.deleteProtected) {
    throw new ApiError(409, 'environment is delete protected; set settings.delete_protected to false first');
  }
  await store.deleteEnvironment(team.id, id);
}
