// What an ingest thread does (batch-thread.ts), and the JavaScript thread when there are none:
// decode a /1/batch body or an OTLP body into columns.
import { decodeBatch, type BatchRequest, type DecodedBatch } from './batch.js';
import { decodeOtlp, otlpTransferables, type DecodedOtlp, type OtlpDecodeRequest } from './otlp/request.js';
import { transferables } from '../stores/events/columns.js';

export type IngestTask = { kind: 'batch'; request: BatchRequest } | { kind: 'otlp'; request: OtlpDecodeRequest };

/** Runs a task; `transfer`: the result's buffers, to move rather than copy to another thread. */
export async function runTask(task: IngestTask): Promise<{ decoded: DecodedBatch | DecodedOtlp; transfer: ArrayBuffer[] }> {
  if (task.kind === 'batch') {
    const decoded = await decodeBatch(task.request);
    return { decoded, transfer: decoded.ok ? transferables(decoded.columns) : [] };
  }
  const decoded = await decodeOtlp(task.request);
  return { decoded, transfer: otlpTransferables(decoded) };
}
