// `waggle init`: a team, an environment and one key of each kind in an empty data directory. The
// keys are shown once, so `--keys-file` writes them to a new file only when init succeeds, never
// over an existing one; run again (the README walkthrough twice), it changes nothing and, when
// that file holds the keys of this very directory, says so and succeeds.
import type { Command } from 'commander';
import { closeSync, existsSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { resolveTeamHeader } from '../domain/keys.js';
import { AlreadyInitialised, initialise } from '../domain/tenancy.js';
import { readFormat } from '../ops/data-dir.js';
import { loadSettings } from '../settings.js';
import { withStore, type StoreOptions } from './store-options.js';

interface Options extends StoreOptions {
  team: string;
  environment: string;
  json?: boolean;
  keysFile?: string;
}

/**
 * Creates `file` for the keys, exclusively (an existing file is never written over) and
 * owner-only, as it holds secrets; a file that cannot be made stops init before it changes anything.
 */
function reserveKeysFile(file: string): number {
  try {
    return openSync(file, 'wx', 0o600);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EEXIST') {
      throw new Error(`${file} already exists; nothing was changed. init never writes over a keys file (the keys in it are shown nowhere else): name a new file, or use the keys it holds`);
    }
    throw new Error(`cannot create the keys file ${file} (${e.code ?? e.message}); nothing was changed`);
  }
}

/** The configuration key a keys file holds, if it is one init wrote. */
function configurationKeyIn(file: string): string | undefined {
  try {
    const key = (JSON.parse(readFileSync(file, 'utf8')) as { keys?: { configuration?: unknown } }).keys?.configuration;
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `file` holds a working configuration key of the (initialised) data directory. */
async function holdsKeysOf(file: string, opts: Options): Promise<boolean> {
  const key = configurationKeyIn(file);
  const { dataDir } = loadSettings(process.env, { dataDir: opts.dataDir });
  if (key === undefined || readFormat(dataDir) === undefined) return false;
  let found = false;
  await withStore(opts, async (store) => {
    found = typeof (await resolveTeamHeader(store, key, new Date())) !== 'string';
  });
  return found;
}

async function init(opts: Options): Promise<void> {
  const { dataDir } = loadSettings(process.env, { dataDir: opts.dataDir });
  const file = opts.keysFile;
  if (file !== undefined && existsSync(file) && (await holdsKeysOf(file, opts))) {
    console.log(`${dataDir} is initialised already and ${file} holds its keys; nothing was changed`);
    return;
  }
  const fd = file === undefined ? undefined : reserveKeysFile(file);
  let written = false;
  try {
    await withStore(
      opts,
      async (store) => {
        const result = await initialise(store, { teamName: opts.team, environmentName: opts.environment }).catch((err: unknown) => {
          throw err instanceof AlreadyInitialised ? new Error(`the data directory ${dataDir} is already initialised (a team exists); nothing was changed`) : err;
        });
        if (fd === undefined) return console.log(opts.json ? JSON.stringify(result) : JSON.stringify(result, null, 2));
        try {
          writeSync(fd, `${JSON.stringify(result, null, 2)}\n`);
        } catch (err) {
          // The directory is initialised now: its keys must not be lost with the file.
          console.log(JSON.stringify(result));
          throw new Error(`the data directory was initialised, but ${file} could not be written (${(err as Error).message}); its keys are printed above`);
        }
        written = true;
        console.log(
          opts.json
            ? JSON.stringify(result)
            : `initialised ${dataDir}: team ${result.team.slug}, environment ${result.environment.slug}; the keys are in ${file} (shown nowhere else: keep it)`,
        );
      },
      { create: true },
    );
  } finally {
    if (fd !== undefined) {
      closeSync(fd);
      if (!written) unlinkSync(file!); // only a successful init leaves a keys file
    }
  }
}

export function registerInitCommand(program: Command, addStoreOptions: (c: Command) => Command): void {
  addStoreOptions(program.command('init').description('initialise an empty data directory: a team, an environment and one key of each kind'))
    .option('--team <name>', 'team name', 'My Team')
    .option('--environment <name>', 'environment name', 'Production')
    .option('--json', 'print the result as JSON')
    .option('--keys-file <file>', 'write the result (JSON, with the keys) to this new file instead of printing the keys; never over an existing file')
    .action((opts: Options) => init(opts));
}
