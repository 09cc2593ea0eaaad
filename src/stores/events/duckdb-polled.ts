// A DuckDB statement left to DuckDB's own threads while this process only looks in on it.
//
// A statement run the usual way (`connection.run`) executes on a libuv thread, which takes part
// in the query as one of DuckDB's threads: it runs the query's tasks, and when none is left for
// it while the query still runs elsewhere, it loops asking for one until the query ends. A
// CHECKPOINT is one such task; when a DuckDB thread took it, the libuv thread spun on an empty
// queue for the whole checkpoint (a fifth of a wide-ingest server's CPU in `perf` samples).
//
// Started as a pending result and polled here (a check that runs no task), the statement runs on
// DuckDB's threads alone and the caller's thread sleeps between looks. This needs DuckDB threads
// of its own: the store opens DuckDB with `external_threads` 0, so that all of its `threads` are
// (by default, DuckDB counts one for callers: a checkpoint polled with that one thread left
// ran alone, and one in five took 2.6-3.1 s instead of 0.5). With none, the statement runs the
// usual way. Measured (bench/wide.mjs): a wide server's CPU per field value 0.70 -> 0.66.
import type { DuckDBConnection, DuckDBPendingResult } from '@duckdb/node-api';
import { bindings } from './duckdb-chunks.js';

/** Milliseconds between looks: a statement run so ends up to this much later. */
const POLL_MS = 5;

/** The C API's handle of a pending result (a field node-api keeps to itself). */
const rawPending = (p: DuckDBPendingResult) => (p as unknown as { pending_result: Parameters<typeof bindings.pending_execute_check_state>[0] }).pending_result;

/** Runs `sql` (a statement whose result is not read); polled when DuckDB has `backgroundThreads`. */
export async function runPolled(conn: DuckDBConnection, sql: string, backgroundThreads: number): Promise<void> {
  if (backgroundThreads < 1) {
    await conn.run(sql);
    return;
  }
  const pending = await conn.start(sql);
  const raw = rawPending(pending);
  // (The C API gives a query that has ended, well or not, as ERROR: getResult then throws its
  // error, if it had one.)
  while ([bindings.PendingState.RESULT_NOT_READY, bindings.PendingState.NO_TASKS_AVAILABLE].includes(bindings.pending_execute_check_state(raw))) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  await pending.getResult();
}
