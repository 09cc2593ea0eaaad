// Ingest threads: /1/batch bodies are decompressed, parsed and normalised on worker threads, so
// the JavaScript thread, which also serves HTTP and stages every event into DuckDB, does
// neither. In the ingest benchmark those steps were a third of that thread's time, and it was
// the one thread ingest waited on (bench/ingest.mjs; docs/benchmarks.md). With no threads
// (WAGGLE_INGEST_THREADS=0) the same code runs on the JavaScript thread.
//
// One pool per process and size, started on first use: the threads hold no state (each request
// carries what decoding needs), and keep the process alive only while they have work.
import { Worker } from 'node:worker_threads';
import { decodeBatch, type BatchRequest, type DecodedBatch } from './batch.js';

/**
 * A thread's entry. Run from TypeScript source (the tests), the thread registers tsx's loader
 * before importing it: a worker does not inherit the loader of the thread that starts it.
 */
function startThread(): Worker {
  const entry = new URL(`./batch-thread${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
  if (entry.pathname.endsWith('.js')) return new Worker(entry);
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(code, { eval: true });
}

interface Task {
  resolve(d: DecodedBatch): void;
  reject(err: Error): void;
}

class Thread {
  readonly worker = startThread();
  readonly tasks = new Map<number, Task>();
  dead = false;

  constructor(onDeath: () => void) {
    this.worker.on('message', (m: { id: number; decoded?: DecodedBatch; error?: string }) => {
      const task = this.tasks.get(m.id);
      this.tasks.delete(m.id);
      if (this.tasks.size === 0) this.worker.unref();
      if (m.decoded) task?.resolve(m.decoded);
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
  post(id: number, request: BatchRequest, task: Task): void {
    if (this.tasks.size === 0) this.worker.ref();
    this.tasks.set(id, task);
    // The body is copied, not transferred: Node may have cut it from a shared pool.
    this.worker.postMessage({ id, request });
  }
}

export class BatchThreads {
  private readonly threads: Thread[] = [];
  private nextId = 0;

  constructor(private readonly size: number) {}

  /** Decodes a batch body on the least busy thread (a thread that failed is replaced). */
  decode(request: BatchRequest): Promise<DecodedBatch> {
    if (this.size === 0) return decodeBatch(request);
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
    return new Promise<DecodedBatch>((resolve, reject) => thread.post(id, request, { resolve, reject }));
  }
}

const pools = new Map<number, BatchThreads>();

/** The process's pool of `size` ingest threads (0: decode on the calling thread). */
export function batchThreads(size: number): BatchThreads {
  let pool = pools.get(size);
  if (!pool) pools.set(size, (pool = new BatchThreads(size)));
  return pool;
}
