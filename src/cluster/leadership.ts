// Which node does the background work, when several Waggle nodes share one configuration store
// (docs/several-nodes.md). Two kinds:
//
// - SoloLeadership (SQLite, the embedded default): one process owns its data directory, so it is
//   always the leader and every claim is its own.
// - LeaseLeadership (PostgreSQL): the leader is whoever holds the `leader` lease row. Every node
//   tries to take or renew it every ttl/3; the holder's lease runs `ttlMs` from the database's
//   clock. A node counts itself leader only until (start of its last successful renewal + ttl −
//   a safety margin), measured on its own monotonic clock, so it stops before the lease can pass
//   to another node even if the database is unreachable. After a kill -9 the lease lapses within
//   ttl and a standby takes it within ttl/3 more; a clean shutdown releases it at once. Each node
//   also keeps a `node:<id>` heartbeat lease, which tells every node how many are alive (per-node
//   shares of rate limits, http/rate-limit.ts).
//
// Claims on shared work (a notification delivery, a running query result) are leases too: the
// first claimant runs it; another node takes it over only once the claim has lapsed.
import { performance } from 'node:perf_hooks';
import type { ConfigStore } from '../stores/config/types.js';

export interface Leadership {
  readonly nodeId: string;
  /** True when other nodes may share the store (a lease decides); false for the embedded default. */
  readonly shared: boolean;
  /** Whether this node may run background work now. */
  isLeader(): boolean;
  /** Grows each time this node becomes leader (0: never was): lets work notice a new term. */
  readonly term: number;
  /** Resolves once the first attempt at the lease has been made. */
  ready(): Promise<void>;
  /** Live nodes sharing the store, this one included (≥ 1). */
  liveNodes(): number;
  /** Takes (or renews) a claim on shared work for ttlMs; false when another node holds it. */
  claim(name: string, ttlMs: number): Promise<boolean>;
  release(name: string): Promise<void>;
  /** Called when this node becomes leader. */
  onLead(fn: () => void): void;
  start(): void;
  /** Stops renewing; `release` (a clean shutdown) gives the leases up at once. */
  stop(release?: boolean): Promise<void>;
}

export class SoloLeadership implements Leadership {
  readonly shared = false;
  readonly term = 1;
  constructor(readonly nodeId = 'solo') {}
  isLeader() {
    return true;
  }
  async ready() {}
  liveNodes() {
    return 1;
  }
  async claim() {
    return true;
  }
  async release() {}
  onLead() {}
  start() {}
  async stop() {}
}

export interface LeaseLeadershipOptions {
  nodeId: string;
  /** How long a lease lasts without renewal (ms). */
  ttlMs: number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export const LEADER_LEASE = 'leader';
export const NODE_LEASE_PREFIX = 'node:';

export class LeaseLeadership implements Leadership {
  readonly shared = true;
  readonly nodeId: string;
  term = 0;
  private validUntil = 0;
  private nodes = 1;
  private timer?: NodeJS.Timeout;
  private round?: Promise<void>;
  private first?: Promise<void>;
  private stopped = false;
  private pruned = 0;
  private readonly leadListeners: (() => void)[] = [];

  constructor(
    private readonly store: ConfigStore,
    private readonly opts: LeaseLeadershipOptions,
  ) {
    this.nodeId = opts.nodeId;
  }

  isLeader(): boolean {
    return !this.stopped && performance.now() < this.validUntil;
  }

  ready(): Promise<void> {
    return (this.first ??= this.renew());
  }

  liveNodes(): number {
    return this.nodes;
  }

  async claim(name: string, ttlMs: number): Promise<boolean> {
    return (await this.store.acquireLease(name, this.nodeId, ttlMs)) !== undefined;
  }

  async release(name: string): Promise<void> {
    await this.store.releaseLease(name, this.nodeId);
  }

  onLead(fn: () => void): void {
    this.leadListeners.push(fn);
  }

  start(): void {
    void this.ready();
    const every = Math.max(50, Math.floor(this.opts.ttlMs / 3));
    this.timer = setInterval(() => void this.renew(), every);
    this.timer.unref();
  }

  /** One round: take or renew the leader lease, beat this node's heart, count the live nodes. */
  private renew(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.round ??= (async () => {
      const ttl = this.opts.ttlMs;
      const started = performance.now();
      const was = this.isLeader();
      try {
        const lease = await this.store.acquireLease(LEADER_LEASE, this.nodeId, ttl);
        // A tenth of the ttl covers the time between our clock and the database's reading of it.
        this.validUntil = lease && !this.stopped ? started + ttl - Math.max(10, ttl / 10) : 0;
        if (lease && !was) {
          this.term++;
          this.opts.log.info({ node: this.nodeId, epoch: lease.epoch }, 'this node is now the leader (background work runs here)');
          for (const fn of this.leadListeners) fn();
        } else if (!lease && was) {
          this.opts.log.warn({ node: this.nodeId }, 'this node is no longer the leader');
        }
        await this.store.acquireLease(NODE_LEASE_PREFIX + this.nodeId, this.nodeId, ttl);
        this.nodes = Math.max(1, (await this.store.liveLeases(NODE_LEASE_PREFIX)).length);
        // The leader sweeps leases long expired (nodes gone for good, claims nobody released).
        if (this.isLeader() && performance.now() - this.pruned > 60_000) {
          this.pruned = performance.now();
          await this.store.pruneLeases(3_600_000);
        }
      } catch (err) {
        // The lease lapses on its own (validUntil); try again next round.
        if (was && !this.isLeader()) this.opts.log.warn({ node: this.nodeId, err }, 'this node is no longer the leader (lease not renewed)');
        else this.opts.log.warn({ node: this.nodeId, err }, 'lease renewal failed');
      }
    })().finally(() => (this.round = undefined));
    return this.round;
  }

  async stop(release = true): Promise<void> {
    clearInterval(this.timer);
    this.stopped = true;
    await this.round;
    this.validUntil = 0;
    if (!release) return;
    await Promise.all([
      this.store.releaseLease(LEADER_LEASE, this.nodeId),
      this.store.releaseLease(NODE_LEASE_PREFIX + this.nodeId, this.nodeId),
    ]).catch(() => undefined);
  }
}

/**
 * Runs shared work (a query result, a service-map request) on one node: the node that claims
 * `name` runs it; any other waits, polling `stored` for the runner's answer, until the claim's ttl
 * has passed (then undefined: the runner died, and a later request takes the lapsed claim over).
 */
export async function runClaimed<T>(
  leadership: Pick<Leadership, 'claim' | 'release'>,
  name: string,
  ttlMs: number,
  run: () => Promise<T>,
  stored: () => Promise<T | undefined>,
  pollMs = 200,
): Promise<T | undefined> {
  if (await leadership.claim(name, ttlMs)) {
    try {
      return await run();
    } finally {
      await leadership.release(name).catch(() => undefined);
    }
  }
  const until = performance.now() + ttlMs;
  while (performance.now() < until) {
    const done = await stored();
    if (done !== undefined) return done;
    await new Promise((r) => setTimeout(r, pollMs));
  }
  return undefined;
}

/**
 * Runs `fn` holding the lease `name` (a lock across the nodes sharing the store): waits for
 * another holder to finish, at most `waitMs`, then throws. `ttlMs` bounds how long a holder that
 * died keeps everyone else waiting.
 */
export async function withLease<T>(
  leadership: Pick<Leadership, 'claim' | 'release'>,
  name: string,
  fn: () => Promise<T>,
  { ttlMs = 30_000, waitMs = 30_000 }: { ttlMs?: number; waitMs?: number } = {},
): Promise<T> {
  const until = performance.now() + waitMs;
  while (!(await leadership.claim(name, ttlMs))) {
    if (performance.now() > until) throw new Error(`${name} stayed locked by another node for ${Math.round(waitMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
  try {
    return await fn();
  } finally {
    await leadership.release(name).catch(() => undefined);
  }
}
