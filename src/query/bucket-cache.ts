// The bucket-result cache: a repeated query (a board refresh, a trigger's evaluation, a second
// person opening the same board) reads from the event store only the time buckets it does not
// know yet, and the still-open ones. Per query (its states statement without the window: the
// fields, filters, breakdowns, calculated fields and column types it reads, the bucket width and
// the datasets) the cache keeps each closed bucket's partial states per breakdown group
// (bucket-states.ts); an answer merges them with the fresh buckets' states.
// - Kept: buckets wholly inside the window that ended at least `graceSeconds` ago. The window's
//   partial first and last buckets and the recent ones are always read.
// - Invalidated exactly where events changed: an event older than the grace period (a late
//   event) drops the kept buckets of its dataset that it falls in, before its request is
//   answered; retention drops what it deleted; a deleted dataset drops everything of it. A
//   changed column type or calculated field changes the query's states statement, hence its key.
//   With several nodes the invalidations go through the config store's log, read before every
//   use and before anything is kept, so that no node serves a bucket another node changed.
// - Bounded: at most `maxBytes` of kept states (least recently used entries go first), and a
//   query whose states would hold more than `maxValues` rows (groups × buckets) and list values
//   (percentiles, HEATMAP, COUNT_DISTINCT, RATE_*, CONCURRENCY keep per-event values) runs
//   uncached: the engine ranks its many groups itself. So does a window whose states are nearly
//   as many as its events (many groups over fine buckets): merging them costs more than a scan.
import { createHash } from 'node:crypto';
import type { CacheInvalidation } from '../stores/config/types.js';
import type { EventStore } from '../stores/events/types.js';
import { coarsen, mergeStates, stateRow, stateRowBytes, stateRowValues, type MergedParts, type StateRow } from './bucket-states.js';
import { plan, planStates, type PlanInput } from './plan.js';

export interface BucketCacheOptions {
  maxBytes: number;
  graceSeconds: number;
  maxValues: number;
  now: () => number;
  /** The config store's invalidation log, when several nodes share the event store. */
  log?: {
    appendCacheInvalidation(datasetId: string, fromUs: number, toUs: number): Promise<void>;
    cacheInvalidationsSince(seq: number): Promise<CacheInvalidation[]>;
  };
}

interface Entry {
  datasets: string[];
  bucketUs: number;
  buckets: Map<number, StateRow[]>;
  bytes: number;
}

/** Every dataset (an invalidation of retention). */
export const ALL_DATASETS = '*';
/** A query too large to keep is tried again after this long (ms). */
const TOO_LARGE_MS = 10 * 60_000;
/** Fresh time ranges of one read, at most (gaps between them are read again rather than split further). */
const MAX_RANGES = 8;
/** Entries of the invalidation log are pruned after this long (the leader's upkeep). */
export const LOG_MAX_AGE_MS = 86_400_000;
/** A state row against WAGGLE_QUERY_CACHE_MAX_VALUES, in list values (its keys and numbers take about as much memory). */
const ROW_COST = 8;
/** Log entries read again behind the newest seen: a PostgreSQL sequence can commit out of order. */
const LOG_OVERLAP = 64;

export interface CacheStats {
  entries: number;
  buckets: number;
  bytes: number;
  hits: number;
  misses: number;
  uncached: number;
  invalidated: number;
  evicted: number;
}

export class BucketCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private readonly counts = { hits: 0, misses: 0, uncached: 0, invalidated: 0, evicted: 0 };
  /** Bumped at each invalidation of a dataset: states read before it are not kept. */
  private readonly generations = new Map<string, number>();
  private allGeneration = 0;
  private readonly uncachedUntil = new Map<string, number>();
  private logSeq = 0;
  private lastSync = -Infinity;
  private readonly applied = new Set<number>();

  constructor(private readonly opts: BucketCacheOptions) {}

  stats(): CacheStats {
    let buckets = 0;
    for (const e of this.entries.values()) buckets += e.buckets.size;
    return { entries: this.entries.size, buckets, bytes: this.bytes, ...this.counts };
  }

  /**
   * The parts of the query's answer from kept and fresh bucket states, or undefined when it
   * runs uncached (too many values to keep).
   */
  async run(events: EventStore, query: PlanInput, timeoutMs: () => number): Promise<MergedParts | undefined> {
    // States are kept per bucket of a finer grain than the query's (fineGrain): a refresh then
    // reads only the last fine buckets, not the query's whole last bucket.
    const input = { ...query, granularity: fineGrain(query) };
    const key = keyOf(input);
    const until = this.uncachedUntil.get(key);
    if (until !== undefined && until > this.opts.now()) return this.uncached();
    this.uncachedUntil.delete(key);
    await this.sync();
    const datasets = input.sources.map((s) => s.dataset.id);
    const generation = this.generationOf(datasets);
    const shape = planStates(input);
    const g = shape.bucketUs;
    const answer = planStates(query);
    const startUs = Math.trunc(input.start * 1e6);
    const endUs = Math.trunc(input.end * 1e6);
    const closedUs = (this.opts.now() - this.opts.graceSeconds * 1000) * 1000;
    const first = Math.floor(startUs / g);
    const last = Math.floor((endUs - 1) / g);
    const keeps = (b: number) => b * g >= startUs && (b + 1) * g <= endUs && (b + 1) * g <= closedUs;

    let entry = this.entries.get(key);
    if (entry) {
      // Most recently used last.
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    // Runs of buckets to read, as [first, last] bucket pairs.
    const runs: [number, number][] = [];
    for (let b = first; b <= last; b++) {
      if (keeps(b) && entry?.buckets.has(b)) continue;
      const run = runs[runs.length - 1];
      if (run && run[1] === b - 1) run[1] = b;
      else runs.push([b, b]);
    }
    while (runs.length > MAX_RANGES) {
      // Join the two runs with the smallest gap between them.
      let best = 0;
      for (let i = 1; i < runs.length - 1; i++) if (runs[i + 1][0] - runs[i][1] < runs[best + 1][0] - runs[best][1]) best = i;
      runs.splice(best, 2, [runs[best][0], runs[best + 1][1]]);
    }
    const fresh = new Set<number>();
    for (const [a, z] of runs) for (let b = a; b <= z; b++) fresh.add(b);
    // What the answer holds against maxValues: a state row counts ROW_COST, each list value one.
    let held = 0;
    const rows: StateRow[] = [];
    for (let b = first; b <= last; b++) if (!fresh.has(b)) for (const r of entry!.buckets.get(b)!) rows.push(r);
    for (const r of rows) held += ROW_COST + stateRowValues(r);
    this.counts.hits += last - first + 1 - fresh.size;
    this.counts.misses += fresh.size;

    const freshRows: StateRow[] = [];
    if (runs.length > 0) {
      const ranges = runs.map(([a, z]) => ({ start: Math.max(startUs, a * g) / 1e6, end: Math.min(endUs, (z + 1) * g) / 1e6 }));
      const listed = shape.states.some((s) => s.kind === 'distinct' || s.kind === 'values' || s.kind === 'rates' || s.kind === 'spans');
      if (listed && (await this.countEvents(events, input, ranges, timeoutMs())) + held > this.opts.maxValues) return this.tooLarge(key);
      // (At most one row past the budget is read: many groups × buckets run uncached, the engine ranks them.)
      const budget = Math.floor((this.opts.maxValues - held) / ROW_COST);
      const p = planStates({ ...input, ranges }, budget + 1);
      const raws = budget < 0 ? [] : await events.analyse(p.sql, p.params, timeoutMs());
      if (budget < 0 || raws.length > budget) return this.tooLarge(key);
      for (const raw of raws) freshRows.push(stateRow(shape, raw));
    }
    if (!worthKeeping(rows, freshRows)) {
      this.drop(key);
      return this.tooLarge(key);
    }
    // (What another node changed while the states were read is in the log by now.)
    if (freshRows.length > 0 || fresh.size > 0) await this.sync();
    this.keep(key, datasets, g, generation, [...fresh].filter(keeps), freshRows);
    return mergeStates(answer, coarsen(answer, [...rows, ...freshRows], g));
  }

  /** Events in the ranges that pass the filters: each is at most one value of each list state. */
  private async countEvents(events: EventStore, input: PlanInput, ranges: { start: number; end: number }[], timeoutMs: number): Promise<number> {
    const p = plan({ ...input, ranges, weighted: false, weightedPercentiles: false, spec: { ...input.spec, calculations: [{ op: 'COUNT' }], breakdowns: [], havings: [], orders: [] } }, 'totals');
    const [row] = await events.analyse(p.sql, p.params, timeoutMs);
    return Number(row?.a0 ?? 0);
  }

  /** Runs the query uncached, now and for TOO_LARGE_MS. */
  private tooLarge(key: string): undefined {
    if (this.uncachedUntil.size >= 10_000) for (const [k, t] of this.uncachedUntil) if (t <= this.opts.now()) this.uncachedUntil.delete(k);
    this.uncachedUntil.set(key, this.opts.now() + TOO_LARGE_MS);
    return this.uncached();
  }

  private uncached(): undefined {
    this.counts.uncached++;
    return undefined;
  }

  /** Keeps the closed buckets just read, unless their datasets changed meanwhile. */
  private keep(key: string, datasets: string[], bucketUs: number, generation: number, buckets: number[], rows: StateRow[]): void {
    if (buckets.length === 0 || this.generationOf(datasets) !== generation) return;
    let entry = this.entries.get(key);
    if (!entry) this.entries.set(key, (entry = { datasets, bucketUs, buckets: new Map(), bytes: 0 }));
    const byBucket = new Map<number, StateRow[]>(buckets.map((b) => [b, []]));
    for (const r of rows) byBucket.get(r.b)?.push(r);
    for (const [b, rs] of byBucket) {
      if (entry.buckets.has(b)) continue;
      const size = 48 + rs.reduce((s, r) => s + stateRowBytes(r), 0);
      entry.buckets.set(b, rs);
      entry.bytes += size;
      this.bytes += size;
    }
    if (entry.bytes > this.opts.maxBytes) this.drop(key);
    while (this.bytes > this.opts.maxBytes && this.entries.size > 0) {
      this.drop(this.entries.keys().next().value!);
      this.counts.evicted++;
    }
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.bytes -= e.bytes;
    this.entries.delete(key);
  }

  /** Drops everything kept. */
  private clear(): void {
    this.entries.clear();
    this.bytes = 0;
    this.allGeneration++;
  }

  private generationOf(datasets: string[]): number {
    let n = this.allGeneration;
    for (const d of datasets) n += this.generations.get(d) ?? 0;
    return n;
  }

  /**
   * Drops the kept buckets of `datasetId` (ALL_DATASETS: every dataset) that overlap
   * [fromUs, toUs], here; states being read meanwhile are not kept.
   */
  invalidate(datasetId: string, fromUs: number, toUs: number): void {
    if (datasetId === ALL_DATASETS) this.allGeneration++;
    else this.generations.set(datasetId, (this.generations.get(datasetId) ?? 0) + 1);
    for (const [key, e] of this.entries) {
      if (datasetId !== ALL_DATASETS && !e.datasets.includes(datasetId)) continue;
      // (The buckets of the range one by one when it is shorter than the kept list: a late batch spans seconds.)
      const lo = Math.floor(fromUs / e.bucketUs);
      const hi = Math.floor(toUs / e.bucketUs);
      const hits = hi - lo + 1 < e.buckets.size ? Array.from({ length: hi - lo + 1 }, (_, i) => lo + i) : [...e.buckets.keys()].filter((b) => b >= lo && b <= hi);
      for (const b of hits) {
        const rs = e.buckets.get(b);
        if (!rs) continue;
        e.buckets.delete(b);
        const size = 48 + rs.reduce((s, r) => s + stateRowBytes(r), 0);
        e.bytes -= size;
        this.bytes -= size;
        this.counts.invalidated++;
      }
      if (e.buckets.size === 0) this.drop(key);
    }
  }

  /** invalidate(), and the same on every other node (through the log) before it returns. */
  async changed(datasetId: string, fromUs: number, toUs: number): Promise<void> {
    this.invalidate(datasetId, fromUs, toUs);
    await this.opts.log?.appendCacheInvalidation(datasetId, fromUs, toUs);
  }

  /** Events before this time (µs) can fall in a kept bucket: ingest tells changed() of those. */
  lateBefore(): number {
    return (this.opts.now() - this.opts.graceSeconds * 1000) * 1000;
  }

  /** Applies the other nodes' invalidations from the log. */
  private async sync(): Promise<void> {
    if (!this.opts.log) return;
    // A node that has not read the log for long may have missed pruned entries: it keeps nothing.
    const now = this.opts.now();
    if (now - this.lastSync > LOG_MAX_AGE_MS / 2) this.clear();
    this.lastSync = now;
    const entries = await this.opts.log.cacheInvalidationsSince(Math.max(0, this.logSeq - LOG_OVERLAP));
    for (const e of entries) {
      if (this.applied.has(e.seq)) continue;
      this.applied.add(e.seq);
      this.invalidate(e.datasetId, e.fromUs, e.toUs);
      this.logSeq = Math.max(this.logSeq, e.seq);
    }
    if (this.applied.size > 4 * LOG_OVERLAP) for (const s of this.applied) if (s <= this.logSeq - LOG_OVERLAP) this.applied.delete(s);
  }
}

/** State rows of a window below which keeping them always pays (merging them takes milliseconds). */
const SMALL_STATES = 10_000;
/** Events a state row must stand for, at least, past SMALL_STATES: merging a row costs about what the engine's scan of 30–50 events does. */
const EVENTS_PER_ROW = 32;

/**
 * Whether a window's states are worth merging rather than the engine's scan: a breakdown of many
 * groups over fine buckets of few events each (a 1-hour window of 2-second buckets, 100 groups,
 * 300,000 events) has nearly a row per event, and merging them costs several times the scan.
 */
function worthKeeping(kept: readonly StateRow[], fresh: readonly StateRow[]): boolean {
  const n = kept.length + fresh.length;
  if (n <= SMALL_STATES) return true;
  let events = 0;
  for (const r of kept) events += r.rows;
  for (const r of fresh) events += r.rows;
  return events >= n * EVENTS_PER_ROW;
}

/** Most fine buckets in a window (fineGrain). */
const MAX_FINE_BUCKETS = 2016;
/** Bucket widths (seconds) a fine grain is chosen from. */
const FINE_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];

/** The grain states are kept at: the smallest step dividing the query's bucket width that gives at most MAX_FINE_BUCKETS in its window. */
export function fineGrain(input: PlanInput): number {
  const span = Math.max(1, input.end - input.start);
  const g = input.granularity;
  return FINE_STEPS.find((d) => d <= g && Number.isInteger(g / d) && span / d <= MAX_FINE_BUCKETS) ?? g;
}

/** A query's identity: its states statement without the window, and its bucket width. */
function keyOf(input: PlanInput): string {
  const p = planStates({ ...input, start: 0, end: 0, ranges: undefined });
  const params = JSON.stringify(p.params, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));
  return createHash('sha256').update(p.sql).update('\0').update(params).update('\0').update(String(p.bucketUs)).digest('hex');
}
