#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=64
// The `waggle` command.
// The shebang (and `npm start`) give V8 a young-generation semi-space of up to 64 MB: under ingest load
// about 16,000 events (every client's batch) are parsed and waiting for their group commit at
// any time, more than the default 16 MB holds, so each scavenge copied and promoted them, and
// the garbage collector took a fifth of the server's CPU. With 64 MB they die young (128 cost the
// same CPU and held twice the memory; figures: docs/settings.md and docs/benchmarks.md); run
// `node --max-semi-space-size=16 dist/main.js serve` to trade that memory back.
// They also set MALLOC_ARENA_MAX=2 (read by glibc's malloc when the process starts, so it has
// to be in the environment before Node runs): each thread that allocates (the event store's,
// the ingest threads, libuv's, V8's) otherwise gets an arena of its own, up to 8 per core, and
// memory freed in one stays resident there; in the soak that was 10–11 arenas holding 24–69 MB
// against 1 holding 5–23 MB (docs/operations.md, "Bounded memory").
import { Command } from 'commander';
import { registerDeliveriesCommand } from './cli/deliveries.js';
import { registerKeysCommand } from './cli/keys.js';
import { registerBackupCommands } from './cli/backup.js';
import { addStoreOptions, withStore } from './cli/store-options.js';
import { AlreadyInitialised, initialise } from './domain/tenancy.js';
import { loadSettings } from './settings.js';
// The server (Fastify, the event engine, the ingest threads) is imported only by `serve`: the other
// commands start in a fraction of the time without it.
type StartServer = typeof import('./server.js').startServer;

const program = new Command('waggle')
  .description('Waggle: a self-hostable observability backend speaking the Honeycomb API')
  .showHelpAfterError();

program
  .command('serve')
  .description('start the server (initialises an empty data directory and prints its keys once)')
  .option('--port <n>', 'port (env WAGGLE_PORT, default 8080)')
  .option('--host <h>', 'address to listen on (env WAGGLE_HOST, default 127.0.0.1)')
  .option('--data-dir <dir>', 'data directory (env WAGGLE_DATA_DIR, default ./data)')
  .action(async (opts: { port?: string; host?: string; dataDir?: string }) => {
    const settings = loadSettings(process.env, opts);
    // The signals are taken from the start: one that comes while the server is starting (it is
    // already listening) stops it as soon as it has started.
    let server: Awaited<ReturnType<StartServer>> | undefined;
    let signalled: string | undefined;
    const shutdown = (signal: string) => {
      if (!server) {
        signalled = signal;
        return;
      }
      const s = server;
      s.app.log.info({ signal }, 'shutting down');
      s.stop().then(
        () => process.exit(0),
        (err) => {
          s.app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
    const { startServer } = await import('./server.js');
    server = await startServer(settings);
    if (signalled) shutdown(signalled);
  });

addStoreOptions(program.command('init').description('initialise an empty data directory: a team, an environment and one key of each kind'))
  .option('--team <name>', 'team name', 'My Team')
  .option('--environment <name>', 'environment name', 'Production')
  .option('--json', 'print the result as JSON')
  .action((opts: { dataDir?: string; team: string; environment: string; json?: boolean }) =>
    withStore(opts, async (store) => {
      const result = await initialise(store, { teamName: opts.team, environmentName: opts.environment });
      console.log(opts.json ? JSON.stringify(result) : JSON.stringify(result, null, 2));
    }),
  );

registerKeysCommand(program, addStoreOptions);
registerDeliveriesCommand(program, addStoreOptions);
registerBackupCommands(program);

program.parseAsync().catch((err: unknown) => {
  console.error(`waggle: ${err instanceof AlreadyInitialised || err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
