// ClickHouse for the tests: `clickhouse-server` (Debian's 18.16 package; scripts/test.mjs checks
// it is there, and with CI=true requires it), started by scripts/clickhouse-servers.mjs on free
// loopback ports with a temporary data directory and a generated config. startClickHouse(1) is a
// single node; startClickHouse(2) two servers, each a shard of the cluster `waggle`. One server (or
// pair) per test file: start it in beforeAll, stop it in afterAll.
export { clickhouseBinary, startClickHouse, type ClickHouseCluster } from '../scripts/clickhouse-servers.mjs';

export function warnClickHouseSkipped(what: string): void {
  console.warn(`\n*** clickhouse-server not found (apt-get install clickhouse-server): SKIPPED ${what}. ***\n`);
}
