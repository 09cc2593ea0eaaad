// Types of scripts/clickhouse-servers.mjs.
export interface ClickHouseCluster {
  /** WAGGLE_EVENT_STORE for it (each call a fresh database unless named). */
  setting(database?: string): string;
  /** The HTTP ports of the servers. */
  httpPorts: number[];
  /** The server processes (as started). */
  pids: number[];
  /** Kills server `i` at once (SIGKILL): a shard that no longer answers. */
  kill(i: number): Promise<void>;
  /** Starts server `i` again on its data directory and ports (after kill). */
  restart(i: number): Promise<void>;
  stop(): Promise<void>;
}
export const clickhouseBinary: string | undefined;
export function startClickHouse(count: 1 | 2): Promise<ClickHouseCluster>;
