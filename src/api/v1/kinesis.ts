// Amazon Data Firehose (Kinesis) HTTP endpoint delivery: POST /1/kinesis_events/{dataset}.
//
// Firehose sends `{requestId, timestamp, records:[{data: base64}]}` (optionally gzip
// Content-Encoding) with `X-Amz-Firehose-Request-Id` and the key in `X-Amz-Firehose-Access-Key`
// (X-Honeycomb-Team works too). A record holds either JSON event fields (one object, or several
// newline-delimited) or a CloudWatch Logs subscription message (gzip-compressed JSON envelope).
//
// All or nothing: every record is decoded and normalised before anything is written; one bad
// record refuses the whole request (400), so Firehose retries it and finally puts it in its
// error bucket, and nothing is half-stored. 200 only once every event is durable. Every answer,
// errors included (auth too), is Firehose's `{requestId, timestamp, errorMessage?}`: Firehose
// logs errorMessage. Error bodies carry `error` (the same text) as well, the contract's legacy shape.
// Decoding a record: src/ingest/firehose-records.ts.
import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import { columnsOf } from '../../stores/events/columns.js';
import { DEFAULT_LIMITS, EventRejected, normaliseFields, type NormalisedEvent } from '../../ingest/normalise.js';
import { DATASET_TOO_MANY_COLUMNS } from '../../ingest/writer.js';
import type { ApiContext, App } from '../context.js';
import { readIngestBody } from '../ingest-body.js';
import { ingestDataset } from '../ingest-dataset.js';
import { SlugParams } from './schemas.js';
import { Undecodable, decodeRecord, isPlainObject, type Fields } from '../../ingest/firehose-records.js';

const REQUEST_ID_HEADER = 'x-amz-firehose-request-id';
const auth = { kind: 'team', ingest: true, firehose: true, permission: 'send_events', rate: 'ingest', legacyErrors: true } as const;

const KinesisResponse = Type.Object(
  { requestId: Type.String(), timestamp: Type.Integer(), errorMessage: Type.Optional(Type.String()) },
  { description: 'Firehose response' },
);
/** Errors: Firehose's shape, plus `error` with the same text for readers of the contract's legacy `{error}`. */
const KinesisError = Type.Object(
  { requestId: Type.String(), timestamp: Type.Integer(), errorMessage: Type.String(), error: Type.String() },
  { description: 'Firehose error response' },
);
function requestIdOf(request: FastifyRequest): string {
  const h = request.headers[REQUEST_ID_HEADER];
  return (Array.isArray(h) ? h[0] : h) ?? '';
}

/** Firehose's error answer; used for every failure of this route, authentication included. */
function kinesisErrorHandler(ctx: ApiContext) {
  return (err: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
    let status = 500;
    let message = 'something went wrong!';
    if (err instanceof ApiError) {
      status = err.status;
      message = err.extra.detail && err.extra.detail !== err.message ? `${err.message} ${err.extra.detail}` : err.message;
      if (err.extra.retryAfter !== undefined) {
        reply.header('retry-after', new Date(ctx.now().getTime() + err.extra.retryAfter * 1000).toUTCString());
      }
    } else if (err.validation) {
      status = 400;
      message = err.validationContext === 'headers' ? 'the X-Amz-Firehose-Request-Id header is required' : err.message;
    } else if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      status = 413;
      message = 'Request body is too large.';
    } else if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      status = err.statusCode;
      message = err.message;
    }
    if (status >= 500) request.log.error({ err, firehoseRequestId: requestIdOf(request) }, 'kinesis request failed');
    else request.log.warn({ firehoseRequestId: requestIdOf(request), status, errorMessage: message }, 'kinesis request refused');
    return reply
      .code(status)
      .type('application/json; charset=utf-8')
      .send({ requestId: requestIdOf(request), timestamp: ctx.now().getTime(), errorMessage: message, error: message });
  };
}

/** Registers the route; call it inside the ingest scope (raw-buffer bodies). */
export function registerKinesis(app: App, ctx: ApiContext): void {
  const errorBody = (description: string) => ({ ...KinesisError, description });
  app.post(
    '/1/kinesis_events/:datasetSlug',
    {
      bodyLimit: ctx.settings.ingestBodyLimit,
      errorHandler: kinesisErrorHandler(ctx),
      schema: {
        tags: ['Kinesis Events'],
        security: [{ firehose_access_key: [] }, { ingest_key: [] }, { configuration_key: [] }],
        params: SlugParams,
        headers: Type.Object({ [REQUEST_ID_HEADER]: Type.String({ minLength: 1 }) }),
        description:
          'Amazon Data Firehose HTTP endpoint delivery. The key comes in X-Amz-Firehose-Access-Key (or X-Honeycomb-Team). ' +
          'Records are base64 JSON objects (one or newline-delimited) or gzip-compressed CloudWatch Logs messages. ' +
          'Answers 200 once every event is stored; otherwise nothing is stored and the answer carries errorMessage.',
        response: {
          200: KinesisResponse,
          400: errorBody('Undecodable body or record'),
          401: errorBody('Unauthorized'),
          403: errorBody('Missing permission'),
          404: errorBody('Dataset not found'),
          413: errorBody('Body too large'),
          429: errorBody('Rate limited'),
        },
      },
      config: { auth },
    },
    async (request, reply) => {
      const requestId = requestIdOf(request);
      const target = await ingestDataset(ctx, request.auth!, request.params.datasetSlug);
      const body = await readIngestBody(ctx, request);
      if (!isPlainObject(body) || !Array.isArray(body.records)) {
        throw new ApiError(400, 'the body must be a JSON object with a records array');
      }
      // Every record is decoded and checked before a new dataset is created, so a refused
      // request creates nothing. A new dataset gets the default depth (0).
      const receivedUs = ctx.now().getTime() * 1000;
      let budget = ctx.settings.ingestDecompressedLimit;
      const decoded: { data: Fields; timeUs: number; record: number }[] = [];
      for (let i = 0; i < body.records.length; i++) {
        try {
          const record = await decodeRecord(body.records[i], budget, receivedUs);
          budget -= record.bytes;
          for (const e of record.events) decoded.push({ ...e, record: i });
        } catch (err) {
          if (err instanceof Undecodable || err instanceof EventRejected) {
            throw new ApiError(400, `record ${i}: ${err.message}; nothing was stored`);
          }
          throw err;
        }
      }
      const normalise = (depth: number) =>
        decoded.map((e): NormalisedEvent => {
          try {
            return { fields: normaliseFields(e.data, depth, DEFAULT_LIMITS), timeUs: e.timeUs, samplerate: 1 };
          } catch (err) {
            if (err instanceof EventRejected) throw new ApiError(400, `record ${e.record}: ${err.message}; nothing was stored`);
            throw err;
          }
        });
      const depth = target.known?.expandJsonDepth ?? 0;
      let events = normalise(depth);
      // The column cap, checked for the whole request up front so that it is refused whole.
      const names = new Set<string>();
      for (const e of events) for (const k of e.fields.keys()) names.add(k);
      if (names.size > 0) {
        const existing = new Set(target.known ? (await ctx.store.listColumns(target.known.id)).map((c) => c.keyName) : []);
        let fresh = 0;
        for (const n of names) if (!existing.has(n)) fresh++;
        if (existing.size + fresh > ctx.settings.maxColumnsPerDataset) throw new ApiError(400, `${DATASET_TOO_MANY_COLUMNS} Nothing was stored.`);
      }
      const dataset = await target();
      // Created meanwhile by someone else with another depth: flatten again for it.
      if (dataset.expandJsonDepth !== depth) events = normalise(dataset.expandJsonDepth);

      const results = await ctx.writer.write(dataset, columnsOf(events));
      const refused = results.filter((r) => r !== null);
      if (refused.length > 0) {
        // Only a race with another writer gets here; the others are stored and a retry repeats them.
        throw new ApiError(400, `${refused.length} of ${events.length} events were refused: ${refused[0]}`);
      }
      return reply.code(200).send({ requestId, timestamp: ctx.now().getTime() });
    },
  );
}
