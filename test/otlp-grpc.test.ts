// OTLP/gRPC statuses, through a plain grpc-js client (raw bytes, so that broken messages can be
// sent too): success and partial success, InvalidArgument, Unauthenticated, PermissionDenied,
// NotFound, ResourceExhausted with RetryInfo (rate limit) and without (too large, also after gzip),
// Unavailable with RetryInfo (queue full); and `waggle serve` starting it on its setting's port.
import * as grpc from '@grpc/grpc-js';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGrpcServer, type GrpcServer } from '../src/http/grpc.js';
import { removeTempDirs, serve, tempDir, waggle } from './cli-helpers.js';
import { makeApp, type TestApp } from './helpers.js';
import { fresh, stored } from './ingest-helpers.js';
import { T0, attrs, decodeStatus, nanos, proto, span, toProtobuf, traces, type Signal, type Status } from './otlp-helpers.js';
import { addKey, initialTenancy } from './tenancy-fixtures.js';

const PATHS: Record<Signal, string> = {
  traces: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
  logs: '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
  metrics: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
};
const bytes = (b: Buffer) => b;

type Outcome = { ok: true; response: Buffer } | { ok: false; code: number; details: string; status?: Status };

function call(client: grpc.Client, signal: Signal, body: Buffer, md: Record<string, string>): Promise<Outcome> {
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(md)) metadata.set(k, v);
  return new Promise((resolve) =>
    client.makeUnaryRequest(PATHS[signal], bytes, bytes, body, metadata, (err, response) => {
      if (!err) return resolve({ ok: true, response: response! });
      const details = err.metadata?.get('grpc-status-details-bin')[0];
      resolve({ ok: false, code: err.code, details: err.details, ...(details ? { status: decodeStatus(details as Buffer) } : {}) });
    }),
  );
}

function rejectedOf(response: Buffer): { rejected: number; message: string } {
  const r = proto.lookupType('otlp.ExportTraceServiceResponse').decode(response) as unknown as { partialSuccess?: { rejectedSpans?: number; errorMessage?: string } };
  return { rejected: Number(r.partialSuccess?.rejectedSpans ?? 0), message: r.partialSuccess?.errorMessage ?? '' };
}

describe('OTLP/gRPC', () => {
  let t: TestApp;
  let server: GrpcServer;
  let client: grpc.Client;
  let gzipClient: grpc.Client;
  let key: Record<string, string>;

  beforeAll(async () => {
    t = await makeApp({ settings: { ingestDecompressedLimit: 200_000, ingestRateLimit: { limit: 1000, windowSeconds: 60 } } });
    server = await startGrpcServer(t.app, '127.0.0.1', 0);
    client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    gzipClient = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), { 'grpc.default_compression_algorithm': 2 });
    key = { 'x-honeycomb-team': t.init.keys.ingest };
  });
  afterAll(async () => {
    client?.close();
    gzipClient?.close();
    await server?.stop();
    await t?.close();
  });

  it('stores an export (also gzip-compressed) and answers an empty response', async () => {
    const service = fresh('svc');
    const r1 = await call(client, 'traces', toProtobuf('traces', traces(service, [span(0)])), key);
    expect(r1).toEqual({ ok: true, response: Buffer.alloc(0) });
    const r2 = await call(gzipClient, 'traces', toProtobuf('traces', traces(service, [span(1)])), key);
    expect(r2.ok).toBe(true);
    const logs = { resourceLogs: [{ resource: { attributes: attrs({ 'service.name': service }) }, scopeLogs: [{ logRecords: [{ timeUnixNano: nanos(T0), body: { stringValue: 'hi' } }] }] }] };
    expect((await call(client, 'logs', toProtobuf('logs', logs), key)).ok).toBe(true);
    const ds = fresh('m');
    const metrics = { resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: 'up', gauge: { dataPoints: [{ timeUnixNano: nanos(T0), asInt: '1' }] } }] }] }] };
    expect((await call(client, 'metrics', toProtobuf('metrics', metrics), { ...key, 'x-honeycomb-dataset': ds })).ok).toBe(true);
    expect((await stored(t, service)).map((r) => r.fields.name ?? r.fields.body)).toEqual(['span 0', 'span 1', 'hi']);
    expect((await stored(t, ds)).map((r) => r.fields.up)).toEqual([1]);
  });

  it('answers partial success with the rejected spans', async () => {
    const service = fresh('svc');
    const r = await call(client, 'traces', toProtobuf('traces', traces(service, [span(0), span(1, { big: 'x'.repeat(70_000) })])), key);
    expect(r.ok).toBe(true);
    expect(rejectedOf((r as { response: Buffer }).response)).toEqual({ rejected: 1, message: `1 of the request's spans were not stored: field "big" is longer than 65536 bytes` });
  });

  it('answers InvalidArgument for an undecodable message, Unauthenticated for a missing or unknown key', async () => {
    const bad = await call(client, 'traces', Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f]), key);
    expect(bad).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT, status: { code: 3 } });
    expect((bad as { details: string }).details).toMatch(/^failed to parse OTLP request body: /);
    expect(await call(client, 'traces', Buffer.alloc(0), {})).toMatchObject({ ok: false, code: grpc.status.UNAUTHENTICATED, details: "missing 'x-honeycomb-team' header" });
    expect(await call(client, 'logs', Buffer.alloc(0), { 'x-honeycomb-team': 'wrong' })).toMatchObject({
      ok: false,
      code: grpc.status.UNAUTHENTICATED,
      status: { code: 16, message: 'unknown API key - check your credentials' },
    });
    expect(await call(client, 'metrics', Buffer.alloc(0), { 'x-honeycomb-team': 'f'.repeat(32) })).toMatchObject({ ok: false, code: grpc.status.UNAUTHENTICATED, details: "missing 'x-honeycomb-dataset' header" });
  });

  it('answers PermissionDenied without Send Events and NotFound for a dataset the key may not create', async () => {
    const { team, environment } = await initialTenancy(t);
    const noSend = await addKey(t, team, environment, { permissions: { send_events: false } });
    expect(await call(client, 'traces', Buffer.alloc(0), noSend.headers)).toMatchObject({ ok: false, code: grpc.status.PERMISSION_DENIED });
    const noCreate = await addKey(t, team, environment, { keyType: 'ingest', permissions: { create_datasets: false } });
    const missing = fresh('svc');
    expect(await call(client, 'traces', toProtobuf('traces', traces(missing, [span(0)])), noCreate.headers)).toMatchObject({
      ok: false,
      code: grpc.status.NOT_FOUND,
      details: `dataset "${missing}": not found, and this key may not create datasets`,
    });
  });

  it('refuses a message over the decompressed limit with ResourceExhausted, gzip-compressed or not', async () => {
    const service = fresh('svc');
    const big = toProtobuf('traces', traces(service, Array.from({ length: 40 }, (_, i) => span(i, { pad: 'p'.repeat(6000) }))));
    expect(big.length).toBeGreaterThan(200_000);
    for (const c of [client, gzipClient]) {
      const r = await call(c, 'traces', big, key);
      expect(r).toMatchObject({ ok: false, code: grpc.status.RESOURCE_EXHAUSTED });
      expect((r as { status?: Status }).status?.retryDelaySeconds).toBeUndefined();
    }
    expect(await stored(t, service)).toEqual([]);
  });

  it('answers Unavailable with RetryInfo while the ingest queue is full', async () => {
    const full = await makeApp({ settings: { ingestQueueLimit: 1 } });
    const s = await startGrpcServer(full.app, '127.0.0.1', 0);
    const c = new grpc.Client(`127.0.0.1:${s.port}`, grpc.credentials.createInsecure());
    try {
      let release!: () => void;
      const held = full.app.writer.editColumn('none', () => new Promise<void>((r) => (release = r)));
      const service = fresh('svc');
      const first = call(c, 'traces', toProtobuf('traces', traces(service, [span(0)])), { 'x-honeycomb-team': full.init.keys.ingest });
      while (full.app.writer.backlog === 0) await new Promise((r) => setTimeout(r, 5));
      const r = await call(c, 'traces', toProtobuf('traces', traces(service, [span(1)])), { 'x-honeycomb-team': full.init.keys.ingest });
      expect(r).toMatchObject({ ok: false, code: grpc.status.UNAVAILABLE, status: { code: 14, message: 'the ingest queue is full; retry later', retryDelaySeconds: 1 } });
      release();
      await held;
      expect((await first).ok).toBe(true);
    } finally {
      c.close();
      await s.stop();
      await full.close();
    }
  });

  it('answers ResourceExhausted with RetryInfo past the ingest rate limit', async () => {
    const limited = await makeApp({ settings: { ingestRateLimit: { limit: 1, windowSeconds: 60 } } });
    const s = await startGrpcServer(limited.app, '127.0.0.1', 0);
    const c = new grpc.Client(`127.0.0.1:${s.port}`, grpc.credentials.createInsecure());
    try {
      const md = { 'x-honeycomb-team': limited.init.keys.ingest };
      expect((await call(c, 'traces', Buffer.alloc(0), md)).ok).toBe(true);
      const r = await call(c, 'traces', Buffer.alloc(0), md);
      expect(r).toMatchObject({ ok: false, code: grpc.status.RESOURCE_EXHAUSTED, status: { code: 8, message: 'Request dropped due to rate limiting.' } });
      expect((r as { status: Status }).status.retryDelaySeconds).toBeGreaterThanOrEqual(1);
    } finally {
      c.close();
      await s.stop();
      await limited.close();
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

describe('waggle serve and OTLP/gRPC', () => {
  afterAll(removeTempDirs);

  it('listens on WAGGLE_OTLP_GRPC_PORT, and 0 runs no gRPC server', async () => {
    const port = await freePort();
    const s = await serve(['--data-dir', tempDir()], { env: { WAGGLE_OTLP_GRPC_PORT: String(port) } });
    try {
      expect(await s.waitFor(/OTLP\/gRPC listening at 127\.0\.0\.1:\d+/)).toContain(`127.0.0.1:${port}`);
      const c = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      const r = await call(c, 'traces', Buffer.alloc(0), {});
      expect(r).toMatchObject({ ok: false, code: grpc.status.UNAUTHENTICATED });
      c.close();
    } finally {
      expect((await s.stop('SIGTERM')).code).toBe(0);
    }
    const off = await serve(['--data-dir', tempDir()], { env: { WAGGLE_OTLP_GRPC_PORT: '0' } });
    expect(off.stdout()).not.toMatch(/OTLP\/gRPC/);
    await off.stop('SIGTERM');
  });

  it('--otlp-grpc-port wins over the variable; a taken port stops the start before "listening", with one error, creating nothing', async () => {
    const port = await freePort();
    const s = await serve(['--data-dir', tempDir(), '--otlp-grpc-port', String(port)], { env: { WAGGLE_OTLP_GRPC_PORT: '1' } });
    try {
      expect(await s.waitFor(/OTLP\/gRPC listening at/)).toContain(`127.0.0.1:${port}`);
      // A second server, on another data directory, asks for the same gRPC port.
      const dir = join(tempDir(), 'new');
      const r = await waggle(['serve', '--host', '127.0.0.1', '--port', '0', '--otlp-grpc-port', String(port), '--data-dir', dir]);
      expect(r.code).toBe(1);
      expect(r.stdout).not.toMatch(/listening/i);
      expect(r.stderr.trim()).toBe(`waggle: OTLP/gRPC cannot listen on 127.0.0.1:${port}: the port is taken by another process (--otlp-grpc-port or WAGGLE_OTLP_GRPC_PORT; 0 turns it off)`);
      expect(existsSync(dir)).toBe(false);
    } finally {
      expect((await s.stop('SIGTERM')).code).toBe(0);
    }
  });
});
