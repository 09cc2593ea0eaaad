// Whether the configuration store and the event store agree on every dataset's columns, read
// straight from both (the event store's information_schema, not any cache): every registered
// column exists in its dataset's table with its registered stored type (an attribute: its bucket
// exists; placements never share a number); no table column is left
// that nothing registers; every key name is well-formed Unicode and names one column only (a
// name the config store cannot keep as it is reads back as another, and two columns can then
// share a name). For tests after anything that changes columns: `await expectStoresAgree(t.store, t.events)`.
import { expect } from 'vitest';
import { allDatasets } from '../src/domain/datasets.js';
import type { ConfigStore } from '../src/stores/config/types.js';
import { tableName, type EventStore } from '../src/stores/events/types.js';
import { attributeBucket, isOwnColumn } from '../src/stores/events/engine.js';
import { parsePlacement, placementNumbers } from '../src/stores/events/placement.js';

const TYPE_OF_SQL: Record<string, string> = {
  VARCHAR: 'string',
  BIGINT: 'integer',
  DOUBLE: 'float',
  BOOLEAN: 'boolean',
  'Nullable(String)': 'string',
  'Nullable(Int64)': 'integer',
  'Nullable(Float64)': 'float',
  'Nullable(UInt8)': 'boolean',
};
const FIXED = new Set(['__time', '__samplerate', '__ingested']);

/** Every disagreement between the two stores, as a sentence naming the dataset and column; [] when they agree. */
export async function storeDisagreements(config: ConfigStore, events: EventStore): Promise<string[]> {
  const problems: string[] = [];
  // Every table's columns in one query (one per dataset grows slow with many datasets).
  const tables = new Map<string, Map<string, string>>();
  const catalogue =
    events.dialect.name === 'clickhouse'
      ? 'SELECT table AS table_name, name AS column_name, type AS data_type FROM system.columns WHERE database = currentDatabase()'
      : 'SELECT table_name, column_name, data_type FROM information_schema.columns';
  for (const r of await events.query(catalogue)) {
    if (FIXED.has(String(r.column_name))) continue;
    const name = String(r.table_name);
    if (!tables.has(name)) tables.set(name, new Map());
    tables.get(name)!.set(String(r.column_name), TYPE_OF_SQL[String(r.data_type)] ?? String(r.data_type));
  }
  for (const ds of await allDatasets(config)) {
    const table = tables.get(tableName(ds.id)) ?? new Map<string, string>();
    const names = new Set<string>();
    const numbers = new Set<number>();
    for (const col of await config.listColumns(ds.id)) {
      const at = `dataset ${ds.slug}: column ${JSON.stringify(col.keyName)} (${col.physical})`;
      // Where the field is stored: its table column, or its attribute bucket (a VARCHAR column; two arrays on ClickHouse).
      const { column, attribute } = parsePlacement(col.physical);
      if (column) {
        const stored = table.get(column);
        if (stored === undefined) problems.push(`${at} is registered but not in the event store`);
        else if (stored !== col.storedType) problems.push(`${at} is registered as ${col.storedType} but stored as ${stored}`);
        table.delete(column);
      }
      const bucket = attribute && attributeBucket(attribute.bucket);
      if (bucket && table.get(bucket) !== 'string' && !(table.get(`${bucket}_k`) === 'Array(UInt32)' && table.get(`${bucket}_v`) === 'Array(String)')) {
        problems.push(`${at} is an attribute but its bucket is not in the event store`);
      }
      for (const n of placementNumbers(col.physical)) {
        if (numbers.has(n)) problems.push(`${at} shares its number ${n} with another column`);
        numbers.add(n);
      }
      if (!col.keyName.isWellFormed()) problems.push(`${at} has a key name that is not well-formed Unicode`);
      if (names.has(col.keyName)) problems.push(`${at} shares its key name with another column`);
      names.add(col.keyName);
    }
    for (const physical of table.keys()) if (!isOwnColumn(physical)) problems.push(`dataset ${ds.slug}: event-store column ${physical} is not registered`);
  }
  return problems;
}

/** Fails the test, listing every disagreement, unless the two stores agree. */
export async function expectStoresAgree(config: ConfigStore, events: EventStore): Promise<void> {
  expect(await storeDisagreements(config, events)).toEqual([]);
}
