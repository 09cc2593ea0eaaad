// The data directory's format version: `waggle-format.json` records the format that wrote the
// directory. At start (serve, and every command that opens the stores) a directory of an older
// format is migrated step by step and its new format recorded; a directory of a newer format
// (written by a newer Waggle) is refused before anything opens it, so an older Waggle never
// touches what it cannot read. The configuration store's schema has its own versioned
// migrations (src/stores/config/migrations.ts), run when the store opens, after this check.
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
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
  mkdirSync(dir, { recursive: true });
  const record: FormatRecord = { format, writtenBy: WAGGLE_VERSION, updatedAt: new Date().toISOString() };
  const tmp = join(dir, `${FORMAT_FILE}.tmp`);
  writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(tmp, join(dir, FORMAT_FILE));
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
