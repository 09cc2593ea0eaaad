// An ingest thread: decodes /1/batch bodies (batch.ts) and OTLP bodies (otlp/request.ts) for
// batch-threads.ts, handing the columns' buffers back without copying them (tasks.ts forPost).
// Each answer carries the thread's V8 heap size (committed) and limit, for /metrics: a thread's
// heap is not in the process's.
import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { forPost, runTask, type IngestTask } from './tasks.js';

function heap() {
  const stats = getHeapStatistics();
  return { heap: stats.total_heap_size, heapLimit: stats.heap_size_limit };
}

parentPort!.on('message', async ({ id, task }: { id: number; task: IngestTask }) => {
  try {
    const { message, transfer } = forPost(await runTask(task, true));
    parentPort!.postMessage({ id, decoded: message, ...heap() }, transfer);
  } catch (err) {
    parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err), ...heap() });
  }
});
