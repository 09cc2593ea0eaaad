// OTLP/gRPC: the Export methods of the three OpenTelemetry collector services on their own port
// (WAGGLE_OTLP_GRPC_PORT, default 4317, the OTLP default), served by @grpc/grpc-js. A small
// adapter in front of the same export the HTTP routes use (api/otlp-export.ts): messages stay
// raw bytes here (no protobuf library decodes them) and are decoded on an ingest thread.
//
// The key comes in the metadata `x-honeycomb-team` (and the dataset in `x-honeycomb-dataset`);
// gzip-compressed messages are decompressed by grpc-js, which refuses a message that is, or
// decompresses to, more than the decompressed ingest limit (ResourceExhausted). Errors carry a
// google.rpc.Status in `grpc-status-details-bin`, with RetryInfo when a retry may succeed
// (ResourceExhausted for the rate limit, Unavailable for a full ingest queue).
import * as grpc from '@grpc/grpc-js';
import type { App } from './fastify.js';
import { GrpcCode, grpcCodeFor, statusProto } from './errors.js';
import { ApiError } from '../errors.js';
import type { Signal } from '../ingest/otlp/model.js';
import { exportResponse } from '../ingest/otlp/responses.js';

const SERVICES: [Signal, string][] = [
  ['traces', 'opentelemetry.proto.collector.trace.v1.TraceService'],
  ['logs', 'opentelemetry.proto.collector.logs.v1.LogsService'],
  ['metrics', 'opentelemetry.proto.collector.metrics.v1.MetricsService'],
];

const bytes = (b: Buffer) => b;

function definition(service: string): grpc.ServiceDefinition {
  return {
    Export: {
      path: `/${service}/Export`,
      requestStream: false,
      responseStream: false,
      requestSerialize: bytes,
      requestDeserialize: bytes,
      responseSerialize: bytes,
      responseDeserialize: bytes,
      originalName: 'export',
    },
  };
}

function first(md: grpc.Metadata, key: string): string | undefined {
  const v = md.get(key)[0];
  return v === undefined ? undefined : String(v);
}

/** An error of the export as a gRPC status with its google.rpc.Status details. */
function grpcError(err: unknown, app: App): Partial<grpc.StatusObject> {
  const e = err instanceof ApiError ? err : new ApiError(500, 'something went wrong!');
  if (e.status >= 500) app.log.error({ err }, 'OTLP/gRPC export failed');
  const code = e.status >= 500 && e.status !== 503 ? GrpcCode.INTERNAL : grpcCodeFor(e.status);
  const message = e.extra.detail && e.extra.detail !== e.message ? `${e.message}: ${e.extra.detail}` : e.message;
  const metadata = new grpc.Metadata();
  metadata.set('grpc-status-details-bin', statusProto(code, message, e.extra.retryAfter));
  return { code, details: message, metadata };
}

export interface GrpcServer {
  port: number;
  /** Stops accepting calls and waits for those under way (forcing them after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/** Starts the OTLP/gRPC server for `app` on host:port (port 0: any free port). */
export async function startGrpcServer(app: App, host: string, port: number): Promise<GrpcServer> {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': app.otlp.maxMessageBytes,
    'grpc.max_send_message_length': 4 * 1024 * 1024,
  });
  for (const [signal, service] of SERVICES) {
    server.addService(definition(service), {
      Export(call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) {
        app.otlp
          .export({
            signal,
            body: call.request,
            json: false,
            apiKey: first(call.metadata, 'x-honeycomb-team'),
            dataset: first(call.metadata, 'x-honeycomb-dataset'),
          })
          .then(
            (r) => callback(null, exportResponse(signal, false, r.rejected, r.message)),
            (err) => callback(grpcError(err, app)),
          );
      },
    });
  }
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    port: bound,
    stop: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.forceShutdown(), graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
