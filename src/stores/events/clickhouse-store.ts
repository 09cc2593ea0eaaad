// The ClickHouse event store (WAGGLE_EVENT_STORE=clickhouse://user:pass@host:8123/db, see
// docs/clickhouse.md). Per dataset one MergeTree table, partitioned by day of event time and
// ordered by event time (queries are time windows: the ordering key lets ClickHouse read only the
// granules in the window; day partitions make retention a partition drop). Times are Int64
// microseconds (18.16 has no DateTime64). Field columns are Nullable, added as fields appear and
// widened (integer → float → string) as DuckDB's are. Fields past the hot-column budget are
// attributes (placement.ts): each bucket is a pair of arrays, `__a<b>_k Array(UInt32)` (field
// numbers) and `__a<b>_v Array(String)` (values as text); 18.16 has no Map type, and a pair of
// arrays is what SigNoz's and HyperDX's first schemas used before it.
//
// A cluster (`?cluster=name`, the URL listing every shard's HTTP address) gets on every shard a
// local MergeTree table `<table>_local` and on every node a Distributed table `<table>` over them
// (shard key rand(): events spread evenly, whatever fields they have). Waggle runs its DDL on each
// node itself (ON CLUSTER needs ZooKeeper), writes through the Distributed table with
// insert_distributed_sync=1 (the insert returns once every shard has its rows) and reads through
// it.
//
// An append is one INSERT … FORMAT JSONEachRow per dataset, sent when the ingest writer's group
// is staged: ClickHouse sees few large inserts. It resolves once ClickHouse answered the insert
// (the 202 waits for that). Inserts run one after another in staging order, so ingest times grow
// in commit order as with DuckDB. There are no transactions: a group spanning datasets is one
// insert per dataset, and execute()'s statements run one by one. So a failed insert (a shard that
// does not answer, a memory limit) is undone by hand: every dataset of the group has the rows of
// its ingest time deleted on every shard that answers (a mutation, waited for), and the writer
// gets EventStoreUnavailable (ingest answers 503): nothing acknowledged is lost, and a retry does
// not store its events twice. (A shard that stored rows but is unreachable afterwards keeps them:
// ClickHouse 18.16 has no transactions to roll back.)
//
// Over 500 lines: one class, the whole EventStore on ClickHouse (DDL on every node, appends, reads,
// retention, shapes); its statements are in the clickhouse-*.ts files beside it.
import { randomUUID } from 'node:crypto';
import { textAt, Value, type EventColumns } from './columns.js';
import { ClickHouseClient, ClickHouseError, type ClickHouseNode } from './clickhouse-client.js';
import { clickhouseColumnType, clickhouseDialect, fieldTypeOf } from './clickhouse-dialect.js';
import { bindParams, clickhouseIdent as q, clickhouseLiteral } from './clickhouse-sql.js';
import { attributeBucket, INGESTED_COLUMN, isOwnColumn, SAMPLERATE_COLUMN, TIME_COLUMN } from './engine.js';
import { MAX_ATTRIBUTE_BUCKETS, attributeText, parsePlacement, type Attribute, type TableShape } from './placement.js';
import type { ColumnType } from '../config/types.js';
import { EventStoreUnavailable, QueryTimeout, tableName, type AppendBatch, type ColumnChanges, type EventStore, type PhysicalColumn } from './types.js';

/**
 * Field columns per table: ClickHouse buffers about 2-4 MB per column of an insert (measured:
 * 1,000 Nullable(String) columns took 3.9 GiB for 1,000 rows) and writes two files per column
 * per part, so a table keeps its columns for the fields most events have.
 */
const HOT_COLUMNS = 128;
/** How long an insert may wait for the shards (seconds) before it counts as failed. */
const INSERT_TIMEOUT_SECONDS = 30;
/** Seconds a client is asked to wait after a write that failed. */
const RETRY_AFTER_SECONDS = 5;

/** A failed write's error as the writer sees it: EventStoreUnavailable saying why. */
function unavailable(err: unknown): EventStoreUnavailable {
  if (err instanceof EventStoreUnavailable) return err;
  const code = err instanceof ClickHouseError ? err.code : undefined;
  const reason =
    code === 241 ? 'ClickHouse ran out of memory'
    : !(err instanceof ClickHouseError) || code === 209 || code === 210 || code === 279 || code === 159 ? 'ClickHouse (or one of its shards) did not answer'
    : 'ClickHouse refused the insert';
  return new EventStoreUnavailable(reason, RETRY_AFTER_SECONDS, { cause: err });
}
const ATTRIBUTE_KEYS_TYPE = 'Array(UInt32)';
const ATTRIBUTE_VALUES_TYPE = 'Array(String)';
/** The ALTER clauses adding the attribute buckets (of the first `buckets`) a table lacks. */
function addAttributes(current: Map<string, string>, buckets: number): string[] {
  const out: string[] = [];
  for (let b = 0; b < Math.min(buckets, MAX_ATTRIBUTE_BUCKETS); b++) {
    const name = attributeBucket(b);
    if (!current.has(`${name}_k`)) out.push(`ADD COLUMN ${q(`${name}_k`)} ${ATTRIBUTE_KEYS_TYPE}`);
    if (!current.has(`${name}_v`)) out.push(`ADD COLUMN ${q(`${name}_v`)} ${ATTRIBUTE_VALUES_TYPE}`);
  }
  return out;
}
const MINIMUM_VERSION = [18, 16];

/** How many attribute buckets a table's columns hold (buckets 0, 1, … have both their arrays). */
function countBuckets(names: Set<string>): number {
  let n = 0;
  while (n < MAX_ATTRIBUTE_BUCKETS && names.has(`${attributeBucket(n)}_k`) && names.has(`${attributeBucket(n)}_v`)) n++;
  return n;
}

export interface ClickHouseSettings {
  /** Every node's HTTP interface; with a cluster, one per shard (the first takes reads and writes). */
  nodes: ClickHouseNode[];
  /** The cluster (remote_servers) name, when the tables are sharded. */
  cluster?: string;
}

/** Parses clickhouse://user:pass@host:port[,host:port…]/database[?cluster=name]. */
export function parseClickHouseUrl(setting: string): ClickHouseSettings {
  const m = /^clickhouse:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/?]+)(?:\/([^?]*))?(?:\?(.*))?$/.exec(setting);
  if (!m) throw new Error('WAGGLE_EVENT_STORE: expected clickhouse://user:password@host:8123[,host:port…]/database[?cluster=name]');
  const [, user = 'default', password = '', hosts, database = 'waggle', query = ''] = m;
  const db = decodeURIComponent(database || 'waggle');
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(db)) throw new Error(`WAGGLE_EVENT_STORE: database name ${JSON.stringify(db)} must be letters, digits and _`);
  const nodes = hosts.split(',').map((h) => {
    if (!/^[A-Za-z0-9.\-[\]:]+$/.test(h)) throw new Error(`WAGGLE_EVENT_STORE: bad host ${JSON.stringify(h)}`);
    return { url: `http://${h.includes(':') ? h : `${h}:8123`}`, user: decodeURIComponent(user), password: decodeURIComponent(password), database: db };
  });
  const cluster = new URLSearchParams(query).get('cluster') ?? undefined;
  if (cluster !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(cluster)) throw new Error('WAGGLE_EVENT_STORE: cluster names are letters, digits and _');
  if (!cluster && nodes.length > 1) throw new Error('WAGGLE_EVENT_STORE: several hosts need ?cluster=<name> (the remote_servers entry over them)');
  return { nodes, cluster };
}

export class ClickHouseEventStore implements EventStore {
  readonly dialect = clickhouseDialect;
  readonly embedded = false;
  private readonly clients: ClickHouseClient[];
  /** The node reads and writes go through. */
  private readonly main: ClickHouseClient;
  private readonly layouts = new Map<string, TableShape>();
  /** Counts the layouts dropped: a shape read while a change ran is not cached (it may have missed it). */
  private layoutChanges = 0;
  private lastIngestedUs?: number;
  private ingestedRead?: Promise<void>;
  /** Inserts and DDL run one after another, in the order they were asked for. */
  private chain: Promise<unknown> = Promise.resolve();
  private opened = false;
  private insertSettings: Record<string, number> = {};

  constructor(private readonly settings: ClickHouseSettings) {
    this.clients = settings.nodes.map((n) => new ClickHouseClient(n));
    this.main = this.clients[0];
  }

  private get database(): string {
    return this.settings.nodes[0].database;
  }

  async open(): Promise<void> {
    const version = String((await this.main.rows('SELECT version() AS v', { database: false }))[0].v);
    const [major, minor] = version.split('.').map(Number);
    if (major < MINIMUM_VERSION[0] || (major === MINIMUM_VERSION[0] && minor < MINIMUM_VERSION[1])) {
      throw new Error(`ClickHouse ${version} is older than the minimum supported, ${MINIMUM_VERSION.join('.')}`);
    }
    for (const c of this.clients) await c.run(`CREATE DATABASE IF NOT EXISTS ${q(this.database)}`, { database: false });
    // Newer versions refuse an insert spanning over 100 partitions (days) unless told otherwise;
    // 18.16 has no such limit (nor the setting).
    const limit = await this.main.rows(`SELECT name FROM system.settings WHERE name = 'max_partitions_per_insert_block'`, { database: false });
    this.insertSettings = {
      ...(limit.length > 0 ? { max_partitions_per_insert_block: 0 } : {}),
      // The insert returns once every shard has stored its rows (or fails after a timeout).
      ...(this.settings.cluster ? { insert_distributed_sync: 1, insert_distributed_timeout: INSERT_TIMEOUT_SECONDS } : {}),
    };
    this.opened = true;
  }

  async close(): Promise<void> {
    if (!this.opened) return;
    await this.chain.catch(() => undefined);
    this.opened = false;
  }

  /** Runs `fn` after everything queued before it (inserts keep their order; DDL never overtakes an insert). */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.opened) return Promise.reject(new Error('the event store is closed'));
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** The table holding a dataset's rows on each shard (the Distributed table's target in a cluster). */
  private localTable(datasetId: string): string {
    return this.settings.cluster ? `${tableName(datasetId)}_local` : tableName(datasetId);
  }

  /**
   * Changes the columns of the dataset's tables on every node (local and Distributed): `clauses`
   * gets each table's current columns (name → type) and gives the ALTER clauses it still needs
   * (18.16 has no ADD COLUMN IF NOT EXISTS, so existence is checked here).
   */
  private async alterEverywhere(datasetId: string, clauses: (current: Map<string, string>) => string[]): Promise<void> {
    const tables = this.settings.cluster ? [this.localTable(datasetId), tableName(datasetId)] : [tableName(datasetId)];
    for (const c of this.clients) {
      for (const t of tables) {
        const current = new Map((await c.rows(`DESCRIBE TABLE ${q(t)}`)).map((r) => [String(r.name), String(r.type)]));
        const todo = clauses(current);
        if (todo.length > 0) await c.run(`ALTER TABLE ${q(t)} ${todo.join(', ')}`);
      }
    }
  }

  readonly hotColumns = HOT_COLUMNS;
  readonly attributeBuckets = MAX_ATTRIBUTE_BUCKETS;

  async shape(datasetId: string): Promise<TableShape | undefined> {
    const cached = this.layouts.get(datasetId);
    if (cached) return cached;
    const changes = this.layoutChanges;
    const exists = await this.main.rows(`SELECT name FROM system.tables WHERE database = ${clickhouseLiteral(this.database)} AND name = ${clickhouseLiteral(tableName(datasetId))}`);
    if (exists.length === 0) return undefined;
    const rows = await this.main.rows(`DESCRIBE TABLE ${q(tableName(datasetId))}`);
    const shape: TableShape = {
      columns: rows.filter((r) => !isOwnColumn(String(r.name))).map((r) => ({ physical: String(r.name), type: fieldTypeOf(String(r.type)) })),
      buckets: countBuckets(new Set(rows.map((r) => String(r.name)))),
    };
    if (changes === this.layoutChanges) this.layouts.set(datasetId, shape);
    return shape;
  }

  private forgetLayout(datasetId: string): void {
    this.layoutChanges++;
    this.layouts.delete(datasetId);
  }

  ensureTable(datasetId: string): Promise<void> {
    return this.serial(async () => {
      const local = q(this.localTable(datasetId));
      const fixed = `${q(TIME_COLUMN)} Int64, ${q(SAMPLERATE_COLUMN)} Int64, ${q(INGESTED_COLUMN)} Int64`;
      const existing = await this.shape(datasetId);
      // A table created now gets the columns the dataset has elsewhere already (other nodes).
      let fields = (existing?.columns ?? []).map((c) => `, ${q(c.physical)} ${clickhouseColumnType(c.type)}`).join('');
      fields += addAttributes(new Map(), existing?.buckets ?? 0).map((clause) => `, ${clause.slice('ADD COLUMN '.length)}`).join('');
      for (const c of this.clients) {
        await c.run(
          `CREATE TABLE IF NOT EXISTS ${local} (${fixed}${fields}) ENGINE = MergeTree ` +
            `PARTITION BY toYYYYMMDD(toDateTime(intDiv(${q(TIME_COLUMN)}, 1000000))) ORDER BY ${q(TIME_COLUMN)}`,
        );
        if (this.settings.cluster) {
          await c.run(
            `CREATE TABLE IF NOT EXISTS ${q(tableName(datasetId))} AS ${local} ` +
              `ENGINE = Distributed(${q(this.settings.cluster)}, ${q(this.database)}, ${local}, rand())`,
          );
        }
      }
      this.forgetLayout(datasetId);
    });
  }

  addColumn(datasetId: string, column: PhysicalColumn): Promise<void> {
    return this.changeColumns(datasetId, { add: [column], widen: [] });
  }

  changeColumnType(datasetId: string, column: PhysicalColumn): Promise<void> {
    return this.changeColumns(datasetId, { add: [], widen: [column] });
  }

  dropColumn(datasetId: string, physical: string): Promise<void> {
    return this.dropColumns(datasetId, [physical]);
  }

  /** Drops the columns from every table that still has them (one ALTER per table). */
  dropColumns(datasetId: string, physicals: string[]): Promise<void> {
    if (physicals.length === 0) return Promise.resolve();
    return this.serial(async () => {
      try {
        await this.dropEverywhere(datasetId, physicals);
      } finally {
        this.forgetLayout(datasetId);
      }
    });
  }

  /**
   * Drops columns from the shards' local tables first, then from the Distributed tables, the main
   * node's last: a stop between leaves them in the main node's Distributed table (which
   * shape() reads), where the writer's reconcile finds them unregistered and drops them again.
   * No read or insert names a column being dropped (its field is deleted, or an attribute now).
   */
  private async dropEverywhere(datasetId: string, physicals: string[]): Promise<void> {
    const steps = this.settings.cluster
      ? [...this.clients.map((c) => ({ c, t: this.localTable(datasetId) })), ...[...this.clients].reverse().map((c) => ({ c, t: tableName(datasetId) }))]
      : [{ c: this.main, t: tableName(datasetId) }];
    for (const { c, t } of steps) {
      // (18.16 refuses an ALTER of a MergeTree table removing more than 50 files of a part:
      // max_files_to_remove_in_alter_columns. A Distributed table has none: one ALTER.)
      const per = t === this.localTable(datasetId) ? DROPS_PER_ALTER : Infinity;
      const current = new Set((await c.rows(`DESCRIBE TABLE ${q(t)}`)).map((r) => String(r.name)));
      const todo = physicals.filter((p) => current.has(p));
      for (let i = 0; i < todo.length; i += per) {
        await c.run(`ALTER TABLE ${q(t)} ${todo.slice(i, i + per).map((p) => `DROP COLUMN ${q(p)}`).join(', ')}`);
      }
    }
  }

  /**
   * Adds and widens columns (one ALTER per table). Widening converts stored values as
   * ClickHouse's CAST does: integers to floats exactly below 2^53, numbers to text in
   * ClickHouse's form (a float 3 reads "3", where DuckDB writes "3.0").
   */
  changeColumns(datasetId: string, changes: ColumnChanges): Promise<void> {
    if (changes.add.length === 0 && changes.widen.length === 0 && !changes.buckets) return Promise.resolve();
    return this.serial(async () => {
      const clauses = (current: Map<string, string>) => [
        ...changes.add.filter((c) => !current.has(c.physical)).map((c) => `ADD COLUMN ${q(c.physical)} ${clickhouseColumnType(c.type)}`),
        ...changes.widen
          .filter((c) => current.get(c.physical) !== clickhouseColumnType(c.type))
          .map((c) => `MODIFY COLUMN ${q(c.physical)} ${clickhouseColumnType(c.type)}`),
        ...addAttributes(current, changes.buckets ?? 0),
      ];
      try {
        await this.alterEverywhere(datasetId, clauses);
      } finally {
        this.forgetLayout(datasetId);
      }
    });
  }

  /** Deletes an attribute's values with a mutation on every shard's table (waited for). */
  purgeAttribute(datasetId: string, { key, bucket }: Attribute): Promise<void> {
    return this.serial(async () => {
      if (bucket >= ((await this.shape(datasetId))?.buckets ?? 0)) return;
      const [keys, values] = [q(`${attributeBucket(bucket)}_k`), q(`${attributeBucket(bucket)}_v`)];
      const k = Math.trunc(key);
      const local = this.localTable(datasetId);
      for (const c of this.clients) {
        await c.run(
          `ALTER TABLE ${q(local)} UPDATE ${values} = arrayFilter((v, x) -> x != ${k}, ${values}, ${keys}), ` +
            `${keys} = arrayFilter(x -> x != ${k}, ${keys}) WHERE has(${keys}, ${k})`,
        );
        await waitForMutations(c, this.database, local);
      }
    });
  }

  /**
   * One mutation per shard, after the inserts queued before it (those of groups placed before the
   * column was given): ClickHouse applies it to the parts there are while inserts go on, so the
   * inserts are not held. Waited for on every shard.
   */
  async moveToColumn(datasetId: string, attribute: Attribute, column: string, stopped = () => false): Promise<boolean> {
    await this.serial(async () => undefined);
    const shape = await this.shape(datasetId);
    const type = shape?.columns.find((c) => c.physical === column)?.type;
    // (The field deleted meanwhile: nothing left to move.)
    if (!type || attribute.bucket >= shape!.buckets) return true;
    const [keys, values] = [q(`${attributeBucket(attribute.bucket)}_k`), q(`${attributeBucket(attribute.bucket)}_v`)];
    const k = Math.trunc(attribute.key);
    const local = this.localTable(datasetId);
    for (const c of this.clients) {
      if (stopped()) return false;
      await c.run(
        `ALTER TABLE ${q(local)} UPDATE ${q(column)} = coalesce(${q(column)}, ${clickhouseDialect.attribute(attribute.bucket, k, type)}), ` +
          `${values} = arrayFilter((v, x) -> x != ${k}, ${values}, ${keys}), ${keys} = arrayFilter(x -> x != ${k}, ${keys}) WHERE has(${keys}, ${k})`,
      );
      await waitForMutations(c, this.database, local);
    }
    return true;
  }

  /**
   * The reverse of moveToColumn, for a table with more columns than an insert can hold (made
   * before tables had attributes, or with a larger budget): the columns' values are copied into
   * the attribute buckets; the columns stay until the writer has registered the attributes and
   * drops them (dropColumns). ClickHouse has no transactions, so it is done in steps, each safe
   * to stop after and to run again:
   *
   * 1. the table gets its buckets (at least `buckets`), on every node;
   * 2. mutations on every shard (waited for) copy the columns into their buckets, each value as
   *    the text the attribute path writes for the column's type (`toString`: integers in
   *    decimal, floats in shortest round-trip form, so a float 3 reads back 3 as the column did;
   *    booleans `true`/`false`), up to MOVES_PER_MUTATION columns a mutation. A key is first
   *    taken out of its bucket (a copy left by a run stopped here: none is kept twice), as is any
   *    key that is the number of a column the table has (a copy of a stopped run whose columns
   *    were other ones); a row whose copy is done already is not changed again. Until the
   *    registry names the attributes, reads take the columns alone.
   *
   * Runs after the inserts queued before it, and inserts queued meanwhile wait (serial). `stopped`
   * is asked before each mutation; once it says so, the call rejects with
   * ColumnsToAttributesStopped, leaving what a stop there leaves.
   */
  columnsToAttributes(datasetId: string, moves: { column: string; attribute: Attribute }[], buckets: number, stopped: () => boolean = () => false): Promise<void> {
    return this.serial(async () => {
      try {
        const shape = await this.shape(datasetId);
        if (!shape) return;
        const types = new Map(shape.columns.map((c) => [c.physical, c.type]));
        const todo = moves.filter((m) => types.has(m.column) && m.attribute.bucket < MAX_ATTRIBUTE_BUCKETS);
        const count = Math.min(MAX_ATTRIBUTE_BUCKETS, Math.max(buckets, shape.buckets, ...todo.map((m) => m.attribute.bucket + 1)));
        // 1.
        await this.alterEverywhere(datasetId, (current) => addAttributes(current, count));
        this.forgetLayout(datasetId);
        // 2. The keys each bucket holds that are numbers of the table's columns: copies of an earlier run.
        const numbers = new Set(shape.columns.flatMap((c) => (/^c\d+$/.test(c.physical) ? [Number(c.physical.slice(1))] : [])));
        const held =
          count === 0
            ? undefined
            : (await this.main.rows(`SELECT ${Array.from({ length: count }, (_, b) => `groupUniqArrayArray(${q(`${attributeBucket(b)}_k`)}) AS b${b}`).join(', ')} FROM ${q(tableName(datasetId))}`))[0];
        // Each bucket's part of the copy (at most MOVES_PER_MUTATION columns each), packed into mutations of about that many columns.
        const jobs: CopyJob[] = [];
        for (let b = 0; b < count; b++) {
          const copies = new Set(((held?.[`b${b}`] as unknown[]) ?? []).map(Number).filter((k) => numbers.has(k)));
          const mine = todo.filter((m) => m.attribute.bucket === b).map((m) => ({ column: m.column, key: Math.trunc(m.attribute.key), type: types.get(m.column)! }));
          // (copies of columns not moved now: taken out with the bucket's first job)
          const stale = [...copies].filter((k) => !mine.some((m) => m.key === k));
          for (let i = 0; i === 0 || i < mine.length; i += MOVES_PER_MUTATION) {
            const job = { bucket: b, moved: mine.slice(i, i + MOVES_PER_MUTATION), out: i === 0 ? stale : [] };
            if (job.moved.length > 0 || job.out.length > 0) jobs.push(job);
          }
        }
        const mutations: CopyJob[][] = [];
        for (const job of jobs) {
          const last = mutations.at(-1);
          const size = (m: CopyJob[]) => m.reduce((n, j) => n + j.moved.length + j.out.length, 0);
          if (last && !last.some((j) => j.bucket === job.bucket) && size(last) + job.moved.length + job.out.length <= MOVES_PER_MUTATION) last.push(job);
          else mutations.push([job]);
        }
        const statements = mutations.map(copyIntoBuckets);
        const local = this.localTable(datasetId);
        // (Checked first as a SELECT: a mutation that fails in the background would stay pending.)
        for (const m of statements) await this.main.rows(`SELECT ${m.check} FROM ${q(tableName(datasetId))} LIMIT 1`);
        for (const c of this.clients) {
          for (const m of statements) {
            if (stopped()) throw new ColumnsToAttributesStopped();
            await c.run(`ALTER TABLE ${q(local)} UPDATE ${m.update}`);
          }
          await waitForMutations(c, this.database, local);
        }
      } finally {
        this.forgetLayout(datasetId);
      }
    });
  }

  async append(batches: AppendBatch[], ingestedUs: number): Promise<void> {
    await (await this.stage(batches, ingestedUs)).committed;
  }

  /** Encodes the batches now (the caller may reuse its columns); `committed` resolves when ClickHouse has answered every insert. */
  async stage(batches: AppendBatch[], requestedUs: number): Promise<{ committed: Promise<void> }> {
    if (!this.opened) throw new Error('the event store is closed');
    if (batches.length === 0) return { committed: Promise.resolve() };
    const ingestedUs = await this.nextIngestedUs(requestedUs);
    // One body per dataset: a group's batches of one dataset become one insert.
    const bodies = new Map<string, string[]>();
    for (const b of batches) {
      const shape = await this.shape(b.datasetId);
      const layout = new Map((shape?.columns ?? []).map((c) => [c.physical, c.type]));
      let lines = bodies.get(b.datasetId);
      if (!lines) bodies.set(b.datasetId, (lines = []));
      for (const part of b.parts) encodeRows(lines, part, b, layout, shape?.buckets ?? 0, ingestedUs);
    }
    const committed = this.serial(async () => {
      try {
        for (const [datasetId, lines] of bodies) {
          await this.main.run(`INSERT INTO ${q(tableName(datasetId))} FORMAT JSONEachRow`, {
            body: lines.join('\n'),
            settings: this.insertSettings,
            signal: AbortSignal.timeout(2 * INSERT_TIMEOUT_SECONDS * 1000),
          });
        }
      } catch (err) {
        await this.undoInsert([...bodies.keys()], ingestedUs);
        throw unavailable(err);
      }
    });
    return { committed };
  }

  /**
   * Deletes the rows of a failed group (its ingest time) from the datasets' tables on every
   * shard that answers. Best effort: a shard that does not answer now cannot be cleaned.
   */
  private async undoInsert(datasetIds: string[], ingestedUs: number): Promise<void> {
    for (const datasetId of datasetIds) {
      const local = q(this.localTable(datasetId));
      for (const c of this.clients) {
        try {
          const left = await c.rows(`SELECT count() AS n FROM ${local} WHERE ${q(INGESTED_COLUMN)} = ${ingestedUs}`);
          if (Number(left[0]?.n ?? 0) === 0) continue;
          await c.run(`ALTER TABLE ${local} DELETE WHERE ${q(INGESTED_COLUMN)} = ${ingestedUs}`);
          await waitForMutations(c, this.database, this.localTable(datasetId));
        } catch {
          // (this shard does not answer either)
        }
      }
    }
  }

  /** As DuckDB's: the time asked for, but always after the previous transaction's. */
  private async nextIngestedUs(requestedUs: number): Promise<number> {
    await (this.ingestedRead ??= this.readLastIngested());
    this.lastIngestedUs = Math.max(Math.trunc(requestedUs), this.lastIngestedUs! + 1);
    return this.lastIngestedUs;
  }

  /** The newest ingest time stored (read once, before the first append). */
  private async readLastIngested(): Promise<void> {
    {
      const tables = await this.datasetTables();
      const selects = tables.map((t) => `SELECT max(${q(INGESTED_COLUMN)}) AS m, count() AS n FROM ${q(t)}`);
      const rows = selects.length > 0 ? await this.main.rows(`SELECT max(m) AS m, sum(n) AS n FROM (${selects.join(' UNION ALL ')})`) : [];
      this.lastIngestedUs = rows.length === 0 || Number(rows[0].n) === 0 ? -Infinity : Number(rows[0].m);
    }
  }

  dropDataset(datasetId: string): Promise<void> {
    return this.serial(async () => {
      for (const c of this.clients) {
        if (this.settings.cluster) await c.run(`DROP TABLE IF EXISTS ${q(tableName(datasetId))}`);
        await c.run(`DROP TABLE IF EXISTS ${q(this.localTable(datasetId))}`);
      }
      this.forgetLayout(datasetId);
    });
  }

  /**
   * Retention: drops every day partition wholly before the cutoff, and deletes the older events
   * of the cutoff's own day with a mutation (waited for), on every shard.
   */
  deleteBefore(cutoffUs: number): Promise<number> {
    const cutoff = Math.trunc(cutoffUs);
    const cutoffDay = Number(new Date(Math.floor(cutoff / 1000)).toISOString().slice(0, 10).replace(/-/g, ''));
    return this.serial(async () => {
      let deleted = 0;
      for (const t of await this.datasetTables()) {
        const datasetId = `hcxds_${t.slice(3)}`;
        const n = Number((await this.main.rows(`SELECT count() AS n FROM ${q(t)} WHERE ${q(TIME_COLUMN)} < ${cutoff}`))[0]?.n ?? 0);
        if (n === 0) continue;
        deleted += n;
        const local = this.localTable(datasetId);
        for (const c of this.clients) {
          const parts = await c.rows(
            `SELECT DISTINCT partition FROM system.parts WHERE active AND database = ${clickhouseLiteral(this.database)} AND table = ${clickhouseLiteral(local)}`,
          );
          for (const p of parts) {
            // Partition ids are the day as yyyymmdd (the partition key's UInt32).
            const day = Number(p.partition);
            if (Number.isInteger(day) && day < cutoffDay) await c.run(`ALTER TABLE ${q(local)} DROP PARTITION ${day}`);
          }
          const left = await c.rows(`SELECT count() AS n FROM ${q(local)} WHERE ${q(TIME_COLUMN)} < ${cutoff}`);
          if (Number(left[0]?.n ?? 0) > 0) {
            await c.run(`ALTER TABLE ${q(local)} DELETE WHERE ${q(TIME_COLUMN)} < ${cutoff}`);
            await waitForMutations(c, this.database, local);
          }
        }
      }
      return deleted;
    });
  }

  /** The names of the dataset tables (the ones queries read: Distributed in a cluster). */
  private async datasetTables(): Promise<string[]> {
    const rows = await this.main.rows(
      `SELECT name FROM system.tables WHERE database = ${clickhouseLiteral(this.database)} AND match(name, '^ds_[a-z0-9]+$')`,
    );
    return rows.map((r) => String(r.name));
  }

  query(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
    if (!this.opened) return Promise.reject(new Error('the event store is closed'));
    return this.main.rows(bindParams(sql, params));
  }

  async analyse(sql: string, params: unknown[], timeoutMs: number): Promise<Record<string, unknown>[]> {
    if (!this.opened) throw new Error('the event store is closed');
    const queryId = randomUUID();
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, timeoutMs);
    try {
      return await this.main.rows(bindParams(sql, params), {
        queryId,
        signal: abort.signal,
        settings: { max_execution_time: Math.max(1, Math.ceil(timeoutMs / 1000)) },
      });
    } catch (err) {
      if (timedOut || (err as { code?: number }).code === 159) {
        void this.main.kill(queryId);
        throw new QueryTimeout(timeoutMs);
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs the statements in order (ClickHouse has no transactions: not atomic). */
  async execute(statements: { sql: string; params?: unknown[] }[]): Promise<Record<string, unknown>[]> {
    let rows: Record<string, unknown>[] = [];
    for (const s of statements) {
      const sql = bindParams(s.sql, s.params ?? []);
      rows = /^\s*(SELECT|WITH)\b/i.test(sql) ? await this.main.rows(sql) : (await this.main.run(sql), []);
    }
    return rows;
  }
}

/** Columns one ALTER drops from a MergeTree table, at most: 4 files each (a Nullable column's data, null map and their marks), 18.16 refusing more than 50. */
const DROPS_PER_ALTER = 12;
/** Columns one mutation copies into a bucket, at most (its statement stays well within ClickHouse's query size). */
const MOVES_PER_MUTATION = 100;

/** columnsToAttributes was asked to stop (what it did so far is left as a stop there leaves it). */
export class ColumnsToAttributesStopped extends Error {
  constructor() {
    super('moving columns to attributes: stopped');
  }
}

/** A column's value as the text an attribute of its type keeps (placement.ts's attributeText). */
function attributeTextSql(column: string, type: ColumnType): string {
  const v = `assumeNotNull(${q(column)})`;
  return type === 'string' ? v : type === 'boolean' ? `if(${v} = 1, 'true', 'false')` : `toString(${v})`;
}

/** A bucket's part of columnsToAttributes' copy: the columns moved into it, and the keys taken out of it first. */
interface CopyJob {
  bucket: number;
  moved: { column: string; key: number; type: ColumnType }[];
  out: number[];
}

/**
 * A mutation of columnsToAttributes' second step (and a SELECT of its expressions, to check them
 * first): in each bucket, the keys `out` and those moved are taken out, then each moved column's
 * value (where it has one) goes in under its key. (Every assignment of an UPDATE reads the row as
 * it was.) Only rows still to change are rewritten: a column's value and its key are not yet
 * together (or a key to take out is there), so a run again after a stop redoes no finished row.
 */
function copyIntoBuckets(jobs: CopyJob[]): { check: string; update: string } {
  const assignments: string[] = [];
  const checks: string[] = [];
  const where: string[] = [];
  for (const { bucket, moved, out } of jobs) {
    const [keys, values] = [q(`${attributeBucket(bucket)}_k`), q(`${attributeBucket(bucket)}_v`)];
    const has = `[${[...new Set([...out, ...moved.map((m) => m.key)])].join(', ')}]`;
    const kept = [`arrayFilter(x -> NOT has(${has}, x), ${keys})`, `arrayFilter((v, x) -> NOT has(${has}, x), ${values}, ${keys})`];
    const added = [
      moved.map((m) => `if(isNull(${q(m.column)}), emptyArrayUInt32(), [toUInt32(${m.key})])`),
      moved.map((m) => `if(isNull(${q(m.column)}), emptyArrayString(), [${attributeTextSql(m.column, m.type)}])`),
    ];
    const [k, v] = [0, 1].map((i) => (added[i].length > 0 ? `arrayConcat(${[kept[i], ...added[i]].join(', ')})` : kept[i]));
    assignments.push(`${keys} = ${k}`, `${values} = ${v}`);
    checks.push(`${k} AS k${bucket}`, `${v} AS v${bucket}`);
    where.push(...moved.map((m) => `isNotNull(${q(m.column)}) != has(${keys}, ${m.key})`));
    if (out.length > 0) where.push(`hasAny(${keys}, [${out.join(', ')}])`);
  }
  return { check: checks.join(', '), update: `${assignments.join(', ')} WHERE ${where.join(' OR ')}` };
}

async function waitForMutations(c: ClickHouseClient, database: string, table: string): Promise<void> {
  for (let i = 0; ; i++) {
    const rows = await c.rows(
      `SELECT count() AS n FROM system.mutations WHERE database = ${clickhouseLiteral(database)} AND table = ${clickhouseLiteral(table)} AND is_done = 0`,
    );
    if (Number(rows[0]?.n ?? 0) === 0) return;
    await new Promise((r) => setTimeout(r, Math.min(200, 10 * 2 ** i)));
  }
}

/**
 * Appends one part's events as JSONEachRow lines: the fixed columns, then each field with a
 * value, converted to its column's type as the DuckDB store converts (a number or boolean in a
 * text column is its text form), then the attribute buckets with values, as their pairs of arrays
 * (values as text, as placement.ts writes them).
 */
function encodeRows(lines: string[], part: EventColumns, batch: AppendBatch, layout: Map<string, string>, buckets: number, ingestedUs: number): void {
  const targets = part.fields.map((f) => {
    // (Without the registry's placements, parts name table columns.)
    const physical = batch.columns ? batch.columns.get(f.name)?.physical : undefined;
    const p = batch.columns ? (physical === undefined ? undefined : parsePlacement(physical)) : { column: f.name, attribute: undefined };
    const type = p?.column === undefined ? undefined : layout.get(p.column);
    // A field moving to a column of its own is written to the column.
    if (p?.column !== undefined && type !== undefined) return { key: JSON.stringify(p.column), type };
    if (p?.attribute && !p.column && p.attribute.bucket < buckets) return { attribute: p.attribute };
    throw new Error(`event store append: no column for ${JSON.stringify(f.name)} in the table`);
  });
  // Column by column (a sparse column's values go straight to their rows): each row's column
  // members, and each row's attribute keys and values per bucket.
  const members: string[][] = Array.from({ length: part.count }, () => []);
  const keys: number[][][] = Array.from({ length: part.count }, () => []);
  const values: string[][][] = Array.from({ length: part.count }, () => []);
  part.fields.forEach((f, i) => {
    const target = targets[i];
    const slots = f.rows ? f.present : part.count;
    for (let s = 0; s < slots; s++) {
      const k = f.kinds[s];
      if (k === Value.Absent) continue;
      const row = f.rows ? f.rows[s] : s;
      const x = f.nums[s];
      if ('attribute' in target) {
        const { bucket, key } = target.attribute!;
        (keys[row][bucket] ??= []).push(key);
        const text = k === Value.String ? textAt(part, f.spans![2 * s], f.spans![2 * s + 1]) : attributeText(k === Value.Boolean ? 'boolean' : k === Value.Integer ? 'integer' : 'float', x);
        (values[row][bucket] ??= []).push(JSON.stringify(text));
        continue;
      }
      let v: string;
      switch (target.type) {
        case 'string':
          v = JSON.stringify(k === Value.String ? textAt(part, f.spans![2 * s], f.spans![2 * s + 1]) : k === Value.Boolean ? String(x !== 0) : String(x));
          break;
        case 'integer':
          if (k !== Value.Integer) throw new Error(`event store append: a ${k === Value.String ? 'string' : 'non-integer'} value for an integer column`);
          v = BigInt(x).toString();
          break;
        case 'float':
          if (k !== Value.Integer && k !== Value.Float) throw new Error('event store append: a non-numeric value for a float column');
          v = String(x);
          break;
        default:
          if (k !== Value.Boolean) throw new Error('event store append: a non-boolean value for a boolean column');
          v = x !== 0 ? '1' : '0';
      }
      members[row].push(`${target.key}:${v}`);
    }
  });
  for (let row = 0; row < part.count; row++) {
    let line = `{"${TIME_COLUMN}":${Math.trunc(part.timeUs[row])},"${SAMPLERATE_COLUMN}":${part.samplerate[row]},"${INGESTED_COLUMN}":${ingestedUs}`;
    if (members[row].length > 0) line += `,${members[row].join(',')}`;
    keys[row].forEach((k, b) => {
      if (k) line += `,"${attributeBucket(b)}_k":[${k.join(',')}],"${attributeBucket(b)}_v":[${values[row][b].join(',')}]`;
    });
    lines.push(`${line}}`);
  }
}
