// Types of scripts/clickhouse-servers.mjs.
export interface ClickHouseCluster {
  /** WAGGLE_EVENT_STORE for it (each call a fresh database unless named). */
  setting(database?: string): string;
  /** The HTTP ports of the servers. */
  httpPorts: number[];
  /** The server processes. */
  pids: number[];
  stop(): Promise<void>;
}
export const clickhouseBinary: string | undefined;
export function startClickHouse(count: 1 | 2): Promise<ClickHouseCluster>;
