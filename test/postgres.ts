// PostgreSQL for the tests: `WAGGLE_TEST_POSTGRES` (set by scripts/test.mjs) is a reachable
// server's URL, or '' / unset when there is none, in which case PostgreSQL tests are skipped.
// Each suite gets its own freshly created schema, dropped again afterwards.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server to test against, or undefined when PostgreSQL tests must be skipped. */
export const postgresUrl: string | undefined = process.env.WAGGLE_TEST_POSTGRES || undefined;

/** Warns (once per call site) that PostgreSQL tests are skipped, naming them. */
export function warnPostgresSkipped(what: string): void {
  console.warn(
    `\n*** WAGGLE_TEST_POSTGRES is not set (no PostgreSQL reachable): SKIPPED ${what}. ` +
      `Run \`npm test\` with a PostgreSQL server (see scripts/test.mjs) to run them. ***\n`,
  );
}

export interface TestSchema {
  url: string;
  name: string;
  /** Runs a query on a fresh plain connection (not the store's pool). */
  query<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  drop(): Promise<void>;
}

const ident = (name: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad identifier ${name}`);
  return `"${name}"`;
};

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates a schema with a unique name (`waggle_test_<label>_<random>`). */
export async function createTestSchema(url: string, label: string): Promise<TestSchema> {
  const name = `waggle_test_${label}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  // The name is generated here from a fixed alphabet; identifiers cannot be bound as parameters.
  await withClient(url, (c) => c.query(`CREATE SCHEMA ${ident(name)}`));
  return {
    url,
    name,
    query: (text, values) => withClient(url, (c) => c.query(text, values as any[])),
    drop: () => withClient(url, (c) => c.query(`DROP SCHEMA IF EXISTS ${ident(name)} CASCADE`)).then(() => undefined),
  };
}

export const quoteIdent = ident;
