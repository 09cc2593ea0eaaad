// SLO rollups: the per-minute good and bad counts SLO figures are answered from (the maths is in
// src/jobs/slo.ts). What an engine keeps, and how it brings it up to date, is the engine's own:
// `duckdb-slo-rollups.ts` keeps rollup tables refreshed incrementally by an exact ingest-time
// cut; `clickhouse-slo-rollups.ts` aggregates the window per minute at every refresh (ClickHouse
// has no such cut; each file's header says why). Both answer the same counts for the same events.
import type { EventStore } from './types.js';
import { clickhouseDialect } from './clickhouse-dialect.js';
import { ClickHouseSloRollups } from './clickhouse-slo-rollups.js';
import { DuckDbSloRollups } from './duckdb-slo-rollups.js';

export { MINUTE_US } from './engine.js';

export interface Counts {
  good: number;
  bad: number;
}

/** What an SLO's counts are computed from: per dataset table, the SLI as a boolean SQL expression. */
export interface RollupSource {
  parts: { table: string; sql: string }[];
  /** Parameters the parts' SQL binds ($1, $2, …, shared by all parts). */
  params: unknown[];
  /** Of parts and params and whatever else changes what an event counts (made by the engine). */
  fingerprint: string;
}

export interface RefreshRequest {
  sloId: string;
  source: RollupSource;
  /** The span of event time to cover: [startUs, nowUs). */
  startUs: number;
  nowUs: number;
  /** The counts to answer: for each, the minutes from it (and from the start's) to the current one. */
  fromMinutes: number[];
}

export interface Refreshed {
  /** Whether the counts were built anew (a new SLO, or its fingerprint changed). */
  rebuilt: boolean;
  counts: Counts[];
}

/** An engine's SLO rollups. */
export interface SloRollups {
  /** Whether refreshes write state (then one node at a time refreshes an SLO; src/jobs/slo.ts). */
  readonly stateful: boolean;
  /** The dataset tables that exist, of those named. */
  existingTables(names: string[]): Promise<Set<string>>;
  /** Brings the SLO's rollups to the request's span and answers its counts. */
  refresh(req: RefreshRequest): Promise<Refreshed>;
  /**
   * For each window [lo, hi) of whole minutes, the counts of the events in it (refresh first: the
   * minutes the rollups hold may be read from them).
   */
  windowCounts(sloId: string, source: RollupSource, windows: { lo: number; hi: number }[]): Promise<Counts[]>;
  /** Drops an SLO's rollups (the SLO is gone). */
  forget(sloId: string): Promise<void>;
  /** Drops rollups of SLOs that no longer exist (deleted with their dataset or environment). */
  collectGarbage(liveIds: Set<string>): Promise<void>;
}

/** The SLO rollups of the store's engine. */
export function sloRollups(events: EventStore): SloRollups {
  return events.dialect === clickhouseDialect ? new ClickHouseSloRollups(events) : new DuckDbSloRollups(events);
}
