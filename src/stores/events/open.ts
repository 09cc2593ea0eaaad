// Opens the event store WAGGLE_EVENT_STORE names (settings.eventStore): the embedded DuckDB file
// in the data directory by default.
import { join } from 'node:path';
import { DuckDbEventStore } from './duckdb-store.js';
import type { EventStore } from './types.js';

/** The event store a setting names (not yet opened): `duckdb` (the default). */
export function createEventStore(setting: string, dataDir: string, limits: { memoryBytes?: number } = {}): EventStore {
  if (setting === 'duckdb' || setting === '') {
    // (DuckDB spills past its memory limit into a directory beside its file.)
    return new DuckDbEventStore(join(dataDir, 'events.duckdb'), { memoryBytes: limits.memoryBytes, tempDirectory: join(dataDir, 'events.duckdb.tmp') });
  }
  throw new Error(`WAGGLE_EVENT_STORE: unknown event store ${JSON.stringify(setting)} (expected duckdb)`);
}
