// What every API module receives from the app factory.
import type { ConfigStore } from '../stores/config/types.js';
import type { EventStore } from '../stores/events/types.js';
import type { IngestWriter } from '../ingest/writer.js';
import type { Settings } from '../settings.js';
import type { Scheduler } from '../engine/scheduler.js';
import type { Notifier } from '../notify/types.js';

export interface ApiContext {
  store: ConfigStore;
  events: EventStore;
  writer: IngestWriter;
  now: () => Date;
  settings: Settings;
  /** Background evaluation: triggers, burn alerts and signals register their jobs here. */
  scheduler: Scheduler;
  /** Where alerts send notifications. */
  notifier: Notifier;
}
