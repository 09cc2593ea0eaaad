// Opens the event store WAGGLE_EVENT_STORE names (settings.eventStore): the embedded DuckDB file
// in the data directory by default.
import { join } from 'node:path';
import { ClickHouseEventStore, parseClickHouseUrl } from './clickhouse-store.js';
import { DuckDbEventStore } from './duckdb-store.js';
import type { EventStore } from './types.js';

/**
 * The event store a setting names (not yet opened): `duckdb` (the default, a file in the data
 * directory) or `clickhouse://user:password@host:8123[,host:port…]/database[?cluster=name]`.
 * `limits.memoryBytes`: DuckDB's memory limit (WAGGLE_EVENT_STORE_MEMORY); `limits.checkpointBytes`:
 * the WAL size at which it checkpoints (WAGGLE_EVENT_STORE_CHECKPOINT).
 */
export function createEventStore(setting: string, dataDir: string, limits: { memoryBytes?: number; checkpointBytes?: number } = {}): EventStore {
  if (setting === 'duckdb' || setting === '') {
    // (DuckDB spills past its memory limit into a directory beside its file.)
    return new DuckDbEventStore(join(dataDir, 'events.duckdb'), { ...limits, tempDirectory: join(dataDir, 'events.duckdb.tmp') });
  }
  if (setting.startsWith('clickhouse://')) return new ClickHouseEventStore(parseClickHouseUrl(setting));
  throw new Error(`WAGGLE_EVENT_STORE: unknown event store ${JSON.stringify(setting)} (expected duckdb or clickhouse://…)`);
}

/** The event store the settings name, with their limits: what `waggle serve` and `waggle backup` open. */
export function eventStoreFor(settings: { eventStore: string; dataDir: string; eventStoreMemory: number; eventStoreCheckpoint?: number }): EventStore {
  return createEventStore(settings.eventStore, settings.dataDir, { memoryBytes: settings.eventStoreMemory, checkpointBytes: settings.eventStoreCheckpoint });
}
