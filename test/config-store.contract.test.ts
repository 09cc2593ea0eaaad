// The ConfigStore contract: one suite, run against every implementation (SQLite in a temp
// file; PostgreSQL in a fresh schema when WAGGLE_TEST_POSTGRES names a reachable server).
// Everything goes through the public ConfigStore interface, except the check that migration
// versions are recorded, which reads the database directly.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationProvider } from '../src/stores/config/migrations.js';
import { openPostgresStore, openSqliteStore } from '../src/stores/config/store.js';
import {
  UniqueViolation,
  type ApiKey,
  type ConfigStore,
  type Environment,
  type NewApiKey,
  type NewDataset,
  type NewEnvironment,
  type Team,
} from '../src/stores/config/types.js';
import { createTestSchema, postgresUrl, quoteIdent, warnPostgresSkipped } from './postgres.js';

// ---------------------------------------------------------------- implementations under test

interface Subject {
  store: ConfigStore;
  /** Migration names recorded in the database, read directly rather than through the store. */
  recordedMigrations(): Promise<string[]>;
  /** An independent second store on the same database (caller closes it). */
  openAnother(): ConfigStore;
  dispose(): Promise<void>;
}

interface Implementation {
  kind: 'sqlite' | 'postgres';
  /** Why this implementation is skipped, if it is. */
  skip?: string;
  open(): Promise<Subject>;
}

const sqlite: Implementation = {
  kind: 'sqlite',
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'waggle-contract-'));
    const file = join(dir, 'config.sqlite');
    const store = openSqliteStore(file);
    return {
      store,
      async recordedMigrations() {
        const db = new Database(file, { readonly: true });
        try {
          return (db.prepare('SELECT name FROM kysely_migration ORDER BY name').all() as { name: string }[]).map((r) => r.name);
        } finally {
          db.close();
        }
      },
      openAnother: () => openSqliteStore(file),
      async dispose() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const postgres: Implementation = {
  kind: 'postgres',
  skip: postgresUrl ? undefined : 'WAGGLE_TEST_POSTGRES is empty',
  async open() {
    const schema = await createTestSchema(postgresUrl!, 'contract');
    const store = openPostgresStore(schema.url, schema.name);
    return {
      store,
      async recordedMigrations() {
        const r = await schema.query<{ name: string }>(`SELECT name FROM ${quoteIdent(schema.name)}.kysely_migration ORDER BY name`);
        return r.rows.map((row) => row.name);
      },
      openAnother: () => openPostgresStore(schema.url, schema.name),
      async dispose() {
        try {
          await store.close();
        } finally {
          await schema.drop();
        }
      },
    };
  },
};

if (postgres.skip) {
  warnPostgresSkipped(
    'the PostgreSQL half of the ConfigStore contract suite (test/config-store.contract.test.ts: "ConfigStore contract: postgres" and "PostgreSQL store: schema isolation")',
  );
}

// ---------------------------------------------------------------- fixtures

const rnd = (n = 10) => {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(randomBytes(n), (b) => alphabet[b % alphabet.length]).join('');
};
const uid = (prefix: string) => `${prefix}_${rnd(26)}`;
const hash = () => randomBytes(32).toString('hex');
const iso = (ms = Date.now()) => new Date(ms).toISOString();

const teamInput = (over: Partial<Team> = {}): Team => ({
  id: uid('hcxtm'),
  slug: `team-${rnd()}`,
  name: 'A Team',
  createdAt: iso(),
  ...over,
});
const envInput = (teamId: string, over: Partial<NewEnvironment> = {}): NewEnvironment => ({
  id: uid('hcxen'),
  teamId,
  slug: `env-${rnd()}`,
  name: 'An Environment',
  description: 'described',
  color: 'blue',
  deleteProtected: false,
  ...over,
});
const keyInput = (teamId: string, environmentId: string | null, over: Partial<NewApiKey> = {}): NewApiKey => ({
  id: uid('hcxlk'),
  teamId,
  environmentId,
  keyType: 'configuration',
  name: 'a key',
  secretHash: hash(),
  disabled: false,
  permissions: { send_events: true, run_queries: false },
  scopes: [],
  timeToLive: null,
  ...over,
});
const dsInput = (environmentId: string, over: Partial<NewDataset> = {}): NewDataset => ({
  id: uid('hcxds'),
  environmentId,
  slug: `ds-${rnd()}`,
  name: 'A Dataset',
  description: '',
  expandJsonDepth: 0,
  deleteProtected: false,
  definitions: { trace_id: 'trace.trace_id' },
  ...over,
});

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

async function expectUniqueViolation(p: Promise<unknown>): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected a UniqueViolation, but the call succeeded').toBeDefined();
  expect(err).toBeInstanceOf(UniqueViolation);
}

// ---------------------------------------------------------------- the contract

describe.each([sqlite, postgres])('ConfigStore contract: $kind', (impl) => {
  describe.skipIf(impl.skip !== undefined)(`(${impl.skip ?? 'running'})`, () => {
    let subject: Subject;
    let firstMigration: string[];
    let store: ConfigStore;
    let allMigrations: string[];

    beforeAll(async () => {
      allMigrations = Object.keys(await migrationProvider.getMigrations()).sort();
      subject = await impl.open();
      store = subject.store;
      firstMigration = await store.migrate();
    });
    afterAll(async () => {
      await subject?.dispose();
    });

    /** A team with one environment, for tests that need somewhere to put things. */
    async function teamWithEnvironment(): Promise<{ team: Team; env: Environment }> {
      const team = await store.createTeam(teamInput());
      const env = await store.createEnvironment(envInput(team.id));
      return { team, env };
    }

    it('reports its kind', () => {
      expect(store.kind).toBe(impl.kind);
    });

    describe('migrate', () => {
      it('applies every migration, in name order, on a fresh database', () => {
        expect(allMigrations.length).toBeGreaterThan(0);
        expect(firstMigration).toEqual(allMigrations);
      });

      it('records the applied versions in the database', async () => {
        expect(await subject.recordedMigrations()).toEqual(allMigrations);
      });

      it('is idempotent: a second call applies nothing and records nothing new', async () => {
        expect(await store.migrate()).toEqual([]);
        expect(await store.migrate()).toEqual([]);
        expect(await subject.recordedMigrations()).toEqual(allMigrations);
      });

      it('a second store on the same database has nothing to apply and sees the same rows', async () => {
        const team = await store.createTeam(teamInput());
        const other = subject.openAnother();
        try {
          expect(await other.migrate()).toEqual([]);
          expect(await other.getTeam(team.id)).toEqual(team);
        } finally {
          await other.close();
        }
      });
    });

    describe('teams', () => {
      it('creates a team and finds it by id and by slug', async () => {
        const input = teamInput({ name: 'Ünïcode “Team” \'quoted\'' });
        const created = await store.createTeam(input);
        expect(created).toEqual(input);
        expect(await store.getTeam(input.id)).toEqual(input);
        expect(await store.getTeamBySlug(input.slug)).toEqual(input);
      });

      it('answers undefined for unknown ids and slugs', async () => {
        expect(await store.getTeam(uid('hcxtm'))).toBeUndefined();
        expect(await store.getTeamBySlug(`nope-${rnd()}`)).toBeUndefined();
      });

      it('rejects a taken slug or id with UniqueViolation', async () => {
        const team = await store.createTeam(teamInput());
        await expectUniqueViolation(store.createTeam(teamInput({ slug: team.slug })));
        await expectUniqueViolation(store.createTeam(teamInput({ id: team.id })));
        expect(await store.getTeam(team.id)).toEqual(team);
      });

      it('lists every team, ordered by id', async () => {
        const stem = rnd(20);
        const mine = [`hcxtm_${stem}c`, `hcxtm_${stem}a`, `hcxtm_${stem}b`];
        for (const id of mine) await store.createTeam(teamInput({ id }));
        const all = await store.listTeams();
        expect(all.map((t) => t.id)).toEqual([...all.map((t) => t.id)].sort(byteOrder));
        expect(all.filter((t) => t.id.startsWith(`hcxtm_${stem}`)).map((t) => t.id)).toEqual([...mine].sort(byteOrder));
      });
    });

    describe('environments', () => {
      it('creates an environment and reads it back by team+id, by id and by slug', async () => {
        const team = await store.createTeam(teamInput());
        const input = envInput(team.id, { name: 'Prod “EU”', description: 'the real thing', color: 'lightGold', deleteProtected: true });
        const before = Date.now();
        const created = await store.createEnvironment(input);
        expect(created).toMatchObject(input);
        expect(Date.parse(created.createdAt)).toBeGreaterThanOrEqual(before - 1000);
        expect(created.updatedAt).toBe(created.createdAt);

        expect(await store.getEnvironment(team.id, input.id)).toEqual(created);
        expect(await store.getEnvironmentById(input.id)).toEqual(created);
        expect(await store.getEnvironmentBySlug(team.id, input.slug)).toEqual(created);
        const read = (await store.getEnvironmentById(input.id))!;
        expect(read.deleteProtected).toBe(true);
        expect(typeof read.deleteProtected).toBe('boolean');
      });

      it('does not show an environment to another team', async () => {
        const { env } = await teamWithEnvironment();
        const other = await store.createTeam(teamInput());
        expect(await store.getEnvironment(other.id, env.id)).toBeUndefined();
        expect(await store.getEnvironmentBySlug(other.id, env.slug)).toBeUndefined();
        expect(await store.listEnvironments(other.id, { limit: 100 })).toEqual([]);
        expect(await store.getEnvironmentById(uid('hcxen'))).toBeUndefined();
      });

      it('rejects a slug taken in the same team with UniqueViolation; the same slug in another team is fine', async () => {
        const { team, env } = await teamWithEnvironment();
        await expectUniqueViolation(store.createEnvironment(envInput(team.id, { slug: env.slug })));
        await expectUniqueViolation(store.createEnvironment(envInput(team.id, { id: env.id })));
        expect(await store.listEnvironments(team.id, { limit: 100 })).toEqual([env]);

        const other = await store.createTeam(teamInput());
        const twin = await store.createEnvironment(envInput(other.id, { slug: env.slug }));
        expect(await store.getEnvironmentBySlug(other.id, env.slug)).toEqual(twin);
        expect(await store.getEnvironmentBySlug(team.id, env.slug)).toEqual(env);
      });

      it('pages by id with after/limit, whatever the insertion order', async () => {
        const team = await store.createTeam(teamInput());
        const stem = rnd(20);
        const ids = ['d', 'a', 'e', 'c', 'b'].map((s) => `hcxen_${stem}${s}`);
        for (const id of ids) await store.createEnvironment(envInput(team.id, { id }));
        const sorted = [...ids].sort(byteOrder);

        const page1 = await store.listEnvironments(team.id, { limit: 2 });
        expect(page1.map((e) => e.id)).toEqual(sorted.slice(0, 2));
        const page2 = await store.listEnvironments(team.id, { after: page1[1].id, limit: 2 });
        expect(page2.map((e) => e.id)).toEqual(sorted.slice(2, 4));
        const page3 = await store.listEnvironments(team.id, { after: page2[1].id, limit: 2 });
        expect(page3.map((e) => e.id)).toEqual(sorted.slice(4));
        expect(await store.listEnvironments(team.id, { after: page3[0].id, limit: 2 })).toEqual([]);
        // A cursor need not be an existing id.
        expect((await store.listEnvironments(team.id, { after: `hcxen_${stem}bb`, limit: 10 })).map((e) => e.id)).toEqual(
          sorted.slice(2),
        );
        expect((await store.listEnvironments(team.id, { limit: 100 })).map((e) => e.id)).toEqual(sorted);
      });

      it('updates with patch semantics: only the given fields change', async () => {
        const team = await store.createTeam(teamInput());
        const env = await store.createEnvironment(
          envInput(team.id, { description: 'old', color: 'red', deleteProtected: true }),
        );

        const u1 = await store.updateEnvironment(team.id, env.id, { description: 'new' });
        expect(u1).toEqual({ ...env, description: 'new', updatedAt: u1!.updatedAt });
        expect(u1!.updatedAt >= env.updatedAt).toBe(true);

        const u2 = await store.updateEnvironment(team.id, env.id, { color: 'green', deleteProtected: false });
        expect(u2).toEqual({ ...env, description: 'new', color: 'green', deleteProtected: false, updatedAt: u2!.updatedAt });
        expect(u2!.deleteProtected).toBe(false);

        const u3 = await store.updateEnvironment(team.id, env.id, {});
        expect(u3).toEqual({ ...u2, updatedAt: u3!.updatedAt });
        expect(await store.getEnvironmentById(env.id)).toEqual(u3);
        expect(u3!.createdAt).toBe(env.createdAt);
        expect(u3!.name).toBe(env.name);
        expect(u3!.slug).toBe(env.slug);
      });

      it("answers undefined when updating an unknown id or another team's environment, and changes nothing", async () => {
        const { env } = await teamWithEnvironment();
        const other = await store.createTeam(teamInput());
        expect(await store.updateEnvironment(other.id, env.id, { description: 'hijacked' })).toBeUndefined();
        expect(await store.updateEnvironment(env.teamId, uid('hcxen'), { description: 'x' })).toBeUndefined();
        expect(await store.getEnvironmentById(env.id)).toEqual(env);
      });

      it('deleteEnvironment removes the environment with its API keys and datasets, and nothing else', async () => {
        const { team, env } = await teamWithEnvironment();
        const keep = await store.createEnvironment(envInput(team.id));
        const doomedKeys = [
          await store.createApiKey(keyInput(team.id, env.id)),
          await store.createApiKey(keyInput(team.id, env.id, { id: uid('hcxik'), keyType: 'ingest' })),
        ];
        const doomedDatasets = [await store.createDataset(dsInput(env.id)), await store.createDataset(dsInput(env.id))];
        const keptKey = await store.createApiKey(keyInput(team.id, keep.id));
        const keptDataset = await store.createDataset(dsInput(keep.id, { slug: doomedDatasets[0].slug }));
        const mgmt = await store.createApiKey(
          keyInput(team.id, null, { id: uid('hcxmk'), keyType: 'management', permissions: {}, scopes: ['environments:write'] }),
        );

        expect(await store.deleteEnvironment(team.id, env.id)).toBe(true);

        expect(await store.getEnvironmentById(env.id)).toBeUndefined();
        expect(await store.getEnvironmentBySlug(team.id, env.slug)).toBeUndefined();
        for (const k of doomedKeys) {
          expect(await store.getApiKey(k.id)).toBeUndefined();
          expect(await store.getApiKeyBySecretHash(k.secretHash)).toBeUndefined();
        }
        expect(await store.listApiKeys(team.id, { environmentId: env.id }, { limit: 100 })).toEqual([]);
        expect(await store.listDatasets(env.id)).toEqual([]);
        for (const d of doomedDatasets) expect(await store.getDataset(env.id, d.slug)).toBeUndefined();

        expect(await store.getEnvironmentById(keep.id)).toEqual(keep);
        expect(await store.getApiKey(keptKey.id)).toEqual(keptKey);
        expect(await store.getApiKey(mgmt.id)).toEqual(mgmt);
        expect(await store.listDatasets(keep.id)).toEqual([keptDataset]);
        expect(await store.getTeam(team.id)).toEqual(team);

        expect(await store.deleteEnvironment(team.id, env.id)).toBe(false);
      });

      it("deleteEnvironment answers false for an unknown id or another team's environment, and deletes nothing", async () => {
        const { team, env } = await teamWithEnvironment();
        const ds = await store.createDataset(dsInput(env.id));
        const key = await store.createApiKey(keyInput(team.id, env.id));
        const other = await store.createTeam(teamInput());

        expect(await store.deleteEnvironment(team.id, uid('hcxen'))).toBe(false);
        expect(await store.deleteEnvironment(other.id, env.id)).toBe(false);

        expect(await store.getEnvironment(team.id, env.id)).toEqual(env);
        expect(await store.getDataset(env.id, ds.slug)).toEqual(ds);
        expect(await store.getApiKey(key.id)).toEqual(key);
      });
    });

    describe('API keys', () => {
      it('creates a key and finds it by id and by secret hash; JSON and booleans round-trip', async () => {
        const { team, env } = await teamWithEnvironment();
        const input = keyInput(team.id, env.id, {
          name: 'CI key “ü”',
          disabled: true,
          permissions: { create_datasets: true, send_events: false, manage_privateBoards: true, 'odd "name"': true },
        });
        const created = await store.createApiKey(input);
        expect(created).toMatchObject(input);
        expect(created.updatedAt).toBe(created.createdAt);

        const byId = await store.getApiKey(input.id);
        expect(byId).toEqual(created);
        expect(await store.getApiKeyBySecretHash(input.secretHash)).toEqual(created);
        expect(byId!.disabled).toBe(true);
        expect(typeof byId!.disabled).toBe('boolean');
        expect(byId!.permissions).toEqual(input.permissions);
        expect(byId!.scopes).toEqual([]);
        expect(byId!.timeToLive).toBeNull();

        expect(await store.getApiKey(uid('hcxlk'))).toBeUndefined();
        expect(await store.getApiKeyBySecretHash(hash())).toBeUndefined();
      });

      it('stores management keys without an environment, with their scopes', async () => {
        const team = await store.createTeam(teamInput());
        const input = keyInput(team.id, null, {
          id: uid('hcxmk'),
          keyType: 'management',
          permissions: {},
          scopes: ['api-keys:read', 'environments:write'],
        });
        await store.createApiKey(input);
        const read = (await store.getApiKey(input.id))!;
        expect(read.environmentId).toBeNull();
        expect(read.scopes).toEqual(['api-keys:read', 'environments:write']);
        expect(read.permissions).toEqual({});
        expect(read.disabled).toBe(false);
      });

      it('keeps time_to_live: null stays null, a time comes back unchanged', async () => {
        const { team, env } = await teamWithEnvironment();
        const forever = await store.createApiKey(keyInput(team.id, env.id, { id: uid('hcxik'), keyType: 'ingest' }));
        const ttl = '2031-02-03T04:05:06.789Z';
        const expiring = await store.createApiKey(
          keyInput(team.id, env.id, { id: uid('hcxik'), keyType: 'ingest', timeToLive: ttl }),
        );
        expect((await store.getApiKey(forever.id))!.timeToLive).toBeNull();
        expect((await store.getApiKey(expiring.id))!.timeToLive).toBe(ttl);
        expect((await store.getApiKeyBySecretHash(expiring.secretHash))!.timeToLive).toBe(ttl);
      });

      it('rejects a taken secret hash or id with UniqueViolation', async () => {
        const { team, env } = await teamWithEnvironment();
        const key = await store.createApiKey(keyInput(team.id, env.id));
        await expectUniqueViolation(store.createApiKey(keyInput(team.id, env.id, { secretHash: key.secretHash })));
        await expectUniqueViolation(store.createApiKey(keyInput(team.id, env.id, { id: key.id })));
        expect(await store.getApiKeyBySecretHash(key.secretHash)).toEqual(key);
      });

      it("lists a team's keys ordered by id, filtered by key type and environment", async () => {
        const { team, env } = await teamWithEnvironment();
        const env2 = await store.createEnvironment(envInput(team.id));
        const other = await teamWithEnvironment();
        const keys: ApiKey[] = [];
        keys.push(await store.createApiKey(keyInput(team.id, env.id)));
        keys.push(await store.createApiKey(keyInput(team.id, env.id, { id: uid('hcxik'), keyType: 'ingest' })));
        keys.push(await store.createApiKey(keyInput(team.id, env2.id)));
        keys.push(await store.createApiKey(keyInput(team.id, env2.id, { id: uid('hcxik'), keyType: 'ingest' })));
        keys.push(
          await store.createApiKey(keyInput(team.id, null, { id: uid('hcxmk'), keyType: 'management', permissions: {}, scopes: ['x'] })),
        );
        await store.createApiKey(keyInput(other.team.id, other.env.id));

        const ids = (ks: ApiKey[]) => ks.map((k) => k.id);
        const sorted = (ks: ApiKey[]) => [...ids(ks)].sort(byteOrder);
        const all = await store.listApiKeys(team.id, {}, { limit: 100 });
        expect(ids(all)).toEqual(sorted(keys));
        expect(all).toEqual([...keys].sort((a, b) => byteOrder(a.id, b.id)));

        expect(ids(await store.listApiKeys(team.id, { keyTypes: ['ingest'] }, { limit: 100 }))).toEqual(
          sorted(keys.filter((k) => k.keyType === 'ingest')),
        );
        expect(ids(await store.listApiKeys(team.id, { keyTypes: ['management'] }, { limit: 100 }))).toEqual([keys[4].id]);
        expect(ids(await store.listApiKeys(team.id, { keyTypes: ['ingest', 'configuration'] }, { limit: 100 }))).toEqual(
          sorted(keys.filter((k) => k.keyType !== 'management')),
        );
        expect(ids(await store.listApiKeys(team.id, { environmentId: env2.id }, { limit: 100 }))).toEqual(
          sorted(keys.filter((k) => k.environmentId === env2.id)),
        );
        expect(ids(await store.listApiKeys(team.id, { keyTypes: ['configuration'], environmentId: env.id }, { limit: 100 }))).toEqual([
          keys[0].id,
        ]);
        expect(await store.listApiKeys(team.id, { environmentId: other.env.id }, { limit: 100 })).toEqual([]);
      });

      it('pages by id with after/limit', async () => {
        const { team, env } = await teamWithEnvironment();
        const stem = rnd(20);
        const ids = ['c', 'e', 'a', 'd', 'b'].map((s) => `hcxlk_${stem}${s}`);
        for (const id of ids) await store.createApiKey(keyInput(team.id, env.id, { id }));
        const sorted = [...ids].sort(byteOrder);
        const seen: string[] = [];
        let after: string | undefined;
        for (let i = 0; i < 10; i++) {
          const page = await store.listApiKeys(team.id, {}, { after, limit: 2 });
          expect(page.length).toBeLessThanOrEqual(2);
          if (page.length === 0) break;
          seen.push(...page.map((k) => k.id));
          after = page[page.length - 1].id;
        }
        expect(seen).toEqual(sorted);
        expect((await store.listApiKeys(team.id, { keyTypes: ['configuration'] }, { after: sorted[2], limit: 1 })).map((k) => k.id)).toEqual([
          sorted[3],
        ]);
      });

      it('updates with patch semantics', async () => {
        const { team, env } = await teamWithEnvironment();
        const key = await store.createApiKey(keyInput(team.id, env.id, { permissions: { a: true, b: false } }));

        const u1 = await store.updateApiKey(key.id, { disabled: true });
        expect(u1).toEqual({ ...key, disabled: true, updatedAt: u1!.updatedAt });
        expect(u1!.updatedAt >= key.updatedAt).toBe(true);

        const u2 = await store.updateApiKey(key.id, { name: 'renamed', permissions: { a: false, b: true } });
        expect(u2).toEqual({ ...key, disabled: true, name: 'renamed', permissions: { a: false, b: true }, updatedAt: u2!.updatedAt });

        const u3 = await store.updateApiKey(key.id, { disabled: false });
        expect(u3!.disabled).toBe(false);
        expect(u3!.name).toBe('renamed');
        expect(u3!.permissions).toEqual({ a: false, b: true });
        expect(u3!.secretHash).toBe(key.secretHash);
        expect(u3!.createdAt).toBe(key.createdAt);
        expect(await store.getApiKeyBySecretHash(key.secretHash)).toEqual(u3);

        expect(await store.updateApiKey(uid('hcxlk'), { name: 'ghost' })).toBeUndefined();
      });

      it('deletes a key: true once, then false', async () => {
        const { team, env } = await teamWithEnvironment();
        const key = await store.createApiKey(keyInput(team.id, env.id));
        const neighbour = await store.createApiKey(keyInput(team.id, env.id));
        expect(await store.deleteApiKey(key.id)).toBe(true);
        expect(await store.getApiKey(key.id)).toBeUndefined();
        expect(await store.getApiKeyBySecretHash(key.secretHash)).toBeUndefined();
        expect(await store.deleteApiKey(key.id)).toBe(false);
        expect(await store.deleteApiKey(uid('hcxlk'))).toBe(false);
        expect(await store.getApiKey(neighbour.id)).toEqual(neighbour);
        // The secret hash is free again.
        await store.createApiKey(keyInput(team.id, env.id, { secretHash: key.secretHash }));
      });
    });

    describe('datasets', () => {
      it('creates a dataset and reads it back; numbers, booleans and definitions round-trip', async () => {
        const { env } = await teamWithEnvironment();
        const input = dsInput(env.id, {
          name: 'My “Dataset” ü',
          description: 'with \'quotes\' and \\ backslashes',
          expandJsonDepth: 7,
          deleteProtected: true,
          definitions: { trace_id: 'trace.trace_id', name: 'span "name" ü', duration_ms: 'dur' },
        });
        const created = await store.createDataset(input);
        expect(created).toEqual({ ...input, lastWrittenAt: null, createdAt: created.createdAt, updatedAt: created.createdAt });

        const read = (await store.getDataset(env.id, input.slug))!;
        expect(read).toEqual(created);
        expect(read.expandJsonDepth).toBe(7);
        expect(typeof read.expandJsonDepth).toBe('number');
        expect(read.deleteProtected).toBe(true);
        expect(read.definitions).toEqual(input.definitions);
        expect(read.lastWrittenAt).toBeNull();
        expect(await store.getDataset(env.id, `nope-${rnd()}`)).toBeUndefined();
      });

      it('rejects a slug taken in the same environment with UniqueViolation; the same slug in another environment is fine', async () => {
        const { team, env } = await teamWithEnvironment();
        const ds = await store.createDataset(dsInput(env.id));
        await expectUniqueViolation(store.createDataset(dsInput(env.id, { slug: ds.slug })));
        await expectUniqueViolation(store.createDataset(dsInput(env.id, { id: ds.id })));
        expect(await store.listDatasets(env.id)).toEqual([ds]);

        const env2 = await store.createEnvironment(envInput(team.id));
        const twin = await store.createDataset(dsInput(env2.id, { slug: ds.slug, description: 'twin' }));
        expect(await store.getDataset(env2.id, ds.slug)).toEqual(twin);
        expect(await store.getDataset(env.id, ds.slug)).toEqual(ds);
      });

      it('lists the datasets of one environment ordered by slug (byte order)', async () => {
        const { team, env } = await teamWithEnvironment();
        const env2 = await store.createEnvironment(envInput(team.id));
        const slugs = ['b', 'a-b', 'ab', 'a_b', '1x', 'a', 'ab-', 'z', 'a0'];
        for (const slug of slugs) await store.createDataset(dsInput(env.id, { slug }));
        await store.createDataset(dsInput(env2.id, { slug: 'aa' }));
        const listed = await store.listDatasets(env.id);
        expect(listed.map((d) => d.slug)).toEqual([...slugs].sort(byteOrder));
        expect(listed.every((d) => d.environmentId === env.id)).toBe(true);
      });

      it('updates with patch semantics, including definitions and lastWrittenAt', async () => {
        const { env } = await teamWithEnvironment();
        const ds = await store.createDataset(dsInput(env.id, { description: 'd', expandJsonDepth: 2 }));

        const written = '2030-01-02T03:04:05.006Z';
        const u1 = await store.updateDataset(env.id, ds.slug, { lastWrittenAt: written });
        expect(u1).toEqual({ ...ds, lastWrittenAt: written, updatedAt: u1!.updatedAt });
        expect(u1!.updatedAt >= ds.updatedAt).toBe(true);

        const definitions = { trace_id: 'tid', span_id: 'sid', log_message: 'msg “ü”' };
        const u2 = await store.updateDataset(env.id, ds.slug, { definitions, expandJsonDepth: 0 });
        expect(u2).toEqual({ ...ds, lastWrittenAt: written, definitions, expandJsonDepth: 0, updatedAt: u2!.updatedAt });
        expect(u2!.expandJsonDepth).toBe(0);

        const u3 = await store.updateDataset(env.id, ds.slug, { description: 'new', deleteProtected: true });
        expect(u3).toEqual({
          ...ds,
          description: 'new',
          deleteProtected: true,
          lastWrittenAt: written,
          definitions,
          expandJsonDepth: 0,
          updatedAt: u3!.updatedAt,
        });

        const u4 = await store.updateDataset(env.id, ds.slug, { lastWrittenAt: null, deleteProtected: false });
        expect(u4!.lastWrittenAt).toBeNull();
        expect(u4!.deleteProtected).toBe(false);
        expect(u4!.description).toBe('new');
        expect(u4!.createdAt).toBe(ds.createdAt);
        expect(await store.getDataset(env.id, ds.slug)).toEqual(u4);

        expect(await store.updateDataset(env.id, `nope-${rnd()}`, { description: 'x' })).toBeUndefined();
        const otherEnv = (await teamWithEnvironment()).env;
        expect(await store.updateDataset(otherEnv.id, ds.slug, { description: 'x' })).toBeUndefined();
        expect((await store.getDataset(env.id, ds.slug))!.description).toBe('new');
      });

      it('deletes a dataset of one environment only: true once, then false', async () => {
        const { team, env } = await teamWithEnvironment();
        const env2 = await store.createEnvironment(envInput(team.id));
        const ds = await store.createDataset(dsInput(env.id));
        const twin = await store.createDataset(dsInput(env2.id, { slug: ds.slug }));
        expect(await store.deleteDataset(env.id, ds.slug)).toBe(true);
        expect(await store.getDataset(env.id, ds.slug)).toBeUndefined();
        expect(await store.deleteDataset(env.id, ds.slug)).toBe(false);
        expect(await store.deleteDataset(env.id, `nope-${rnd()}`)).toBe(false);
        expect(await store.getDataset(env2.id, ds.slug)).toEqual(twin);
        // The slug is free again.
        await store.createDataset(dsInput(env.id, { slug: ds.slug }));
      });
    });

    describe('objects', () => {
      it('lists objects in creation order, even when many share a millisecond and their ids sort otherwise', async () => {
        const { team, env } = await teamWithEnvironment();
        const ids = Array.from({ length: 30 }, (_, i) => `obj-${rnd()}-${String(30 - i).padStart(2, '0')}`);
        const createdAt = new Date().toISOString();
        for (const id of ids) {
          await store.createObject({ id, kind: 'thing', teamId: team.id, environmentId: env.id, datasetId: null, scope: env.id, uniqueKey: null, body: { id }, createdAt });
        }
        expect((await store.listObjects('thing', { environmentId: env.id })).map((o) => o.id)).toEqual(ids);
      });
    });

    describe('leases', () => {
      it('a free lease is taken; its holder renews it; another holder is refused while it lives', async () => {
        const name = `lease-${rnd()}`;
        const a = await store.acquireLease(name, 'node-a', 60_000);
        expect(a).toMatchObject({ name, holder: 'node-a', epoch: 1 });
        expect(a!.expiresAt).toBeGreaterThan(Date.now() + 50_000);
        expect(await store.acquireLease(name, 'node-b', 60_000)).toBeUndefined();
        const renewed = await store.acquireLease(name, 'node-a', 120_000);
        expect(renewed).toMatchObject({ holder: 'node-a', epoch: 1 });
        expect(renewed!.expiresAt).toBeGreaterThan(a!.expiresAt);
      });

      it('an expired lease goes to the next taker, with a higher epoch; the old holder cannot renew it', async () => {
        const name = `lease-${rnd()}`;
        expect(await store.acquireLease(name, 'node-a', 50)).toMatchObject({ epoch: 1 });
        await new Promise((r) => setTimeout(r, 120));
        expect(await store.acquireLease(name, 'node-b', 60_000)).toMatchObject({ holder: 'node-b', epoch: 2 });
        expect(await store.acquireLease(name, 'node-a', 60_000)).toBeUndefined();
      });

      it('a released lease is free at once; release by another holder does nothing', async () => {
        const name = `lease-${rnd()}`;
        await store.acquireLease(name, 'node-a', 60_000);
        await store.releaseLease(name, 'node-b');
        expect(await store.acquireLease(name, 'node-b', 60_000)).toBeUndefined();
        await store.releaseLease(name, 'node-a');
        expect(await store.acquireLease(name, 'node-b', 60_000)).toMatchObject({ holder: 'node-b' });
      });

      it('liveLeases lists the unexpired leases under a prefix', async () => {
        const prefix = `n${rnd()}:`;
        await store.acquireLease(`${prefix}1`, 'x', 60_000);
        await store.acquireLease(`${prefix}2`, 'y', 60_000);
        await store.acquireLease(`${prefix}3`, 'z', 30);
        await store.acquireLease(`other-${prefix}4`, 'w', 60_000);
        await new Promise((r) => setTimeout(r, 80));
        expect((await store.liveLeases(prefix)).map((l) => [l.name, l.holder])).toEqual([[`${prefix}1`, 'x'], [`${prefix}2`, 'y']]);
      });

      it('pruneLeases deletes only leases expired longer ago than the grace', async () => {
        const a = `lease-${rnd()}`;
        const b = `lease-${rnd()}`;
        const c = `lease-${rnd()}`;
        await store.acquireLease(a, 'x', 20);
        await store.acquireLease(b, 'x', 60_000);
        await new Promise((r) => setTimeout(r, 300));
        await store.acquireLease(c, 'x', 20);
        await new Promise((r) => setTimeout(r, 40));
        expect(await store.pruneLeases(200)).toBeGreaterThanOrEqual(1);
        // a (expired 280 ms ago) is gone, so another holder takes it as a new lease (epoch 1); c stays (epoch 2 on takeover).
        expect(await store.acquireLease(a, 'y', 60_000)).toMatchObject({ epoch: 1 });
        expect(await store.acquireLease(c, 'y', 60_000)).toMatchObject({ epoch: 2 });
        expect(await store.acquireLease(b, 'y', 60_000)).toBeUndefined();
      });

      it('20 holders racing for one lease (through two stores): exactly one gets it', async () => {
        const name = `lease-${rnd()}`;
        const other = subject.openAnother();
        try {
          const results = await Promise.all(
            Array.from({ length: 20 }, (_, i) => (i % 2 ? other : store).acquireLease(name, `node-${i}`, 60_000)),
          );
          const won = results.filter((r) => r !== undefined);
          expect(won).toHaveLength(1);
          expect(won[0]!.epoch).toBe(1);
        } finally {
          await other.close();
        }
      });
    });

    describe('concurrency', () => {
      it('20 parallel creates of one dataset slug: exactly one wins, the rest raise UniqueViolation', async () => {
        const { env } = await teamWithEnvironment();
        const slug = `race-${rnd()}`;
        const results = await Promise.allSettled(
          Array.from({ length: 20 }, (_, i) => store.createDataset(dsInput(env.id, { slug, description: `attempt ${i}` }))),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(19);
        for (const r of lost) expect(r.reason).toBeInstanceOf(UniqueViolation);
        const winner = (won[0] as PromiseFulfilledResult<unknown>).value;
        expect(await store.listDatasets(env.id)).toEqual([winner]);
      });

      it('parallel creates of different rows all land', async () => {
        const { team, env } = await teamWithEnvironment();
        const [datasets, envs, keys] = await Promise.all([
          Promise.all(Array.from({ length: 20 }, () => store.createDataset(dsInput(env.id)))),
          Promise.all(Array.from({ length: 10 }, () => store.createEnvironment(envInput(team.id)))),
          Promise.all(Array.from({ length: 10 }, () => store.createApiKey(keyInput(team.id, env.id)))),
        ]);
        expect(await store.listDatasets(env.id)).toEqual([...datasets].sort((a, b) => byteOrder(a.slug, b.slug)));
        expect((await store.listEnvironments(team.id, { limit: 100 })).map((e) => e.id).sort(byteOrder)).toEqual(
          [env, ...envs].map((e) => e.id).sort(byteOrder),
        );
        expect((await store.listApiKeys(team.id, {}, { limit: 100 })).map((k) => k.id)).toEqual(
          keys.map((k) => k.id).sort(byteOrder),
        );
      });

      it('parallel environment deletes: exactly one reports true, and the cascade is complete', async () => {
        const { team, env } = await teamWithEnvironment();
        await Promise.all(Array.from({ length: 5 }, () => store.createDataset(dsInput(env.id))));
        await Promise.all(Array.from({ length: 5 }, () => store.createApiKey(keyInput(team.id, env.id))));
        const results = await Promise.all(Array.from({ length: 5 }, () => store.deleteEnvironment(team.id, env.id)));
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await store.getEnvironmentById(env.id)).toBeUndefined();
        expect(await store.listDatasets(env.id)).toEqual([]);
        expect(await store.listApiKeys(team.id, { environmentId: env.id }, { limit: 100 })).toEqual([]);
      });
    });
  });
});

// ---------------------------------------------------------------- PostgreSQL only

describe.skipIf(!postgresUrl)('PostgreSQL store: schema isolation', () => {
  it('refuses a schema name that is not a plain identifier', () => {
    expect(() => openPostgresStore('postgres://127.0.0.1:1/x', 'x; DROP TABLE teams')).toThrow(/schema/);
    expect(() => openPostgresStore('postgres://127.0.0.1:1/x', 'Upper')).toThrow(/schema/);
  });

  it('two stores in two schemas of one database each migrate fully and see only their own rows', async () => {
    const a = await createTestSchema(postgresUrl!, 'iso_a');
    const b = await createTestSchema(postgresUrl!, 'iso_b');
    const storeA = openPostgresStore(a.url, a.name);
    const storeB = openPostgresStore(b.url, b.name);
    try {
      const all = Object.keys(await migrationProvider.getMigrations()).sort();
      expect(await storeA.migrate()).toEqual(all);
      // B must not mistake A's migration table for its own.
      expect(await storeB.migrate()).toEqual(all);
      expect(await storeA.migrate()).toEqual([]);
      expect(await storeB.migrate()).toEqual([]);
      for (const s of [a, b]) {
        const r = await s.query<{ name: string }>(`SELECT name FROM ${quoteIdent(s.name)}.kysely_migration ORDER BY name`);
        expect(r.rows.map((row) => row.name)).toEqual(all);
      }

      const team = teamInput();
      await storeA.createTeam(team);
      expect(await storeA.getTeam(team.id)).toEqual(team);
      expect(await storeB.getTeam(team.id)).toBeUndefined();
      // The same slug in the other schema is no conflict.
      await storeB.createTeam({ ...team, name: 'B' });
      expect((await storeB.getTeamBySlug(team.slug))!.name).toBe('B');
      expect((await storeA.getTeamBySlug(team.slug))!.name).toBe(team.name);
    } finally {
      await Promise.allSettled([storeA.close(), storeB.close()]);
      await Promise.allSettled([a.drop(), b.drop()]);
    }
  });

  it('a store with a schema creates its tables there and leaves the public schema alone', async () => {
    const s = await createTestSchema(postgresUrl!, 'pub');
    const store = openPostgresStore(s.url, s.name);
    const tablesIn = async (schema: string) =>
      (
        await s.query<{ table_name: string }>(
          'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
          [schema],
        )
      ).rows.map((row) => row.table_name);
    try {
      const publicBefore = await tablesIn('public');
      await store.migrate();
      expect(await tablesIn(s.name)).toEqual(
        expect.arrayContaining(['api_keys', 'datasets', 'environments', 'kysely_migration', 'kysely_migration_lock', 'teams']),
      );
      expect(await tablesIn('public')).toEqual(publicBefore);
    } finally {
      await store.close();
      await s.drop();
    }
  });
});
