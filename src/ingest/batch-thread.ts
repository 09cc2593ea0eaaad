// An ingest thread: decodes /1/batch bodies (batch.ts) for batch-threads.ts, handing the
// columns' buffers back without copying them.
import { parentPort } from 'node:worker_threads';
import { decodeBatch, type BatchRequest } from './batch.js';
import { transferables } from '../stores/events/columns.js';

parentPort!.on('message', async ({ id, request }: { id: number; request: BatchRequest }) => {
  try {
    const decoded = await decodeBatch(request);
    parentPort!.postMessage({ id, decoded }, decoded.ok ? transferables(decoded.columns) : []);
  } catch (err) {
    parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
