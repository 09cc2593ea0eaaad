// Three `waggle serve` processes on one PostgreSQL store and one ClickHouse cluster (two shards,
// started here): the several-nodes scenario (test/several-nodes-scenario.ts) with events going
// round robin through the nodes, equal answers through each, a trigger and an SLO burn alert each
// evaluated and delivered exactly once across a kill -9 of the leader, and every event any node
// acknowledged in ClickHouse.
// Skipped, with a notice, without PostgreSQL or clickhouse-server.
import { afterAll, afterEach, beforeAll, describe, it } from 'vitest';
import { killAll, removeTempDirs } from './cli-helpers.js';
import { HttpReceiver } from './receivers.js';
import { createTestSchema, postgresUrl, warnPostgresSkipped, type TestSchema } from './postgres.js';
import { clickhouseBinary, startClickHouse, warnClickHouseSkipped, type ClickHouseCluster } from './clickhouse.js';
import { severalNodesScenario } from './several-nodes-scenario.js';

if (!postgresUrl) warnPostgresSkipped('three waggle serve nodes on PostgreSQL and ClickHouse (test/several-nodes-clickhouse.test.ts)');
if (!clickhouseBinary) warnClickHouseSkipped('three waggle serve nodes on PostgreSQL and ClickHouse (test/several-nodes-clickhouse.test.ts)');

afterEach(killAll);
afterAll(removeTempDirs);

describe.skipIf(!postgresUrl || !clickhouseBinary)('three waggle serve nodes on one PostgreSQL store and one ClickHouse cluster (2 shards)', { timeout: 300_000 }, () => {
  let schema: TestSchema;
  let clickhouse: ClickHouseCluster;
  const receiver = new HttpReceiver();
  beforeAll(async () => {
    schema = await createTestSchema(postgresUrl!, 'chnodes');
    clickhouse = await startClickHouse(2);
    await receiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
    await clickhouse?.stop();
    await schema?.drop();
  });

  it('ingest through all, equal answers through each, the trigger and the burn alert exactly once across a kill -9 of the leader, no acknowledged event lost', async () => {
    await severalNodesScenario({ postgresUrl: postgresUrl!, schemaName: schema.name, receiver, eventStore: clickhouse.setting() });
  });
});
