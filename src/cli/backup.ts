// `waggle backup` and `waggle restore` (src/ops/backup.ts): a consistent copy of a data
// directory's stores, made by the server running on it (over its control socket) or, with none
// running, by this command; and putting such a copy in place as a new data directory.
import type { Command } from 'commander';
import { join } from 'node:path';
import { loadSettings } from '../settings.js';
import { openConfigStore } from '../stores/config/store.js';
import { eventStoreFor } from '../stores/events/open.js';
import { backupStores, requestBackup, restoreBackup, type BackupManifest } from '../ops/backup.js';
import { checkWritable, explainLockError, prepareDataDir, requireDataDir } from '../ops/data-dir.js';

function describe(m: BackupManifest): string[] {
  const lines = [`covers: ${m.covers.join('; ') || 'nothing'}`];
  if (m.eventRows) {
    const tables = Object.keys(m.eventRows).filter((t) => t.startsWith('ds_'));
    const events = tables.reduce((n, t) => n + m.eventRows![t], 0);
    lines.push(`events: ${events} in ${tables.length} dataset table(s)`);
  }
  for (const n of m.notCovered) lines.push(`NOT covered: ${n}`);
  return lines;
}

export function registerBackupCommands(program: Command): void {
  program
    .command('backup')
    .description('copy the configuration and event stores of a data directory (running server or not) into a new directory')
    .requiredOption('--to <dir>', 'where the backup goes (new or empty directory)')
    .option('--data-dir <dir>', 'data directory (env WAGGLE_DATA_DIR, default ./data)')
    .option('--json', 'print the backup manifest as JSON')
    .action(async (opts: { to: string; dataDir?: string; json?: boolean }) => {
      const settings = loadSettings(process.env, { dataDir: opts.dataDir });
      requireDataDir(settings.dataDir); // a mistyped path is refused, not backed up as a new empty store
      let how = 'by the server running on it';
      let manifest = await requestBackup(settings.dataDir, opts.to);
      if (!manifest) {
        how = 'with no server running';
        checkWritable(settings.dataDir);
        prepareDataDir(settings.dataDir);
        const config = openConfigStore(settings.configStore, settings.dataDir);
        const events = eventStoreFor(settings);
        try {
          await config.migrate();
          try {
            await events.open();
          } catch (err) {
            const locked = explainLockError(err, settings.dataDir);
            if (locked !== err) throw locked;
            throw new Error(`cannot open the event store (${(err as Error).message}); if a server is running on ${settings.dataDir}, it does not answer on its control socket`);
          }
          manifest = await backupStores({ events, config }, opts.to);
        } finally {
          await events.close();
          await config.close();
        }
      }
      if (opts.json) console.log(JSON.stringify(manifest));
      else console.log([`backup of ${settings.dataDir} in ${opts.to}, made ${how} in ${manifest.seconds} s`, ...describe(manifest)].join('\n'));
    });

  program
    .command('restore')
    .description('put a backup in place as a data directory (which must be new or empty)')
    .requiredOption('--from <dir>', 'the backup directory (made by waggle backup)')
    .option('--data-dir <dir>', 'data directory to create (env WAGGLE_DATA_DIR, default ./data)')
    .action((opts: { from: string; dataDir?: string }) => {
      const settings = loadSettings(process.env, { dataDir: opts.dataDir });
      const manifest = restoreBackup(opts.from, settings.dataDir);
      console.log([`restored the backup of ${manifest.createdAt} (${opts.from}) into ${settings.dataDir}`, ...describe(manifest)].join('\n'));
    });
}
