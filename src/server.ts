// Starting and stopping a server process: open stores, initialise an empty data dir, listen,
// and shut down gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests,
// close the stores).
import { createApp, type App } from './http/app.js';
import { initialise } from './domain/tenancy.js';
import { openConfigStore } from './stores/config/store.js';
import type { ConfigStore } from './stores/config/types.js';
import { backgroundBaseUrl, type Settings } from './settings.js';
import { eventStoreFor } from './stores/events/open.js';
import { startGrpcServer, type GrpcServer } from './http/grpc.js';
import { startMetricsServer } from './ops/metrics.js';
import { prepareDataDir } from './ops/data-dir.js';
import { startControlSocket } from './ops/backup.js';
import type { Server } from 'node:http';

export interface RunningServer {
  app: App;
  url: string;
  /** The OTLP/gRPC port, when that server runs (settings.otlpGrpcPort > 0). */
  grpcPort?: number;
  /** The metrics listener's port, when metrics have a port of their own (settings.metricsPort). */
  metricsPort?: number;
  stop(): Promise<void>;
}

export async function startServer(settings: Settings, out: NodeJS.WritableStream = process.stdout): Promise<RunningServer> {
  // Before any store opens: a directory of a newer format is refused untouched (src/ops/data-dir.ts).
  const upgrade = prepareDataDir(settings.dataDir);
  const configStore: ConfigStore = openConfigStore(settings.configStore, settings.dataDir);
  await configStore.migrate();
  if ((await configStore.listTeams()).length === 0) {
    const init = await initialise(configStore);
    out.write(keysBanner(init));
  }
  const eventStore = eventStoreFor(settings);
  await eventStore.open();
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
  await app.listen({ port: settings.port, host: settings.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : settings.port;
  if (settings.otlpGrpcPort > 0) {
    try {
      grpc = await startGrpcServer(app, settings.host, settings.otlpGrpcPort);
    } catch (err) {
      await stop();
      throw new Error(`OTLP/gRPC cannot listen on ${settings.host}:${settings.otlpGrpcPort} (WAGGLE_OTLP_GRPC_PORT; 0 turns it off): ${(err as Error).message}`);
    }
    app.log.info(`OTLP/gRPC listening at ${settings.host}:${grpc.port}`);
  }
  if (settings.metricsPort !== undefined) {
    const host = settings.metricsHost ?? settings.host;
    try {
      ({ server: metricsServer, port: metricsPort } = await startMetricsServer(app.metrics, host, settings.metricsPort, settings.metricsToken));
    } catch (err) {
      await stop();
      throw new Error(`metrics cannot listen on ${host}:${settings.metricsPort} (WAGGLE_METRICS_PORT): ${(err as Error).message}`);
    }
    app.log.info({ url: `http://${host}:${metricsPort}/metrics` }, `metrics at http://${host}:${metricsPort}/metrics`);
  }
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
