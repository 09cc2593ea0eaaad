// Three `waggle serve` processes on one PostgreSQL store, each with its own DuckDB event file:
// the several-nodes scenario (test/several-nodes-scenario.ts) with a trigger and an SLO burn alert,
// kill -9 of the leader, exactly-once delivery at a real webhook receiver, no acknowledged event
// lost. The same on one ClickHouse cluster: test/several-nodes-clickhouse.test.ts.
// Skipped, with a notice, when WAGGLE_TEST_POSTGRES names no server.
import { afterAll, afterEach, beforeAll, describe, it } from 'vitest';
import { killAll, removeTempDirs } from './cli-helpers.js';
import { HttpReceiver } from './receivers.js';
import { createTestSchema, postgresUrl, warnPostgresSkipped, type TestSchema } from './postgres.js';
import { severalNodesScenario } from './several-nodes-scenario.js';

if (!postgresUrl) warnPostgresSkipped('three waggle serve nodes on one PostgreSQL store (test/several-nodes-serve.test.ts)');

afterEach(killAll);
afterAll(removeTempDirs);

describe.skipIf(!postgresUrl)('three waggle serve nodes on one PostgreSQL store, one DuckDB file each', { timeout: 300_000 }, () => {
  let schema: TestSchema;
  const receiver = new HttpReceiver();
  beforeAll(async () => {
    schema = await createTestSchema(postgresUrl!, 'serve');
    await receiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
    await schema?.drop();
  });

  it('ingest through all, trigger and burn alert exactly once across a kill -9 of the leader, each node holds what it acknowledged', async () => {
    await severalNodesScenario({ postgresUrl: postgresUrl!, schemaName: schema.name, receiver });
  });
});
