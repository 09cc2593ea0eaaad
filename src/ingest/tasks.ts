// What an ingest thread does (batch-thread.ts), and the JavaScript thread when there are none:
// decode a /1/batch body or an OTLP body into columns.
import { decodeBatch, type BatchRequest, type DecodedBatch } from './batch.js';
import { decodeOtlp, type DecodedOtlp, type OtlpDecodeRequest } from './otlp/request.js';
import type { EventColumns } from '../stores/events/columns.js';
import { forPosting, fromPosting, postedTransferables, type PostedColumns } from '../stores/events/posted-columns.js';

export type IngestTask = { kind: 'batch'; request: BatchRequest } | { kind: 'otlp'; request: OtlpDecodeRequest };

/** Runs a task; `posted`: on an ingest thread, whose native reads give the posted form straight away. */
export async function runTask(task: IngestTask, posted = false): Promise<DecodedBatch | DecodedOtlp> {
  return task.kind === 'batch' ? decodeBatch({ ...task.request, posted }) : decodeOtlp({ ...task.request, posted });
}

/**
 * A task's result as an ingest thread posts it (its columns in the posted form: forPosting), and
 * the buffers to move with it. (The posted form travels typed as EventColumns; received() undoes it.)
 */
export function forPost(decoded: DecodedBatch | DecodedOtlp): { message: DecodedBatch | DecodedOtlp; transfer: ArrayBuffer[] } {
  if (!decoded.ok) return { message: decoded, transfer: [] };
  const post = (c: EventColumns, transfer: Set<ArrayBuffer>) => {
    const p = forPosting(c);
    for (const b of postedTransferables(p)) transfer.add(b);
    return p as EventColumns;
  };
  const transfer = new Set<ArrayBuffer>();
  if ('columns' in decoded) return { message: { ...decoded, columns: post(decoded.columns, transfer) }, transfer: [...transfer] };
  const groups = decoded.groups.map((g) => {
    transfer.add(g.rowItem.buffer as ArrayBuffer);
    transfer.add(g.rowWeight.buffer as ArrayBuffer);
    return { ...g, columns: post(g.columns, transfer) };
  });
  return { message: { ...decoded, groups }, transfer: [...transfer] };
}

/** A result posted by forPost, with its columns as EventColumns again. */
export function received(decoded: DecodedBatch | DecodedOtlp): DecodedBatch | DecodedOtlp {
  if (!decoded.ok) return decoded;
  const back = (c: EventColumns) => fromPosting(c as EventColumns | PostedColumns);
  if ('columns' in decoded) return { ...decoded, columns: back(decoded.columns) };
  return { ...decoded, groups: decoded.groups.map((g) => ({ ...g, columns: back(g.columns) })) };
}
