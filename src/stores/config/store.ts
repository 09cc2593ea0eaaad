// One ConfigStore body for both databases: Kysely builds portable SQL with bound parameters,
// the dialect (SQLite via better-sqlite3, or PostgreSQL via pg) is the only difference.
//
// Over 500 lines: one implementation of the whole ConfigStore interface (teams, environments, keys,
// datasets, columns, objects) for both databases; the migrations are apart (migrations.ts).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Generated, type Selectable } from 'kysely';
import pg from 'pg';
import { migrationProvider } from './migrations.js';
import {
  UniqueViolation,
  type ApiKey,
  type ApiKeyPatch,
  type Column,
  type ColumnPatch,
  type ColumnType,
  type NewColumn,
  type ConfigStore,
  type Dataset,
  type DatasetPatch,
  type Environment,
  type EnvironmentPatch,
  type KeyType,
  type NewApiKey,
  type NewDataset,
  type NewEnvironment,
  type NewObject,
  type ObjectFilter,
  type StoredObject,
  type Lease,
  type CacheInvalidation,
  type Page,
  type Team,
} from './types.js';

interface TeamRow {
  id: string;
  slug: string;
  name: string;
  created_at: string;
}
interface EnvironmentRow {
  id: string;
  team_id: string;
  slug: string;
  name: string;
  description: string;
  color: string;
  delete_protected: number;
  created_at: string;
  updated_at: string;
}
interface ApiKeyRow {
  id: string;
  team_id: string;
  environment_id: string | null;
  key_type: string;
  name: string;
  secret_hash: string;
  disabled: number;
  permissions: string;
  scopes: string;
  time_to_live: string | null;
  created_at: string;
  updated_at: string;
}
interface DatasetRow {
  id: string;
  environment_id: string;
  slug: string;
  name: string;
  description: string;
  expand_json_depth: number;
  delete_protected: number;
  definitions: string;
  last_written_at: string | null;
  created_at: string;
  updated_at: string;
}
interface ColumnRow {
  id: string;
  dataset_id: string;
  key_name: string;
  physical: string;
  stored_type: string;
  type: string;
  description: string;
  hidden: number;
  last_written: string | null;
  created_at: string;
  updated_at: string;
}
interface ObjectRow {
  id: string;
  kind: string;
  team_id: string;
  environment_id: string | null;
  dataset_id: string | null;
  scope: string;
  unique_key: string | null;
  body: string;
  created_at: string;
  updated_at: string;
  /** Creation order within created_at (see migration 0005); null on rows older than it. */
  seq: number | string | null;
}
interface LeaseRow {
  name: string;
  holder: string;
  epoch: number | string;
  expires_at: number | string;
}
interface CacheInvalidationRow {
  seq: Generated<number | string>;
  dataset_id: string;
  from_us: number | string;
  to_us: number | string;
  at_ms: number | string;
}
interface Tables {
  leases: LeaseRow;
  cache_invalidations: CacheInvalidationRow;
  objects: ObjectRow;
  columns: ColumnRow;
  teams: TeamRow;
  environments: EnvironmentRow;
  api_keys: ApiKeyRow;
  datasets: DatasetRow;
}

const now = () => new Date().toISOString();
let lastSeq = 0;
/** Strictly increasing within the process: microseconds since the epoch, bumped on ties. */
const nextSeq = () => (lastSeq = Math.max(Date.now() * 1000, lastSeq + 1));
const bool = (v: unknown) => v === true || v === 1 || v === '1';

const toTeam = (r: Selectable<TeamRow>): Team => ({ id: r.id, slug: r.slug, name: r.name, createdAt: r.created_at });
const toEnvironment = (r: Selectable<EnvironmentRow>): Environment => ({
  id: r.id,
  teamId: r.team_id,
  slug: r.slug,
  name: r.name,
  description: r.description,
  color: r.color,
  deleteProtected: bool(r.delete_protected),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
const toApiKey = (r: Selectable<ApiKeyRow>): ApiKey => ({
  id: r.id,
  teamId: r.team_id,
  environmentId: r.environment_id,
  keyType: r.key_type as KeyType,
  name: r.name,
  secretHash: r.secret_hash,
  disabled: bool(r.disabled),
  permissions: JSON.parse(r.permissions),
  scopes: JSON.parse(r.scopes),
  timeToLive: r.time_to_live,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
const toDataset = (r: Selectable<DatasetRow>): Dataset => ({
  id: r.id,
  environmentId: r.environment_id,
  slug: r.slug,
  name: r.name,
  description: r.description,
  expandJsonDepth: Number(r.expand_json_depth),
  deleteProtected: bool(r.delete_protected),
  definitions: JSON.parse(r.definitions),
  lastWrittenAt: r.last_written_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toColumn = (r: Selectable<ColumnRow>): Column => ({
  id: r.id,
  datasetId: r.dataset_id,
  keyName: r.key_name,
  physical: r.physical,
  storedType: r.stored_type as ColumnType,
  type: r.type as ColumnType,
  description: r.description,
  hidden: bool(r.hidden),
  lastWritten: r.last_written,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toObject = <T>(r: Selectable<ObjectRow>): StoredObject<T> => ({
  id: r.id,
  kind: r.kind,
  teamId: r.team_id,
  environmentId: r.environment_id,
  datasetId: r.dataset_id,
  scope: r.scope,
  uniqueKey: r.unique_key,
  body: JSON.parse(r.body) as T,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

async function uniquely<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUniqueViolation(err)) throw new UniqueViolation(what);
    throw err;
  }
}

class KyselyConfigStore implements ConfigStore {
  /**
   * SQLite: each dataset's columns as last read, kept until this store changes them (while a
   * server runs it alone writes the file). A wide dataset has up to 10,000 columns, and every
   * query, trigger and SLO run lists them: reading them took 50–100 ms each time. PostgreSQL
   * stores are shared by several nodes, so they always read.
   */
  private readonly columnsCache = new Map<string, readonly Column[]>();
  /** Counts changes of columns: a list read across one is not kept (it may predate the change). */
  private columnsVersion = 0;

  private forgetColumns(datasetId?: string): void {
    this.columnsVersion++;
    if (datasetId === undefined) this.columnsCache.clear();
    else this.columnsCache.delete(datasetId);
  }

  constructor(
    readonly kind: 'sqlite' | 'postgres',
    private readonly db: Kysely<Tables>,
    /** PostgreSQL: the schema the store lives in (first on its search_path); default: current_schema(). */
    private readonly schema?: string,
  ) {}

  async migrate(): Promise<string[]> {
    // Kysely looks for its migration tables in *every* schema unless told which one, so a store in
    // one schema would take another schema's kysely_migration for its own and never create its own.
    let migrationTableSchema: string | undefined;
    if (this.kind === 'postgres') {
      const current = async () =>
        (await sql<{ schema: string | null }>`select current_schema() as schema`.execute(this.db)).rows[0]?.schema;
      migrationTableSchema = this.schema ?? (await current()) ?? undefined;
    }
    const migrator = new Migrator({ db: this.db, provider: migrationProvider, migrationTableSchema });
    const { error, results } = await migrator.migrateToLatest();
    if (error) throw error;
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  // --- teams
  async createTeam(team: Team): Promise<Team> {
    await uniquely('team', () =>
      this.db
        .insertInto('teams')
        .values({ id: team.id, slug: team.slug, name: team.name, created_at: team.createdAt })
        .execute(),
    );
    return team;
  }
  async getTeam(id: string) {
    const r = await this.db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toTeam(r);
  }
  async getTeamBySlug(slug: string) {
    const r = await this.db.selectFrom('teams').selectAll().where('slug', '=', slug).executeTakeFirst();
    return r && toTeam(r);
  }
  async listTeams() {
    return (await this.db.selectFrom('teams').selectAll().orderBy('id').execute()).map(toTeam);
  }

  // --- environments
  async createEnvironment(env: NewEnvironment): Promise<Environment> {
    const t = now();
    await uniquely('environment', () =>
      this.db
        .insertInto('environments')
        .values({
          id: env.id,
          team_id: env.teamId,
          slug: env.slug,
          name: env.name,
          description: env.description,
          color: env.color,
          delete_protected: env.deleteProtected ? 1 : 0,
          created_at: t,
          updated_at: t,
        })
        .execute(),
    );
    return { ...env, createdAt: t, updatedAt: t };
  }
  async getEnvironment(teamId: string, id: string) {
    const r = await this.db
      .selectFrom('environments')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r && toEnvironment(r);
  }
  async getEnvironmentById(id: string) {
    const r = await this.db.selectFrom('environments').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toEnvironment(r);
  }
  async getEnvironmentBySlug(teamId: string, slug: string) {
    const r = await this.db
      .selectFrom('environments')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('slug', '=', slug)
      .executeTakeFirst();
    return r && toEnvironment(r);
  }
  async listEnvironments(teamId: string, page: Page) {
    let q = this.db.selectFrom('environments').selectAll().where('team_id', '=', teamId);
    if (page.after) q = q.where('id', '>', page.after);
    return (await q.orderBy('id').limit(page.limit).execute()).map(toEnvironment);
  }
  async updateEnvironment(teamId: string, id: string, patch: EnvironmentPatch) {
    const set: Partial<EnvironmentRow> = { updated_at: now() };
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.color !== undefined) set.color = patch.color;
    if (patch.deleteProtected !== undefined) set.delete_protected = patch.deleteProtected ? 1 : 0;
    await this.db.updateTable('environments').set(set).where('team_id', '=', teamId).where('id', '=', id).execute();
    return this.getEnvironment(teamId, id);
  }
  async deleteEnvironment(teamId: string, id: string) {
    return this.db.transaction().execute(async (tx) => {
      // PostgreSQL: lock the row, so that of concurrent deletes only the first reports true (the
      // others wait, then find it gone) and no dataset can be added to it meanwhile. SQLite runs
      // one transaction at a time and has no FOR UPDATE.
      const env = await tx
        .selectFrom('environments')
        .select('id')
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .$if(this.kind === 'postgres', (q) => q.forUpdate())
        .executeTakeFirst();
      if (!env) return false;
      await tx.deleteFrom('api_keys').where('environment_id', '=', id).execute();
      const datasetIds = tx.selectFrom('datasets').select('id').where('environment_id', '=', id);
      await tx.deleteFrom('columns').where('dataset_id', 'in', datasetIds).execute();
      this.forgetColumns();
      await tx.deleteFrom('objects').where('environment_id', '=', id).execute();
      await tx.deleteFrom('datasets').where('environment_id', '=', id).execute();
      const r = await tx.deleteFrom('environments').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    });
  }

  // --- API keys
  async createApiKey(key: NewApiKey): Promise<ApiKey> {
    const t = now();
    await uniquely('API key', () =>
      this.db
        .insertInto('api_keys')
        .values({
          id: key.id,
          team_id: key.teamId,
          environment_id: key.environmentId,
          key_type: key.keyType,
          name: key.name,
          secret_hash: key.secretHash,
          disabled: key.disabled ? 1 : 0,
          permissions: JSON.stringify(key.permissions),
          scopes: JSON.stringify(key.scopes),
          time_to_live: key.timeToLive,
          created_at: t,
          updated_at: t,
        })
        .execute(),
    );
    return { ...key, createdAt: t, updatedAt: t };
  }
  async getApiKey(id: string) {
    const r = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toApiKey(r);
  }
  async getApiKeyBySecretHash(secretHash: string) {
    const r = await this.db.selectFrom('api_keys').selectAll().where('secret_hash', '=', secretHash).executeTakeFirst();
    return r && toApiKey(r);
  }
  async listApiKeys(teamId: string, filter: { keyTypes?: KeyType[]; environmentId?: string }, page: Page) {
    let q = this.db.selectFrom('api_keys').selectAll().where('team_id', '=', teamId);
    if (filter.keyTypes) q = q.where('key_type', 'in', filter.keyTypes);
    if (filter.environmentId) q = q.where('environment_id', '=', filter.environmentId);
    if (page.after) q = q.where('id', '>', page.after);
    return (await q.orderBy('id').limit(page.limit).execute()).map(toApiKey);
  }
  async updateApiKey(id: string, patch: ApiKeyPatch) {
    const set: Partial<ApiKeyRow> = { updated_at: now() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.disabled !== undefined) set.disabled = patch.disabled ? 1 : 0;
    if (patch.permissions !== undefined) set.permissions = JSON.stringify(patch.permissions);
    await this.db.updateTable('api_keys').set(set).where('id', '=', id).execute();
    return this.getApiKey(id);
  }
  async deleteApiKey(id: string) {
    const r = await this.db.deleteFrom('api_keys').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  // --- datasets
  async createDataset(ds: NewDataset): Promise<Dataset> {
    const t = now();
    await uniquely('dataset', () =>
      this.db
        .insertInto('datasets')
        .values({
          id: ds.id,
          environment_id: ds.environmentId,
          slug: ds.slug,
          name: ds.name,
          description: ds.description,
          expand_json_depth: ds.expandJsonDepth,
          delete_protected: ds.deleteProtected ? 1 : 0,
          definitions: JSON.stringify(ds.definitions),
          last_written_at: null,
          created_at: t,
          updated_at: t,
        })
        .execute(),
    );
    return { ...ds, lastWrittenAt: null, createdAt: t, updatedAt: t };
  }
  async getDataset(environmentId: string, slug: string) {
    const r = await this.db
      .selectFrom('datasets')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('slug', '=', slug)
      .executeTakeFirst();
    return r && toDataset(r);
  }
  async listDatasets(environmentId: string) {
    const rows = await this.db
      .selectFrom('datasets')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .orderBy('slug')
      .execute();
    return rows.map(toDataset);
  }
  async updateDataset(environmentId: string, slug: string, patch: DatasetPatch) {
    const set: Partial<DatasetRow> = { updated_at: now() };
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.expandJsonDepth !== undefined) set.expand_json_depth = patch.expandJsonDepth;
    if (patch.deleteProtected !== undefined) set.delete_protected = patch.deleteProtected ? 1 : 0;
    if (patch.definitions !== undefined) set.definitions = JSON.stringify(patch.definitions);
    if (patch.lastWrittenAt !== undefined) set.last_written_at = patch.lastWrittenAt;
    await this.db
      .updateTable('datasets')
      .set(set)
      .where('environment_id', '=', environmentId)
      .where('slug', '=', slug)
      .execute();
    return this.getDataset(environmentId, slug);
  }
  async deleteDataset(environmentId: string, slug: string) {
    return this.db.transaction().execute(async (tx) => {
      const ds = await tx
        .selectFrom('datasets')
        .select('id')
        .where('environment_id', '=', environmentId)
        .where('slug', '=', slug)
        .executeTakeFirst();
      if (!ds) return false;
      await tx.deleteFrom('columns').where('dataset_id', '=', ds.id).execute();
      this.forgetColumns(ds.id);
      await tx.deleteFrom('objects').where('dataset_id', '=', ds.id).execute();
      const r = await tx.deleteFrom('datasets').where('id', '=', ds.id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    });
  }

  // --- columns
  async listColumns(datasetId: string) {
    const cached = this.columnsCache.get(datasetId);
    if (cached) return cached.slice();
    const version = this.columnsVersion;
    const rows = await this.db.selectFrom('columns').selectAll().where('dataset_id', '=', datasetId).orderBy('key_name').execute();
    const columns = rows.map(toColumn);
    if (this.kind === 'sqlite' && version === this.columnsVersion) this.columnsCache.set(datasetId, columns);
    return columns.slice();
  }
  async createColumn(col: NewColumn): Promise<Column> {
    return (await this.createColumns([col]))[0];
  }
  async createColumns(cols: NewColumn[]): Promise<Column[]> {
    if (cols.length === 0) return [];
    for (const c of cols) this.forgetColumns(c.datasetId);
    const t = now();
    const row = (col: NewColumn) => ({
      id: col.id,
      dataset_id: col.datasetId,
      key_name: col.keyName,
      physical: col.physical,
      stored_type: col.storedType,
      type: col.type,
      description: col.description,
      hidden: col.hidden ? 1 : 0,
      last_written: null,
      created_at: t,
      updated_at: t,
    });
    // (In slices of 500 rows: a statement's bound values stay within both databases' limits.)
    await uniquely('column', () =>
      this.db.transaction().execute(async (tx) => {
        for (let i = 0; i < cols.length; i += 500) await tx.insertInto('columns').values(cols.slice(i, i + 500).map(row)).execute();
      }),
    );
    return cols.map((col) => ({ ...col, lastWritten: null, createdAt: t, updatedAt: t }));
  }
  async updateColumn(datasetId: string, id: string, patch: ColumnPatch) {
    this.forgetColumns(datasetId);
    const set: Partial<ColumnRow> = {};
    if (patch.physical !== undefined) set.physical = patch.physical;
    if (patch.storedType !== undefined) set.stored_type = patch.storedType;
    if (patch.type !== undefined) set.type = patch.type;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.hidden !== undefined) set.hidden = patch.hidden ? 1 : 0;
    if (patch.lastWritten !== undefined) set.last_written = patch.lastWritten;
    // last_written alone is bookkeeping of ingest, not an edit of the column.
    if (Object.keys(set).some((k) => k !== 'last_written')) set.updated_at = now();
    if (Object.keys(set).length > 0) {
      await this.db.updateTable('columns').set(set).where('dataset_id', '=', datasetId).where('id', '=', id).execute();
    }
    const r = await this.db.selectFrom('columns').selectAll().where('dataset_id', '=', datasetId).where('id', '=', id).executeTakeFirst();
    return r && toColumn(r);
  }
  async deleteColumn(datasetId: string, id: string) {
    this.forgetColumns(datasetId);
    const r = await this.db.deleteFrom('columns').where('dataset_id', '=', datasetId).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
  async touchColumns(datasetId: string, lastWritten: string, keyNames: string[]) {
    if (keyNames.length === 0) return;
    // (Every few seconds under ingest: the list kept takes the new times, rather than being read again.)
    const cached = this.columnsCache.get(datasetId);
    this.forgetColumns(datasetId);
    if (cached) {
      const touched = new Set(keyNames);
      this.columnsCache.set(datasetId, cached.map((c) => (touched.has(c.keyName) ? { ...c, lastWritten } : c)));
    }
    for (let i = 0; i < keyNames.length; i += 500) {
      await this.db
        .updateTable('columns')
        .set({ last_written: lastWritten })
        .where('dataset_id', '=', datasetId)
        .where('key_name', 'in', keyNames.slice(i, i + 500))
        .execute();
    }
  }

  // --- objects
  async createObject<T>(o: NewObject<T>): Promise<StoredObject<T>> {
    const t = o.createdAt ?? now();
    const row: ObjectRow = {
      id: o.id,
      kind: o.kind,
      team_id: o.teamId,
      environment_id: o.environmentId,
      dataset_id: o.datasetId,
      scope: o.scope,
      unique_key: o.uniqueKey,
      body: JSON.stringify(o.body),
      created_at: t,
      updated_at: t,
      seq: nextSeq(),
    };
    await uniquely(o.kind, () => this.db.insertInto('objects').values(row).execute());
    return toObject<T>(row);
  }
  async getObject<T>(kind: string, id: string) {
    const r = await this.db.selectFrom('objects').selectAll().where('kind', '=', kind).where('id', '=', id).executeTakeFirst();
    return r && toObject<T>(r);
  }
  async listObjects<T>(kind: string, filter: ObjectFilter) {
    let q = this.db.selectFrom('objects').selectAll().where('kind', '=', kind);
    if (filter.teamId !== undefined) q = q.where('team_id', '=', filter.teamId);
    if (filter.environmentId !== undefined) q = q.where('environment_id', '=', filter.environmentId);
    if (filter.datasetId === null) q = q.where('dataset_id', 'is', null);
    else if (filter.datasetId !== undefined) q = q.where('dataset_id', '=', filter.datasetId);
    const rows = await q.orderBy('created_at').orderBy('seq').orderBy('id').execute();
    return rows.map((r) => toObject<T>(r));
  }
  async updateObject<T>(kind: string, id: string, change: { body: T; uniqueKey?: string | null; touch?: boolean }) {
    const set: Partial<ObjectRow> = { body: JSON.stringify(change.body) };
    if (change.uniqueKey !== undefined) set.unique_key = change.uniqueKey;
    if (change.touch !== false) set.updated_at = now();
    await uniquely(kind, () => this.db.updateTable('objects').set(set).where('kind', '=', kind).where('id', '=', id).execute());
    return this.getObject<T>(kind, id);
  }
  async deleteObject(kind: string, id: string) {
    const r = await this.db.deleteFrom('objects').where('kind', '=', kind).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  // --- leases (the database's clock decides expiry: nodes' clocks may differ)
  private nowMs() {
    return this.kind === 'postgres'
      ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`
      : sql<number>`cast((julianday('now') - 2440587.5) * 86400000 as integer)`;
  }
  async acquireLease(name: string, holder: string, ttlMs: number): Promise<Lease | undefined> {
    const expires = sql<number>`${this.nowMs()} + ${Math.max(1, Math.round(ttlMs))}`;
    // One statement: insert, or take over when ours or expired (the WHERE of DO UPDATE), else nothing.
    const r = await this.db
      .insertInto('leases')
      .values({ name, holder, epoch: 1, expires_at: expires })
      .onConflict((oc) =>
        oc.column('name')
          .doUpdateSet({
            holder: (eb) => eb.ref('excluded.holder'),
            expires_at: (eb) => eb.ref('excluded.expires_at'),
            epoch: sql`case when leases.holder = excluded.holder then leases.epoch else leases.epoch + 1 end`,
          })
          .where((eb) => eb.or([eb('leases.holder', '=', eb.ref('excluded.holder')), eb('leases.expires_at', '<=', this.nowMs())])),
      )
      .returning(['name', 'holder', 'epoch', 'expires_at'])
      .executeTakeFirst();
    return r && r.holder === holder ? toLease(r) : undefined;
  }
  async releaseLease(name: string, holder: string): Promise<void> {
    await this.db.deleteFrom('leases').where('name', '=', name).where('holder', '=', holder).execute();
  }
  async liveLeases(prefix: string): Promise<Lease[]> {
    const rows = await this.db
      .selectFrom('leases')
      .selectAll()
      .where('name', '>=', prefix)
      .where('name', '<', prefix + '\uffff')
      .where('expires_at', '>', this.nowMs())
      .orderBy('name')
      .execute();
    return rows.filter((r) => r.name.startsWith(prefix)).map(toLease);
  }
  async pruneLeases(graceMs: number): Promise<number> {
    const r = await this.db.deleteFrom('leases').where('expires_at', '<', sql<number>`${this.nowMs()} - ${Math.max(0, Math.round(graceMs))}`).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  // --- the cache invalidation log (times from the database's clock, as leases')
  async appendCacheInvalidation(datasetId: string, fromUs: number, toUs: number): Promise<void> {
    const clamp = (us: number) => Math.max(-(2 ** 62), Math.min(2 ** 62, Math.trunc(us)));
    await this.db.insertInto('cache_invalidations').values({ dataset_id: datasetId, from_us: clamp(fromUs), to_us: clamp(toUs), at_ms: this.nowMs() }).execute();
  }
  async cacheInvalidationsSince(seq: number): Promise<CacheInvalidation[]> {
    const rows = await this.db.selectFrom('cache_invalidations').selectAll().where('seq', '>', Math.trunc(seq)).orderBy('seq').execute();
    return rows.map((r) => ({ seq: Number(r.seq), datasetId: r.dataset_id, fromUs: Number(r.from_us), toUs: Number(r.to_us), atMs: Number(r.at_ms) }));
  }
  async pruneCacheInvalidations(maxAgeMs: number): Promise<number> {
    const r = await this.db.deleteFrom('cache_invalidations').where('at_ms', '<', sql<number>`${this.nowMs()} - ${Math.max(0, Math.round(maxAgeMs))}`).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

const toLease = (r: Selectable<LeaseRow>): Lease => ({ name: r.name, holder: r.holder, epoch: Number(r.epoch), expiresAt: Number(r.expires_at) });

/** Statements kept per SQL text, at most this many (the least recently used go first). */
const STATEMENT_CACHE = 256;

/**
 * The database as Kysely's SQLite driver sees it, with each statement prepared once: the driver
 * prepares every query it runs, and an ingest request runs four (its key, team, environment and
 * dataset), each prepare costing more than the lookup. SQLite re-prepares a kept statement
 * itself when a migration changes the schema under it. (Kysely streams through prepare() too;
 * nothing here streams, and a statement being iterated would refuse a second use.)
 */
function preparedOnce(db: Database.Database): Pick<Database.Database, 'prepare' | 'close'> {
  const kept = new Map<string, Database.Statement>();
  return {
    prepare(source: string) {
      let stmt = kept.get(source);
      if (stmt) kept.delete(source);
      else {
        stmt = db.prepare(source);
        if (kept.size >= STATEMENT_CACHE) kept.delete(kept.keys().next().value!);
      }
      kept.set(source, stmt);
      return stmt;
    },
    close() {
      kept.clear();
      return db.close();
    },
  } as Pick<Database.Database, 'prepare' | 'close'>;
}

/** SQLite in WAL mode: readers never block the writer, and the CLI can work beside a running server. */
export function openSqliteStore(file: string): ConfigStore {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const store: ConfigStore = new KyselyConfigStore('sqlite', new Kysely<Tables>({ dialect: new SqliteDialect({ database: preparedOnce(sqlite) }) }));
  store.backup = async (to: string) => {
    await sqlite.backup(to);
  };
  return store;
}

/** PostgreSQL; `schema` (optional) isolates a store inside one database, as the tests do. */
export function openPostgresStore(connectionString: string, schema?: string): ConfigStore {
  if (schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`bad schema name ${schema}`);
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    // The name is checked above: identifiers cannot be bound as parameters.
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle connection that breaks (server restart, network) is dropped by the pool and replaced
  // on next use; without a listener its 'error' event would crash the process.
  pool.on('error', () => {});
  return new KyselyConfigStore('postgres', new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) }), schema);
}

/** `WAGGLE_CONFIG_STORE`: `sqlite` (default, file in the data dir) or a `postgres://` URL. */
export function openConfigStore(setting: string, dataDir: string): ConfigStore {
  if (/^postgres(ql)?:\/\//.test(setting)) return openPostgresStore(setting);
  if (setting === 'sqlite' || setting === '') return openSqliteStore(`${dataDir}/config.sqlite`);
  throw new Error(`WAGGLE_CONFIG_STORE must be "sqlite" or a postgres:// URL, not ${JSON.stringify(setting)}`);
}
