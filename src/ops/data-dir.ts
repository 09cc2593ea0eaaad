// The data directory's format version: `waggle-format.json` records the format that wrote the
// directory. At start (serve, and every command that opens the stores) a directory of an older
// format is migrated step by step and its new format recorded; a directory of a newer format
// (written by a newer Waggle) is refused before anything opens it, so an older Waggle never
// touches what it cannot read. The configuration store's schema has its own versioned
// migrations (src/stores/config/migrations.ts), run when the store opens, after this check.
import { accessSync, constants, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

export const FORMAT_FILE = 'waggle-format.json';

/**
 * The format this Waggle writes.
 * 0: directories written before formats were recorded (config.sqlite and events.duckdb, no format file).
 * 1: the same files, and the format file.
 */
export const CURRENT_FORMAT = 1;

const version: string = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
export const WAGGLE_VERSION = `waggle ${version}`;

interface FormatRecord {
  format: number;
  writtenBy: string;
  updatedAt: string;
}

/** One migration step: what it does (logged) and the change, on a directory of format `from`. */
interface Step {
  from: number;
  describe: string;
  run(dir: string): void;
}

const STEPS: Step[] = [
  // Format 0 → 1 changes no file: the directory gets the record that later steps start from.
  { from: 0, describe: 'record the format version (waggle-format.json)', run: () => undefined },
];

export class DataDirError extends Error {}

/** The files Waggle keeps in a data directory (the format file aside): their presence means a format-0 directory. */
const DATA_FILES = ['config.sqlite', 'events.duckdb'];

/** The recorded format of a directory: its number, 0 for an unrecorded directory with data, undefined for a new (empty or missing) one. */
export function readFormat(dir: string): FormatRecord | { format: 0 } | undefined {
  const file = join(dir, FORMAT_FILE);
  if (existsSync(file)) {
    let record: unknown;
    try {
      record = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new DataDirError(`${file} cannot be read (${(err as Error).message}); nothing was changed. Restore it from a backup, or remove it if this directory was written by Waggle ${version} or older`);
    }
    const format = (record as { format?: unknown })?.format;
    if (!Number.isInteger(format) || (format as number) < 0) throw new DataDirError(`${file} has no valid "format" number; nothing was changed`);
    return record as FormatRecord;
  }
  if (existsSync(dir) && DATA_FILES.some((f) => existsSync(join(dir, f)))) return { format: 0 };
  return undefined;
}

function writeFormat(dir: string, format: number): void {
  const record: FormatRecord = { format, writtenBy: WAGGLE_VERSION, updatedAt: new Date().toISOString() };
  const tmp = join(dir, `${FORMAT_FILE}.tmp`);
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`);
    renameSync(tmp, join(dir, FORMAT_FILE));
  } catch (err) {
    throw notWritable(dir, err);
  }
}

/** Every file Waggle may write in a data directory, as far as they exist (the stores' logs too). */
const WRITTEN_FILES = ['config.sqlite', 'config.sqlite-wal', 'config.sqlite-shm', 'events.duckdb', 'events.duckdb.wal', FORMAT_FILE];

/** A file-system error while writing the data directory, as a message naming the directory, the file and the cause. */
function notWritable(dir: string, err: unknown): Error {
  const e = err as NodeJS.ErrnoException;
  if (!e?.code) return err as Error;
  const cause =
    e.code === 'EROFS'
      ? 'it is on a read-only file system'
      : e.code === 'EACCES' || e.code === 'EPERM'
        ? `permission denied to uid ${process.getuid?.() ?? '?'}, the user running Waggle`
        : e.code === 'ENOSPC'
          ? 'no space left on the device'
          : e.message;
  const where = !existsSync(dir) ? `${dir} cannot be created` : !e.path || e.path === dir ? `no file can be made in ${dir}` : `${e.path} cannot be written`;
  return new DataDirError(
    `the data directory ${dir} is not writable: ${where} (${cause}). Waggle keeps its stores there and writes to them; ` +
      'give this user write access to the directory and its files, or choose another one (--data-dir or WAGGLE_DATA_DIR).',
  );
}

/**
 * Refuses, before any store opens, a data directory this process cannot write (the stores would
 * fail later with errors that name neither the directory nor the cause: SQLite's "attempt to
 * write a readonly database", DuckDB's IO errors). A missing directory is checked when it is made.
 */
export function checkWritable(dir: string): void {
  if (!existsSync(dir)) return;
  for (const path of [...WRITTEN_FILES.map((f) => join(dir, f)).filter((p) => existsSync(p)), dir]) {
    try {
      accessSync(path, constants.W_OK);
    } catch (err) {
      throw notWritable(dir, err);
    }
  }
}

/**
 * The check of every command but `init` and `serve`, which alone may create a data directory:
 * `dir` must hold one already, so that a mistyped --data-dir is refused instead of becoming a new,
 * empty store. Creates nothing.
 */
export function requireDataDir(dir: string): void {
  if (readFormat(dir) !== undefined) return;
  const what = !existsSync(dir) ? 'it does not exist' : readdirSync(dir).length === 0 ? 'it is empty' : `it holds no ${FORMAT_FILE}, config.sqlite or events.duckdb`;
  throw new DataDirError(
    `${dir} is not a Waggle data directory (${what}); nothing was created. Check --data-dir (or WAGGLE_DATA_DIR), ` +
      `or make one with \`waggle init --data-dir ${dir}\` (or \`waggle serve\`).`,
  );
}

/**
 * DuckDB's refusal to open an event store another process holds ("Could not set lock on file …:
 * Conflicting lock is held in /usr/bin/node (PID 123)"), as a message naming the data directory,
 * the file and that process. Other errors are returned as they are.
 */
export function explainLockError(err: unknown, dir: string): unknown {
  const m = /Could not set lock on file "([^"]+)": Conflicting lock is held in (.*?) \(PID (\d+)\)/.exec((err as Error)?.message ?? '');
  if (!m) return err;
  return new DataDirError(
    `another Waggle server or command, PID ${m[3]} (${m[2]}), is using the data directory ${dir}: it holds the lock on ${m[1]}. ` +
      'Stop it first, or choose another data directory (--data-dir or WAGGLE_DATA_DIR).',
  );
}

/**
 * Makes a data directory ready for this Waggle: records the format of a new one, migrates an
 * older one, refuses a newer one (DataDirError, nothing touched). Returns what it did, for the log.
 */
export function prepareDataDir(dir: string): { from?: number; to: number; steps: string[] } {
  const found = readFormat(dir);
  if (found === undefined) {
    writeFormat(dir, CURRENT_FORMAT);
    return { to: CURRENT_FORMAT, steps: [] };
  }
  if (found.format > CURRENT_FORMAT) {
    const by = 'writtenBy' in found ? ` by ${found.writtenBy}` : '';
    throw new DataDirError(
      `the data directory ${dir} has format ${found.format} (written${by}); this Waggle (${version}) reads formats up to ${CURRENT_FORMAT}. ` +
        'Nothing was changed. Run the newer Waggle on it, or restore a backup made with this version.',
    );
  }
  const steps: string[] = [];
  for (let f = found.format; f < CURRENT_FORMAT; f++) {
    const step = STEPS.find((s) => s.from === f);
    if (!step) throw new DataDirError(`no migration from data directory format ${f}; nothing more was changed`);
    step.run(dir);
    writeFormat(dir, f + 1);
    steps.push(`${f} → ${f + 1}: ${step.describe}`);
  }
  return { from: found.format, to: CURRENT_FORMAT, steps };
}

/** True when `dir` is missing or empty (a restore target must be). */
export function isEmptyDir(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0;
}
