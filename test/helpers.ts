// Shared test setup: a real app over a real SQLite store in a temp directory, initialised the
// way `waggle init` does it, plus small request helpers. No mocks.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App, type AppDeps } from '../src/app.js';
import { initialise, type InitResult } from '../src/domain/tenancy.js';
import { openSqliteStore } from '../src/stores/config/store.js';
import type { ConfigStore } from '../src/stores/config/types.js';
import type { Settings } from '../src/settings.js';
import { createEventStore } from '../src/stores/events/open.js';
import type { EventStore } from '../src/stores/events/types.js';
import { sha256, shortId } from '../src/domain/ids.js';
import { recipientIdentity, recipientResponse } from '../src/domain/recipients.js';
import { RECIPIENT_KIND } from '../src/domain/kinds.js';

export interface TestApp {
  app: App;
  store: ConfigStore;
  events: EventStore;
  init: InitResult;
  dataDir: string;
  /** Headers for the initial configuration key. */
  config: Record<string, string>;
  /** Headers for the initial ingest key. */
  ingest: Record<string, string>;
  /** Headers for the initial management key. */
  mgmt: Record<string, string>;
  clock: TestClock;
  /** Closes the app and its stores and removes the data directory. */
  close(): Promise<void>;
  /** Closes the app and its stores, keeping the data directory (to open it again: makeApp({ reopen })). */
  stop(): Promise<void>;
}

/** A controllable clock: starts at real now, moves only when told. */
export class TestClock {
  constructor(public ms = Date.now()) {}
  now = () => new Date(this.ms);
  advance(seconds: number) {
    this.ms += seconds * 1000;
  }
}

/**
 * `eventStore`: a WAGGLE_EVENT_STORE setting (default: DuckDB in the temp data directory);
 * `eventStoreLimits`: DuckDB's memory limit and checkpoint size (default: DuckDB's own limit);
 * `dataDir`: an existing data directory to open again (default: a new temp one).
 */
export async function makeApp(
  opts: {
    settings?: Partial<Settings>;
    store?: ConfigStore;
    logger?: AppDeps['logger'];
    eventStore?: string;
    eventStoreLimits?: { memoryBytes?: number; checkpointBytes?: number };
    /** A stopped app's data directory and keys, opened again. */
    reopen?: Pick<TestApp, 'dataDir' | 'init'>;
  } = {},
): Promise<TestApp> {
  const dataDir = opts.reopen?.dataDir ?? mkdtempSync(join(tmpdir(), 'waggle-test-'));
  const store = opts.store ?? openSqliteStore(join(dataDir, 'config.sqlite'));
  await store.migrate();
  const init = opts.reopen?.init ?? (await initialise(store));
  const clock = new TestClock();
  const events = createEventStore(opts.eventStore ?? 'duckdb', dataDir, opts.eventStoreLimits);
  await events.open();
  const app = await createApp({ configStore: store, eventStore: events, settings: { dataDir, ...opts.settings }, now: clock.now, logger: opts.logger ?? false });
  await app.ready();
  const stop = async () => {
    await app.close();
    await events.close();
    await store.close();
  };
  return {
    app,
    store,
    events,
    init,
    dataDir,
    clock,
    ...keyHeaders(init),
    async close() {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
    stop,
  };
}

/** Request headers for the initial keys: configuration, ingest and management. */
export function keyHeaders(init: InitResult): Pick<TestApp, 'config' | 'ingest' | 'mgmt'> {
  return {
    config: { 'x-honeycomb-team': init.keys.configuration },
    ingest: { 'x-honeycomb-team': init.keys.ingest },
    mgmt: {
      authorization: `Bearer ${init.keys.management.id}:${init.keys.management.secret}`,
      'content-type': 'application/vnd.api+json',
    },
  };
}

export const json = (res: { body: string }) => JSON.parse(res.body);

/** POST or PUT with a JSON body (a string is sent as it is, for malformed bodies); config key headers by default. */
export const sendJson = (t: TestApp, method: 'POST' | 'PUT', url: string, body: unknown, headers: Record<string, string> = t.config) =>
  t.app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: typeof body === 'string' ? body : JSON.stringify(body) });

/** Clears a dataset's delete protection (every new dataset has it), as a user must before deleting it. */
export async function unprotectDataset(t: TestApp, slug: string, headers: Record<string, string> = t.config): Promise<void> {
  const res = await t.app.inject({ method: 'PUT', url: `/1/datasets/${slug}`, headers, payload: { settings: { delete_protected: false } } });
  if (res.statusCode !== 200) throw new Error(`unprotecting ${slug}: ${res.statusCode} ${res.body}`);
}

/** DELETE /1/datasets/{slug} after clearing its delete protection; the DELETE's answer. */
export async function deleteDataset(t: TestApp, slug: string, headers: Record<string, string> = t.config) {
  await unprotectDataset(t, slug, headers);
  return t.app.inject({ method: 'DELETE', url: `/1/datasets/${slug}`, headers });
}

/**
 * A legacy `msteams` recipient as an older server stored it (new ones are refused): written to
 * the real store the way createRecipient writes one.
 */
export async function storeLegacyTeamsRecipient(t: TestApp, details: { webhook_name: string; webhook_url: string }) {
  const body = { type: 'msteams' as const, details };
  const team = (await t.store.getTeamBySlug(t.init.team.slug))!;
  const o = await t.store.createObject({
    id: shortId(),
    kind: RECIPIENT_KIND,
    teamId: team.id,
    environmentId: null,
    datasetId: null,
    scope: team.id,
    uniqueKey: sha256(recipientIdentity(body)),
    body,
  });
  return recipientResponse(o);
}
