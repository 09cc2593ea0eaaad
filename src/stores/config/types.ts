// The configuration store: tenancy (teams, environments, keys) and datasets.
// Two implementations (SQLite, PostgreSQL) share one Kysely-based body; see store.ts.

export type KeyType = 'ingest' | 'configuration' | 'management';

export interface Team {
  id: string;
  slug: string;
  name: string;
  createdAt: string;
}

export interface Environment {
  id: string;
  teamId: string;
  slug: string;
  name: string;
  description: string;
  color: string;
  deleteProtected: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface ApiKey {
  id: string;
  teamId: string;
  /** null for management keys, which belong to the team. */
  environmentId: string | null;
  keyType: KeyType;
  name: string;
  /** SHA-256 (hex) of the secret; the secret itself is never stored. */
  secretHash: string;
  disabled: boolean;
  /** Configuration/ingest keys: permission flags (v2 names, e.g. send_events). */
  permissions: Record<string, boolean>;
  /** Management keys: scopes such as `environments:write`. */
  scopes: string[];
  /** Ingest keys only: RFC 3339 time after which the key stops working. */
  timeToLive: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Dataset {
  id: string;
  environmentId: string;
  slug: string;
  name: string;
  description: string;
  expandJsonDepth: number;
  deleteProtected: boolean;
  /** Dataset definitions: definition key -> column or calculated-field name. */
  definitions: Record<string, string>;
  lastWrittenAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export type ColumnType = 'string' | 'integer' | 'float' | 'boolean';

export interface Column {
  id: string;
  datasetId: string;
  keyName: string;
  /** Event-store column name (c1, c2, …). */
  physical: string;
  /** What the event store holds; only ever widens (integer → float → string). */
  storedType: ColumnType;
  /** What the Columns API shows and queries read the values as. */
  type: ColumnType;
  description: string;
  hidden: boolean;
  lastWritten: string | null;
  createdAt: string;
  updatedAt: string;
}
export type NewColumn = Omit<Column, 'createdAt' | 'updatedAt' | 'lastWritten'>;
export type ColumnPatch = Partial<Pick<Column, 'physical' | 'storedType' | 'type' | 'description' | 'hidden' | 'lastWritten'>>;

/**
 * A configuration object stored as a document (calculated field, query, query annotation, query
 * result, …). `scope` is what `uniqueKey` is unique within; `datasetId` is null for
 * environment-wide (`__all__`) objects and `environmentId` null for team-wide ones.
 */
export interface StoredObject<T = unknown> {
  id: string;
  kind: string;
  teamId: string;
  environmentId: string | null;
  datasetId: string | null;
  scope: string;
  uniqueKey: string | null;
  body: T;
  createdAt: string;
  updatedAt: string;
}
export type NewObject<T = unknown> = Omit<StoredObject<T>, 'createdAt' | 'updatedAt'> & { createdAt?: string };
export interface ObjectFilter {
  teamId?: string;
  environmentId?: string;
  /** null: only environment-wide objects; undefined: any. */
  datasetId?: string | null;
}

/** Cursor pagination over rows ordered by id. */
export interface Page {
  after?: string;
  limit: number;
}

export type NewEnvironment = Omit<Environment, 'createdAt' | 'updatedAt'>;
export type EnvironmentPatch = Partial<Pick<Environment, 'description' | 'color' | 'deleteProtected'>>;
export type NewApiKey = Omit<ApiKey, 'createdAt' | 'updatedAt'>;
export type ApiKeyPatch = Partial<Pick<ApiKey, 'name' | 'disabled' | 'permissions'>>;
export type NewDataset = Omit<Dataset, 'createdAt' | 'updatedAt' | 'lastWrittenAt'>;
export type DatasetPatch = Partial<
  Pick<Dataset, 'description' | 'expandJsonDepth' | 'deleteProtected' | 'definitions' | 'lastWrittenAt'>
>;

/** A lease: held by one holder until `expiresAt` (ms, database clock); `epoch` grows at each change of holder. */
export interface Lease {
  name: string;
  holder: string;
  epoch: number;
  expiresAt: number;
}

/** Raised by a store when a unique name/slug is already taken. */
export class UniqueViolation extends Error {
  constructor(what: string) {
    super(`${what} already exists`);
    this.name = 'UniqueViolation';
  }
}

export interface ConfigStore {
  readonly kind: 'sqlite' | 'postgres';
  /** Applies pending versioned migrations; returns the names applied now. */
  migrate(): Promise<string[]>;
  close(): Promise<void>;
  /**
   * A consistent copy of the whole store into a new file while it stays in use (SQLite's online
   * backup API); absent for stores backed up with their own tools (PostgreSQL: pg_dump).
   */
  backup?(file: string): Promise<void>;

  createTeam(team: Team): Promise<Team>;
  getTeam(id: string): Promise<Team | undefined>;
  getTeamBySlug(slug: string): Promise<Team | undefined>;
  listTeams(): Promise<Team[]>;

  createEnvironment(env: NewEnvironment): Promise<Environment>;
  getEnvironment(teamId: string, id: string): Promise<Environment | undefined>;
  getEnvironmentById(id: string): Promise<Environment | undefined>;
  getEnvironmentBySlug(teamId: string, slug: string): Promise<Environment | undefined>;
  listEnvironments(teamId: string, page: Page): Promise<Environment[]>;
  updateEnvironment(teamId: string, id: string, patch: EnvironmentPatch): Promise<Environment | undefined>;
  /** Deletes the environment with its keys and datasets. */
  deleteEnvironment(teamId: string, id: string): Promise<boolean>;

  createApiKey(key: NewApiKey): Promise<ApiKey>;
  getApiKey(id: string): Promise<ApiKey | undefined>;
  getApiKeyBySecretHash(secretHash: string): Promise<ApiKey | undefined>;
  listApiKeys(teamId: string, filter: { keyTypes?: KeyType[]; environmentId?: string }, page: Page): Promise<ApiKey[]>;
  updateApiKey(id: string, patch: ApiKeyPatch): Promise<ApiKey | undefined>;
  deleteApiKey(id: string): Promise<boolean>;

  createDataset(ds: NewDataset): Promise<Dataset>;
  getDataset(environmentId: string, slug: string): Promise<Dataset | undefined>;
  listDatasets(environmentId: string): Promise<Dataset[]>;
  updateDataset(environmentId: string, slug: string, patch: DatasetPatch): Promise<Dataset | undefined>;
  /** Deletes the dataset and its columns. */
  deleteDataset(environmentId: string, slug: string): Promise<boolean>;

  listColumns(datasetId: string): Promise<Column[]>;
  createColumn(column: NewColumn): Promise<Column>;
  /** Several columns of one dataset in one transaction (a wide event brings hundreds); UniqueViolation if any exists. */
  createColumns(columns: NewColumn[]): Promise<Column[]>;
  updateColumn(datasetId: string, id: string, patch: ColumnPatch): Promise<Column | undefined>;
  deleteColumn(datasetId: string, id: string): Promise<boolean>;
  /** Records `last_written` for many columns of a dataset at once. */
  touchColumns(datasetId: string, lastWritten: string, keyNames: string[]): Promise<void>;

  /** Raises UniqueViolation when (kind, scope, uniqueKey) is taken. */
  createObject<T>(obj: NewObject<T>): Promise<StoredObject<T>>;
  getObject<T>(kind: string, id: string): Promise<StoredObject<T> | undefined>;
  /** Ordered by creation time, then id. */
  listObjects<T>(kind: string, filter: ObjectFilter): Promise<StoredObject<T>[]>;
  /** Replaces the body (and unique key); raises UniqueViolation like createObject. */
  updateObject<T>(kind: string, id: string, change: { body: T; uniqueKey?: string | null; touch?: boolean }): Promise<StoredObject<T> | undefined>;
  deleteObject(kind: string, id: string): Promise<boolean>;

  /**
   * Takes the lease `name` for `holder` for `ttlMs` (from the database's clock), or renews it when
   * `holder` has it already. Atomic: of concurrent callers at most one gets a free or expired
   * lease. Returns the lease when `holder` now holds it, undefined when another live holder does.
   */
  acquireLease(name: string, holder: string, ttlMs: number): Promise<Lease | undefined>;
  /** Gives the lease up at once, if `holder` holds it (a clean shutdown). */
  releaseLease(name: string, holder: string): Promise<void>;
  /** The unexpired leases whose name starts with `prefix`. */
  liveLeases(prefix: string): Promise<Lease[]>;
  /** Deletes leases expired more than `graceMs` ago; returns how many. */
  pruneLeases(graceMs: number): Promise<number>;

  /**
   * The cache invalidation log several nodes share (src/query/bucket-cache.ts): appends that the
   * events of `datasetId` (`*`: every dataset) between `fromUs` and `toUs` changed.
   */
  appendCacheInvalidation(datasetId: string, fromUs: number, toUs: number): Promise<void>;
  /** The log's entries after `seq` (with the database's time of each, ms), oldest first. */
  cacheInvalidationsSince(seq: number): Promise<CacheInvalidation[]>;
  /** Deletes the log's entries older than `maxAgeMs`; returns how many. */
  pruneCacheInvalidations(maxAgeMs: number): Promise<number>;
}

/** An entry of the cache invalidation log. */
export interface CacheInvalidation {
  seq: number;
  datasetId: string;
  fromUs: number;
  toUs: number;
  atMs: number;
}
