// Delivery: the Notifier the app uses. Notifications are queued in memory and persisted in the
// delivery log (kind `delivery`), sent by the transports with retries, and every attempt and
// outcome is written to the log.
//
// Decisions (docs/recipients.md, "Notifications and delivery" says the same):
// - enqueue() never blocks and never throws. At most `queueSize` deliveries may be unfinished
//   (queued, in flight or waiting for a retry); past that a new one is refused: a warning is
//   logged and a `refused` entry written to the delivery log.
// - Per-recipient order: each recipient has its own FIFO lane, and a delivery starts only when
//   the one before it to the same recipient has finished (delivered or failed for good), so a
//   resolve never overtakes its trigger. Lanes run in parallel, up to `concurrency` requests at
//   once; a slow or failing recipient holds up only its own lane (its retries wait on timers,
//   not on request slots).
// - Retries: network errors, timeouts, HTTP 5xx, 429 and 408, SMTP 4xx and connection
//   failures, up to `maxAttempts` attempts in all. Backoff before attempt k+1 is
//   base·2^(k−1) capped at `retryMaxMs`, with "equal jitter" (half fixed, half random), and at
//   least what a Retry-After header asks (still capped). Other 4xx, SMTP 5xx, template errors
//   and unconfigured Slack/SMTP fail at once.
// - A recipient that no longer exists (or belongs to another team) fails at once, unretried.
// - Deduplication: one delivery per (notification id, recipient id); a repeat is ignored.
// - Persistence: the delivery (with its notification) is written before its first attempt and
//   updated after each. At shutdown, requests in flight get a short grace, then are cut short;
//   unfinished deliveries stay `queued`/`retrying` in the log and the next start resumes them
//   (at-least-once: a receiver may see a request twice, with the same delivery id).
// - The log keeps the newest `logSize` entries; older finished ones are pruned.
// - Several nodes on one store (docs/several-nodes.md): the delivery log in PostgreSQL is the
//   queue. A delivery is claimed (a lease, `claims`) before its record is written and again
//   before each attempt, for `claimMs`; only the claimant sends it, and a node whose claim has
//   lapsed to another drops it unsent. The leader takes over unfinished deliveries whose claim
//   has lapsed (resumeUnfinished, from a scheduler job): after a kill -9 nothing queued is lost,
//   and a request is sent twice only if the node died between the receiver's answer and the
//   log's update (the repeat carries the same delivery id).
//
// Over 500 lines: the queue, the per-recipient lanes, retries and the delivery log are one state
// machine (DeliveryNotifier); transports and templates are apart (transports.ts, format.ts).
import { randomUUID } from 'node:crypto';
import { getRecipientForDelivery, recipientTarget } from '../domain/recipients.js';
import { UniqueViolation, type ConfigStore } from '../stores/config/types.js';
import { deliveryKey, isFinal, pruneDeliveries, type DeliveryAttempt, type DeliveryRecord } from './log.js';
import { EmailSender, sendOnce, type AttemptResult, type TransportConfig } from './transports.js';
import type { Notification, Notifier } from './types.js';
import { DELIVERY_KIND } from '../domain/kinds.js';

export interface NotifyLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DeliveryOptions {
  queueSize: number;
  concurrency: number;
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Newest deliveries kept in the log. */
  logSize: number;
  /** How long close() lets requests in flight finish before cutting them short. */
  closeGraceMs: number;
  /** Base URL that makes an alert's relative `url` absolute (settings' backgroundBaseUrl). */
  linkBase?: string;
  /** How long a claim on a delivery lasts (ms): longer than one attempt. Default: 60 s. */
  claimMs?: number;
}

export interface DeliveryNotifierDeps {
  store: ConfigStore;
  options: DeliveryOptions;
  transport: Omit<TransportConfig, 'clock'>;
  log: NotifyLogger;
  /** Wall clock in ms (delivery log times, backoff); defaults to Date.now. */
  clock?: () => number;
  /** Jitter source in [0, 1); defaults to Math.random. */
  random?: () => number;
  /** Resume unfinished deliveries from the log at construction (default true). */
  resume?: boolean;
  /** Told how each notification ended (metrics): delivered, failed or refused. */
  onOutcome?: (recipientType: string, outcome: 'delivered' | 'failed' | 'refused') => void;
  /** Claims on deliveries shared with other nodes (cluster/leadership.ts); default: every claim is ours. */
  claims?: { claim(name: string, ttlMs: number): Promise<boolean>; release(name: string): Promise<void> };
}

const SENT_KEPT = 1000;

/** The notification with its links (`alert.url`, `result.url`, `result.imageUrl`) absolute: a path gets `base` in front. */
export function absoluteLinks(n: Notification, base: string | undefined): Notification {
  if (!base) return n;
  const abs = (u: string | undefined) => (u?.startsWith('/') ? base + u : u);
  const alert = n.alert.url?.startsWith('/') ? { ...n.alert, url: abs(n.alert.url) } : n.alert;
  const result = n.result.url?.startsWith('/') || n.result.imageUrl?.startsWith('/')
    ? { ...n.result, ...(n.result.url ? { url: abs(n.result.url) } : {}), ...(n.result.imageUrl ? { imageUrl: abs(n.result.imageUrl) } : {}) }
    : n.result;
  return alert === n.alert && result === n.result ? n : { ...n, alert, result };
}

interface Delivery {
  id: string;
  key: string;
  lane: string;
  n: Notification;
  record: DeliveryRecord;
  /** Wall-clock ms when the next attempt may start. */
  dueAt: number;
  phase: 'idle' | 'waiting' | 'ready' | 'running';
  timer?: NodeJS.Timeout;
  /** Resolves true once the record exists in the store (false: a duplicate, do not send). */
  persisted: Promise<boolean>;
}

interface IdleWaiter {
  within?: number;
  resolve: () => void;
}

export class DeliveryNotifier implements Notifier {
  readonly sent: Notification[] = [];
  private readonly lanes = new Map<string, Delivery[]>();
  private readonly active = new Map<string, Delivery>();
  private readonly ready: Delivery[] = [];
  private readonly writes = new Set<Promise<unknown>>();
  private readonly waiters = new Set<IdleWaiter>();
  private readonly running = new Set<Promise<void>>();
  private readonly stop = new AbortController();
  private readonly email: EmailSender;
  private readonly cfg: TransportConfig;
  private readonly clock: () => number;
  private readonly random: () => number;
  private inFlight = 0;
  private closed = false;
  /** Set once close() gave up waiting: late results are not written any more. */
  private abandoned = false;
  private resuming = false;
  private sincePrune = 0;
  private pruning?: Promise<void>;

  constructor(private readonly deps: DeliveryNotifierDeps) {
    this.clock = deps.clock ?? Date.now;
    this.random = deps.random ?? Math.random;
    this.cfg = { ...deps.transport, clock: this.clock };
    this.email = new EmailSender(this.cfg);
    if (deps.resume !== false) {
      this.resuming = true;
      this.track(this.resume().finally(() => {
        this.resuming = false;
        for (const lane of this.lanes.keys()) this.scheduleHead(lane);
      }));
    }
  }

  private lastIdMs = 0;
  private idSeq = 0;
  /** Time-ordered ids (ms, then a counter, then random), so the log lists same-millisecond deliveries in enqueue order. */
  private newId(): string {
    const ms = Date.now();
    this.idSeq = ms === this.lastIdMs ? this.idSeq + 1 : 0;
    this.lastIdMs = ms;
    return `${ms.toString(16).padStart(12, '0')}-${this.idSeq.toString(16).padStart(4, '0')}-${randomUUID().slice(0, 13)}`;
  }

  private get opts() {
    return this.deps.options;
  }
  private claim(id: string): Promise<boolean> {
    return this.deps.claims ? this.deps.claims.claim(`delivery:${id}`, this.opts.claimMs ?? 60_000) : Promise.resolve(true);
  }
  private release(id: string): void {
    if (this.deps.claims) this.track(this.deps.claims.release(`delivery:${id}`));
  }
  private get store() {
    return this.deps.store;
  }
  private iso(ms = this.clock()) {
    return new Date(ms).toISOString();
  }

  // --- enqueue

  enqueue(n: Notification): void {
    try {
      n = absoluteLinks(n, this.opts.linkBase);
      this.sent.push(n);
      if (this.sent.length > SENT_KEPT) this.sent.splice(0, this.sent.length - SENT_KEPT);
      this.accept(n);
    } catch (err) {
      this.deps.log.error({ err, notificationId: n?.id }, 'notification not accepted');
    }
  }

  private accept(n: Notification): void {
    const ctx = { notificationId: n.id, alertId: n.alert.id, recipientId: n.recipient.id };
    if (this.closed) {
      this.deps.log.warn(ctx, 'notification refused: delivery is shut down');
      return;
    }
    const key = deliveryKey(n);
    if (this.active.has(key)) {
      this.deps.log.info(ctx, 'duplicate notification ignored');
      return;
    }
    const record: DeliveryRecord = {
      notificationId: n.id,
      source: n.source,
      status: n.status,
      alert: { id: n.alert.id, name: n.alert.name },
      recipient: { id: n.recipient.id, type: n.recipient.type, target: n.recipient.target },
      state: 'queued',
      attemptCount: 0,
      attempts: [],
      notification: n,
    };
    const id = this.newId();
    if (this.active.size >= this.opts.queueSize) {
      const error = `delivery queue is full (${this.opts.queueSize} unfinished deliveries)`;
      this.deps.log.warn({ ...ctx, deliveryId: id }, `notification refused: ${error}`);
      this.deps.onOutcome?.(n.recipient.type, 'refused');
      // No unique key: the alerting code may enqueue the same notification again later.
      this.track(this.create(id, { ...record, state: 'refused', error, finishedAt: this.iso() }, n, null).catch(() => false));
      return;
    }
    const d: Delivery = { id, key, lane: n.recipient.id, n, record, dueAt: this.clock(), phase: 'idle', persisted: Promise.resolve(true) };
    // Claimed before it is written: another node's leader never takes over a delivery mid-creation.
    const created = this.deps.claims ? this.claim(id).then(() => this.create(id, record, n, key)) : this.create(id, record, n, key);
    d.persisted = created.catch((err: unknown) => {
      if (err instanceof UniqueViolation) {
        this.release(id);
        this.deps.log.info(ctx, 'duplicate notification ignored (already in the delivery log)');
        return false;
      }
      // Deliver all the same; the log misses this one.
      this.deps.log.error({ ...ctx, err }, 'delivery log write failed');
      return true;
    });
    this.track(d.persisted);
    this.active.set(key, d);
    const lane = this.lanes.get(d.lane) ?? [];
    lane.push(d);
    this.lanes.set(d.lane, lane);
    this.scheduleHead(d.lane);
  }

  private async create(id: string, record: DeliveryRecord, n: Notification, uniqueKey: string | null): Promise<boolean> {
    await this.store.createObject<DeliveryRecord>({
      id,
      kind: DELIVERY_KIND,
      teamId: n.teamId,
      environmentId: n.environmentId ?? null,
      datasetId: null,
      scope: n.teamId,
      uniqueKey,
      body: record,
    });
    this.afterCreate();
    return true;
  }

  private afterCreate(): void {
    const every = Math.max(1, Math.min(500, Math.floor(this.opts.logSize / 20)));
    if (++this.sincePrune < every || this.pruning) return;
    this.sincePrune = 0;
    this.pruning = pruneDeliveries(this.store, this.opts.logSize)
      .then(() => undefined, (err: unknown) => this.deps.log.error({ err }, 'delivery log pruning failed'))
      .finally(() => (this.pruning = undefined));
    this.track(this.pruning);
  }

  // --- scheduling

  private scheduleHead(laneKey: string): void {
    const lane = this.lanes.get(laneKey);
    const d = lane?.[0];
    if (!d || d.phase !== 'idle' || this.closed || this.resuming) return;
    const delay = d.dueAt - this.clock();
    if (delay <= 0) {
      d.phase = 'ready';
      this.ready.push(d);
      this.pump();
    } else {
      d.phase = 'waiting';
      d.timer = setTimeout(() => {
        d.timer = undefined;
        d.phase = 'ready';
        this.ready.push(d);
        this.pump();
      }, delay);
      d.timer.unref();
    }
  }

  private pump(): void {
    while (!this.closed && this.inFlight < this.opts.concurrency && this.ready.length) {
      const d = this.ready.shift()!;
      d.phase = 'running';
      this.inFlight++;
      const p = this.run(d)
        .catch((err: unknown) => this.deps.log.error({ err, deliveryId: d.id }, 'delivery failed unexpectedly'))
        .finally(() => {
          this.inFlight--;
          this.running.delete(p);
          this.pump();
          this.checkIdle();
        });
      this.running.add(p);
    }
  }

  private backoff(attempt: number, retryAfterMs?: number): number {
    const exp = Math.min(this.opts.retryMaxMs, this.opts.retryBaseMs * 2 ** Math.max(0, attempt - 1));
    const jittered = exp / 2 + (this.random() * exp) / 2;
    return Math.min(this.opts.retryMaxMs, Math.max(jittered, retryAfterMs ?? 0));
  }

  private async run(d: Delivery): Promise<void> {
    if (!(await d.persisted)) return this.finish(d, false);
    let ours: boolean;
    try {
      ours = await this.claim(d.id);
    } catch (err) {
      this.deps.log.warn({ err, deliveryId: d.id }, 'could not claim a delivery; trying again later');
      d.dueAt = this.clock() + this.opts.retryBaseMs;
      d.phase = 'idle';
      return this.scheduleHead(d.lane);
    }
    if (!ours) {
      this.deps.log.info({ deliveryId: d.id }, 'delivery taken over by another node');
      return this.finish(d, false);
    }
    const started = this.clock();
    let result: AttemptResult;
    try {
      const recipient = await getRecipientForDelivery(this.store, d.n.teamId, d.n.recipient.id);
      if (!recipient) {
        result = { ok: false, retryable: false, error: 'the recipient no longer exists' };
      } else {
        d.record.recipient = { id: recipient.id, type: recipient.type, target: recipientTarget(recipient) };
        result = await sendOnce(recipient, await this.withEnvironmentName(d.n), d.id, this.cfg, this.email, this.stop.signal);
      }
    } catch (err) {
      result = { ok: false, retryable: true, error: `could not read the recipient: ${(err as Error).message}` };
    }
    if (this.abandoned) return;
    const attempt: DeliveryAttempt = { at: this.iso(started), durationMs: this.clock() - started, outcome: 'delivered' };
    if (result.httpStatus !== undefined) attempt.httpStatus = result.httpStatus;
    if (result.error) attempt.error = result.error;
    const r = d.record;
    const ctx = { deliveryId: d.id, notificationId: d.n.id, recipientId: d.n.recipient.id, recipientType: r.recipient.type };

    if (result.interrupted) {
      attempt.outcome = 'interrupted';
      r.attempts.push(attempt);
      r.nextAttemptAt = this.iso();
      await this.save(d);
      return; // stays in its lane; close() is under way and the next start resumes it
    }
    r.attemptCount++;
    if (result.ok) {
      r.state = 'delivered';
      delete r.error;
      delete r.nextAttemptAt;
      r.finishedAt = this.iso();
      r.attempts.push(attempt);
      await this.save(d);
      this.deps.log.info({ ...ctx, attempts: r.attemptCount }, 'notification delivered');
      this.deps.onOutcome?.(r.recipient.type, 'delivered');
      return this.finish(d, true);
    }
    r.error = result.error;
    if (result.retryable && r.attemptCount < this.opts.maxAttempts && !this.closed) {
      attempt.outcome = 'retry';
      const delay = this.backoff(r.attemptCount, result.retryAfterMs);
      d.dueAt = this.clock() + delay;
      r.state = 'retrying';
      r.nextAttemptAt = this.iso(d.dueAt);
      r.attempts.push(attempt);
      await this.save(d);
      this.deps.log.warn({ ...ctx, attempt: r.attemptCount, error: result.error, retryInMs: Math.round(delay) }, 'notification delivery failed; will retry');
      d.phase = 'idle';
      this.scheduleHead(d.lane);
      return;
    }
    if (result.retryable && r.attemptCount < this.opts.maxAttempts) {
      // Shutting down: leave it for the next start.
      attempt.outcome = 'retry';
      r.state = 'retrying';
      r.nextAttemptAt = this.iso();
      r.attempts.push(attempt);
      await this.save(d);
      return;
    }
    attempt.outcome = 'failed';
    r.state = 'failed';
    if (result.retryable) r.error = `gave up after ${r.attemptCount} attempts; last error: ${result.error}`;
    delete r.nextAttemptAt;
    r.finishedAt = this.iso();
    r.attempts.push(attempt);
    await this.save(d);
    this.deps.log.error({ ...ctx, attempts: r.attemptCount, error: r.error }, 'notification delivery failed');
    this.deps.onOutcome?.(r.recipient.type, 'failed');
    return this.finish(d, true);
  }

  private readonly envNames = new Map<string, string>();

  /** The notification with `alert.environmentName` filled from the store when the alerting code left it out. */
  private async withEnvironmentName(n: Notification): Promise<Notification> {
    if (n.alert.environmentName || !n.environmentId) return n;
    let name = this.envNames.get(n.environmentId);
    if (name === undefined) {
      name = (await this.store.getEnvironmentById(n.environmentId))?.name ?? '';
      if (this.envNames.size > 1000) this.envNames.clear();
      this.envNames.set(n.environmentId, name);
    }
    return name ? { ...n, alert: { ...n.alert, environmentName: name } } : n;
  }

  private async save(d: Delivery): Promise<void> {
    if (this.abandoned) return;
    const p = this.store.updateObject<DeliveryRecord>(DELIVERY_KIND, d.id, { body: d.record }).catch((err: unknown) => {
      this.deps.log.error({ err, deliveryId: d.id }, 'delivery log write failed');
    });
    this.track(p);
    await p;
  }

  /** Takes a finished (or duplicate) delivery off its lane and starts the next one. */
  private finish(d: Delivery, final: boolean): void {
    if (final) this.release(d.id);
    const lane = this.lanes.get(d.lane);
    if (lane) {
      const i = lane.indexOf(d);
      if (i >= 0) lane.splice(i, 1);
      if (!lane.length) this.lanes.delete(d.lane);
    }
    if (this.active.get(d.key) === d) this.active.delete(d.key);
    this.scheduleHead(d.lane);
    this.checkIdle();
  }

  // --- resume

  /**
   * Takes over unfinished deliveries that no node has claimed (or whose claim lapsed: a node died),
   * and schedules them; the leader calls it (several nodes on one store). Returns how many.
   */
  async resumeUnfinished(): Promise<number> {
    if (this.closed) return 0;
    const before = this.active.size;
    await this.resume(true);
    for (const lane of this.lanes.keys()) this.scheduleHead(lane);
    return this.active.size - before;
  }

  private async resume(claimed = false): Promise<void> {
    let list;
    try {
      list = await this.store.listObjects<DeliveryRecord>(DELIVERY_KIND, {});
    } catch (err) {
      this.deps.log.error({ err }, 'could not read unfinished deliveries');
      return;
    }
    const pending = list.filter((o) => !isFinal(o.body.state) && o.body.notification);
    const byLane = new Map<string, Delivery[]>();
    let resumed = 0;
    for (const o of pending) {
      const n = o.body.notification;
      const key = deliveryKey(n);
      if (this.active.has(key)) continue;
      if (claimed) {
        if (!(await this.claim(o.id).catch(() => false))) continue;
        // Read again under the claim: the node that held it may have finished it since the list.
        const now = await this.store.getObject<DeliveryRecord>(DELIVERY_KIND, o.id).catch(() => undefined);
        if (!now || isFinal(now.body.state)) {
          this.release(o.id);
          continue;
        }
        o.body = now.body;
      }
      const due = o.body.nextAttemptAt ? Date.parse(o.body.nextAttemptAt) : this.clock();
      const d: Delivery = { id: o.id, key, lane: n.recipient.id, n, record: o.body, dueAt: Number.isNaN(due) ? this.clock() : due, phase: 'idle', persisted: Promise.resolve(true) };
      this.active.set(key, d);
      resumed++;
      const l = byLane.get(d.lane) ?? [];
      l.push(d);
      byLane.set(d.lane, l);
    }
    for (const [laneKey, taken] of byLane) {
      // Older than anything enqueued since construction: they go first.
      this.lanes.set(laneKey, [...taken, ...(this.lanes.get(laneKey) ?? [])]);
    }
    if (resumed) this.deps.log.info({ deliveries: resumed }, 'resuming unfinished notification deliveries');
  }

  // --- idle and close

  private track(p: Promise<unknown>): void {
    const q = p.then(
      () => undefined,
      () => undefined,
    );
    this.writes.add(q);
    void q.finally(() => {
      this.writes.delete(q);
      this.checkIdle();
    });
  }

  private isIdle(within?: number): boolean {
    if (this.resuming || this.writes.size || this.inFlight || this.ready.length) return false;
    if (within === undefined) return this.lanes.size === 0;
    const now = this.clock();
    for (const lane of this.lanes.values()) {
      const head = lane[0];
      if (!head || head.phase !== 'waiting' || head.dueAt - now <= within) return false;
    }
    return true;
  }

  private checkIdle(): void {
    for (const w of [...this.waiters]) {
      if (this.isIdle(w.within)) {
        this.waiters.delete(w);
        w.resolve();
      }
    }
  }

  idle(opts: { within?: number; timeoutMs?: number } = {}): Promise<void> {
    if (this.closed && this.abandoned) return Promise.resolve(); // nothing more will happen
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(w);
        reject(new Error(`delivery not idle after ${opts.timeoutMs ?? 30_000} ms: ${JSON.stringify(this.stats())}`));
      }, opts.timeoutMs ?? 30_000);
      const w: IdleWaiter = {
        within: opts.within,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.waiters.add(w);
      this.checkIdle();
    });
  }

  /** Counts for logs and tests. */
  stats(): { unfinished: number; inFlight: number; ready: number; lanes: number; writes: number } {
    return { unfinished: this.active.size, inFlight: this.inFlight, ready: this.ready.length, lanes: this.lanes.size, writes: this.writes.size };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const d of this.active.values()) {
      if (d.timer) clearTimeout(d.timer);
      d.timer = undefined;
    }
    this.ready.length = 0;
    if (this.running.size) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.opts.closeGraceMs)));
      await Promise.race([Promise.all(this.running), grace]);
      clearTimeout(timer);
      if (this.running.size) {
        this.stop.abort();
        const settle = new Promise<void>((resolve) => (timer = setTimeout(resolve, 1000)));
        await Promise.race([Promise.all(this.running), settle]);
        clearTimeout(timer);
      }
    }
    // Nothing more is sent from here: another node may take the unfinished ones over at once.
    for (const d of this.active.values()) this.release(d.id);
    await Promise.all([...this.writes]);
    this.abandoned = true;
    this.email.close();
    const left = this.active.size;
    if (left) this.deps.log.info({ deliveries: left }, 'delivery stopped; unfinished deliveries stay in the delivery log and resume at the next start');
    for (const w of [...this.waiters]) {
      this.waiters.delete(w);
      w.resolve();
    }
  }
}

