// The options every store-touching command shares, and opening/closing the store around it.
import type { Command } from 'commander';
import { loadSettings } from '../settings.js';
import { prepareDataDir } from '../ops/data-dir.js';
import { openConfigStore } from '../stores/config/store.js';
import type { ConfigStore } from '../stores/config/types.js';

export interface StoreOptions {
  dataDir?: string;
}

export const addStoreOptions = (c: Command) =>
  c.option('--data-dir <dir>', 'data directory (env WAGGLE_DATA_DIR, default ./data)');

export async function withStore(opts: StoreOptions, fn: (store: ConfigStore) => Promise<void>): Promise<void> {
  const settings = loadSettings(process.env, { dataDir: opts.dataDir });
  // (With PostgreSQL the command does not touch the data directory.)
  if (settings.configStore === 'sqlite') prepareDataDir(settings.dataDir);
  const store = openConfigStore(settings.configStore, settings.dataDir);
  try {
    await store.migrate();
    await fn(store);
  } finally {
    await store.close();
  }
}
