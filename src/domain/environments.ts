// Environments: naming, colours and delete protection.
import { randomInt } from 'node:crypto';
import { prefixedId, slugify } from './ids.js';
import { ApiError, invalidField, notFound, BLANK } from '../errors.js';
import { UniqueViolation, type ConfigStore, type Environment, type Team } from '../stores/config/types.js';

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

export async function deleteEnvironment(store: ConfigStore, team: Team, id: string): Promise<void> {
  const env = await store.getEnvironment(team.id, id);
  if (!env) throw notFound('environment');
  if (env.deleteProtected) {
    throw new ApiError(409, 'environment is delete protected; set settings.delete_protected to false first');
  }
  await store.deleteEnvironment(team.id, id);
}
