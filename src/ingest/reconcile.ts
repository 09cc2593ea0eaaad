// Reconciling a dataset's columns: the config store's registry and the event store's table brought
// into agreement, the event store being the truth for which columns are stored and how (why the
// two can disagree, and what each side may be left with: the head of column-registry.ts), and a
// table past its hot-column budget rewritten so that its fields past the budget are attributes.
// The column registry (column-registry.ts) runs these under its lock: when the app starts, right
// after any failed column change, and when a dataset is first written to.
import { performance } from 'node:perf_hooks';
import type { Column, ConfigStore, Dataset } from '../stores/config/types.js';
import type { EventStore, PhysicalColumn } from '../stores/events/types.js';
import { attributePlacement, parsePlacement, placementNumbers } from '../stores/events/placement.js';
import { newFieldColumns, placementState } from './field-placement.js';
import { widen, type Registry, type WriterLog } from './column-types.js';

/** What reconciling needs of the column registry it runs for (column-registry.ts). */
export interface Reconciling {
  readonly config: ConfigStore;
  readonly events: EventStore;
  /** Other nodes write to the same stores (docs/several-nodes.md). */
  readonly shared: boolean;
  readonly log?: WriterLog;
  /** Field columns a table may have. */
  readonly hotColumns: number;
  /** The writer is closing: a rewrite stops at its next step. */
  readonly closed: boolean;
  /** The attribute buckets new attributes of a dataset go to. */
  bucketsOf(reg: Registry): number;
  /** An attribute field's density as this process first saw it. */
  densityOf(datasetId: string, physical: string): number | undefined;
  /** A table past its budget, to rewrite once the app has started (reconcileAll). */
  fitLater(dataset: Dataset): void;
  /** Fields found in the middle of a promotion (a stop between its steps): their moves go on. */
  resumeMoves(dataset: Dataset, columnIds: string[]): void;
}

/**
 * Brings a dataset's columns in the two stores into agreement, the event store being the
 * truth for what is stored: a registered column whose type differs from the table's takes the
 * table's (its API type too, unless someone chose another); a registered column the table
 * lacks is added back, empty; a table column that no column is registered for is dropped.
 * Logs what it repaired; returns the registry. `ensureTable`: make the table if there is none
 * (else only when columns are registered).
 */
export async function reconcile(ctx: Reconciling, dataset: Dataset, ensureTable: boolean, fit: 'now' | 'later' = 'now'): Promise<Registry> {
  const registered = await ctx.config.listColumns(dataset.id);
  let shape = await ctx.events.shape(dataset.id);
  if (!shape && (ensureTable || registered.length > 0)) {
    await ctx.events.ensureTable(dataset.id);
    shape = await ctx.events.shape(dataset.id);
  }
  const stored = new Map((shape?.columns ?? []).map((c) => [c.physical, c.type]));
  let next = 1;
  for (const n of [...[...stored.keys()].flatMap(placementNumbers), ...registered.flatMap((c) => placementNumbers(c.physical))]) next = Math.max(next, n + 1);
  const reg: Registry = {
    byName: new Map(),
    placement: placementState(
      registered.map((c) => c.physical),
      next,
      (physical) => ctx.densityOf(dataset.id, physical),
    ),
    buckets: shape?.buckets ?? 0,
    loadedAt: performance.now(),
  };
  const repairs: string[] = [];
  const missing: PhysicalColumn[] = [];
  const widenTable: PhysicalColumn[] = [];
  // Attribute buckets the registry names and the table lacks (another node's table may have more).
  let buckets = reg.buckets;
  /** Fields being promoted when the process stopped: their moves go on (attribute-promotion.ts). */
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
    if (actual === undefined && !attribute && !ctx.shared && reg.buckets > 0 && ctx.events.embedded && ctx.events.columnsToAttributes) {
      // What a stop between DuckDB's rewrite in fitBudget (below) and the registry's leaves: the
      // column's values are its attribute now, in the bucket of its number. (ClickHouse's
      // rewrite drops columns only once the registry names their attributes.)
      const physical = attributePlacement({ key: Number(column.slice(1)), bucket: Number(column.slice(1)) % reg.buckets });
      col = (await ctx.config.updateColumn(dataset.id, col.id, { physical })) ?? { ...col, physical };
      repairs.push(`column ${JSON.stringify(col.keyName)} (${column}) had become an attribute in the event store: registered as ${physical}`);
    } else if (actual === undefined) {
      missing.push({ physical: column, type: col.storedType });
      repairs.push(`column ${JSON.stringify(col.keyName)} (${col.physical}) was missing from the event store: added back, empty, as ${col.storedType}`);
    } else if (actual !== col.storedType && ctx.shared && widen(actual, col.storedType) === col.storedType) {
      // Several nodes: another node widened it (in its own event store, or before this one
      // looked): the table follows the wider type.
      widenTable.push({ physical: column, type: col.storedType });
      repairs.push(`column ${JSON.stringify(col.keyName)} (${col.physical}) is registered as ${col.storedType}: the table widened to it`);
    } else if (actual !== col.storedType) {
      const patch = col.type === col.storedType ? { storedType: actual, type: actual } : { storedType: actual };
      col = (await ctx.config.updateColumn(dataset.id, col.id, patch)) ?? { ...col, ...patch };
      repairs.push(`column ${JSON.stringify(col.keyName)} (${col.physical}) is stored as ${actual}: its registered type follows`);
    }
    reg.byName.set(col.keyName, col);
  }
  await ctx.events.changeColumns(dataset.id, { add: missing, widen: widenTable, buckets: buckets > reg.buckets ? buckets : undefined });
  reg.buckets = buckets;
  if (shape && fit === 'now') await fitBudget(ctx, dataset, reg, repairs);
  else if (shape && fit === 'later' && overBudget(ctx, reg)) ctx.fitLater(dataset);
  // (several nodes: a column nobody registered may be another node's, between its two writes)
  const unregistered = ctx.shared ? [] : [...stored.keys()];
  if (ctx.events.dropColumns) await ctx.events.dropColumns(dataset.id, unregistered);
  else for (const physical of unregistered) await ctx.events.dropColumn(dataset.id, physical);
  for (const physical of unregistered) repairs.push(`event-store column ${physical} was not registered: dropped`);
  if (repairs.length > 0) ctx.log?.warn({ dataset: dataset.id, repairs }, `column registry of dataset ${dataset.slug} repaired`);
  // (After this returns and the lock is free.)
  ctx.resumeMoves(dataset, moving);
  return reg;
}

/** Whether a dataset's table has more columns than the budget, and the event store can make attributes of some (fitBudget). */
function overBudget(ctx: Reconciling, reg: Registry): boolean {
  if (ctx.shared || !ctx.events.columnsToAttributes) return false;
  return [...reg.byName.values()].filter((c) => !parsePlacement(c.physical).attribute).length > ctx.hotColumns;
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
async function fitBudget(ctx: Reconciling, dataset: Dataset, reg: Registry, repairs: string[]): Promise<void> {
  if (!overBudget(ctx, reg)) return;
  const columns = [...reg.byName.values()].filter((c) => !parsePlacement(c.physical).attribute);
  const keep = newFieldColumns(ctx.hotColumns);
  const number = (c: Column) => Number(parsePlacement(c.physical).column!.slice(1));
  const order = columns.sort((a, b) => (b.lastWritten ?? '').localeCompare(a.lastWritten ?? '') || number(a) - number(b));
  const buckets = ctx.bucketsOf(reg);
  const moves = order.slice(keep).map((c) => ({ col: c, column: parsePlacement(c.physical).column!, attribute: { key: number(c), bucket: number(c) % buckets } }));
  await ctx.events.columnsToAttributes!(dataset.id, moves, buckets, () => ctx.closed);
  reg.buckets = Math.max(reg.buckets, buckets);
  for (const m of moves) {
    const physical = attributePlacement(m.attribute);
    reg.byName.set(m.col.keyName, (await ctx.config.updateColumn(dataset.id, m.col.id, { physical })) ?? { ...m.col, physical });
  }
  reg.placement = placementState(
    [...reg.byName.values()].map((c) => c.physical),
    reg.placement.next,
    (physical) => ctx.densityOf(dataset.id, physical),
  );
  const stored = new Set(((await ctx.events.shape(dataset.id))?.columns ?? []).map((c) => c.physical));
  const left = moves.map((m) => m.column).filter((c) => stored.has(c));
  if (ctx.events.dropColumns) await ctx.events.dropColumns(dataset.id, left);
  else for (const physical of left) await ctx.events.dropColumn(dataset.id, physical);
  repairs.push(`the table had ${columns.length} columns, more than the ${ctx.hotColumns} a commit can hold: ${moves.length} fields written least recently became attributes`);
}
