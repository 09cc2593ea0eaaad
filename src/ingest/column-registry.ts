// The column registry: each dataset's columns, resolved for the group commit (group-commit.ts) and
// changed by the Columns API and dataset deletion. New fields become columns (or attributes, past
// the table's hot-column budget: field-placement.ts), a column whose values no longer fit its type
// is widened (column-types.ts), and no dataset gets more than maxColumnsPerDataset fields.
//
// Every change of a dataset's columns (ingest, the Columns API, dataset deletion, promotion) runs
// under one lock (exclusive()), so the registry, the config store and the event-store table stay
// in step.
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
// Reconciling (reconcile.ts) runs for every dataset when the app starts, right after any failed
// column change, and when a dataset is first written to; it logs what it repaired.
//
// Several nodes on one store (`shared`, docs/several-nodes.md): the in-process lock above is not
// enough, so every column change also holds a lease on the dataset's columns (`columns:<id>`),
// taken before the change is planned against a registry reloaded under it (what other nodes
// added since); a node's cached registry is reloaded after REGISTRY_TTL_MS. Reconciling then never
// drops a table column nobody registered (another node may be between its two writes) and, where
// the table's type is narrower than the registered one, widens the table (each node may have its
// own event store), so types only ever widen, whichever node looks.
import { performance } from 'node:perf_hooks';
import { shortId } from '../domain/ids.js';
import { withLease } from '../cluster/leadership.js';
import { allDatasets } from '../domain/datasets.js';
import { UniqueViolation, type Column, type ColumnType, type ConfigStore, type Dataset } from '../stores/config/types.js';
import type { EventStore, PhysicalColumn } from '../stores/events/types.js';
import type { NormalisedEvent } from './normalise.js';
import { isColumn, parsePlacement } from '../stores/events/placement.js';
import { placeFields } from './field-placement.js';
import { fitsKnownColumns, inferType, widen, type Registry, type WriterLog } from './column-types.js';
import { reconcile, type Reconciling } from './reconcile.js';

export const DATASET_TOO_MANY_COLUMNS = 'Dataset has too many columns.';

/** The refusal of an event whose new field name is not well-formed Unicode (a path that skipped normalise.ts's wellFormed). */
export const ILL_FORMED_NAME = 'field name is not well-formed Unicode';

/** How long a node sharing the store trusts its cached column registry (ms). */
const REGISTRY_TTL_MS = 5000;

/** An event of a group commit that waits for column changes: which request of the group, which event of the request. */
export interface Waiting {
  request: number;
  index: number;
  event: NormalisedEvent;
}

/**
 * The column changes one group commit needs for one dataset, planned in event order before any
 * of them is made, so that they all go to the event store in one transaction.
 */
export interface Plan {
  dataset: Dataset;
  reg: Registry;
  /** New columns by field name, with the type that holds all of the group's values. */
  add: Map<string, ColumnType>;
  /** Existing columns to widen, by field name, to the type that holds all of the group's values. */
  widen: Map<string, ColumnType>;
  /** How many of the waiting events have each new field (the densest get the free columns). */
  seen: Map<string, number>;
  /** Events that wait for the changes. */
  waiting: Waiting[];
}

export interface RegistryOptions {
  maxColumnsPerDataset: number;
  /** Field columns a dataset's table may have (the rest of its fields are attributes); default: the event store's budget. */
  hotColumns?: number;
  log?: WriterLog;
  /** Other nodes write to the same stores: column changes take a lease (cluster/leadership.ts). */
  shared?: { claim(name: string, ttlMs: number): Promise<boolean>; release(name: string): Promise<void> };
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

export class ColumnRegistry implements Reconciling {
  private readonly lock = new Lock();
  private readonly registries = new Map<string, Registry>();
  /** Attribute fields' densities as first seen (`<dataset id>:<placement>`), for balancing the buckets. */
  private readonly densities = new Map<string, number>();
  /** Datasets whose tables reconcileAll found past their budget, rewritten right after it (fitAll). */
  private readonly fitAfterStart: Dataset[] = [];
  /** Work in the background (promotions, rewrites past the budget): the writer's close() waits for it (each stops at its next slice). */
  readonly tasks = new Set<Promise<void>>();
  /** The writer is closing: no new background work starts, and what runs stops at its next step. */
  closed = false;

  constructor(
    readonly config: ConfigStore,
    readonly events: EventStore,
    private readonly opts: RegistryOptions,
    /** Steps 2 and 3 of a promotion (attribute-promotion.ts), for fields reconciling finds in the middle of one. */
    private readonly finishMove: (dataset: Dataset, columnId: string) => Promise<void>,
  ) {}

  get shared(): boolean {
    return !!this.opts.shared;
  }

  get log(): WriterLog | undefined {
    return this.opts.log;
  }

  /** Field columns a table may have (RegistryOptions.hotColumns). */
  get hotColumns(): number {
    return this.opts.hotColumns ?? this.events.hotColumns;
  }

  /** Runs fn under the lock every change of a dataset's columns holds (and the group commit's placing and staging). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock.run(fn);
  }

  /** Several nodes: runs a change of a dataset's columns holding its lease (alone: just runs it). */
  underColumnsLease<T>(datasetId: string, fn: () => Promise<T>): Promise<T> {
    return this.opts.shared ? withLease(this.opts.shared, `columns:${datasetId}`, fn) : fn();
  }

  track(p: Promise<void>): void {
    this.tasks.add(p);
    void p.finally(() => this.tasks.delete(p));
  }

  /** A dataset's column registry, loaded (and reconciled) on first use. */
  async registry(dataset: Dataset): Promise<Registry> {
    const known = this.registries.get(dataset.id);
    if (known && !(this.opts.shared && performance.now() - known.loadedAt > REGISTRY_TTL_MS)) return known;
    const reg = await reconcile(this, dataset, true);
    this.registries.set(dataset.id, reg);
    return reg;
  }

  /** A dataset's registry if this process has it loaded (no loading). */
  cached(datasetId: string): Registry | undefined {
    return this.registries.get(datasetId);
  }

  /** Drops the registry's copy of a dataset's columns: the next use reloads them. */
  forget(datasetId: string): void {
    this.registries.delete(datasetId);
  }

  // --- Reconciling (reconcile.ts) asks these.

  densityOf(datasetId: string, physical: string): number | undefined {
    return this.densities.get(`${datasetId}:${physical}`);
  }

  fitLater(dataset: Dataset): void {
    this.fitAfterStart.push(dataset);
  }

  resumeMoves(dataset: Dataset, columnIds: string[]): void {
    for (const id of columnIds) {
      setImmediate(() => {
        if (this.closed) return;
        this.track(
          this.finishMove(dataset, id).catch((err: unknown) =>
            this.opts.log?.error({ err, dataset: dataset.id, column: id }, 'could not finish moving an attribute to its column; tried again at the next start'),
          ),
        );
      });
    }
  }

  /** The attribute buckets new attributes of a dataset go to: its table's, or the event store's number for a table with none yet. */
  bucketsOf(reg: Registry): number {
    return reg.buckets > 0 ? reg.buckets : this.events.attributeBuckets;
  }

  // --- Planning and making a group commit's column changes (group-commit.ts)

  /**
   * Plans the columns one event needs, on top of what the plan holds already; returns why the
   * event is refused, if it is: its new fields would take the dataset past the column cap.
   */
  plan(plan: Plan, e: NormalisedEvent): string | undefined {
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

  /**
   * Several nodes, under the columns lease: reloads the registry (other nodes may have added or
   * widened columns) and plans the waiting events again against it. Returns the events that fit
   * the reloaded columns as they are, and those now refused (with why); the plan keeps the rest.
   */
  async replan(plan: Plan): Promise<{ fit: Waiting[]; refused: { waiting: Waiting; reason: string }[] }> {
    const fresh = await reconcile(this, plan.dataset, true);
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
    const fit: Waiting[] = [];
    const refused: { waiting: Waiting; reason: string }[] = [];
    for (const w of waiting) {
      if (fitsKnownColumns(plan.reg, w.event)) {
        fit.push(w);
        continue;
      }
      const reason = this.plan(plan, w.event);
      if (reason) refused.push({ waiting: w, reason });
      else plan.waiting.push(w);
    }
    return { fit, refused };
  }

  /**
   * Makes a plan's columns: one event-store transaction, then the config store's entries (in
   * this order: see the head of this file). On failure the caller repairs the dataset.
   */
  async applyPlan(plan: Plan): Promise<void> {
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

  /**
   * After a column change failed between (or in) its two writes: reconciles the dataset at once,
   * so the stores disagree no longer than that. Resolves whether it could; if not, the next use
   * of the dataset tries again.
   */
  async repair(dataset: Dataset, cause: unknown): Promise<boolean> {
    this.registries.delete(dataset.id);
    try {
      this.registries.set(dataset.id, await reconcile(this, dataset, true));
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
          await reconcile(this, dataset, false, fit);
        } catch (err) {
          this.opts.log?.error({ err, dataset: dataset.id }, 'could not reconcile the column registry at start');
        }
      }
    });
    const later = this.fitAfterStart.splice(0);
    if (later.length > 0) this.track(this.fitAll(later));
  }

  /** Reconciles the datasets again, rewriting the tables past their budget (fitBudget); each failure logged, tried again at the next start. */
  private fitAll(datasets: Dataset[]): Promise<void> {
    return this.lock.run(async () => {
      for (const dataset of datasets) {
        if (this.closed) return;
        try {
          this.registries.delete(dataset.id);
          this.registries.set(dataset.id, await reconcile(this, dataset, false));
        } catch (err) {
          this.opts.log?.error({ err, dataset: dataset.id }, 'could not move the columns of a table past its budget to attributes; tried again at the next start');
        }
      }
    });
  }

  // --- Column changes from the Columns API, under the same lock (dataset deletion: writer.ts)

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
}
