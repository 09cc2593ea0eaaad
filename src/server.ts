// Starting and stopping a server process: open stores, initialise an empty data dir, listen,
// and shut down gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests,
// close the stores).
import { createApp, type App } from './app.js';
import { initialise } from './domain/tenancy.js';
import { openConfigStore } from './stores/config/store.js';
import type { ConfigStore } from './stores/config/types.js';
import { backgroundBaseUrl, type Settings } from './settings.js';
import { eventStoreFor } from './stores/events/open.js';
import { startGrpcServer, type GrpcServer } from './http/grpc.js';
import { startMetricsServer } from './ops/metrics.js';
import { checkWritable, DataDirError, explainLockError, prepareDataDir } from './ops/data-dir.js';
import { controlSocketPath, runningServerPid, startControlSocket } from './ops/backup.js';
import type { Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';

export interface RunningServer {
  app: App;
  url: string;
  /** The OTLP/gRPC port, when that server runs (settings.otlpGrpcPort > 0). */
  grpcPort?: number;
  /** The metrics listener's port, when metrics have a port of their own (settings.metricsPort). */
  metricsPort?: number;
  stop(): Promise<void>;
}

/** What each listener is called in errors, and the settings that choose its port. */
const LISTENERS = {
  http: { name: 'the server', hint: '--port or WAGGLE_PORT' },
  grpc: { name: 'OTLP/gRPC', hint: '--otlp-grpc-port or WAGGLE_OTLP_GRPC_PORT; 0 turns it off' },
  metrics: { name: 'metrics', hint: 'WAGGLE_METRICS_PORT' },
};

/** A failed listen as one message: which listener, where, why, and the setting to change. */
function listenError(which: keyof typeof LISTENERS, host: string, port: number, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code ?? /\b(EADDRINUSE|EADDRNOTAVAIL|EACCES)\b/.exec(String((err as Error).message))?.[1];
  const why =
    code === 'EADDRINUSE'
      ? 'the port is taken by another process'
      : code === 'EADDRNOTAVAIL'
        ? 'the address is not one of this machine\'s'
        : code === 'EACCES'
          ? 'permission denied (ports below 1024 need privileges)'
          : (err as Error).message;
  const { name, hint } = LISTENERS[which];
  return new Error(`${name} cannot listen on ${host}:${port}: ${why} (${hint})`);
}

/**
 * Binds and releases each port the server will listen on, so that a taken one stops the start
 * with one clear error before anything is created or initialised (the real listeners bind later,
 * after the stores open; their own errors say the same).
 */
async function checkPorts(settings: Settings): Promise<void> {
  const ports: Array<[keyof typeof LISTENERS, string, number | undefined]> = [
    ['http', settings.host, settings.port],
    ['grpc', settings.host, settings.otlpGrpcPort],
    ['metrics', settings.metricsHost ?? settings.host, settings.metricsPort],
  ];
  for (const [which, host, port] of ports) {
    if (!port) continue; // 0 picks a free port (HTTP, metrics) or turns gRPC off
    const probe = createNetServer();
    try {
      await new Promise<void>((ok, fail) => {
        probe.once('error', fail);
        probe.listen({ host, port, exclusive: true }, ok);
      });
    } catch (err) {
      throw listenError(which, host, port, err);
    }
    await new Promise((ok) => probe.close(ok));
  }
}

export async function startServer(settings: Settings, out: NodeJS.WritableStream = process.stdout): Promise<RunningServer> {
  const dir = settings.dataDir;
  // One server per data directory: a second one is told which process has it (its control socket
  // answers), instead of failing later on the event store's lock.
  const other = await runningServerPid(dir);
  if (other !== undefined) {
    throw new DataDirError(
      `another Waggle server, PID ${other}, is using this data directory: ${dir} (it answered on ${controlSocketPath(dir)}). Stop it first, or choose another --data-dir.`,
    );
  }
  await checkPorts(settings);
  // Before any store opens: an unwritable directory and one of a newer format are refused untouched (src/ops/data-dir.ts).
  checkWritable(dir);
  const upgrade = prepareDataDir(dir);
  const configStore: ConfigStore = openConfigStore(settings.configStore, dir);
  await configStore.migrate();
  if ((await configStore.listTeams()).length === 0) {
    const init = await initialise(configStore);
    out.write(keysBanner(init));
  }
  const eventStore = eventStoreFor(settings);
  try {
    await eventStore.open();
  } catch (err) {
    await configStore.close();
    throw explainLockError(err, dir);
  }
  const app = await createApp({ configStore, eventStore, settings });
  // `waggle backup` asks this server for its copy over the control socket (src/ops/backup.ts).
  const control = await startControlSocket(settings.dataDir, { events: eventStore, config: configStore });
  if (upgrade.steps.length > 0) app.log.info({ dataDir: settings.dataDir, from: upgrade.from, to: upgrade.to, steps: upgrade.steps }, 'data directory upgraded');
  let grpc: GrpcServer | undefined;
  let metricsServer: Server | undefined;
  let metricsPort: number | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // Node's server.close() ends only the keep-alive connections idle at that moment; one whose
      // request finishes later would hold the process until its keep-alive timeout (72 s).
      const reaper = setInterval(() => app.server.closeIdleConnections(), 100);
      try {
        // gRPC calls under way finish first: they need the ingest writer, which app.close() closes.
        await grpc?.stop();
        await control.close();
        metricsServer?.closeAllConnections();
        await new Promise((resolve) => (metricsServer ? metricsServer.close(resolve) : resolve(undefined)));
        await app.close(); // stops accepting and waits for in-flight requests
      } finally {
        clearInterval(reaper);
      }
      await eventStore.close(); // after app.close(), which commits queued events
      await configStore.close();
    })());
  // Every listener is bound before the server says it is listening: the other ports first, the
  // API's last (Fastify logs "Server listening at" as it binds).
  const metricsHost = settings.metricsHost ?? settings.host;
  try {
    if (settings.otlpGrpcPort > 0) {
      try {
        grpc = await startGrpcServer(app, settings.host, settings.otlpGrpcPort);
      } catch (err) {
        throw listenError('grpc', settings.host, settings.otlpGrpcPort, err);
      }
    }
    if (settings.metricsPort !== undefined) {
      try {
        ({ server: metricsServer, port: metricsPort } = await startMetricsServer(app.metrics, metricsHost, settings.metricsPort, settings.metricsToken));
      } catch (err) {
        throw listenError('metrics', metricsHost, settings.metricsPort, err);
      }
    }
    try {
      await app.listen({ port: settings.port, host: settings.host });
    } catch (err) {
      throw listenError('http', settings.host, settings.port, err);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : settings.port;
  if (grpc) app.log.info(`OTLP/gRPC listening at ${settings.host}:${grpc.port}`);
  if (metricsServer) app.log.info({ url: `http://${metricsHost}:${metricsPort}/metrics` }, `metrics at http://${metricsHost}:${metricsPort}/metrics`);
  // (a log line like every other line after the first start's banner)
  app.log.info({ url: `${backgroundBaseUrl({ ...settings, port })}/` }, `Web UI: ${backgroundBaseUrl({ ...settings, port })}/ (sign in with a configuration key)`);
  return { app, url: `http://${settings.host}:${port}`, grpcPort: grpc?.port, metricsPort, stop };
}

function keysBanner(init: Awaited<ReturnType<typeof initialise>>): string {
  return [
    '',
    '================================================================================',
    ' Waggle initialised a new data directory. These keys are shown ONCE; store them.',
    ` team: ${init.team.slug}   environment: ${init.environment.slug}`,
    ` configuration key (X-Honeycomb-Team): ${init.keys.configuration}`,
    ` ingest key        (X-Honeycomb-Team): ${init.keys.ingest}`,
    ` management key    (Authorization: Bearer ID:SECRET): ${init.keys.management.id}:${init.keys.management.secret}`,
    ' Lost them? `waggle keys create --help` makes new ones.',
    '================================================================================',
    '',
  ].join('\n');
}
