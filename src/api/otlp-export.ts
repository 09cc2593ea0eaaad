// OTLP Export, whatever the transport: the HTTP routes (otlp.ts) and the gRPC server
// (http/grpc.ts) hand a request body and its headers (or metadata) here. Checks in Honeycomb's
// order: the key is present, a Classic key names its dataset, then the key itself (the same
// lookup, permission and ingest rate limit as /1/batch); then the ingest queue. The body is
// decoded and translated on an ingest thread; each dataset the translation names is found, or
// created under the key's permission, by the function /1/batch uses; the events go to the same
// writer (a success means durably stored). Throws ApiError for a whole-request failure.
import type { AuthRule, HeaderSink } from '../http/auth.js';
import { ApiError } from '../errors.js';
import { batchThreads } from '../ingest/batch-threads.js';
import { isClassicKey } from '../ingest/otlp/datasets.js';
import type { Signal } from '../ingest/otlp/model.js';
import type { ApiContext } from './context.js';
import { ingestDataset } from './ingest-dataset.js';
import { rejectionReason } from '../ops/metrics.js';

export interface OtlpExport {
  signal: Signal;
  /** The body as sent. */
  body: Buffer;
  /** OTLP/JSON; otherwise protobuf. */
  json: boolean;
  /** HTTP Content-Encoding (gRPC messages arrive decompressed). */
  contentEncoding?: string;
  /** `x-honeycomb-team`. */
  apiKey?: string;
  /** `x-honeycomb-dataset`. */
  dataset?: string;
  /** Where rate-limit headers go. */
  header?: HeaderSink;
}

export interface OtlpResult {
  /** Items (spans, log records, data points) not stored; 0: all were. */
  rejected: number;
  /** Why, when some were rejected. */
  message: string;
}

const RULE: Exclude<AuthRule, { kind: 'none' }> = { kind: 'team', ingest: true, permission: 'send_events', rate: 'ingest', retryAfter: true };
/** Seconds a client should wait when the ingest queue is full. */
const QUEUE_FULL_RETRY_SECONDS = 1;
/** Reasons quoted in a partial-success message, at most. */
const MAX_REASONS = 3;

const ITEMS: Record<Signal, string> = { traces: 'spans', logs: 'log records', metrics: 'data points' };

export async function exportOtlp(ctx: ApiContext, req: OtlpExport): Promise<OtlpResult> {
  const key = req.apiKey?.trim();
  if (!key) throw new ApiError(401, "missing 'x-honeycomb-team' header");
  const classicKey = isClassicKey(key);
  if (classicKey && req.signal !== 'logs' && !req.dataset?.trim()) throw new ApiError(401, "missing 'x-honeycomb-dataset' header");
  const auth = await ctx.authenticate(RULE, key, req.header);
  ctx.metrics.ingestBytes.inc(req.body.length);
  ctx.disk.refuseIngest();
  if (ctx.writer.backlog >= ctx.settings.ingestQueueLimit) {
    throw new ApiError(503, 'the ingest queue is full; retry later', { retryAfter: QUEUE_FULL_RETRY_SECONDS });
  }

  const decoded = await batchThreads(ctx.settings.ingestThreads).decodeOtlp({
    signal: req.signal,
    body: req.body,
    json: req.json,
    contentEncoding: req.contentEncoding,
    maxDecompressed: ctx.settings.ingestDecompressedLimit,
    classicKey,
    datasetHeader: req.dataset,
    receivedUs: ctx.now().getTime() * 1000,
    native: ctx.settings.ingestNative,
  });
  if (!decoded.ok) {
    if (decoded.kind === 'too-large') throw new ApiError(413, `the request is larger than ${ctx.settings.ingestDecompressedLimit} bytes decompressed`);
    throw new ApiError(400, 'failed to parse OTLP request body', { detail: decoded.message });
  }

  // Rejected items, each counted once with its weight (data points for a metrics event).
  const rejected = new Map<number, number>();
  const reasons = new Set<string>();
  const reject = (item: number, weight: number, reason: string) => {
    rejected.set(item, weight);
    if (reasons.size < MAX_REASONS) reasons.add(reason);
  };
  for (const r of decoded.refused) {
    reject(r.item, r.weight, r.reason);
    ctx.metrics.rejectedEvents.inc({ reason: rejectionReason(r.reason) });
  }

  let stored = 0;
  const datasetErrors: ApiError[] = [];
  await Promise.all(
    decoded.groups.map(async (g) => {
      let results: (string | null)[];
      try {
        const dataset = await (await ingestDataset(ctx, auth, g.dataset))();
        results = await ctx.writer.write(dataset, g.columns);
      } catch (err) {
        // A dataset that does not exist and may not be created, or a name it cannot have.
        if (!(err instanceof ApiError) || err.status >= 500) throw err;
        // 404: the key may not create it; 400 (the naming rule) says why the name is refused.
        const reason = err.status === 404 ? `dataset ${JSON.stringify(g.dataset)}: not found, and this key may not create datasets` : err.message;
        // OTLP has no 422: any other refusal of the name is bad data, 400.
        datasetErrors.push(new ApiError(err.status === 404 ? 404 : 400, reason));
        for (let row = 0; row < g.rowItem.length; row++) reject(g.rowItem[row], g.rowWeight[row], reason);
        return;
      }
      results.forEach((error, row) => {
        if (error === null) stored++;
        else reject(g.rowItem[row], g.rowWeight[row], error);
      });
    }),
  );
  // Nothing stored because of the datasets alone: the request fails as /1/batch's would.
  if (stored === 0 && datasetErrors.length > 0 && decoded.refused.length === 0) throw datasetErrors[0];

  let count = 0;
  for (const w of rejected.values()) count += w;
  if (count === 0) return { rejected: 0, message: '' };
  return { rejected: count, message: `${count} of the request's ${ITEMS[req.signal]} were not stored: ${[...reasons].join('; ')}` };
}
