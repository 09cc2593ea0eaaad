import type { ApiContext, App } from '../context.js';
import { registerAuth } from './auth.js';
import { registerBoards } from './boards.js';
import { registerBoardViews } from './board-views.js';
import { registerColumns } from './columns.js';
import { registerDatasets } from './datasets.js';
import { registerDerivedColumns } from './derived-columns.js';
import { registerCalculatedFieldCheck } from './calculated-field-check.js';
import { registerDatasetDefinitions } from './dataset-definitions.js';
import { registerEvents } from './events.js';
import { registerKinesis } from './kinesis.js';
import { registerMarkers } from './markers.js';
import { registerMarkerSettings } from './marker-settings.js';
import { registerQueries } from './queries.js';
import { registerQueryAnnotations } from './query-annotations.js';
import { registerQueryResults } from './query-results.js';
import { registerRecipients } from './recipients.js';
import { registerRecipientTest } from './recipient-test.js';
import { registerServiceMaps } from './service-maps.js';
import { registerSlos } from './slos.js';
import { registerBurnAlerts } from './burn-alerts.js';
import { registerReporting } from './reporting.js';
import { registerSignals } from './signals.js';
import { registerTriggers } from './triggers.js';
import { registerBubbleUp } from './bubbleup.js';
import { registerTraces } from './traces.js';
import { registerRawEvents } from './raw-events.js';
import { registerDeliveries } from './deliveries.js';
import { registerTriggerHistory } from './trigger-history.js';
import { registerQueryHistory } from './query-history.js';
import { registerQueryBands } from './query-bands.js';

export async function registerV1(app: App, ctx: ApiContext): Promise<void> {
  registerAuth(app, ctx);
  registerDatasets(app, ctx);
  registerDatasetDefinitions(app, ctx);
  registerColumns(app, ctx);
  registerDerivedColumns(app, ctx);
  registerCalculatedFieldCheck(app, ctx);
  registerQueries(app, ctx);
  registerQueryAnnotations(app, ctx);
  registerBoards(app, ctx);
  registerBoardViews(app, ctx);
  registerQueryResults(app, ctx);
  registerRecipients(app, ctx);
  registerRecipientTest(app, ctx);
  registerTriggers(app, ctx);
  registerServiceMaps(app, ctx);
  registerSignals(app, ctx);
  registerMarkers(app, ctx);
  registerMarkerSettings(app, ctx);
  registerSlos(app, ctx);
  registerBurnAlerts(app, ctx);
  registerReporting(app, ctx);
  // Waggle extensions the web UI uses (docs/web-ui.md).
  registerBubbleUp(app, ctx);
  registerTraces(app, ctx);
  registerRawEvents(app, ctx);
  registerDeliveries(app, ctx);
  registerTriggerHistory(app, ctx);
  registerQueryHistory(app, ctx);
  registerQueryBands(app, ctx);
  // Its own scope: ingest routes read raw bodies with their own content-type parser.
  await app.register(async (ingest) => {
    registerEvents(ingest as App, ctx);
    registerKinesis(ingest as App, ctx);
  });
}
