// The ingest writer: the front the app and the routes use, composing the group commit
// (group-commit.ts: one event-store transaction for all datasets, acknowledged only after it
// commits), the column registry (column-registry.ts: new fields become columns, widening, the
// column limits, reconciling the two stores: reconcile.ts) and attribute promotion
// (attribute-promotion.ts). One lock, the registry's, holds every change of a dataset's columns
// and each group's placing and staging.
import type { Column, ColumnType, ConfigStore, Dataset } from '../stores/config/types.js';
import type { EventStore } from '../stores/events/types.js';
import type { EventColumns } from '../stores/events/columns.js';
import { AttributePromotion } from './attribute-promotion.js';
import { ColumnRegistry, type RegistryOptions } from './column-registry.js';
import { GroupCommit, type CommitOptions } from './group-commit.js';

export { DATASET_TOO_MANY_COLUMNS, ILL_FORMED_NAME } from './column-registry.js';
export type { WriterLog } from './column-types.js';

export interface WriterOptions extends RegistryOptions, CommitOptions {}

export class IngestWriter {
  private readonly columns: ColumnRegistry;
  private readonly promotion: AttributePromotion;
  private readonly commits: GroupCommit;

  constructor(
    config: ConfigStore,
    private readonly events: EventStore,
    private readonly opts: WriterOptions,
  ) {
    this.columns = new ColumnRegistry(config, events, opts, (dataset, columnId) => this.promotion.finishMove(dataset, columnId));
    this.promotion = new AttributePromotion(this.columns, config, events);
    this.commits = new GroupCommit(this.columns, config, events, opts, (dataset, n, present) => this.promotion.note(dataset, n, present));
  }

  /** Stores the events durably; resolves per event (row) to null (stored) or the reason it was refused. */
  write(dataset: Dataset, events: EventColumns): Promise<(string | null)[]> {
    return this.commits.write(dataset, events);
  }

  /**
   * Events written and not yet answered: how far the event store is behind. OTLP answers
   * "try again later" (503) past a limit, so that memory stays bounded under overload.
   */
  get backlog(): number {
    return this.commits.backlog;
  }

  /**
   * Reconciles every dataset (when the app starts: what a kill -9 between two writes left heals
   * here, before any request). A dataset that cannot be reconciled now is logged and tried again
   * on its first write.
   */
  reconcileAll(): Promise<void> {
    return this.columns.reconcileAll();
  }

  /** Creates a column before any event has it (Columns API). Throws UniqueViolation on a duplicate. */
  createColumn(dataset: Dataset, keyName: string, opts: { type: ColumnType; description: string; hidden: boolean }): Promise<Column> {
    return this.columns.createColumn(dataset, keyName, opts);
  }

  /**
   * Deletes a column and its values; a later event with that field starts a new column.
   * Resolves false, dropping nothing, when the column is already gone.
   */
  deleteColumn(dataset: Dataset, doomed: Column): Promise<boolean> {
    return this.columns.deleteColumn(dataset, doomed);
  }

  /** Runs an API edit of a column under the writer's lock, then drops the registry's copy (the next write reloads it). */
  editColumn<T>(datasetId: string, edit: () => Promise<T>): Promise<T> {
    return this.columns.editColumn(datasetId, edit);
  }

  /** Deletes a dataset's events (its table); the caller deletes the config side. */
  dropDataset(datasetId: string): Promise<void> {
    return this.columns.exclusive(async () => {
      await this.events.dropDataset(datasetId);
      await this.opts.late?.onLate(datasetId, -Infinity, Infinity);
      this.commits.datasetDropped(datasetId);
      this.columns.forget(datasetId);
    });
  }

  /** Writes `last_written` / `last_written_at` for what was ingested since the last call. */
  flushBookkeeping(): Promise<void> {
    return this.commits.flushBookkeeping();
  }

  /** Waits for queued writes to commit and for what follows their commits (afterCommit: deploy markers). */
  settle(): Promise<void> {
    return this.commits.settle();
  }

  /** Waits for queued writes to commit, then records bookkeeping. */
  async close(): Promise<void> {
    this.columns.closed = true;
    await this.commits.settle();
    await Promise.all(this.columns.tasks);
    await this.columns.exclusive(async () => undefined);
    await this.flushBookkeeping();
  }
}
