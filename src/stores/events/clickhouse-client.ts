// A small client for ClickHouse's HTTP interface (port 8123), over Node's fetch. (The official
// @clickhouse/client sends settings and server-side query parameters that 18.16, the version
// Debian ships, does not know; this one sends only the statement, the database, credentials and
// the settings asked for.) A statement that fails answers a non-2xx status with ClickHouse's
// message as the body: that becomes a ClickHouseError; a request it does not answer at all
// (refused, reset, timed out) becomes EventStoreUnavailable.
import { randomUUID } from 'node:crypto';
import { EventStoreUnavailable } from './types.js';

export interface ClickHouseNode {
  /** http://host:port of the node's HTTP interface. */
  url: string;
  user: string;
  password: string;
  database: string;
}

export class ClickHouseError extends Error {
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
    this.name = 'ClickHouseError';
  }
}

export interface RequestOptions {
  /** Extra settings (as URL parameters), e.g. insert_distributed_sync, max_execution_time. */
  settings?: Record<string, string | number>;
  /** Aborts the request (the statement is then killed by its query id, see kill()). */
  signal?: AbortSignal;
  queryId?: string;
  /** Sent after the statement (INSERT … FORMAT JSONEachRow data). */
  body?: string;
  /** Database to run in; false: none (for CREATE DATABASE). */
  database?: string | false;
}

export class ClickHouseClient {
  constructor(readonly node: ClickHouseNode) {}

  /** Runs a statement; resolves with the response text once ClickHouse has answered 200. */
  async run(sql: string, opts: RequestOptions = {}): Promise<string> {
    const params = new URLSearchParams();
    const db = opts.database === undefined ? this.node.database : opts.database;
    if (db) params.set('database', db);
    params.set('query_id', opts.queryId ?? randomUUID());
    for (const [k, v] of Object.entries(opts.settings ?? {})) params.set(k, String(v));
    // The statement goes in the URL when there is data to send, else as the body.
    if (opts.body !== undefined) params.set('query', sql);
    let res: Response;
    try {
      res = await fetch(`${this.node.url}/?${params}`, {
        method: 'POST',
        headers: { 'X-ClickHouse-User': this.node.user, 'X-ClickHouse-Key': this.node.password },
        body: opts.body ?? sql,
        signal: opts.signal,
      });
    } catch (err) {
      // Not answered (refused, reset, timed out): the caller may try again later. (An abort the
      // caller asked for stays as it is.)
      if (opts.signal?.aborted && (opts.signal.reason as Error)?.name !== 'TimeoutError') throw err;
      throw new EventStoreUnavailable(`ClickHouse at ${this.node.url} did not answer`, 5, { cause: err });
    }
    const text = await res.text();
    if (!res.ok) {
      const code = /^Code: (\d+)/.exec(text)?.[1];
      throw new ClickHouseError(`ClickHouse: ${text.trim().slice(0, 2000)}`, code ? Number(code) : undefined);
    }
    return text;
  }

  /** A SELECT's rows as objects (64-bit integers as numbers, NULL as null). */
  async rows(sql: string, opts: RequestOptions = {}): Promise<Record<string, unknown>[]> {
    const text = await this.run(`${sql}\nFORMAT JSON`, {
      ...opts,
      settings: { output_format_json_quote_64bit_integers: 0, output_format_json_quote_denormals: 0, ...opts.settings },
    });
    return (JSON.parse(text) as { data: Record<string, unknown>[] }).data;
  }

  /** Stops a running statement by its query id (best effort). */
  async kill(queryId: string): Promise<void> {
    await this.run(`KILL QUERY WHERE query_id = '${queryId.replace(/[^0-9a-f-]/g, '')}' ASYNC`).catch(() => undefined);
  }
}
