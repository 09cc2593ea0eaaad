// Promotion: an attribute frequent enough gets a column of its own (stores/events/placement.ts).
//
// 1. Under the column registry's lock (and the columns lease): the table gets a column for the
//    field, and the registry moves the field to `c<new>+a<key>.<bucket>`: from the next group on
//    its events go to the column; reads take the column where it has a value, the attribute
//    elsewhere.
// 2. The event store moves the older values from the bucket into the column, a slice at a time,
//    while ingest goes on (EventStore.moveToColumn). On DuckDB, not past 10 million events with
//    the attribute (the store's bound): the field then reads through both until a later start
//    finds few enough to move.
// 3. Under the lock: the registry moves the field to `c<new>`, and reads take the column only.
// A restart between the steps resumes at the second (reconciling finds the moving field:
// reconcile.ts); one between the table's column and the registry's change leaves an unregistered
// column, which reconciling drops. With several nodes each on an embedded store of its own, the
// third step waits for no other node's store, so it is left out: the field reads through both for
// good.
import type { ConfigStore, Dataset } from '../stores/config/types.js';
import type { EventStore } from '../stores/events/types.js';
import { columnPlacement, isColumn, movingPlacement, parsePlacement } from '../stores/events/placement.js';
import { AttributeDensity } from './field-placement.js';
import type { ColumnRegistry } from './column-registry.js';

export class AttributePromotion {
  /** How often each dataset's attribute fields come in recent events (which to promote to a column). */
  private readonly attributeDensity = new Map<string, AttributeDensity>();
  /** Datasets with a promotion being planned, and columns (by id) whose values are being moved. */
  private readonly promoting = new Set<string>();

  constructor(
    private readonly columns: ColumnRegistry,
    private readonly config: ConfigStore,
    private readonly events: EventStore,
  ) {}

  /** After a group committed: counts the dataset's attribute fields and promotes one if it is frequent and the table has room. */
  note(dataset: Dataset, events: number, present: ReadonlyMap<string, number>): void {
    let density = this.attributeDensity.get(dataset.id);
    if (!density) this.attributeDensity.set(dataset.id, (density = new AttributeDensity()));
    density.record(events, present);
    const name = density.candidate();
    const reg = this.columns.cached(dataset.id);
    if (name === undefined || !reg || reg.placement.hot >= this.columns.hotColumns || this.promoting.has(dataset.id) || this.columns.closed) return;
    density.forget(name);
    this.columns.track(this.promote(dataset, name));
  }

  private async promote(dataset: Dataset, keyName: string): Promise<void> {
    this.promoting.add(dataset.id);
    try {
      const columnId = await this.columns.exclusive(() =>
        this.columns.underColumnsLease(dataset.id, async () => {
          if (this.columns.shared) this.columns.forget(dataset.id); // (reloaded under the lease)
          const reg = await this.columns.registry(dataset);
          const col = reg.byName.get(keyName);
          if (!col || isColumn(col.physical) || reg.placement.hot >= this.columns.hotColumns) return undefined;
          const column = columnPlacement(reg.placement.next++);
          try {
            await this.events.changeColumns(dataset.id, { add: [{ physical: column, type: col.storedType }], widen: [] });
            const physical = movingPlacement(column, parsePlacement(col.physical).attribute!);
            reg.byName.set(keyName, (await this.config.updateColumn(dataset.id, col.id, { physical })) ?? { ...col, physical });
            reg.placement.hot++;
          } catch (err) {
            await this.columns.repair(dataset, err);
            throw err;
          }
          return col.id;
        }),
      );
      if (columnId !== undefined) await this.finishMove(dataset, columnId);
    } catch (err) {
      this.columns.log?.error({ err, dataset: dataset.id, field: keyName }, 'could not promote an attribute to a column; it stays an attribute');
    } finally {
      this.promoting.delete(dataset.id);
    }
  }

  /** Steps 2 and 3 of a promotion (also resumed after a restart), once per column at a time. */
  async finishMove(dataset: Dataset, columnId: string): Promise<void> {
    const key = `${dataset.id}:${columnId}`;
    if (this.promoting.has(key)) return;
    this.promoting.add(key);
    try {
      const col = (await this.config.listColumns(dataset.id)).find((c) => c.id === columnId);
      const { column, attribute } = col ? parsePlacement(col.physical) : {};
      if (!col || !column || !attribute) return;
      const moved = await this.events.moveToColumn(dataset.id, attribute, column, () => this.columns.closed);
      if (!moved || this.columns.closed || (this.columns.shared && this.events.embedded)) return;
      await this.columns.exclusive(() =>
        this.columns.underColumnsLease(dataset.id, async () => {
          // (Deleted, or changed, meanwhile: nothing to finish.)
          const now = (await this.config.listColumns(dataset.id)).find((c) => c.id === columnId);
          if (now?.physical !== col.physical) return;
          await this.config.updateColumn(dataset.id, columnId, { physical: column });
          this.columns.forget(dataset.id);
        }),
      );
    } finally {
      this.promoting.delete(key);
    }
  }
}
