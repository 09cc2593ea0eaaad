// `waggle keys …`: list, create and disable keys straight in the config store, for the
// operator who lost the keys printed at initialisation. Works beside a running server.
import type { Command } from 'commander';
import { allPermissions, CONFIGURATION_PERMISSIONS, INGEST_PERMISSIONS, MANAGEMENT_SCOPES } from '../domain/keys.js';
import { createKey } from '../domain/tenancy.js';
import type { ConfigStore, KeyType, Team } from '../stores/config/types.js';
import { withStore, type StoreOptions } from './store-options.js';

async function pickTeam(store: ConfigStore, slug?: string): Promise<Team> {
  const teams = await store.listTeams();
  const team = slug ? teams.find((t) => t.slug === slug) : teams.length === 1 ? teams[0] : undefined;
  if (!team) {
    throw new Error(
      teams.length === 0
        ? 'the data directory is not initialised; run `waggle init` first'
        : `name a team with --team (one of: ${teams.map((t) => t.slug).join(', ')})`,
    );
  }
  return team;
}

function parseList(text: string | undefined, allowed: readonly string[], what: string): string[] | undefined {
  if (text === undefined) return undefined;
  const items = text.split(',').map((s) => s.trim()).filter(Boolean);
  const wrong = items.filter((i) => !allowed.includes(i));
  if (wrong.length) throw new Error(`unknown ${what}: ${wrong.join(', ')} (allowed: ${allowed.join(', ')})`);
  return items;
}

export function registerKeysCommand(program: Command, addStoreOptions: (c: Command) => Command): void {
  const keys = program.command('keys').description('list, create and disable API keys');

  addStoreOptions(keys.command('list').description('list the keys of a team (never their secrets)'))
    .option('--team <slug>', 'team slug (default: the only team)')
    .option('--json', 'print JSON')
    .action((opts: StoreOptions & { team?: string; json?: boolean }) =>
      withStore(opts, async (store) => {
        const team = await pickTeam(store, opts.team);
        const rows = await store.listApiKeys(team.id, {}, { limit: 100_000 });
        const envs = new Map<string, string>();
        for (const k of rows) {
          if (k.environmentId && !envs.has(k.environmentId)) {
            envs.set(k.environmentId, (await store.getEnvironmentById(k.environmentId))?.slug ?? '?');
          }
        }
        const list = rows.map((k) => ({
          id: k.id,
          type: k.keyType,
          name: k.name,
          environment: k.environmentId ? envs.get(k.environmentId) : null,
          disabled: k.disabled,
          ...(k.keyType === 'management' ? { scopes: k.scopes } : { permissions: Object.keys(k.permissions).filter((p) => k.permissions[p]) }),
          time_to_live: k.timeToLive,
          created: k.createdAt,
        }));
        if (opts.json) return console.log(JSON.stringify(list, null, 2));
        for (const k of list) {
          console.log(`${k.id}  ${k.type.padEnd(13)} ${k.disabled ? 'DISABLED ' : 'enabled  '} env=${k.environment ?? '-'}  ${k.name}`);
        }
      }),
    );

  addStoreOptions(keys.command('create').description('create a key and print its token once'))
    .requiredOption('--type <type>', 'ingest | configuration | management')
    .option('--team <slug>', 'team slug (default: the only team)')
    .option('--environment <slug>', 'environment slug (ingest and configuration keys; default: the only one)')
    .option('--name <name>', 'a name for the key')
    .option('--permissions <list>', `comma-separated; default all of: ${CONFIGURATION_PERMISSIONS.join(',')}`)
    .option('--scopes <list>', `management keys; default all of: ${MANAGEMENT_SCOPES.join(',')}`)
    .option('--ttl <rfc3339>', 'ingest keys: time after which the key stops working')
    .option('--json', 'print JSON')
    .action(
      (opts: StoreOptions & { type: string; team?: string; environment?: string; name?: string; permissions?: string; scopes?: string; ttl?: string; json?: boolean }) =>
        withStore(opts, async (store) => {
          const keyType = opts.type as KeyType;
          if (!['ingest', 'configuration', 'management'].includes(keyType)) {
            throw new Error('--type must be ingest, configuration or management');
          }
          const team = await pickTeam(store, opts.team);
          let environment = null;
          if (keyType !== 'management') {
            const envs = await store.listEnvironments(team.id, { limit: 100_000 });
            environment = opts.environment ? envs.find((e) => e.slug === opts.environment) : envs.length === 1 ? envs[0] : undefined;
            if (!environment) throw new Error(`name an environment with --environment (one of: ${envs.map((e) => e.slug).join(', ')})`);
          }
          if (opts.ttl !== undefined && (keyType !== 'ingest' || Number.isNaN(Date.parse(opts.ttl)))) {
            throw new Error('--ttl takes an RFC 3339 time and applies to ingest keys only');
          }
          // As on /2/: a permission or scope the key type does not have is an error, not silently dropped.
          if (opts.permissions !== undefined && keyType === 'management') throw new Error('--permissions applies to ingest and configuration keys; management keys take --scopes');
          if (opts.scopes !== undefined && keyType !== 'management') throw new Error('--scopes applies to management keys only');
          const chosen = parseList(opts.permissions, keyType === 'ingest' ? INGEST_PERMISSIONS : CONFIGURATION_PERMISSIONS, `permission of ${keyType} keys`);
          const { key, token, secret } = await createKey(store, {
            team,
            environment,
            keyType,
            name: opts.name ?? `${keyType} key (cli)`,
            permissions: chosen ? Object.fromEntries(chosen.map((p) => [p, true])) : allPermissions(keyType),
            scopes: parseList(opts.scopes, MANAGEMENT_SCOPES, 'scope'),
            timeToLive: opts.ttl ? new Date(opts.ttl).toISOString() : null,
          });
          if (opts.json) {
            return console.log(JSON.stringify({ id: key.id, type: keyType, ...(keyType === 'management' ? { secret } : { token }) }));
          }
          console.log(`created ${keyType} key ${key.id}`);
          console.log(keyType === 'management' ? `Authorization: Bearer ${token}` : `X-Honeycomb-Team: ${token}`);
          console.log('This secret is shown once.');
        }),
    );

  addStoreOptions(keys.command('disable').description('disable a key at once').argument('<id>', 'key id'))
    .action((id: string, opts: StoreOptions) =>
      withStore(opts, async (store) => {
        const key = await store.getApiKey(id);
        if (!key) throw new Error(`no key with id ${id}`);
        await store.updateApiKey(id, { disabled: true });
        console.log(`disabled ${key.keyType} key ${id}`);
      }),
    );
}
