// Versioned migrations, shared by SQLite and PostgreSQL. Each migration is applied once and
// recorded in `kysely_migration`; never edit a released migration, add a new one instead.
// Portable subset only: text ids and ISO-8601 text timestamps, booleans as 0/1 integers,
// JSON as text.
import { PostgresAdapter, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';

const migrations: Record<string, Migration> = {
  '0001_tenancy': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('teams')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('slug', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('environments')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('color', 'text', (c) => c.notNull())
        .addColumn('delete_protected', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('environments_team_slug', ['team_id', 'slug'])
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id'))
        .addColumn('environment_id', 'text')
        .addColumn('key_type', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
        .addColumn('disabled', 'integer', (c) => c.notNull())
        .addColumn('permissions', 'text', (c) => c.notNull())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('time_to_live', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('api_keys_team').on('api_keys').columns(['team_id', 'id']).execute();

      await db.schema
        .createTable('datasets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('expand_json_depth', 'integer', (c) => c.notNull())
        .addColumn('delete_protected', 'integer', (c) => c.notNull())
        .addColumn('definitions', 'text', (c) => c.notNull())
        .addColumn('last_written_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('datasets_environment_slug', ['environment_id', 'slug'])
        .execute();
    },
  },

  // Ids and slugs sort in byte order, as in SQLite: lists are ordered by id or slug, and pages
  // are cut with `id > cursor`. PostgreSQL's default collation follows the database locale
  // (en_US puts `a_b` before `a-b` before `a0`), so pin these columns to the "C" collation.
  // Nothing to do on SQLite, whose default (BINARY) already compares bytes.
  '0002_postgres_byte_order': {
    async up(db: Kysely<any>) {
      if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
      const bytewise = sql`text collate "C"`;
      const columns: Record<string, string[]> = {
        teams: ['id', 'slug'],
        environments: ['id', 'team_id', 'slug'],
        api_keys: ['id', 'team_id', 'environment_id'],
        datasets: ['id', 'environment_id', 'slug'],
      };
      for (const [table, names] of Object.entries(columns)) {
        let alter = db.schema.alterTable(table).alterColumn(names[0], (c) => c.setDataType(bytewise));
        for (const name of names.slice(1)) alter = alter.alterColumn(name, (c) => c.setDataType(bytewise));
        await alter.execute();
      }
    },
  },
  // Columns of datasets. `physical` is the event-store column name (c1, c2, …): field names
  // are case-sensitive and arbitrary, event-store identifiers are not. `stored_type` is what
  // the event store holds (it only widens); `type` is what the Columns API shows and queries use.
  '0003_columns': {
    async up(db: Kysely<any>) {
      const pg = db.getExecutor().adapter instanceof PostgresAdapter;
      const key = pg ? sql`text collate "C"` : sql`text`;
      await db.schema
        .createTable('columns')
        .addColumn('id', key, (c) => c.primaryKey())
        .addColumn('dataset_id', key, (c) => c.notNull().references('datasets.id'))
        .addColumn('key_name', key, (c) => c.notNull())
        .addColumn('physical', 'text', (c) => c.notNull())
        .addColumn('stored_type', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('hidden', 'integer', (c) => c.notNull())
        .addColumn('last_written', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('columns_dataset_key', ['dataset_id', 'key_name'])
        .addUniqueConstraint('columns_dataset_physical', ['dataset_id', 'physical'])
        .execute();
    },
  },
  // Configuration objects that are documents (calculated fields, queries, query annotations,
  // query results, and later boards, SLOs, triggers, recipients, …): one table, the body as JSON.
  // `kind` names the resource; `scope` is what `unique_key` must be unique within (a dataset id,
  // an environment id or a team id, per resource); `unique_key` is null when the resource has no
  // unique name. Deleting a dataset or an environment deletes the objects under it.
  '0004_objects': {
    async up(db: Kysely<any>) {
      const pg = db.getExecutor().adapter instanceof PostgresAdapter;
      const key = pg ? sql`text collate "C"` : sql`text`;
      await db.schema
        .createTable('objects')
        .addColumn('id', key, (c) => c.primaryKey())
        .addColumn('kind', key, (c) => c.notNull())
        .addColumn('team_id', key, (c) => c.notNull())
        .addColumn('environment_id', key)
        .addColumn('dataset_id', key)
        .addColumn('scope', key, (c) => c.notNull())
        .addColumn('unique_key', key)
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('objects_kind_scope_key', ['kind', 'scope', 'unique_key'])
        .execute();
      await db.schema.createIndex('objects_kind_environment').on('objects').columns(['kind', 'environment_id', 'dataset_id']).execute();
      await db.schema.createIndex('objects_kind_team').on('objects').columns(['kind', 'team_id']).execute();
    },
  },
  // Objects created in the same millisecond list in creation order: `seq` is a per-process
  // monotonic number (microseconds since the epoch, bumped on ties) ordered after created_at.
  '0005_objects_seq': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('objects').addColumn('seq', 'bigint').execute();
    },
  },
  // Leases, for several nodes on one store (docs/several-nodes.md): the leader lease, each node's
  // heartbeat and claims on shared work (a delivery, a query result). `expires_at` is in
  // milliseconds of the database's clock, so nodes with skewed clocks agree on it; `epoch` grows
  // each time the lease changes hands (a fencing token).
  '0006_leases': {
    async up(db: Kysely<any>) {
      const pg = db.getExecutor().adapter instanceof PostgresAdapter;
      const key = pg ? sql`text collate "C"` : sql`text`;
      await db.schema
        .createTable('leases')
        .addColumn('name', key, (c) => c.primaryKey())
        .addColumn('holder', 'text', (c) => c.notNull())
        .addColumn('epoch', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  // The cache invalidation log (src/query/bucket-cache.ts): which events changed (late events,
  // retention, a deleted dataset), so that every node drops the query states it kept of them.
  // `at_ms` is the database's clock; old entries are pruned.
  '0007_cache_invalidations': {
    async up(db: Kysely<any>) {
      const pg = db.getExecutor().adapter instanceof PostgresAdapter;
      await db.schema
        .createTable('cache_invalidations')
        .addColumn('seq', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('dataset_id', 'text', (c) => c.notNull())
        .addColumn('from_us', 'bigint', (c) => c.notNull())
        .addColumn('to_us', 'bigint', (c) => c.notNull())
        .addColumn('at_ms', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('cache_invalidations_at').on('cache_invalidations').column('at_ms').execute();
    },
  },
};

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return migrations;
  },
};
