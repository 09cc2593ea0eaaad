// The embedded event store's attribute buckets are always compressed with FSST
// (src/stores/events/duckdb-attributes.ts BUCKET_COLUMN_SQL), even where DuckDB left to choose
// would take another compression: its checkpoints then skip trying the others.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { attributeBucket } from '../src/stores/events/engine.js';
import { parsePlacement } from '../src/stores/events/placement.js';
import { makeApp } from './helpers.js';
import { batch, columnsOf, results } from './ingest-helpers.js';

describe('attribute buckets', () => {
  it('are compressed with FSST after a checkpoint, also where every event has the same attribute (DuckDB alone picks another)', async () => {
    // One table column: `a` takes it, `same` and `n` become attributes.
    const t = await makeApp({ settings: { queryResultRateLimit: null, hotColumns: 1 } });
    let stopped = false;
    try {
      const events = Array.from({ length: 3000 }, (_, i) => ({ data: { a: i, same: 'one value for every event', n: i % 3 } }));
      const res = await batch(t, 'fsst', events);
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      expect(results(res).every((r) => r.status === 202)).toBe(true);
      const columns = await columnsOf(t, 'fsst');
      // The buckets holding them (the other buckets hold nothing: all NULL, nothing to compress).
      const buckets = ['same', 'n'].map((name) => {
        const attribute = parsePlacement(columns.get(name)!.physical).attribute;
        expect(attribute, name).toBeDefined();
        return attributeBucket(attribute!.bucket);
      });
      await t.stop(); // closing checkpoints the file
      stopped = true;
      const instance = await DuckDBInstance.create(join(t.dataDir, 'events.duckdb'));
      const conn = await instance.connect();
      try {
        const tables = (await conn.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'ds\\_%' ESCAPE '\\'`)).getRows().map((r) => String(r[0]));
        expect(tables).toHaveLength(1);
        const rows = await conn.runAndReadAll(
          `SELECT DISTINCT column_name, compression FROM pragma_storage_info('${tables[0]}') WHERE segment_type = 'VARCHAR' AND column_name IN (${buckets.map((b) => `'${b}'`).join(', ')})`,
        );
        const compressions = rows.getRows().map((r) => String(r[1]));
        expect(compressions.length).toBe(new Set(buckets).size);
        expect(new Set(compressions)).toEqual(new Set(['FSST']));
      } finally {
        conn.closeSync();
        instance.closeSync();
      }
    } finally {
      if (stopped) rmSync(t.dataDir, { recursive: true, force: true });
      else await t.close();
    }
  });
});
