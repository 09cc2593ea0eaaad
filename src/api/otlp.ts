// OTLP/HTTP: POST /v1/traces, /v1/logs and /v1/metrics on the main port (the OTLP
// specification's paths). Bodies are protobuf (application/x-protobuf, application/protobuf) or
// JSON (application/json; a charset parameter is accepted), plain, gzip or zstd. The answer
// has the request's Content-Type: an Export*ServiceResponse on success (with partial_success
// when some items were not stored), a google.rpc.Status on failure (http/errors.ts).
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { renderOtlpError } from '../http/errors.js';
import { ApiError } from '../errors.js';
import type { Signal } from '../ingest/otlp/model.js';
import { exportResponse } from '../ingest/otlp/responses.js';
import type { ApiContext, App } from './context.js';
import { exportOtlp } from './otlp-export.js';

export const UNSUPPORTED_TYPE = 'unsupported content-type, valid types are: application/protobuf, application/x-protobuf, application/json';

/** `json` or `protobuf` by Content-Type (any parameters and letter case), else undefined. */
export function otlpEncoding(contentType: string | undefined): 'json' | 'protobuf' | undefined {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/json') return 'json';
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  return undefined;
}

const header = (request: FastifyRequest, name: string): string | undefined => {
  const h = request.headers[name];
  return Array.isArray(h) ? h[0] : h;
};

/** Every failure of these routes, Fastify's own (body too large) included, as a Status. */
const otlpErrorHandler = (ctx: ApiContext) => (err: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
  let e: ApiError;
  if (err instanceof ApiError) e = err;
  else if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') e = new ApiError(415, UNSUPPORTED_TYPE); // a body without a Content-Type
  else if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') e = new ApiError(413, `the request body is larger than ${ctx.settings.ingestBodyLimit} bytes`);
  else if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) e = new ApiError(err.statusCode, err.message);
  else e = new ApiError(500, 'something went wrong!');
  if (e.status >= 500) request.log.error({ err }, 'OTLP request failed');
  const type = header(request, 'content-type');
  const encoding = otlpEncoding(type);
  // An unsupported Content-Type gets its Status as JSON, the readable one of the two.
  const out = renderOtlpError(e, encoding !== 'protobuf', encoding ? type! : 'application/json');
  // header(), not type(): the request's Content-Type exactly, without a charset added.
  return reply.code(out.status).headers(out.headers).header('content-type', out.contentType).send(out.body);
};

export function registerOtlp(app: App, ctx: ApiContext): void {
  // Bodies stay raw bytes: decoding depends on Content-Encoding and Content-Type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: ctx.settings.ingestBodyLimit }, (_req, body, done) => done(null, body));

  for (const signal of ['traces', 'logs', 'metrics'] as Signal[]) {
    app.post(
      `/v1/${signal}`,
      {
        bodyLimit: ctx.settings.ingestBodyLimit,
        errorHandler: otlpErrorHandler(ctx),
        schema: {
          tags: ['OpenTelemetry'],
          security: [{ ingest_key: [] }, { configuration_key: [] }],
          description:
            `OTLP/HTTP export of ${signal}: an Export${signal === 'traces' ? 'Trace' : signal === 'logs' ? 'Logs' : 'Metrics'}ServiceRequest as protobuf or JSON, ` +
            'plain, gzip or zstd. The key in X-Honeycomb-Team (X-Honeycomb-Dataset where the dataset is not taken from service.name). ' +
            'Answers 200 once stored, in the request\'s encoding and Content-Type; errors are a google.rpc.Status (docs/otlp.md).',
        },
        // The key is checked by exportOtlp, after the Content-Type (OTLP's order of checks).
        config: { auth: { kind: 'none' } },
      },
      async (request, reply) => {
        const type = header(request, 'content-type');
        const encoding = otlpEncoding(type);
        if (!encoding) throw new ApiError(415, UNSUPPORTED_TYPE);
        const json = encoding === 'json';
        const result = await exportOtlp(ctx, {
          signal,
          body: (request.body as Buffer | undefined) ?? Buffer.alloc(0),
          json,
          contentEncoding: header(request, 'content-encoding'),
          apiKey: header(request, 'x-honeycomb-team'),
          dataset: header(request, 'x-honeycomb-dataset'),
          header: (name, value) => reply.header(name, value),
        });
        return reply.code(200).header('content-type', type!).send(exportResponse(signal, json, result.rejected, result.message));
      },
    );
  }
}
