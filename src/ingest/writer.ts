// The ingest writer: group commit and the column registry.
//
// Requests hand their normalised events (as columns: stores/events/columns.ts) to write() and
// wait. One drain loop takes everything queued and places each request's events: all at once
// when every column of the request exists with a type that holds its values, else event by
// event, resolving columns (new fields become columns; a column whose values no longer fit its
// type is widened: integer → float → string, and any other mix → string, so no value is ever
// lost). It appends all datasets' events in ONE event-store transaction. Only after that
// commit do the requests get their answers: an acknowledged event is durable. While a commit
// runs (on a DuckDB thread), new requests queue up and share the next one, which is staged
// meanwhile (placed and written into its own transaction on the other append connection) and
// commits right after it: the JavaScript thread stages one group while DuckDB commits another.
//
// Every change of a dataset's columns (ingest, the Columns API, dataset deletion) runs under
// one lock, so the registry, the config store and the event-store table stay in step.
//
// The two stores cannot change in one transaction, so the order of their writes is chosen so
// that what a failure (or a kill -9) between them leaves is harmless, and reconciling repairs
// it, the event store being the truth for which columns are stored and how:
// - adding or widening a column: the event store first, then the config store. Left behind: a
//   table column no column is registered for (no query can name it), or a registered type
//   narrower than the stored one (queries read every column through a cast to its API type,
//   query/fields.ts, so a stale type gives no error);
// - deleting a column: the config store first, then the event store. Left behind: an
//   unregistered table column.
// Reconciling (reconcile()) runs for every dataset when the app starts, right after any failed
// column change, and when a dataset is first written to; it logs what it repaired.
//
// Several nodes on one store (`shared`, docs/several-nodes.md): the in-process lock above is not
// enough, so every column change also holds a lease on the dataset's columns (`columns:<id>`),
// taken before the change is planned against a registry reloaded under it (what other nodes
// added since); a node's cached registry is reloaded after REGISTRY_TTL_MS. Reconciling then never
// drops a table column nobody registered (another node may be between its two writes) and, where
// the table's type is narrower than the registered one, widens the table (each node may have its
// own event store), so types only ever widen, whichever node looks.
//
// Over 500 lines: the group commit and the column registry it resolves columns with share one lock
// and one drain loop; moving the registry to a module of its own is still to do (issue 36).
import { performance } from 'node:perf_hooks';
import { shortId } from '../domain/ids.js';
import { withLease } from '../cluster/leadership.js';
import { datasetNotFound } from '../errors.js';
import { allDatasets } from '../domain/datasets.js';
import { UniqueViolation, type Column, type ColumnType, type ConfigStore, type Dataset } from '../stores/config/types.js';
import type { AppendBatch, EventStore, PhysicalColumn, Scalar } from '../stores/events/types.js';
import { Value, bit, columnsOf, kindOf, rowsOf, type EventColumns } from '../stores/events/columns.js';
import type { NormalisedEvent } from './normalise.js';
import { attributePlacement, columnPlacement, isColumn, movingPlacement, parsePlacement, placementNumbers } from '../stores/events/placement.js';
import { AttributeDensity, newFieldColumns, placeFields, placementState, type PlacementState } from './field-placement.js';

export const DATASET_TOO_MANY_COLUMNS = 'Dataset has too many columns.';

/** How long a node sharing the store trusts its cached column registry (ms). */
const REGISTRY_TTL_MS = 5000;

/** Groups staged and not yet committed, at most: one committing, one staged meanwhile (the event store has an append connection for each). */
const MAX_COMMITTING = 2;

const TYPE_OF_KIND: Record<number, ColumnType> = {
  [Value.String]: 'string',
  [Value.Integer]: 'integer',
  [Value.Float]: 'float',
  [Value.Boolean]: 'boolean',
};

export function inferType(v: Scalar): ColumnType {
  return TYPE_OF_KIND[kindOf(v)];
}

/** The kinds of value (columns.ts masks) a column of each stored type holds as they are. */
const HOLDS: Record<ColumnType, number> = {
  string: bit(Value.String) | bit(Value.Integer) | bit(Value.Float) | bit(Value.Boolean),
  float: bit(Value.Integer) | bit(Value.Float),
  integer: bit(Value.Integer),
  boolean: bit(Value.Boolean),
};

/**
 * The fast path of placing a request's events: every field already has a column whose type
 * holds all of the request's values, so they are stored as they are, checked once per column.
 */
function columnsFit(reg: Registry, cols: EventColumns): boolean {
  for (const f of cols.fields) {
    const col = reg.byName.get(f.name);
    if (col === undefined || (f.mask & ~HOLDS[col.storedType]) !== 0) return false;
  }
  return true;
}

export function widen(a: ColumnType, b: ColumnType): ColumnType {
  if (a === b) return a;
  if ((a === 'integer' && b === 'float') || (a === 'float' && b === 'integer')) return 'float';
  return 'string';
}

interface Registry {
  byName: Map<string, Column>;
  /** How many fields have columns, how full each attribute bucket is, the next free field number (field-placement.ts). */
  placement: PlacementState;
  /** The table's attribute buckets (0: none yet; the first attribute brings the event store's number of them). */
  buckets: number;
  /** performance.now() when loaded. */
  loadedAt: number;
}

/** The same for one event, on the path where a request's columns did not all fit. */
function fitsKnownColumns(reg: Registry, e: NormalisedEvent): boolean {
  for (const [k, v] of e.fields) {
    const col = reg.byName.get(k);
    if (col === undefined || (bit(kindOf(v)) & ~HOLDS[col.storedType]) !== 0) return false;
  }
  return true;
}

/**
 * The column changes one group commit needs for one dataset, planned in event order before any
 * of them is made, so that they all go to the event store in one transaction.
 */
interface Plan {
  dataset: Dataset;
  reg: Registry;
  /** New columns by field name, with the type that holds all of the group's values. */
  add: Map<string, ColumnType>;
  /** Existing columns to widen, by field name, to the type that holds all of the group's values. */
  widen: Map<string, ColumnType>;
  /** How many of the waiting events have each new field (the densest get the free columns). */
  seen: Map<string, number>;
  /** Events that wait for the changes: which request of the group, which event of the request. */
  waiting: { request: number; index: number; event: NormalisedEvent }[];
}

/** How one request of a group commit ended: per-event results, or an error for the whole request. */
type Outcome = { ok: true; results: (string | null)[] } | { ok: false; error: unknown };

interface Pending {
  dataset: Dataset;
  /** Let go of once the group is staged. */
  events?: EventColumns;
  resolve(results: (string | null)[]): void;
  reject(err: unknown): void;
}

/** A promise chain used as a mutex. */
class Lock {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

/** Where the writer reports repairs of the column registry (the app's logger). */
export interface WriterLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface WriterOptions {
  maxColumnsPerDataset: number;
  /** Field columns a dataset's table may have (the rest of its fields are attributes); default: the event store's budget. */
  hotColumns?: number;
  now: () => Date;
  log?: WriterLog;
  /** Told of every group commit that succeeded (metrics, slow-commit log): its events and seconds from staging to durable. */
  onCommit?: (events: number, seconds: number) => void;
  /** Told of every request's per-event results once they are answered (metrics). */
  onWritten?: (results: readonly (string | null)[]) => void;
  /** Other nodes write to the same stores: column changes take a lease (cluster/leadership.ts). */
  shared?: { claim(name: string, ttlMs: number): Promise<boolean>; release(name: string): Promise<void> };
}

/** The refusal of an event whose new field name is not well-formed Unicode (a path that skipped normalise.ts's wellFormed). */
export const ILL_FORMED_NAME = 'field name is not well-formed Unicode';

export class IngestWriter {
  private queue: Pending[] = [];
  private draining?: Promise<void>;
  /** Groups staged and committing; each settles once its requests have their answers. */
  private readonly committing = new Set<Promise<void>>();
  private readonly lock = new Lock();
  /** Datasets whose tables reconcileAll found past their budget, rewritten right after it (fitAll). */
  private readonly fitLater: Dataset[] = [];
  private readonly registries = new Map<string, Registry>();
  /** Attribute fields' densities as first seen (`<dataset id>:<placement>`), for balancing the buckets. */
  private readonly densities = new Map<string, number>();
  /** How often each dataset's attribute fields come in recent events (which to promote to a column). */
  private readonly attributeDensity = new Map<string, AttributeDensity>();
  /** Datasets with a promotion being planned, and columns (by id) whose values are being moved. */
  private readonly promoting = new Set<string>();
  /** Promotions under way (close() waits for them: each stops at its next slice). */
  private readonly promotions = new Set<Promise<void>>();
  /** Datasets and field names written since the last bookkeeping flush (last_written). */
  private touched = new Map<string, { dataset: Dataset; names: Set<string> }>();
  /** Ids of datasets deleted while this writer runs: writes still queued for them are refused. */
  private readonly dropped = new Set<string>();
  private closed = false;
  /** Events handed to write() and not yet answered (queued, staged or committing). */
  private waiting = 0;

  constructor(
    private readonly config: ConfigStore,
    private readonly events: EventStore,
    private readonly opts: WriterOptions,
  ) {}

  /** Stores the events durably; resolves per event (row) to null (stored) or the reason it was refused. */
  write(dataset: Dataset, events: EventColumns): Promise<(string | null)[]> {
    if (events.count === 0) return Promise.resolve([]);
    // After close() only a request whose client went away can still get here (the HTTP server
    // closed first, waiting for the others): it must not reach a closing event store.
    if (this.closed) return Promise.reject(new Error('the ingest writer is closed'));
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

  /**
   * Events written and not yet answered: how far the event store is behind. OTLP answers
   * "try again later" (503) past a limit, so that memory stays bounded under overload.
   */
  get backlog(): number {
    return this.waiting;
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
          const { outcomes, committed } = await this.lock.run(() => this.commit(group));
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
    /**
     * Each request's events ready to store: all of them, or (where columns had to change first)
     * those placed one by one, by position (a refused or failed event leaves a hole).
     */
    const placed: (EventColumns | (NormalisedEvent | undefined)[] | undefined)[] = [];
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
        const reg = await this.registry(dataset);
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
              const refused = this.plan(plan, e);
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
        await this.underColumnsLease(plan.dataset.id, async () => {
          if (this.opts.shared) await this.replan(plan, outcomes, placed);
          await this.applyPlan(plan);
        });
        for (const w of plan.waiting) (placed[w.request] as (NormalisedEvent | undefined)[])[w.index] = w.event;
      } catch (error) {
        for (const w of plan.waiting) outcomes[w.request] = { ok: false, error };
        await this.repair(plan.dataset, error);
      }
    }
    const batches = new Map<string, AppendBatch>();
    group.forEach(({ dataset }, ri) => {
      const reg = registries[ri];
      const events = placed[ri];
      if (!outcomes[ri].ok || !reg || !events) return;
      let batch = batches.get(dataset.id);
      if (!batch) batches.set(dataset.id, (batch = { datasetId: dataset.id, parts: [], columns: reg.byName }));
      const part = Array.isArray(events) ? columnsOf(events.filter((e) => e !== undefined)) : events;
      if (part.count > 0) batch.parts.push(part);
    });
    // The field names written, gathered now so that nothing holds the events once they are
    // staged (they are garbage from then on, not kept until the commit ends), and recorded
    // (last_written) once the commit succeeds.
    const written = new Map<string, { dataset: Dataset; names: Set<string>; events: number; attributes: Map<string, number>; buckets: number }>();
    group.forEach(({ dataset, events }, i) => {
      if (!outcomes[i].ok) return;
      let t = written.get(dataset.id);
      if (!t) written.set(dataset.id, (t = { dataset, names: new Set<string>(), events: 0, attributes: new Map(), buckets: 0 }));
      t.events += events!.count;
      t.buckets = Math.max(t.buckets, registries[i]?.buckets ?? 0);
      for (const f of events!.fields) {
        t.names.add(f.name);
        // How many of the events have each attribute field (promotion looks for the frequent ones).
        const physical = registries[i]?.byName.get(f.name)?.physical;
        if (physical !== undefined && !isColumn(physical)) t.attributes.set(f.name, (t.attributes.get(f.name) ?? 0) + f.present);
      }
    });
    for (const p of group) p.events = undefined;
    const nowDate = this.opts.now();
    const { committed } = await this.events.stage([...batches.values()].filter((b) => b.parts.length > 0), nowDate.getTime() * 1000);
    // (Closures of this function share its variables: let go of the staged events here too.)
    placed.length = 0;
    batches.clear();
    const touched = committed.then(() => {
      for (const [id, w] of written) {
        const t = this.touched.get(id);
        if (!t) this.touched.set(id, { dataset: w.dataset, names: w.names });
        else for (const k of w.names) t.names.add(k);
        if (w.buckets > 0) this.notePromotion(w.dataset, w.events, w.attributes);
      }
    });
    return { outcomes, committed: touched };
  }

  /**
   * Plans the columns one event needs, on top of what the plan holds already; returns why the
   * event is refused, if it is: its new fields would take the dataset past the column cap.
   */
  private plan(plan: Plan, e: NormalisedEvent): string | undefined {
    const { reg, add, widen: widening } = plan;
    let fresh = 0;
    for (const k of e.fields.keys()) {
      if (reg.byName.has(k) || add.has(k)) continue;
      // No column may get a name the config store cannot keep as it is.
      if (!k.isWellFormed()) return ILL_FORMED_NAME;
      fresh++;
    }
    if (fresh > 0 && reg.byName.size + add.size + fresh > this.opts.maxColumnsPerDataset) return DATASET_TOO_MANY_COLUMNS;
    for (const [k, v] of e.fields) {
      const type = inferType(v);
      const col = reg.byName.get(k);
      if (col) {
        const current = widening.get(k) ?? col.storedType;
        const to = widen(current, type);
        if (to !== current) widening.set(k, to);
      } else {
        const planned = add.get(k);
        add.set(k, planned === undefined ? type : widen(planned, type));
        plan.seen.set(k, (plan.seen.get(k) ?? 0) + 1);
      }
    }
    return undefined;
  }

  /** Field columns a table may have (WriterOptions.hotColumns). */
  private get hotColumns(): number {
    return this.opts.hotColumns ?? this.events.hotColumns;
  }

  /** Several nodes: runs a change of a dataset's columns holding its lease (alone: just runs it). */
  private underColumnsLease<T>(datasetId: string, fn: () => Promise<T>): Promise<T> {
    return this.opts.shared ? withLease(this.opts.shared, `columns:${datasetId}`, fn) : fn();
  }

  /**
   * Several nodes, under the columns lease: reloads the registry (other nodes may have added or
   * widened columns) and plans the waiting events again against it.
   */
  private async replan(plan: Plan, outcomes: Outcome[], placed: (EventColumns | (NormalisedEvent | undefined)[] | undefined)[]): Promise<void> {
    const fresh = await this.reconcile(plan.dataset, true);
    // In place: the group's placements resolve field names against this same object.
    plan.reg.byName = fresh.byName;
    plan.reg.placement = fresh.placement;
    plan.reg.buckets = fresh.buckets;
    plan.reg.loadedAt = fresh.loadedAt;
    const waiting = plan.waiting;
    plan.waiting = [];
    plan.add.clear();
    plan.widen.clear();
    plan.seen.clear();
    for (const w of waiting) {
      if (fitsKnownColumns(plan.reg, w.event)) {
        (placed[w.request] as (NormalisedEvent | undefined)[])[w.index] = w.event;
        continue;
      }
      const refused = this.plan(plan, w.event);
      const o = outcomes[w.request];
      if (refused && o.ok) o.results[w.index] = refused;
      else if (!refused) plan.waiting.push(w);
    }
  }

  /**
   * Makes a plan's columns: one event-store transaction, then the config store's entries (in
   * this order: see the head of this file). On failure the caller repairs the dataset.
   */
  private async applyPlan(plan: Plan): Promise<void> {
    const { dataset, reg } = plan;
    const events = Math.max(1, plan.waiting.length);
    const densities = new Map([...plan.add.keys()].map((k) => [k, Math.min(1, (plan.seen.get(k) ?? 0) / events)]));
    const placed = placeFields(reg.placement, this.hotColumns, this.bucketsOf(reg), densities);
    const added = [...plan.add].map(([keyName, type]) => ({ keyName, physical: placed.get(keyName)!, type }));
    const widened = [...plan.widen].map(([keyName, type]) => ({ col: reg.byName.get(keyName)!, type }));
    for (const { keyName, physical } of added) if (!isColumn(physical)) this.densities.set(`${dataset.id}:${physical}`, densities.get(keyName)!);
    await this.changeStoredColumns(dataset.id, reg, added, widened);
    await this.recordColumns(dataset, reg, added);
    for (const { col, type } of widened) await this.recordWidening(reg, col, type);
  }

  /**
   * Makes the table's side of new and widened fields in one event-store transaction: columns for
   * the fields placed in one (attributes need none, only the buckets), widened columns (an
   * attribute's text needs no change).
   */
  private async changeStoredColumns(datasetId: string, reg: Registry, added: { physical: string; type: ColumnType }[], widened: { col: Column; type: ColumnType }[]): Promise<void> {
    const buckets = reg.buckets === 0 && added.some((a) => !isColumn(a.physical)) ? this.bucketsOf(reg) : 0;
    await this.events.changeColumns(datasetId, {
      add: added.filter((a) => isColumn(a.physical)).map(({ physical, type }) => ({ physical: parsePlacement(physical).column!, type })),
      widen: widened.flatMap(({ col, type }) => {
        const column = parsePlacement(col.physical).column;
        return column ? [{ physical: column, type }] : [];
      }),
      buckets,
    });
    if (buckets > 0) reg.buckets = buckets;
  }

  /** The attribute buckets new attributes of a dataset go to: its table's, or the event store's number for a table with none yet. */
  private bucketsOf(reg: Registry): number {
    return reg.buckets > 0 ? reg.buckets : this.events.attributeBuckets;
  }

  /** Creates a column before any event has it (Columns API): the event store first, then the config store. */
  private async addColumn(
    dataset: Dataset,
    reg: Registry,
    keyName: string,
    type: ColumnType,
    extra: { description?: string; hidden?: boolean; apiType?: ColumnType },
  ): Promise<Column> {
    const physical = placeFields(reg.placement, this.hotColumns, this.bucketsOf(reg), new Map([[keyName, 0]])).get(keyName)!;
    await this.changeStoredColumns(dataset.id, reg, [{ physical, type }], []);
    try {
      return await this.recordColumn(dataset, reg, keyName, { physical, type }, extra);
    } catch (err) {
      await this.repair(dataset, err);
      throw err;
    }
  }

  /** Records in the config store (and the registry) the fields a group brought, in one transaction. */
  private async recordColumns(dataset: Dataset, reg: Registry, added: { keyName: string; physical: string; type: ColumnType }[]): Promise<void> {
    const columns = await this.config.createColumns(
      added.map(({ keyName, physical, type }) => ({ id: shortId(), datasetId: dataset.id, keyName, physical, storedType: type, type, description: '', hidden: false })),
    );
    for (const col of columns) reg.byName.set(col.keyName, col);
  }

  /** Records in the config store (and the registry) a column the event store has made. */
  private async recordColumn(
    dataset: Dataset,
    reg: Registry,
    keyName: string,
    { physical, type }: PhysicalColumn,
    extra: { description?: string; hidden?: boolean; apiType?: ColumnType } = {},
  ): Promise<Column> {
    const col = await this.config.createColumn({
      id: shortId(),
      datasetId: dataset.id,
      keyName,
      physical,
      storedType: type,
      type: extra.apiType ?? type,
      description: extra.description ?? '',
      hidden: extra.hidden ?? false,
    });
    reg.byName.set(keyName, col);
    return col;
  }

  /** Records in the registry that the event store widened a column. */
  private async recordWidening(reg: Registry, col: Column, to: ColumnType): Promise<void> {
    // The API type follows the stored type unless someone chose another type for the column.
    const patch = col.type === col.storedType ? { storedType: to, type: to } : { storedType: to };
    const updated = (await this.config.updateColumn(col.datasetId, col.id, patch)) ?? { ...col, ...patch };
    reg.byName.set(col.keyName, updated);
  }

  /** A dataset's column registry, loaded (and reconciled) on first use. */
  private async registry(dataset: Dataset): Promise<Registry> {
    const known = this.registries.get(dataset.id);
    if (known && !(this.opts.shared && performance.now() - known.loadedAt > REGISTRY_TTL_MS)) return known;
    const reg = await this.reconcile(dataset, true);
    this.registries.set(dataset.id, reg);
    return reg;
  }

  /**
   * Brings a dataset's columns in the two stores into agreement, the event store being the
   * truth for what is stored: a registered column whose type differs from the table's takes the
   * table's (its API type too, unless someone chose another); a registered column the table
   * lacks is added back, empty; a table column that no column is registered for is dropped.
   * Logs what it repaired; returns the registry. `ensureTable`: make the table if there is none
   * (else only when columns are registered).
   */
  private async reconcile(dataset: Dataset, ensureTable: boolean, fit: 'now' | 'later' = 'now'): Promise<Registry> {
    const registered = await this.config.listColumns(dataset.id);
    let shape = await this.events.shape(dataset.id);
    if (!shape && (ensureTable || registered.length > 0)) {
      await this.events.ensureTable(dataset.id);
      shape = await this.events.shape(dataset.id);
    }
    const stored = new Map((shape?.columns ?? []).map((c) => [c.physical, c.type]));
    let next = 1;
    for (const n of [...[...stored.keys()].flatMap(placementNumbers), ...registered.flatMap((c) => placementNumbers(c.physical))]) next = Math.max(next, n + 1);
    const reg: Registry = {
      byName: new Map(),
      placement: placementState(
        registered.map((c) => c.physical),
        next,
        (physical) => this.densities.get(`${dataset.id}:${physical}`),
      ),
      buckets: shape?.buckets ?? 0,
      loadedAt: performance.now(),
    };
    const repairs: string[] = [];
    const missing: PhysicalColumn[] = [];
    const widenTable: PhysicalColumn[] = [];
    // Attribute buckets the registry names and the table lacks (another node's table may have more).
    let buckets = reg.buckets;
    /** Fields being promoted when the process stopped: their moves go on (promotion, below). */
    const moving: string[] = [];
    for (let col of registered) {
      const { column, attribute } = parsePlacement(col.physical);
      if (column && attribute) moving.push(col.id);
      if (attribute && attribute.bucket >= buckets) {
        buckets = attribute.bucket + 1;
        repairs.push(`attribute bucket ${attribute.bucket} was missing from the event store (${JSON.stringify(col.keyName)} is in it): added, empty`);
      }
      if (!column) {
        reg.byName.set(col.keyName, col);
        continue;
      }
      const actual = stored.get(column);
      stored.delete(column);
      if (actual === undefined && !attribute && !this.opts.shared && reg.buckets > 0 && this.events.embedded && this.events.columnsToAttributes) {
        // What a stop between DuckDB's rewrite in fitBudget (below) and the registry's leaves: the
        // column's values are its attribute now, in the bucket of its number. (ClickHouse's
        // rewrite drops columns only once the registry names their attributes.)
        const physical = attributePlacement({ key: Number(column.slice(1)), bucket: Number(column.slice(1)) % reg.buckets });
        col = (await this.config.updateColumn(dataset.id, col.id, { physical })) ?? { ...col, physical };
        repairs.push(`column ${JSON.stringify(col.keyName)} (${column}) had become an attribute in the event store: registered as ${physical}`);
      } else if (actual === undefined) {
        missing.push({ physical: column, type: col.storedType });
        repairs.push(`column ${JSON.stringify(col.keyName)} (${col.physical}) was missing from the event store: added back, empty, as ${col.storedType}`);
      } else if (actual !== col.storedType && this.opts.shared && widen(actual, col.storedType) === col.storedType) {
        // Several nodes: another node widened it (in its own event store, or before this one
        // looked): the table follows the wider type.
        widenTable.push({ physical: column, type: col.storedType });
        repairs.push(`column ${JSON.stringify(col.keyName)} (${col.physical}) is registered as ${col.storedType}: the table widened to it`);
      } else if (actual !== col.storedType) {
        const patch = col.type === col.storedType ? { storedType: actual, type: actual } : { storedType: actual };
        col = (await this.config.updateColumn(dataset.id, col.id, patch)) ?? { ...col, ...patch };
        repairs.push(`column ${JSON.stringify(col.keyName)} (${col.physical}) is stored as ${actual}: its registered type follows`);
      }
      reg.byName.set(col.keyName, col);
    }
    await this.events.changeColumns(dataset.id, { add: missing, widen: widenTable, buckets: buckets > reg.buckets ? buckets : undefined });
    reg.buckets = buckets;
    if (shape && fit === 'now') await this.fitBudget(dataset, reg, repairs);
    else if (shape && fit === 'later' && this.overBudget(reg)) this.fitLater.push(dataset);
    // (several nodes: a column nobody registered may be another node's, between its two writes)
    const unregistered = this.opts.shared ? [] : [...stored.keys()];
    if (this.events.dropColumns) await this.events.dropColumns(dataset.id, unregistered);
    else for (const physical of unregistered) await this.events.dropColumn(dataset.id, physical);
    for (const physical of unregistered) repairs.push(`event-store column ${physical} was not registered: dropped`);
    if (repairs.length > 0) this.opts.log?.warn({ dataset: dataset.id, repairs }, `column registry of dataset ${dataset.slug} repaired`);
    // (After this returns and the lock is free.)
    for (const id of moving) {
      setImmediate(() => {
        if (this.closed) return;
        this.track(
          this.finishMove(dataset, id).catch((err: unknown) =>
            this.opts.log?.error({ err, dataset: dataset.id, column: id }, 'could not finish moving an attribute to its column; tried again at the next start'),
          ),
        );
      });
    }
    return reg;
  }

  /** Whether a dataset's table has more columns than the budget, and the event store can make attributes of some (fitBudget). */
  private overBudget(reg: Registry): boolean {
    if (this.opts.shared || !this.events.columnsToAttributes) return false;
    return [...reg.byName.values()].filter((c) => !parsePlacement(c.physical).attribute).length > this.hotColumns;
  }

  /**
   * A table with more columns than the budget (made before tables had attributes, or at a larger
   * memory limit) could fail every commit: its least recently written fields become attributes
   * until it has its share of the budget for new fields. The event store first, then the
   * registry, then (ClickHouse) the columns are dropped:
   * - DuckDB rewrites the table in one transaction; a stop before the registry follows leaves
   *   registered columns the table lacks, which reconcile (above) registers as their attributes;
   * - ClickHouse copies the values into the buckets in steps a stop leaves to be run again (the
   *   registry still names the columns, which reads take alone: clickhouse-store.ts); once the
   *   registry names the attributes the columns are dropped, and a stop before that leaves
   *   columns no field is registered for, which reconcile drops.
   * Not with several nodes (`shared`): with embedded stores another node's table may need the
   * columns; on one ClickHouse cluster the other nodes go on inserting into the columns (their
   * registries are reloaded every few seconds, and the columns lease holds column changes, not
   * inserts), and a value inserted after its column's copy would be lost with the column.
   */
  private async fitBudget(dataset: Dataset, reg: Registry, repairs: string[]): Promise<void> {
    if (!this.overBudget(reg)) return;
    const columns = [...reg.byName.values()].filter((c) => !parsePlacement(c.physical).attribute);
    const keep = newFieldColumns(this.hotColumns);
    const number = (c: Column) => Number(parsePlacement(c.physical).column!.slice(1));
    const order = columns.sort((a, b) => (b.lastWritten ?? '').localeCompare(a.lastWritten ?? '') || number(a) - number(b));
    const buckets = this.bucketsOf(reg);
    const moves = order.slice(keep).map((c) => ({ col: c, column: parsePlacement(c.physical).column!, attribute: { key: number(c), bucket: number(c) % buckets } }));
    await this.events.columnsToAttributes!(dataset.id, moves, buckets, () => this.closed);
    reg.buckets = Math.max(reg.buckets, buckets);
    for (const m of moves) {
      const physical = attributePlacement(m.attribute);
      reg.byName.set(m.col.keyName, (await this.config.updateColumn(dataset.id, m.col.id, { physical })) ?? { ...m.col, physical });
    }
    reg.placement = placementState(
      [...reg.byName.values()].map((c) => c.physical),
      reg.placement.next,
      (physical) => this.densities.get(`${dataset.id}:${physical}`),
    );
    const stored = new Set(((await this.events.shape(dataset.id))?.columns ?? []).map((c) => c.physical));
    const left = moves.map((m) => m.column).filter((c) => stored.has(c));
    if (this.events.dropColumns) await this.events.dropColumns(dataset.id, left);
    else for (const physical of left) await this.events.dropColumn(dataset.id, physical);
    repairs.push(`the table had ${columns.length} columns, more than the ${this.hotColumns} a commit can hold: ${moves.length} fields written least recently became attributes`);
  }

  /**
   * After a column change failed between (or in) its two writes: reconciles the dataset at once,
   * so the stores disagree no longer than that. Resolves whether it could; if not, the next use
   * of the dataset tries again.
   */
  private async repair(dataset: Dataset, cause: unknown): Promise<boolean> {
    this.registries.delete(dataset.id);
    try {
      this.registries.set(dataset.id, await this.reconcile(dataset, true));
      return true;
    } catch (err) {
      this.opts.log?.error({ err, cause, dataset: dataset.id }, 'could not reconcile the column registry after a failed change; retried on next use');
      return false;
    }
  }

  /**
   * Reconciles every dataset (when the app starts: what a kill -9 between two writes left heals
   * here, before any request). A dataset that cannot be reconciled now is logged and tried again
   * on its first write.
   */
  async reconcileAll(): Promise<void> {
    // (A server's rewrite of a table past its budget, fitBudget, takes a mutation per shard per
    // hundred columns and can outlast the app's start: it runs right after, holding the lock, so
    // ingest waits for it. DuckDB's, one transaction, runs here.)
    const fit = this.events.embedded ? 'now' : 'later';
    await this.lock.run(async () => {
      for (const dataset of await allDatasets(this.config)) {
        try {
          await this.reconcile(dataset, false, fit);
        } catch (err) {
          this.opts.log?.error({ err, dataset: dataset.id }, 'could not reconcile the column registry at start');
        }
      }
    });
    const later = this.fitLater.splice(0);
    if (later.length > 0) this.track(this.fitAll(later));
  }

  /** Reconciles the datasets again, rewriting the tables past their budget (fitBudget); each failure logged, tried again at the next start. */
  private fitAll(datasets: Dataset[]): Promise<void> {
    return this.lock.run(async () => {
      for (const dataset of datasets) {
        if (this.closed) return;
        try {
          this.registries.delete(dataset.id);
          this.registries.set(dataset.id, await this.reconcile(dataset, false));
        } catch (err) {
          this.opts.log?.error({ err, dataset: dataset.id }, 'could not move the columns of a table past its budget to attributes; tried again at the next start');
        }
      }
    });
  }

  // --- promotion: an attribute frequent enough gets a column of its own (stores/events/placement.ts)
  //
  // 1. Under the lock (and the columns lease): the table gets a column for the field, and the
  //    registry moves the field to `c<new>+a<key>.<bucket>`: from the next group on its events go
  //    to the column; reads take the column where it has a value, the attribute elsewhere.
  // 2. The event store moves the older values from the bucket into the column, a slice at a time,
  //    while ingest goes on (EventStore.moveToColumn).
  // 3. Under the lock: the registry moves the field to `c<new>`, and reads take the column only.
  // A restart between the steps resumes at the second (reconcile() finds the moving field); one
  // between the table's column and the registry's change leaves an unregistered column, which
  // reconciling drops. With several nodes each on an embedded store of its own, the third step
  // waits for no other node's store, so it is left out: the field reads through both for good.

  /** After a group committed: counts the dataset's attribute fields and promotes one if it is frequent and the table has room. */
  private notePromotion(dataset: Dataset, events: number, present: ReadonlyMap<string, number>): void {
    let density = this.attributeDensity.get(dataset.id);
    if (!density) this.attributeDensity.set(dataset.id, (density = new AttributeDensity()));
    density.record(events, present);
    const name = density.candidate();
    const reg = this.registries.get(dataset.id);
    if (name === undefined || !reg || reg.placement.hot >= this.hotColumns || this.promoting.has(dataset.id) || this.closed) return;
    density.forget(name);
    this.track(this.promote(dataset, name));
  }

  private track(p: Promise<void>): void {
    this.promotions.add(p);
    void p.finally(() => this.promotions.delete(p));
  }

  private async promote(dataset: Dataset, keyName: string): Promise<void> {
    this.promoting.add(dataset.id);
    try {
      const columnId = await this.lock.run(() =>
        this.underColumnsLease(dataset.id, async () => {
          if (this.opts.shared) this.registries.delete(dataset.id); // (reloaded under the lease)
          const reg = await this.registry(dataset);
          const col = reg.byName.get(keyName);
          if (!col || isColumn(col.physical) || reg.placement.hot >= this.hotColumns) return undefined;
          const column = columnPlacement(reg.placement.next++);
          try {
            await this.events.changeColumns(dataset.id, { add: [{ physical: column, type: col.storedType }], widen: [] });
            const physical = movingPlacement(column, parsePlacement(col.physical).attribute!);
            reg.byName.set(keyName, (await this.config.updateColumn(dataset.id, col.id, { physical })) ?? { ...col, physical });
            reg.placement.hot++;
          } catch (err) {
            await this.repair(dataset, err);
            throw err;
          }
          return col.id;
        }),
      );
      if (columnId !== undefined) await this.finishMove(dataset, columnId);
    } catch (err) {
      this.opts.log?.error({ err, dataset: dataset.id, field: keyName }, 'could not promote an attribute to a column; it stays an attribute');
    } finally {
      this.promoting.delete(dataset.id);
    }
  }

  /** Steps 2 and 3 of a promotion (also resumed after a restart), once per column at a time. */
  private async finishMove(dataset: Dataset, columnId: string): Promise<void> {
    const key = `${dataset.id}:${columnId}`;
    if (this.promoting.has(key)) return;
    this.promoting.add(key);
    try {
      const col = (await this.config.listColumns(dataset.id)).find((c) => c.id === columnId);
      const { column, attribute } = col ? parsePlacement(col.physical) : {};
      if (!col || !column || !attribute) return;
      await this.events.moveToColumn(dataset.id, attribute, column, () => this.closed);
      if (this.closed || (this.opts.shared && this.events.embedded)) return;
      await this.lock.run(() =>
        this.underColumnsLease(dataset.id, async () => {
          // (Deleted, or changed, meanwhile: nothing to finish.)
          const now = (await this.config.listColumns(dataset.id)).find((c) => c.id === columnId);
          if (now?.physical !== col.physical) return;
          await this.config.updateColumn(dataset.id, columnId, { physical: column });
          this.registries.delete(dataset.id);
        }),
      );
    } finally {
      this.promoting.delete(key);
    }
  }

  // --- column changes from the Columns API and dataset deletion, under the same lock

  /** Creates a column before any event has it (Columns API). Throws UniqueViolation on a duplicate. */
  createColumn(dataset: Dataset, keyName: string, opts: { type: ColumnType; description: string; hidden: boolean }): Promise<Column> {
    return this.lock.run(() =>
      this.underColumnsLease(dataset.id, async () => {
        if (this.opts.shared) this.registries.delete(dataset.id); // (reloaded under the lease)
        const reg = await this.registry(dataset);
        if (reg.byName.size + 1 > this.opts.maxColumnsPerDataset) throw new Error(DATASET_TOO_MANY_COLUMNS);
        if (reg.byName.has(keyName)) throw new UniqueViolation('column');
        return this.addColumn(dataset, reg, keyName, opts.type, { description: opts.description, hidden: opts.hidden, apiType: opts.type });
      }),
    );
  }

  /**
   * Deletes a column and its values; a later event with that field starts a new column.
   * Resolves false, dropping nothing, when the column is already gone: the caller looked it up
   * before the lock, and its physical name may since have gone to a newer column.
   */
  deleteColumn(dataset: Dataset, doomed: Column): Promise<boolean> {
    return this.lock.run(async () => {
      const current = (await this.config.listColumns(dataset.id)).find((c) => c.id === doomed.id);
      if (!current) return false;
      this.registries.delete(dataset.id);
      const { column, attribute } = parsePlacement(current.physical);
      // An attribute's values go first: its number may be given to a new field once the column
      // is no longer registered, and must then name no value of this one.
      if (attribute) await this.events.purgeAttribute(dataset.id, attribute);
      // The config store first (see the head of this file): a failure after it leaves a table
      // column that nothing names, which reconciling drops.
      await this.config.deleteColumn(dataset.id, current.id);
      try {
        if (column) await this.events.dropColumn(dataset.id, column);
      } catch (err) {
        if (!(await this.repair(dataset, err))) throw err;
      }
      return true;
    });
  }

  /**
   * Runs an API edit of a column (type, description, hidden) under the writer's lock, so no
   * commit that widens the column can interleave with it, then drops the registry's copy (the
   * next write reloads it).
   */
  editColumn<T>(datasetId: string, edit: () => Promise<T>): Promise<T> {
    return this.lock.run(async () => {
      try {
        return await edit();
      } finally {
        this.registries.delete(datasetId);
      }
    });
  }

  /** Deletes a dataset's events (its table); the caller deletes the config side. */
  dropDataset(datasetId: string): Promise<void> {
    return this.lock.run(async () => {
      await this.events.dropDataset(datasetId);
      this.dropped.add(datasetId);
      this.registries.delete(datasetId);
      this.touched.delete(datasetId);
    });
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

  /** Waits for queued writes to commit, then records bookkeeping. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.draining) await this.draining;
    await Promise.all(this.committing);
    await Promise.all(this.promotions);
    await this.lock.run(async () => undefined);
    await this.flushBookkeeping();
  }
}
