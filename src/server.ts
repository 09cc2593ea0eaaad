// Starting and stopping a server process: open stores, initialise an empty data dir, listen,
// and shut down gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests,
// close the stores).
import { createApp, type App } from './http/app.js';
import { initialise } from './domain/tenancy.js';
import { openConfigStore } from './stores/config/store.js';
import type { ConfigStore } from './stores/config/types.js';
import type { Settings } from './settings.js';
import { join } from 'node:path';
import { DuckDbEventStore } from './stores/events/duckdb.js';

export interface RunningServer {
  app: App;
  url: string;
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
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // Node's server.close() ends only the keep-alive connections idle at that moment; one whose
      // request finishes later would hold the process until its keep-alive timeout (72 s).
      const reaper = setInterval(() => app.server.closeIdleConnections(), 100);
      try {
        await app.close(); // stops accepting and waits for in-flight requests
      } finally {
        clearInterval(reaper);
      }
      await eventStore.close(); // after app.close(), which commits queued events
      await configStore.close();
    })());
  return { app, url: `http://${settings.host}:${port}`, stop };
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
