// Background evaluation (triggers, burn alerts, signals): jobs registered here run when due, on a
// timer in a running server and on demand in tests, which advance the app clock and call tick().
// A job decides itself what is due from the clock it is given, and must be idempotent per
// evaluation time (state it keeps is in the config store, so a restart picks up where it was).
// Jobs run only while this node is the leader (cluster/leadership.ts): with several nodes on one
// store, exactly one runs them; it checks again before each job, so a node that lost the lease
// starts nothing new.
import { SoloLeadership, type Leadership } from '../cluster/leadership.js';

export interface Job {
  name: string;
  /** Runs whatever is due at `now`. Errors are logged, not thrown to the scheduler. */
  run(now: Date): Promise<void>;
}

export class Scheduler {
  private readonly jobs: Job[] = [];
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly now: () => Date,
    private readonly onError: (job: string, err: unknown) => void,
    /** Told of every run of a job (metrics): its name, seconds taken, and whether it failed. */
    private readonly onRun?: (job: string, seconds: number, failed: boolean) => void,
    private readonly leadership: Leadership = new SoloLeadership(),
  ) {}

  register(job: Job): void {
    this.jobs.push(job);
  }

  /** Runs every job once at the current app time; concurrent calls share one pass. */
  tick(): Promise<void> {
    this.running ??= (async () => {
      await this.leadership.ready();
      const now = this.now();
      for (const job of this.jobs) {
        if (!this.leadership.isLeader()) return;
        const started = performance.now();
        let failed = false;
        try {
          await job.run(now);
        } catch (err) {
          failed = true;
          this.onError(job.name, err);
        }
        this.onRun?.(job.name, (performance.now() - started) / 1000, failed);
      }
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Ticks every `intervalMs` until stop(). */
  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.tick(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
