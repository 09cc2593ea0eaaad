// Disk-full safety. The data directory's free space is read (statfs) at most every 200 ms, when
// a write asks; below the reserve (WAGGLE_DISK_RESERVE) new ingest batches get 503 with
// Retry-After and configuration writes get 503, while queries, which need no new space, go on.
// The reserve is there so that the stores never meet a full disk themselves: a commit that did
// would fail, and the space kept back lets what is already under way (a commit, a checkpoint,
// the stored copy of a query result) finish. When a store does report a full disk (another
// process took the reserve), the guard counts the disk as full until statfs shows space again.
// Writes are accepted again as soon as the free space is back above the reserve: no restart.
import { statfsSync } from 'node:fs';
import { ApiError } from '../errors.js';

/** Seconds an ingest client is asked to wait while the disk is full. */
export const DISK_FULL_RETRY_SECONDS = 30;
const RECHECK_MS = 200;

/** The errors a store gives when its disk is full (SQLite, DuckDB, Node). */
export function isDiskFull(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  if (e?.code === 'ENOSPC' || e?.code === 'SQLITE_FULL') return true;
  return typeof e?.message === 'string' && /No space left on device|database or disk is full|ENOSPC/i.test(e.message);
}

export class DiskGuard {
  private checkedAt = -Infinity;
  private free = Infinity;
  /** A store reported a full disk: full until statfs shows more free space than then. */
  private fullAtFree?: number;

  constructor(
    private readonly dir: string,
    private readonly reserveBytes: number,
    private readonly onChange?: (full: boolean, freeBytes: number) => void,
  ) {}

  /** Free bytes for this user on the data directory's filesystem (Infinity when it cannot be read). */
  private freeBytes(): number {
    const now = performance.now();
    if (now - this.checkedAt >= RECHECK_MS) {
      this.checkedAt = now;
      const wasFull = this.full;
      try {
        const s = statfsSync(this.dir);
        this.free = s.bavail * s.bsize;
      } catch {
        this.free = Infinity;
      }
      if (this.fullAtFree !== undefined && this.free > this.fullAtFree + this.reserveBytes) this.fullAtFree = undefined;
      if (this.full !== wasFull) this.onChange?.(this.full, this.free);
    }
    return this.free;
  }

  private get full(): boolean {
    return this.fullAtFree !== undefined || this.free < this.reserveBytes;
  }

  /** True while writes are refused. */
  isFull(): boolean {
    this.freeBytes();
    return this.full;
  }

  /** A store failed for want of space: refuse writes until space comes back. */
  noteFull(): void {
    this.checkedAt = -Infinity;
    const free = this.freeBytes();
    const wasFull = this.full;
    this.fullAtFree = Number.isFinite(free) ? free : 0;
    if (!wasFull) this.onChange?.(true, free);
  }

  /** Throws the ingest refusal (503, Retry-After) while the disk is full. */
  refuseIngest(): void {
    if (this.isFull()) throw ingestDiskFull();
  }

}

export function ingestDiskFull(): ApiError {
  return new ApiError(503, 'the data directory is out of disk space; retry later', { retryAfter: DISK_FULL_RETRY_SECONDS });
}
