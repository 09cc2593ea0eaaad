// The answer to a successful Export: Export{Trace,Logs,Metrics}ServiceResponse, empty when
// everything was stored, else with partial_success { rejected_<items> = 1, error_message = 2 }.
// Protobuf (an empty message is zero bytes) or JSON (`{}`; 64-bit counts as decimal strings).
// Error answers (google.rpc.Status) come from http/errors.ts.
import type { Signal } from './model.js';
import { Writer } from './wire.js';

const REJECTED_JSON: Record<Signal, string> = { traces: 'rejectedSpans', logs: 'rejectedLogRecords', metrics: 'rejectedDataPoints' };

export function exportResponse(signal: Signal, json: boolean, rejected: number, message: string): Buffer {
  if (json) {
    const body = rejected === 0 ? {} : { partialSuccess: { [REJECTED_JSON[signal]]: String(rejected), errorMessage: message } };
    return Buffer.from(JSON.stringify(body));
  }
  if (rejected === 0) return Buffer.alloc(0);
  return new Writer().bytes(1, new Writer().uint(1, rejected).string(2, message).finish()).finish();
}
