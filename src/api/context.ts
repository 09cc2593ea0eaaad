// What every API module receives from the app factory.
import type { ConfigStore } from '../stores/config/types.js';
import type { EventStore } from '../stores/events/types.js';
import type { IngestWriter } from '../ingest/writer.js';
import type { Settings } from '../settings.js';

export interface ApiContext {
  store: ConfigStore;
  events: EventStore;
  writer: IngestWriter;
  now: () => Date;
  settings: Settings;
}
