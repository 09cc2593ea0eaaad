// Ingest threads: /1/batch and OTLP bodies are decompressed, parsed and normalised (or
// translated) on worker threads, so the JavaScript thread, which also serves HTTP and stages
// every event into DuckDB, does neither. In the ingest benchmark those steps were a third of that thread's time, and it was
// the one thread ingest waited on (bench/ingest.mjs; docs/benchmarks-log.md). With no threads
// (WAGGLE_INGEST_THREADS=0) the same code runs on the JavaScript thread.
//
// One pool per process and size, started on first use: the threads hold no state (each request
// carries what decoding needs), and keep the process alive only while they have work.
//
// A thread's young generation is V8's default (2 × 16 MB), not the 2 × 64 MB of the JavaScript
// thread (the `--max-semi-space-size=64` on `waggle`'s `#!` line), where batches wait for their
// group commit. That flag is process-wide and wins over a Worker's `resourceLimits`, and V8 grows
// a young generation to its maximum once enough has survived since it last grew, however slowly:
// in the soak the ingest thread's heap stepped up by 70 MB after 26–30 minutes. V8 reads the flag
// when an isolate is created, so setting it before the first thread starts sizes the threads
// alone (the JavaScript thread's heap is already configured).
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { BatchRequest, DecodedBatch } from './batch.js';
import type { DecodedOtlp, OtlpDecodeRequest } from './otlp/request.js';
import { received, runTask, type IngestTask } from './tasks.js';

/** V8's default semi-space on 64-bit machines (MB), for the ingest threads. */
const INGEST_THREAD_SEMI_SPACE_MB = 16;

/**
 * A thread's entry. Run from TypeScript source (the tests), the thread registers tsx's loader
 * before importing it: a worker does not inherit the loader of the thread that starts it.
 */
function startThread(): Worker {
  setFlagsFromString(`--max-semi-space-size=${INGEST_THREAD_SEMI_SPACE_MB}`);
  const entry = new URL(`./batch-thread${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
  if (entry.pathname.endsWith('.js')) return new Worker(entry);
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(code, { eval: true });
}

interface Task {
  resolve(d: DecodedBatch | DecodedOtlp): void;
  reject(err: Error): void;
}

class Thread {
  readonly worker = startThread();
  readonly tasks = new Map<number, Task>();
  dead = false;
  /** The thread's V8 heap (committed bytes) as of its last answer, and its limit. */
  heap = 0;
  heapLimit = 0;

  constructor(onDeath: () => void) {
    this.worker.on('message', (m: { id: number; decoded?: DecodedBatch | DecodedOtlp; error?: string; heap: number; heapLimit: number }) => {
      this.heap = m.heap;
      this.heapLimit = m.heapLimit;
      const task = this.tasks.get(m.id);
      this.tasks.delete(m.id);
      if (this.tasks.size === 0) this.worker.unref();
      if (m.decoded) task?.resolve(received(m.decoded));
      else task?.reject(new Error(`ingest thread: ${m.error}`));
    });
    const die = (err: Error) => {
      if (this.dead) return;
      this.dead = true;
      for (const t of this.tasks.values()) t.reject(new Error(`ingest thread failed: ${err.message}`));
      this.tasks.clear();
      onDeath();
    };
    this.worker.on('error', die);
    this.worker.on('exit', (code) => die(new Error(`exited with code ${code}`)));
    // After the listeners: adding a 'message' listener refs the thread again.
    this.worker.unref();
  }

  /** Posts a task; the thread keeps the process alive while it has tasks, and only then. */
  post(id: number, task: IngestTask, pending: Task): void {
    if (this.tasks.size === 0) this.worker.ref();
    this.tasks.set(id, pending);
    // The body is copied, not transferred: Node may have cut it from a shared pool.
    this.worker.postMessage({ id, task });
  }
}

export class BatchThreads {
  private readonly threads: Thread[] = [];
  private nextId = 0;

  constructor(private readonly size: number) {}

  /** Decodes a /1/batch body on the least busy thread (a thread that failed is replaced). */
  decode(request: BatchRequest): Promise<DecodedBatch> {
    return this.run({ kind: 'batch', request }) as Promise<DecodedBatch>;
  }

  /** Decodes and translates an OTLP body, the same way. */
  decodeOtlp(request: OtlpDecodeRequest): Promise<DecodedOtlp> {
    return this.run({ kind: 'otlp', request }) as Promise<DecodedOtlp>;
  }

  /** The ingest threads' V8 heaps (committed bytes, as of each one's last answer). */
  heapBytes(): number {
    return this.threads.reduce((sum, t) => sum + t.heap, 0);
  }

  /** What the ingest threads' V8 heaps may grow to (old and young generations), summed. */
  heapLimitBytes(): number {
    return this.threads.reduce((sum, t) => sum + t.heapLimit, 0);
  }

  private async run(task: IngestTask): Promise<DecodedBatch | DecodedOtlp> {
    if (this.size === 0) return runTask(task);
    let thread: Thread | undefined;
    if (this.threads.length < this.size) {
      const t: Thread = new Thread(() => {
        const i = this.threads.indexOf(t);
        if (i >= 0) this.threads.splice(i, 1);
      });
      this.threads.push(t);
      thread = t;
    } else thread = this.threads.reduce((a, b) => (b.tasks.size < a.tasks.size ? b : a));
    const id = this.nextId++;
    return new Promise<DecodedBatch | DecodedOtlp>((resolve, reject) => thread.post(id, task, { resolve, reject }));
  }
}

const pools = new Map<number, BatchThreads>();

/** The process's pool of `size` ingest threads (0: decode on the calling thread). */
export function batchThreads(size: number): BatchThreads {
  let pool = pools.get(size);
  if (!pool) pools.set(size, (pool = new BatchThreads(size)));
  return pool;
}
