// `npm test`: the whole suite. The PostgreSQL part runs when a server is reachable at
// WAGGLE_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test); without one it
// is skipped with a clear notice, except in CI (CI=true), where it must run. The web UI's
// browser tests likewise need Chromium (/usr/bin/chromium, or WAGGLE_CHROMIUM), and the ClickHouse
// event-store tests Debian's clickhouse-server (started by the tests themselves, test/clickhouse.ts).
// First, the layer rules of src/ (.dependency-cruiser.cjs) on the build pretest just made, and the
// modules' size and seam targets (scripts/check-modules.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { clickhouseBinary } from './clickhouse-servers.mjs';

const layers = spawnSync(process.execPath, ['scripts/check-deps.mjs'], { stdio: 'inherit' });
if (layers.status !== 0) {
  console.error('\nThe layer rules or the module targets of src/ are broken (.dependency-cruiser.cjs, scripts/check-modules.mjs, docs/code-layout.md): see above.');
  process.exit(1);
}

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

const chromium = process.env.WAGGLE_CHROMIUM ?? '/usr/bin/chromium';
const browser = existsSync(chromium);
if (!browser) {
  if (process.env.CI === 'true') {
    console.error(`CI: Chromium is required for the web UI browser tests but ${chromium} is missing (apt-get install chromium; .ci/run does).`);
    process.exit(1);
  }
  console.warn(`\n*** Chromium not found at ${chromium}: the web UI browser tests are SKIPPED (apt-get install chromium). ***\n`);
}

const clickhouse = clickhouseBinary;
if (!clickhouse) {
  if (process.env.CI === 'true') {
    console.error('CI: clickhouse-server is required for the ClickHouse event-store tests but is not installed (apt-get install clickhouse-server; .ci/run does).');
    process.exit(1);
  }
  console.warn('\n*** clickhouse-server not found: the ClickHouse event-store tests are SKIPPED (apt-get install clickhouse-server). ***\n');
}

const env = { ...process.env, WAGGLE_TEST_POSTGRES: reachable ? url : '' };
const dir = mkdtempSync(join(tmpdir(), 'waggle-vitest-'));
const report = join(dir, 'report.json');
const r = spawnSync(
  'npx',
  ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  { stdio: 'inherit', env },
);
if (!reachable) console.warn('\n*** Reminder: the PostgreSQL tests were skipped (no server reachable). ***');
if (!browser) console.warn('\n*** Reminder: the web UI browser tests were skipped (no Chromium). ***');
if (!clickhouse) console.warn('\n*** Reminder: the ClickHouse event-store tests were skipped (no clickhouse-server). ***');
// A plain closing line that any CI log reader understands.
try {
  const s = JSON.parse(readFileSync(report, 'utf8'));
  console.log(`\nTests: ${s.numPassedTests} passed, ${s.numFailedTests} failed, ${s.numPendingTests + s.numTodoTests} skipped`);
} catch {
  console.log('\nTests: no report was written (the run did not complete)');
}
rmSync(dir, { recursive: true, force: true });
process.exit(r.status ?? 1);
