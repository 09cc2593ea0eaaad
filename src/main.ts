#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=64
// The `waggle` command.
// The shebang (and `npm start`) give V8 a young-generation semi-space of up to 64 MB: under ingest load
// about 16,000 events (every client's batch) are parsed and waiting for their group commit at
// any time, more than the default 16 MB holds, so each scavenge copied and promoted them, and
// the garbage collector took a fifth of the server's CPU. With 64 MB they die young (128 cost the
// same CPU and held twice the memory; figures: docs/settings.md and docs/benchmarks-log.md); run
// `node --max-semi-space-size=16 dist/main.js serve` to trade that memory back.
// They also set MALLOC_ARENA_MAX=2 (read by glibc's malloc when the process starts, so it has
// to be in the environment before Node runs): each thread that allocates (the event store's,
// the ingest threads, libuv's, V8's) otherwise gets an arena of its own, up to 8 per core, and
// memory freed in one stays resident there; in the soak that was 10–11 arenas holding 24–69 MB
// against 1 holding 5–23 MB (docs/operations.md, "Bounded memory").
import { Command } from 'commander';
import { createRequire } from 'node:module';
import { registerDeliveriesCommand } from './cli/deliveries.js';
import { registerInitCommand } from './cli/init.js';
import { registerKeysCommand } from './cli/keys.js';
import { registerBackupCommands } from './cli/backup.js';
import { addStoreOptions } from './cli/store-options.js';
import { loadSettings } from './settings.js';
// The server (Fastify, the event engine, the ingest threads) is imported only by `serve`: the other
// commands start in a fraction of the time without it.
type StartServer = typeof import('./server.js').startServer;

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

const program = new Command('waggle')
  .description('Waggle: a self-hostable observability backend speaking the Honeycomb API')
  .version(version, '-v, --version', 'print the version')
  .showHelpAfterError();

program
  .command('serve')
  .description(
    'start the server: the API, OTLP/HTTP and the web UI on --port, OTLP/gRPC on --otlp-grpc-port\n' +
      '(initialises an empty data directory and prints its keys once)',
  )
  .option('--port <n>', 'HTTP port: API, OTLP/HTTP, web UI (env WAGGLE_PORT, default 8080)')
  .option('--otlp-grpc-port <n>', 'OTLP/gRPC port, 0 for none (env WAGGLE_OTLP_GRPC_PORT, default 4317)')
  .option('--host <h>', 'address to listen on (env WAGGLE_HOST, default 127.0.0.1)')
  .option('--data-dir <dir>', 'data directory (env WAGGLE_DATA_DIR, default ./data)')
  .action(async (opts: { port?: string; otlpGrpcPort?: string; host?: string; dataDir?: string }) => {
    const settings = loadSettings(process.env, opts);
    // The signals are taken from the start: one that comes while the server is starting (it is
    // already listening) stops it as soon as it has started.
    let server: Awaited<ReturnType<StartServer>> | undefined;
    let pending: Record<string, unknown> | undefined;
    let stopping = false;
    const shutdown = (why: Record<string, unknown>) => {
      if (!server) {
        pending ??= why;
        return;
      }
      if (stopping) return;
      stopping = true;
      const s = server;
      s.app.log.info(why, 'shutting down');
      s.stop().then(
        () => process.exit(0),
        (err) => {
          s.app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    // (`on`, not `once`: Ctrl-C under `npm start` brings two SIGINTs, the terminal's and the one
    // npm passes on, and a second signal with no listener would kill the process mid-shutdown.)
    process.on('SIGTERM', () => shutdown({ signal: 'SIGTERM' }));
    process.on('SIGINT', () => shutdown({ signal: 'SIGINT' }));
    // Under npm (`npm start`, `npx waggle serve`) a signal goes to npm, which passes it on to the
    // shell it runs the command in. `npm start`'s script execs node, so that shell is this
    // process; npx's shell does not exec (dash forks even its last command), dies of the signal
    // and leaves this process behind, re-parented. So a server started by npm also stops when
    // its parent goes away.
    if (process.env.npm_lifecycle_event) {
      const launcher = process.ppid;
      setInterval(() => process.ppid !== launcher && shutdown({ launcher, reason: 'the process that started waggle has exited' }), 250).unref();
    }
    const { startServer } = await import('./server.js');
    server = await startServer(settings);
    if (pending) shutdown(pending);
  });

registerInitCommand(program, addStoreOptions);
registerKeysCommand(program, addStoreOptions);
registerDeliveriesCommand(program, addStoreOptions);
registerBackupCommands(program);

program.parseAsync().catch((err: unknown) => {
  console.error(`waggle: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
