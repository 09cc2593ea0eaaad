// `npm test`: the whole suite. The PostgreSQL part runs when a server is reachable at
// WAGGLE_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test); without one it
// is skipped with a clear notice, except in CI (CI=true), where it must run.
import { spawnSync } from 'node:child_process';
import pg from 'pg';

const url = process.env.WAGGLE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
let reachable = false;
try {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  await client.end();
  reachable = true;
} catch (err) {
  if (process.env.CI === 'true') {
    console.error(`CI: PostgreSQL is required but not reachable at ${url}: ${err.message}`);
    process.exit(1);
  }
  console.warn(`\n*** PostgreSQL not reachable at ${url} (${err.message}): the PostgreSQL tests are SKIPPED. ***\n`);
}

const env = { ...process.env, WAGGLE_TEST_POSTGRES: reachable ? url : '' };
const r = spawnSync('npx', ['vitest', 'run', ...process.argv.slice(2)], { stdio: 'inherit', env });
if (!reachable) console.warn('\n*** Reminder: the PostgreSQL tests were skipped (no server reachable). ***');
process.exit(r.status ?? 1);
