// Starting and stopping a server process: open stores, initialise an empty data dir, listen,
// and shut down gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests,
// close the stores).
import { createApp, type App } from './http/app.js';
import { initialise } from './domain/tenancy.js';
import { openConfigStore } from './stores/config/store.js';
import type { ConfigStore } from './stores/config/types.js';
import { backgroundBaseUrl, type Settings } from './settings.js';
import { join } from 'node:path';
import { DuckDbEventStore } from './stores/events/duckdb.js';
import { startGrpcServer, type GrpcServer } from './http/grpc.js';

export interface RunningServer {
  app: App;
  url: string;
  /** The OTLP/gRPC port, when that server runs (settings.otlpGrpcPort > 0). */
  grpcPort?: number;
  stop(): Promise<void>;
}

export async function startServer(settings: Settings, out: NodeJS.WritableStream = process.stdout): Promise<RunningServer> {
  const configStore: ConfigStore = openConfigStore(settings.configStore, settings.dataDir);
  await configStore.migrate();
  if ((await configStore.listTeams()).length === 0) {
    const init = await initialise(configStore);
    out.write(keysBanner(init));
  }
  const eventStore = new DuckDbEventStore(join(settings.dataDir, 'events.duckdb'));
  await eventStore.open();
  const app = await createApp({ configStore, eventStore, settings });
  await app.listen({ port: settings.port, host: settings.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : settings.port;
  let grpc: GrpcServer | undefined;
  if (settings.otlpGrpcPort > 0) {
    try {
      grpc = await startGrpcServer(app, settings.host, settings.otlpGrpcPort);
    } catch (err) {
      await app.close();
      await eventStore.close();
      await configStore.close();
      throw new Error(`OTLP/gRPC cannot listen on ${settings.host}:${settings.otlpGrpcPort} (WAGGLE_OTLP_GRPC_PORT; 0 turns it off): ${(err as Error).message}`);
    }
    app.log.info(`OTLP/gRPC listening at ${settings.host}:${grpc.port}`);
  }
  // (a log line like every other line after the first start's banner)
  app.log.info({ url: `${backgroundBaseUrl({ ...settings, port })}/` }, `Web UI: ${backgroundBaseUrl({ ...settings, port })}/ (sign in with a configuration key)`);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // Node's server.close() ends only the keep-alive connections idle at that moment; one whose
      // request finishes later would hold the process until its keep-alive timeout (72 s).
      const reaper = setInterval(() => app.server.closeIdleConnections(), 100);
      try {
        // gRPC calls under way finish first: they need the ingest writer, which app.close() closes.
        await grpc?.stop();
        await app.close(); // stops accepting and waits for in-flight requests
      } finally {
        clearInterval(reaper);
      }
      await eventStore.close(); // after app.close(), which commits queued events
      await configStore.close();
    })());
  return { app, url: `http://${settings.host}:${port}`, grpcPort: grpc?.port, stop };
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
