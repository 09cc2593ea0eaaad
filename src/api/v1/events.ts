// Event ingestion: POST /1/batch/{dataset} and POST /1/events/{dataset}.
// Bodies are JSON or msgpack (libhoney), plain, gzip or zstd. Errors answer in the legacy
// `{error}` dialect with Honeycomb's texts. A 202 in a batch result means the event is durable.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Packr } from 'msgpackr';
import { ApiError } from '../../errors.js';
import type { BatchRequest, DecodedBatch } from '../../ingest/batch.js';
import { batchThreads } from '../../ingest/batch-threads.js';
import { columnsOf } from '../../stores/events/columns.js';
import { isMsgpack } from '../../ingest/decode.js';
import { DEFAULT_LIMITS, EventRejected, normaliseFields, parseSamplerate, parseTime, type NormalisedEvent } from '../../ingest/normalise.js';
import type { ApiContext, App } from '../context.js';
import { ingestDataset } from '../ingest-dataset.js';
import { EMPTY, MALFORMED, decodeFailure, readIngestBody } from '../ingest-body.js';
import { SlugParams } from './schemas.js';
import { rejectionReason } from '../../ops/metrics.js';

const packr = new Packr({ useRecords: false });
const ingestAuth = { kind: 'team', ingest: true, permission: 'send_events', rate: 'ingest', legacyErrors: true } as const;
const BatchResult = Type.Array(Type.Object({ status: Type.Number(), error: Type.Optional(Type.String()) }));

/** A batch body's events as columns (on an ingest thread), or its whole-request error. */
async function readBatch(ctx: ApiContext, request: FastifyRequest, expandDepth: number): Promise<Extract<DecodedBatch, { ok: true }>> {
  const body = request.body as Buffer | undefined;
  if (!body || body.length === 0) throw new ApiError(400, EMPTY);
  const req: BatchRequest = {
    body,
    contentEncoding: request.headers['content-encoding'],
    contentType: request.headers['content-type'],
    maxDecompressed: ctx.settings.ingestDecompressedLimit,
    expandDepth,
    receivedUs: ctx.now().getTime() * 1000,
    nativeJson: ctx.settings.ingestNative,
  };
  const decoded = await batchThreads(ctx.settings.ingestThreads).decode(req);
  if (!decoded.ok) throw decodeFailure(decoded.kind, decoded.message);
  return decoded;
}

/** `[{"status":202},…]` for `n` events, as bytes: what a batch whose events were all stored answers. */
const allStoredCache = new Map<number, Buffer>();
function allStored(n: number): Buffer {
  let body = allStoredCache.get(n);
  if (!body) {
    body = Buffer.from(`[${new Array(n).fill('{"status":202}').join(',')}]`);
    if (allStoredCache.size >= 64) allStoredCache.delete(allStoredCache.keys().next().value!);
    allStoredCache.set(n, body);
  }
  return body;
}

/** Answers in msgpack when the client sent msgpack (libhoney-go decodes it), else JSON. */
function sendResults(request: FastifyRequest, reply: FastifyReply, results: unknown) {
  if (isMsgpack(request.headers['content-type'])) {
    return reply.code(200).type('application/msgpack').send(packr.pack(results));
  }
  return reply.code(200).send(results);
}

export function registerEvents(app: App, ctx: ApiContext): void {
  // Ingest bodies stay raw bytes here: decoding depends on Content-Encoding and Content-Type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: ctx.settings.ingestBodyLimit }, (_req, body, done) =>
    done(null, body),
  );

  app.post(
    '/1/batch/:datasetSlug',
    {
      bodyLimit: ctx.settings.ingestBodyLimit,
      schema: {
        tags: ['Events'],
        security: [{ configuration_key: [] }, { ingest_key: [] }],
        params: SlugParams,
        description: 'A JSON (or msgpack) array of {data, time?, samplerate?}; gzip or zstd Content-Encoding. Answers 200 with one result per event, in order.',
        response: { 200: BatchResult },
      },
      config: { auth: ingestAuth },
    },
    async (request, reply) => {
      const target = await ingestDataset(ctx, request.auth!, request.params.datasetSlug);
      // A new dataset gets the default depth (0); decoded again if it was created meanwhile with another.
      const depth = target.known?.expandJsonDepth ?? 0;
      let batch = await readBatch(ctx, request, depth);
      const dataset = await target();
      if (dataset.expandJsonDepth !== depth) batch = await readBatch(ctx, request, dataset.expandJsonDepth);
      const { items, refused, columns } = batch;
      for (const [, reason] of refused) ctx.metrics.rejectedEvents.inc({ reason: rejectionReason(reason) });
      const stored = await ctx.writer.write(dataset, columns);
      if (refused.length === 0 && stored.every((error) => error === null) && !isMsgpack(request.headers['content-type'])) {
        // The usual answer, every event stored: the same JSON, made once per batch size.
        return reply.code(200).type('application/json; charset=utf-8').send(allStored(items) as never); // bytes of the schema's shape
      }
      const results: { status: number; error?: string }[] = new Array(items);
      for (const [i, error] of refused) results[i] = { status: 400, error };
      // The stored rows are the items not refused, in order.
      for (let i = 0, row = 0; i < items; i++) {
        if (results[i]) continue;
        const error = stored[row++];
        results[i] = error === null ? { status: 202 } : { status: 400, error };
      }
      return sendResults(request, reply, results);
    },
  );

  app.post(
    '/1/events/:datasetSlug',
    {
      bodyLimit: Math.min(ctx.settings.ingestBodyLimit, 1_000_000),
      schema: {
        tags: ['Events'],
        security: [{ configuration_key: [] }, { ingest_key: [] }],
        params: SlugParams,
        description: 'One event (its fields as a JSON object). Headers X-Honeycomb-Event-Time (RFC 3339 or epoch) and X-Honeycomb-Samplerate. Answers 200 with no body once stored.',
      },
      config: { auth: ingestAuth },
    },
    async (request, reply) => {
      const target = await ingestDataset(ctx, request.auth!, request.params.datasetSlug);
      const fields = await readIngestBody(ctx, request);
      // The body is one event object; anything else (an array, a string, null) cannot be read as one.
      if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
        throw new ApiError(400, MALFORMED, { detail: 'the body must be one event: a JSON object of its fields' });
      }
      const dataset = await target();
      let event: NormalisedEvent;
      try {
        event = {
          fields: normaliseFields(fields, dataset.expandJsonDepth, DEFAULT_LIMITS),
          timeUs: parseTime(request.headers['x-honeycomb-event-time'], ctx.now().getTime() * 1000),
          samplerate: parseSamplerate(request.headers['x-honeycomb-samplerate']),
        };
      } catch (err) {
        if (err instanceof EventRejected) throw new ApiError(400, err.message);
        throw err;
      }
      const [error] = await ctx.writer.write(dataset, columnsOf([event]));
      if (error) throw new ApiError(400, error);
      return reply.code(200).send();
    },
  );
}
