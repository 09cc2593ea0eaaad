// DuckDB statements left to DuckDB's own threads while this process only looks in on them.
//
// A statement run the usual way (`connection.run`) executes on a libuv thread, which takes part
// in it as one more DuckDB thread: it runs the statement's tasks, and when none is left for it
// while the statement still runs on another thread, it loops asking for one until the end
// (DuckDB's PendingQueryResult::ExecuteInternal). A CHECKPOINT is a single task: when a DuckDB
// thread took it, the libuv thread spun for the whole checkpoint (a fifth of a wide-ingest
// server's CPU in `perf` samples), and the checkpoint ran on one thread.
//
// Started as a pending result and polled (a check that runs no task), a statement runs on
// DuckDB's threads alone and the caller's thread sleeps between looks. The store opens DuckDB
// with `external_threads` 0, so that all of its `threads` (one per core) are DuckDB's; the
// statements that scan or rewrite data (queries, checkpoints, a move's UPDATE, retention's
// DELETE) are polled, so that no caller's thread adds itself to them. Transaction control, DDL
// and appends, which run no parallel tasks, run the usual way.
import type { DuckDBConnection, DuckDBPendingResult } from '@duckdb/node-api';
import { bindings } from './duckdb-chunks.js';

/** Milliseconds between looks: a polled statement ends up to about this much later. */
const POLL_MS = 1;

type Params = Parameters<DuckDBConnection['start']>[1];

/** The C API's handle of a pending result (a field node-api keeps to itself). */
const rawPending = (p: DuckDBPendingResult) => (p as unknown as { pending_result: Parameters<typeof bindings.pending_execute_check_state>[0] }).pending_result;

const RUNNING = new Set([bindings.PendingState.RESULT_NOT_READY, bindings.PendingState.NO_TASKS_AVAILABLE]);

/**
 * The last polled statement of each connection. A statement started on a connection closes the
 * pending one before it (DuckDB cancels it), so polled statements on one connection run one
 * after the other, as statements run the usual way wait for the connection's lock.
 */
const last = new WeakMap<DuckDBConnection, Promise<unknown>>();

function inTurn<T>(conn: DuckDBConnection, fn: () => Promise<T>): Promise<T> {
  const run = (last.get(conn) ?? Promise.resolve()).then(fn, fn);
  last.set(conn, run.catch(() => undefined));
  return run;
}

/** Starts `sql` and waits, without running any of its tasks, until it has ended (well or not). */
async function started(conn: DuckDBConnection, sql: string, params?: Params): Promise<DuckDBPendingResult> {
  const pending = await conn.start(sql, params);
  const raw = rawPending(pending);
  // (The C API gives a statement that has ended in an error as ERROR: getResult then throws it.)
  while (RUNNING.has(bindings.pending_execute_check_state(raw))) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  return pending;
}

/** Runs `sql`, its result not read. */
export function runPolled(conn: DuckDBConnection, sql: string, params?: Params): Promise<void> {
  return inTurn(conn, async () => {
    await (await started(conn, sql, params)).getResult();
  });
}

/** Runs `sql` and reads its rows as JavaScript objects. */
export function readPolled(conn: DuckDBConnection, sql: string, params?: Params): Promise<Record<string, unknown>[]> {
  return inTurn(conn, async () => {
    const reader = await (await started(conn, sql, params)).readAll();
    return reader.getRowObjectsJS() as Record<string, unknown>[];
  });
}
