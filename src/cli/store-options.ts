// The options every store-touching command shares, and opening/closing the store around it.
import type { Command } from 'commander';
import { loadSettings } from '../settings.js';
import { checkWritable, prepareDataDir, requireDataDir } from '../ops/data-dir.js';
import { openConfigStore } from '../stores/config/store.js';
import type { ConfigStore } from '../stores/config/types.js';

export interface StoreOptions {
  dataDir?: string;
}

export const addStoreOptions = (c: Command) =>
  c.option('--data-dir <dir>', 'data directory (env WAGGLE_DATA_DIR, default ./data)');

/**
 * Opens the configuration store of the data directory, runs `fn`, closes it. Only `init` passes
 * `create` (it and `serve` alone may make a data directory): for every other command a path that
 * holds no data directory is an error, and nothing is created there.
 */
export async function withStore(opts: StoreOptions, fn: (store: ConfigStore) => Promise<void>, { create = false } = {}): Promise<void> {
  const settings = loadSettings(process.env, { dataDir: opts.dataDir });
  // (With PostgreSQL the command does not touch the data directory.)
  if (settings.configStore === 'sqlite') {
    if (!create) requireDataDir(settings.dataDir);
    checkWritable(settings.dataDir);
    prepareDataDir(settings.dataDir);
  }
  const store = openConfigStore(settings.configStore, settings.dataDir);
  try {
    await store.migrate();
    await fn(store);
  } finally {
    await store.close();
  }
}
