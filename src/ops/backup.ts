// Backup and restore of a data directory (`waggle backup`, `waggle restore`).
//
// A backup is a directory: `events.duckdb` (a copy of every event-store table from one
// snapshot), `config.sqlite` (SQLite's online backup of the configuration store),
// `waggle-format.json` and `backup.json` (what it holds). The event store is copied first and the
// configuration store after it: every column of an event in the copy was registered before that
// event was stored, so the later configuration copy names them all (a column registered after
// the event snapshot comes back empty; the column registry's reconciling at start handles it).
//
// A running server owns its event store (DuckDB lets one process open the file), so `waggle
// backup` asks it, over the control socket in its data directory, to make the copy itself: its
// stores stay in use and ingest goes on (the copy reads a snapshot; nothing waits for it). With
// no server running the command opens the stores and copies them the same way.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync, chmodSync, unlinkSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ConfigStore } from '../stores/config/types.js';
import type { EventStore } from '../stores/events/types.js';
import { CURRENT_FORMAT, DataDirError, FORMAT_FILE, WAGGLE_VERSION, isEmptyDir, readFormat } from './data-dir.js';

export const MANIFEST = 'backup.json';
const EVENTS_FILE = 'events.duckdb';
const CONFIG_FILE = 'config.sqlite';

export interface BackupManifest {
  createdAt: string;
  writtenBy: string;
  format: number;
  /** What the backup holds, and what it does not (stores backed up with their own tools). */
  covers: string[];
  notCovered: string[];
  /** Rows per event-store table in the copy. */
  eventRows?: Record<string, number>;
  /** Seconds the copy took. */
  seconds: number;
}

/** Copies the stores of a data directory (open, in use or not) into `to`, which must be new or empty. */
export async function backupStores(stores: { events: EventStore; config: ConfigStore }, to: string): Promise<BackupManifest> {
  const target = resolve(to);
  if (!isEmptyDir(target)) throw new DataDirError(`the backup target ${target} is not empty; give a new or empty directory`);
  mkdirSync(target, { recursive: true });
  const started = performance.now();
  const manifest: BackupManifest = {
    createdAt: new Date().toISOString(),
    writtenBy: WAGGLE_VERSION,
    format: CURRENT_FORMAT,
    covers: [],
    notCovered: [],
    seconds: 0,
  };
  // The event store first (see the head of this file).
  if (stores.events.backup) {
    manifest.eventRows = await stores.events.backup(join(target, EVENTS_FILE));
    manifest.covers.push('event store (events.duckdb)');
  } else {
    manifest.notCovered.push('event store: back it up with its own tools (ClickHouse: BACKUP … TO Disk(…) or clickhouse-backup)');
  }
  if (stores.config.backup) {
    await stores.config.backup(join(target, CONFIG_FILE));
    manifest.covers.push('configuration store (config.sqlite)');
  } else {
    manifest.notCovered.push('configuration store (PostgreSQL): back it up with pg_dump, e.g. pg_dump -Fc "$WAGGLE_CONFIG_STORE" > waggle-config.dump');
  }
  manifest.seconds = Math.round((performance.now() - started) / 10) / 100;
  writeFileSync(join(target, FORMAT_FILE), `${JSON.stringify({ format: CURRENT_FORMAT, writtenBy: WAGGLE_VERSION, updatedAt: manifest.createdAt }, null, 2)}\n`);
  writeFileSync(join(target, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** Puts a backup in place as the data directory `dataDir`, which must be new or empty. */
export function restoreBackup(from: string, dataDir: string): BackupManifest {
  const source = resolve(from);
  const manifestFile = join(source, MANIFEST);
  if (!existsSync(manifestFile)) throw new DataDirError(`${source} is not a Waggle backup (no ${MANIFEST})`);
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as BackupManifest;
  const format = readFormat(source);
  if (format && format.format > CURRENT_FORMAT) {
    throw new DataDirError(`the backup in ${source} has format ${format.format}; this Waggle reads formats up to ${CURRENT_FORMAT}. Nothing was changed`);
  }
  const target = resolve(dataDir);
  if (!isEmptyDir(target)) throw new DataDirError(`the data directory ${target} is not empty: restore into a new or empty directory (nothing was changed)`);
  mkdirSync(target, { recursive: true });
  // Each file under a temporary name, renamed once whole: an interrupted restore leaves no file that looks complete.
  for (const f of [EVENTS_FILE, CONFIG_FILE, FORMAT_FILE]) {
    if (!existsSync(join(source, f))) continue;
    copyFileSync(join(source, f), join(target, `${f}.restoring`));
    renameSync(join(target, `${f}.restoring`), join(target, f));
  }
  return manifest;
}

// --- the control socket: how `waggle backup` reaches a server running on the data directory

/**
 * The control socket of a data directory: in the directory itself, or (when that path is too long
 * for a Unix socket) in the temp directory under a name made from the directory's path.
 */
export function controlSocketPath(dataDir: string): string {
  const inDir = join(resolve(dataDir), 'waggle.sock');
  if (Buffer.byteLength(inDir) <= 100) return inDir;
  return join(tmpdir(), `waggle-${createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 16)}.sock`);
}

/**
 * Listens on the control socket (owner-only permissions): POST /backup {"to": dir} answers the
 * manifest. Call once the stores are open (their locks keep a second server off this directory,
 * so a socket file found here is a stale one and is replaced).
 */
export async function startControlSocket(dataDir: string, stores: { events: EventStore; config: ConfigStore }): Promise<{ close(): Promise<void> }> {
  const path = controlSocketPath(dataDir);
  if (existsSync(path)) unlinkSync(path);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      // Who is serving this directory: how a second server knows it must not start here.
      if (req.method === 'GET' && req.url === '/pid') return answer(200, { pid: process.pid });
      if (req.method !== 'POST' || req.url !== '/backup') return answer(404, { error: 'unknown control request' });
      let to: unknown;
      try {
        to = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { to?: unknown }).to;
      } catch {
        to = undefined;
      }
      if (typeof to !== 'string' || to === '') return answer(400, { error: 'the body must be {"to": "<directory>"}' });
      backupStores(stores, to).then(
        (manifest) => answer(200, manifest),
        (err: Error) => answer(err instanceof DataDirError ? 409 : 500, { error: err.message }),
      );
    });
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(path, () => ok());
  });
  chmodSync(path, 0o600);
  return {
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => {
          try {
            unlinkSync(path);
          } catch {
            // already gone
          }
          ok();
        });
      }),
  };
}

/**
 * The PID of the server running on `dataDir`, asked over its control socket; undefined when none
 * answers (no socket, or one left by a server that was killed).
 */
export function runningServerPid(dataDir: string): Promise<number | undefined> {
  const socketPath = controlSocketPath(dataDir);
  if (!existsSync(socketPath)) return Promise.resolve(undefined);
  return new Promise((ok) => {
    const req = request({ socketPath, path: '/pid', method: 'GET', timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          ok(res.statusCode === 200 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { pid: number }).pid : undefined);
        } catch {
          ok(undefined);
        }
      });
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => ok(undefined));
    req.end();
  });
}

/**
 * Asks the server on `dataDir` for a backup into `to`. Resolves undefined when no server answers
 * on the control socket (none is running).
 */
export function requestBackup(dataDir: string, to: string): Promise<BackupManifest | undefined> {
  const socketPath = controlSocketPath(dataDir);
  if (!existsSync(socketPath)) return Promise.resolve(undefined);
  return new Promise((ok, fail) => {
    const req = request({ socketPath, path: '/backup', method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as BackupManifest & { error?: string };
        if (res.statusCode === 200) ok(body);
        else fail(new DataDirError(`the running server could not make the backup: ${body.error}`));
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      // A socket file left by a server that was killed: nothing listens.
      if (err.code === 'ECONNREFUSED' || err.code === 'ENOENT') ok(undefined);
      else fail(err);
    });
    req.end(JSON.stringify({ to: resolve(to) }));
  });
}
