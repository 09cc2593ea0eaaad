// Group commit: requests hand their normalised events (as columns: stores/events/columns.ts) to
// write() and wait. One drain loop takes everything queued and places each request's events: all
// at once when every column of the request exists with a type that holds its values, else event
// by event, resolving columns with the column registry (column-registry.ts: new fields become
// columns; a column whose values no longer fit its type is widened). It appends all datasets'
// events in ONE event-store transaction. Only after that commit do the requests get their
// answers: an acknowledged event is durable; a failed commit fails every request of the group
// (the event store's EventStoreUnavailable: ingest answers a retryable 503), and nothing was
// stored. While a commit runs (on a DuckDB thread), new requests queue up and share the next one,
// which is staged meanwhile (placed and written into its own transaction on the other append
// connection) and commits right after it: the JavaScript thread stages one group while DuckDB
// commits another.
import { performance } from 'node:perf_hooks';
import { datasetNotFound } from '../errors.js';
import type { Column, ConfigStore, Dataset } from '../stores/config/types.js';
import type { EventStore } from '../stores/events/types.js';
import { columnsOf, rowsOf, type EventColumns } from '../stores/events/columns.js';
import { isColumn } from '../stores/events/placement.js';
import type { NormalisedEvent } from './normalise.js';
import { columnsFit, fitsKnownColumns, type Registry } from './column-types.js';
import type { ColumnRegistry, Plan } from './column-registry.js';

/** Groups staged and not yet committed, at most: one committing, one staged meanwhile (the event store has an append connection for each). */
const MAX_COMMITTING = 2;

/** How one request of a group commit ended: per-event results, or an error for the whole request. */
type Outcome = { ok: true; results: (string | null)[] } | { ok: false; error: unknown };

/** Each request's events ready to store: all of them, or (where columns had to change first) those placed one by one, by position (a refused or failed event leaves a hole). */
type Placed = EventColumns | (NormalisedEvent | undefined)[] | undefined;

interface Pending {
  dataset: Dataset;
  /** Let go of once the group is staged. */
  events?: EventColumns;
  resolve(results: (string | null)[]): void;
  reject(err: unknown): void;
}

export interface CommitOptions {
  now: () => Date;
  /** Told of every group commit that succeeded (metrics, slow-commit log): its events and seconds from staging to durable. */
  onCommit?: (events: number, seconds: number) => void;
  /** Told of every request's per-event results once they are answered (metrics). */
  onWritten?: (results: readonly (string | null)[]) => void;
  /**
   * Shown each request's stored events while its group is staged (before they are let go); the
   * function it returns, if any, runs once the group committed (deploy markers); the writer's
   * close waits for what it returns.
   */
  afterCommit?: (dataset: Dataset, events: EventColumns) => (() => Promise<void>) | undefined;
  /**
   * Late events (src/query/bucket-cache.ts): events before `lateBefore()` (µs) may fall in kept
   * query states; `onLate` is told of each dataset's earliest and latest such time once the group
   * committed, and its requests are answered after it returns (so a query after the answer never
   * reads a stale bucket).
   */
  late?: { lateBefore(): number; onLate(datasetId: string, fromUs: number, toUs: number): Promise<void> };
}

export class GroupCommit {
  private queue: Pending[] = [];
  private draining?: Promise<void>;
  /** Groups staged and committing; each settles once its requests have their answers. */
  private readonly committing = new Set<Promise<void>>();
  /** Datasets and field names written since the last bookkeeping flush (last_written). */
  private touched = new Map<string, { dataset: Dataset; names: Set<string> }>();
  /** Ids of datasets deleted while this writer runs: writes still queued for them are refused. */
  private readonly dropped = new Set<string>();
  /** Work begun after commits (afterCommit) and not yet done. */
  private readonly following = new Set<Promise<void>>();
  /** Events handed to write() and not yet answered (queued, staged or committing). */
  private waiting = 0;

  constructor(
    private readonly columns: ColumnRegistry,
    private readonly config: ConfigStore,
    private readonly events: EventStore,
    private readonly opts: CommitOptions,
    /** Told, once a group committed, how often each attribute field of a dataset came (attribute-promotion.ts). */
    private readonly noteAttributes: (dataset: Dataset, events: number, present: ReadonlyMap<string, number>) => void,
  ) {}

  /** Stores the events durably; resolves per event (row) to null (stored) or the reason it was refused. */
  write(dataset: Dataset, events: EventColumns): Promise<(string | null)[]> {
    if (events.count === 0) return Promise.resolve([]);
    // After close() only a request whose client went away can still get here (the HTTP server
    // closed first, waiting for the others): it must not reach a closing event store.
    if (this.columns.closed) return Promise.reject(new Error('the ingest writer is closed'));
    const n = events.count;
    this.waiting += n;
    const done = () => (this.waiting -= n);
    const written = new Promise<(string | null)[]>((resolve, reject) => {
      this.queue.push({ dataset, events, resolve, reject });
      this.draining ??= this.drain();
    }).finally(done);
    const onWritten = this.opts.onWritten;
    return onWritten ? written.then((results) => (onWritten(results), results)) : written;
  }

  /** Events written and not yet answered. */
  get backlog(): number {
    return this.waiting;
  }

  /** A dataset was deleted (under the registry's lock): writes still queued for it are refused, its bookkeeping dropped. */
  datasetDropped(datasetId: string): void {
    this.dropped.add(datasetId);
    this.touched.delete(datasetId);
  }

  /**
   * Commits groups until the queue is empty. `draining` is cleared in the same synchronous step
   * that finds the queue empty: a write() arriving after that starts a new drain. (Clearing it
   * in a later callback would strand a write made in between, e.g. one awaited right after the
   * previous write resolved, until some other write came along.)
   */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        // One group commits while the next is staged; a third waits (and grows) meanwhile.
        while (this.committing.size >= MAX_COMMITTING) await Promise.race(this.committing);
        const group = this.queue.splice(0);
        const started = performance.now();
        let events = 0;
        for (const p of group) events += p.events!.count;
        try {
          const { outcomes, committed } = await this.columns.exclusive(() => this.commit(group));
          if (this.opts.onCommit) void committed.then(() => this.opts.onCommit!(events, (performance.now() - started) / 1000), () => undefined);
          const answered = committed.then(
            () =>
              group.forEach((p, i) => {
                const o = outcomes[i];
                if (o.ok) p.resolve(o.results);
                else p.reject(o.error);
              }),
            (err: unknown) => {
              for (const p of group) p.reject(err);
            },
          );
          this.committing.add(answered);
          void answered.finally(() => this.committing.delete(answered));
        } catch (err) {
          for (const p of group) p.reject(err);
        }
      }
    } finally {
      this.draining = undefined;
    }
  }

  /**
   * Places every request's events, then appends all of them in one transaction. Events whose
   * fields all have columns of a fitting type are placed at once; the others wait while the
   * columns they need are planned (in event order, so the column cap refuses the same events
   * as placing them one at a time would) and then made, all of a dataset's in one event-store
   * transaction. A request whose events cannot be placed (its dataset was deleted meanwhile, a
   * config-store error) fails alone; the others still commit. A failed append fails the whole
   * group: nothing was stored. Resolves once the events are staged; `committed` once they are
   * durable.
   */
  private async commit(group: Pending[]): Promise<{ outcomes: Outcome[]; committed: Promise<void> }> {
    const outcomes: Outcome[] = [];
    const placed: Placed[] = [];
    /** Each request's column registry: what its placed events' field names resolve against. */
    const registries: (Registry | undefined)[] = [];
    const plans = new Map<string, Plan>();
    for (let ri = 0; ri < group.length; ri++) {
      const { dataset } = group[ri];
      const events = group[ri].events!;
      const results = new Array<string | null>(events.count).fill(null);
      placed.push(undefined);
      try {
        // A write that looked its dataset up before a concurrent delete: the dataset is gone.
        if (this.dropped.has(dataset.id)) throw datasetNotFound();
        const reg = await this.columns.registry(dataset);
        registries[ri] = reg;
        if (columnsFit(reg, events)) placed[ri] = events;
        else {
          const rows = rowsOf(events);
          const ready = new Array<NormalisedEvent | undefined>(rows.length);
          placed[ri] = ready;
          for (let ei = 0; ei < rows.length; ei++) {
            const e = rows[ei];
            if (fitsKnownColumns(reg, e)) ready[ei] = e;
            else {
              let plan = plans.get(dataset.id);
              if (!plan) plans.set(dataset.id, (plan = { dataset, reg, add: new Map(), widen: new Map(), seen: new Map(), waiting: [] }));
              const refused = this.columns.plan(plan, e);
              if (refused) results[ei] = refused;
              else plan.waiting.push({ request: ri, index: ei, event: e });
            }
          }
        }
        outcomes.push({ ok: true, results });
      } catch (error) {
        outcomes.push({ ok: false, error });
      }
    }
    for (const plan of plans.values()) {
      try {
        await this.columns.underColumnsLease(plan.dataset.id, async () => {
          if (this.columns.shared) {
            // Planned again against the registry as other nodes left it.
            const { fit, refused } = await this.columns.replan(plan);
            for (const w of fit) (placed[w.request] as (NormalisedEvent | undefined)[])[w.index] = w.event;
            for (const { waiting: w, reason } of refused) {
              const o = outcomes[w.request];
              if (o.ok) o.results[w.index] = reason;
            }
          }
          await this.columns.applyPlan(plan);
        });
        for (const w of plan.waiting) (placed[w.request] as (NormalisedEvent | undefined)[])[w.index] = w.event;
      } catch (error) {
        for (const w of plan.waiting) outcomes[w.request] = { ok: false, error };
        await this.columns.repair(plan.dataset, error);
      }
    }
    const batches = new Map<string, { datasetId: string; parts: EventColumns[]; columns: Registry['byName']; resolved: (Column | undefined)[][] }>();
    // Each request's fields' columns, looked up once (the commit's bookkeeping and the event
    // store use them) now that every plan of the group is applied.
    const resolved: (Column | undefined)[][] = [];
    group.forEach(({ dataset, events: all }, ri) => {
      const reg = registries[ri];
      const events = placed[ri];
      if (!outcomes[ri].ok || !reg || !events) return;
      let batch = batches.get(dataset.id);
      if (!batch) batches.set(dataset.id, (batch = { datasetId: dataset.id, parts: [], columns: reg.byName, resolved: [] }));
      const part = Array.isArray(events) ? columnsOf(events.filter((e) => e !== undefined)) : events;
      const columns = part.fields.map((f) => reg.byName.get(f.name));
      if (part === all) resolved[ri] = columns;
      if (part.count === 0) return;
      batch.parts.push(part);
      batch.resolved.push(columns);
    });
    // The field names written, gathered now so that nothing holds the events once they are
    // staged (they are garbage from then on, not kept until the commit ends), and recorded
    // (last_written) once the commit succeeds.
    const written = new Map<string, { dataset: Dataset; names: Set<string>; events: number; attributes: Map<string, number>; buckets: number; late?: [number, number] }>();
    const lateBefore = this.opts.late?.lateBefore();
    group.forEach(({ dataset, events }, i) => {
      if (!outcomes[i].ok) return;
      let t = written.get(dataset.id);
      if (!t) written.set(dataset.id, (t = { dataset, names: new Set<string>(), events: 0, attributes: new Map(), buckets: 0 }));
      t.events += events!.count;
      if (lateBefore !== undefined) t.late = lateSpan(events!, lateBefore, t.late);
      t.buckets = Math.max(t.buckets, registries[i]?.buckets ?? 0);
      const fields = events!.fields;
      for (let fi = 0; fi < fields.length; fi++) {
        const f = fields[fi];
        t.names.add(f.name);
        // How many of the events have each attribute field (promotion looks for the frequent ones).
        const physical = (resolved[i] ? resolved[i][fi] : registries[i]?.byName.get(f.name))?.physical;
        if (physical !== undefined && !isColumn(physical)) t.attributes.set(f.name, (t.attributes.get(f.name) ?? 0) + f.present);
      }
    });
    const after: (() => Promise<void>)[] = [];
    if (this.opts.afterCommit) {
      group.forEach(({ dataset, events }, i) => {
        const then = outcomes[i].ok && events ? this.opts.afterCommit!(dataset, events) : undefined;
        if (then) after.push(then);
      });
    }
    for (const p of group) p.events = undefined;
    const nowDate = this.opts.now();
    const { committed } = await this.events.stage([...batches.values()].filter((b) => b.parts.length > 0), nowDate.getTime() * 1000);
    // (Closures of this function share its variables: let go of the staged events here too.)
    placed.length = 0;
    resolved.length = 0;
    batches.clear();
    const touched = committed.then(async () => {
      const late = this.opts.late;
      if (late) {
        for (const [id, w] of written) {
          // (The events are durable: a failure here is logged by the hook, not answered.)
          if (w.late) await late.onLate(id, w.late[0], w.late[1]);
        }
      }
      for (const [id, w] of written) {
        const t = this.touched.get(id);
        if (!t) this.touched.set(id, { dataset: w.dataset, names: w.names });
        else for (const k of w.names) t.names.add(k);
        if (w.buckets > 0) this.noteAttributes(w.dataset, w.events, w.attributes);
      }
      for (const then of after) {
        const p = then().finally(() => this.following.delete(p));
        this.following.add(p);
      }
    });
    return { outcomes, committed: touched };
  }

  /** Writes `last_written` / `last_written_at` for what was ingested since the last call. */
  async flushBookkeeping(): Promise<void> {
    const touched = this.touched;
    this.touched = new Map();
    const at = this.opts.now().toISOString();
    for (const { dataset, names } of touched.values()) {
      await this.config.touchColumns(dataset.id, at, [...names]);
      await this.config.updateDataset(dataset.environmentId, dataset.slug, { lastWrittenAt: at });
    }
  }

  /** Waits for the queued writes to be committed and answered. */
  async settle(): Promise<void> {
    while (this.draining) await this.draining;
    await Promise.all(this.committing);
    await Promise.all(this.following);
  }
}

/** The earliest and latest late event time of `events`, joined with `span` so far. */
function lateSpan(events: EventColumns, before: number, span: [number, number] | undefined): [number, number] | undefined {
  let out = span;
  for (let r = 0; r < events.count; r++) {
    const t = events.timeUs[r];
    if (t >= before) continue;
    out = out ? [Math.min(out[0], t), Math.max(out[1], t)] : [t, t];
  }
  return out;
}
