// A DuckDB statement left to DuckDB's own threads while this process only looks in on it.
//
// A statement run the usual way (`connection.run`) executes on a libuv thread, which takes part
// in the query as one of DuckDB's threads: it runs the query's tasks, and when none is left for
// it while the query still runs elsewhere, it loops asking for one until the query ends. A
// CHECKPOINT is one such task; when a DuckDB thread took it, the libuv thread spun on an empty
// queue for the whole checkpoint (a fifth of a wide-ingest server's CPU in `perf` samples).
//
// Started as a pending result and polled here (a check that runs no task), the statement runs on
// DuckDB's threads alone and the caller's thread sleeps between looks. DuckDB counts one of its
// `threads` for callers (`external_threads`), so for the statement's length that one becomes
// DuckDB's too: polled with one thread, one checkpoint in five took 2.6-3.1 s instead of 0.5.
// (Not for good: with every thread DuckDB's, a query's caller runs beside all of them, and
// queries took 10-15 % more CPU on 2 cores, bench/query.mjs.)
import type { DuckDBConnection, DuckDBPendingResult } from '@duckdb/node-api';
import { bindings } from './duckdb-chunks.js';

/** Milliseconds between looks: a statement run so ends up to this much later. */
const POLL_MS = 5;

/** The C API's handle of a pending result (a field node-api keeps to itself). */
const rawPending = (p: DuckDBPendingResult) => (p as unknown as { pending_result: Parameters<typeof bindings.pending_execute_check_state>[0] }).pending_result;

/** Runs `sql` (a statement whose result is not read, one at a time) on DuckDB's threads alone. */
export async function runPolled(conn: DuckDBConnection, sql: string): Promise<void> {
  const external = (await conn.runAndReadAll(`SELECT current_setting('external_threads')`)).getRows()[0][0];
  await conn.run('SET GLOBAL external_threads = 0');
  try {
    const pending = await conn.start(sql);
    const raw = rawPending(pending);
    // (The C API gives a query that has ended, well or not, as ERROR: getResult then throws its
    // error, if it had one.)
    while ([bindings.PendingState.RESULT_NOT_READY, bindings.PendingState.NO_TASKS_AVAILABLE].includes(bindings.pending_execute_check_state(raw))) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    await pending.getResult();
  } finally {
    // (Refused only by a database a fatal error invalidated: it is opened again, with DuckDB's default.)
    await conn.run(`SET GLOBAL external_threads = ${Number(external)}`).catch(() => undefined);
  }
}
