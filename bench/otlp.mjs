// The OTLP benchmark (part of `npm run bench`, BENCH_ONLY=otlp; also `node bench/otlp.mjs` after
// `npm run build`).
//
// 1. Throughput and server CPU: `waggle serve` takes gzipped protobuf OTLP trace exports of 1,000
//    spans (POST /v1/traces) from CONNECTIONS keep-alive clients; then a fresh server takes the
//    very same events through POST /1/batch (gzipped JSON, what Waggle's translator makes of the
//    spans, read back with dist/), in the same run. Ratio: server CPU per span against CPU per
//    /1/batch event. Targets: >= 100,000 spans/s with the load generator beside the server, and
//    at most 1.3x the /1/batch CPU per event.
//    `node bench/otlp.mjs --server-only` runs the OTLP server run alone and prints one JSON line.
// 2. Decoding alone, in this process, per 1,000-span body (already gunzipped): protobufjs's
//    generic decode (the library alternative) against Waggle's decoder, with and without the
//    translation into columns, and JSON.parse + normalising of the same events as /1/batch.
//
// Spans come from bench/events.mjs's realistic events: one resource (service.name `bench`, the
// SDK's attributes), one instrumentation scope, per span its ids, name, kind, status and times
// and 14 attributes (route, method, status code, user, cache, db rows and time, host, region, …).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { makeEvents } from './events.mjs';
import { serverRun } from './ingest.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BATCH = 1000;
const BODIES = 48;
const DECODE_ROUNDS = Number(process.env.BENCH_OTLP_DECODE_ROUNDS ?? 9);

const root = protobuf.parse(readFileSync(join(ROOT, 'test/fixtures/otlp.proto'), 'utf8')).root;
const Request = root.lookupType('otlp.ExportTraceServiceRequest');

function anyValue(v) {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
}
const keyValues = (o) => Object.entries(o).map(([key, v]) => ({ key, value: anyValue(v) }));

/** One ExportTraceServiceRequest of BATCH spans, as protobuf. */
export function traceRequest(seed) {
  const spans = makeEvents(BATCH, seed).map(({ time, data }) => {
    const { 'service.name': _service, name, duration_ms, error, 'trace.trace_id': traceId, 'trace.span_id': spanId, 'trace.parent_id': parentId, ...attributes } = data;
    const start = BigInt(Date.parse(time)) * 1_000_000n;
    return {
      traceId: Buffer.from(traceId, 'hex'),
      spanId: Buffer.from(spanId, 'hex'),
      parentSpanId: Buffer.from(parentId, 'hex'),
      name,
      kind: 2,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(start + BigInt(Math.round(duration_ms * 1e6))),
      attributes: keyValues(attributes),
      status: { code: error ? 2 : 0 },
    };
  });
  const req = {
    resourceSpans: [
      {
        resource: { attributes: keyValues({ 'service.name': 'bench', 'telemetry.sdk.language': 'nodejs', 'telemetry.sdk.name': 'opentelemetry', 'telemetry.sdk.version': '2.2.0' }) },
        scopeSpans: [{ scope: { name: '@opentelemetry/instrumentation-http', version: '0.57.0' }, spans }],
      },
    ],
  };
  return Buffer.from(Request.encode(Request.fromObject(req)).finish());
}

/** POSTs one gzipped protobuf export; resolves with the spans stored (all, on a 200 without partial success). */
function otlpSender(agent, port, key, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/traces',
        method: 'POST',
        agent,
        headers: { 'x-honeycomb-team': key, 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip', 'content-length': body.length },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const answer = Buffer.concat(chunks);
          if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}: ${answer.toString('utf8').slice(0, 300)}`));
          if (answer.length > 0) return reject(new Error(`partial success: ${answer.toString('utf8')}`));
          resolve(BATCH);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The events Waggle makes of a trace export, as a /1/batch body (JSON items). */
async function asBatch(protobufBody) {
  const { decodeOtlp } = await import(join(ROOT, 'dist/ingest/otlp/request.js'));
  const { rowsOf } = await import(join(ROOT, 'dist/stores/events/columns.js'));
  const d = await decodeOtlp({ signal: 'traces', body: protobufBody, json: false, maxDecompressed: 1e9, classicKey: false, receivedUs: 0 });
  if (!d.ok || d.groups.length !== 1 || d.groups[0].columns.count !== BATCH) throw new Error('unexpected translation of the bench spans');
  return rowsOf(d.groups[0].columns).map((r) => ({ time: r.timeUs, data: Object.fromEntries(r.fields) }));
}

const perSpanUs = (ms) => (ms * 1000) / BATCH;

/**
 * Median ms per body of each case, rounds interleaved (case A over every body, then B, …, then
 * A again) so that the machine's drift falls on all of them alike.
 */
async function compare(cases) {
  const times = cases.map(() => []);
  for (let round = 0; round < DECODE_ROUNDS + 2; round++) {
    for (let c = 0; c < cases.length; c++) {
      const [bodies, fn] = cases[c];
      const t0 = performance.now();
      for (const b of bodies) await fn(b);
      if (round >= 2) times[c].push((performance.now() - t0) / bodies.length); // two warm-up rounds
    }
  }
  return times.map((xs) => xs.sort((a, b) => a - b)[xs.length >> 1]);
}

/**
 * protobufjs's decoded request mapped to Waggle's model (what translation reads), the way a
 * protobufjs-based decoder would have to: ids to hex, Long times split, AnyValues unwrapped.
 */
async function protobufjsModel() {
  const { splitNanos, ArrayValue, Bytes, KvList } = await import(join(ROOT, 'dist/ingest/otlp/model.js'));
  const hex = (b) => (b && b.length ? Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex') : '');
  const time = (l) => (l ? splitNanos(l.low >>> 0, l.high >>> 0) : [0, 0]);
  const value = (v) => {
    if (!v) return null;
    switch (v.value) {
      case 'stringValue':
        return v.stringValue;
      case 'boolValue':
        return v.boolValue;
      case 'intValue':
        return typeof v.intValue === 'number' ? v.intValue : v.intValue.toNumber();
      case 'doubleValue':
        return v.doubleValue;
      case 'bytesValue':
        return new Bytes(Buffer.from(v.bytesValue).toString('base64'));
      case 'arrayValue':
        return new ArrayValue(v.arrayValue.values.map(value));
      case 'kvlistValue':
        return new KvList(v.kvlistValue.values.map(kv));
      default:
        return null;
    }
  };
  const kv = (a) => ({ key: a.key, value: value(a.value) });
  const span = (s) => {
    const [startUs, startNs] = time(s.startTimeUnixNano);
    const [endUs, endNs] = time(s.endTimeUnixNano);
    return {
      traceId: hex(s.traceId), spanId: hex(s.spanId), traceState: s.traceState, parentSpanId: hex(s.parentSpanId), name: s.name, kind: s.kind,
      startUs, startNs, endUs, endNs, attributes: s.attributes.map(kv),
      events: s.events.map((e) => { const [timeUs, timeNs] = time(e.timeUnixNano); return { timeUs, timeNs, name: e.name, attributes: e.attributes.map(kv) }; }),
      links: s.links.map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId), attributes: l.attributes.map(kv) })),
      statusCode: s.status?.code ?? 0, statusMessage: s.status?.message ?? '',
    };
  };
  return (body) =>
    Request.decode(body).resourceSpans.map((r) => ({
      attributes: (r.resource?.attributes ?? []).map(kv),
      schemaUrl: r.schemaUrl,
      scopes: r.scopeSpans.map((sc) => ({ scope: { name: sc.scope?.name ?? '', version: sc.scope?.version ?? '', attributes: (sc.scope?.attributes ?? []).map(kv) }, schemaUrl: sc.schemaUrl, items: sc.spans.map(span) })),
    }));
}

async function decodeBench(protoBodies, batchBodies) {
  const { decodeTracesProto } = await import(join(ROOT, 'dist/ingest/otlp/decode-proto.js'));
  const viaProtobufjs = await protobufjsModel();
  const { decodeOtlp } = await import(join(ROOT, 'dist/ingest/otlp/request.js'));
  const { decodeBatch } = await import(join(ROOT, 'dist/ingest/batch.js'));
  const otlpReq = (body, native) => ({ signal: 'traces', body, json: false, maxDecompressed: 1e9, classicKey: false, receivedUs: 0, native });
  const batchReq = (body, nativeJson) => ({ body, maxDecompressed: 1e9, expandDepth: 0, receivedUs: 0, nativeJson });
  const [waggleDecode, protobufjs, protobufjsModelled, waggleTranslate, nativeTraces, batchJson, batchNative] = await compare([
    [protoBodies, (b) => decodeTracesProto(b)],
    [protoBodies, (b) => Request.decode(b)],
    [protoBodies, viaProtobufjs],
    [protoBodies, (b) => decodeOtlp(otlpReq(b, false))],
    [protoBodies, (b) => decodeOtlp(otlpReq(b, true))],
    [batchBodies, (b) => decodeBatch(batchReq(b, false))],
    [batchBodies, (b) => decodeBatch(batchReq(b, true))],
  ]);
  return { waggleDecode, protobufjs, protobufjsModelled, waggleTranslate, nativeTraces, batchJson, batchNative };
}

export async function otlpBench() {
  const tmp = mkdtempSync(join(tmpdir(), 'waggle-bench-otlp-'));
  try {
    process.stderr.write('otlp bench: building bodies\n');
    const raw = Array.from({ length: BODIES }, (_, i) => traceRequest(i + 1));
    const protoBodies = raw.map((b) => gzipSync(b));
    const batchJson = await Promise.all(raw.map(async (b) => Buffer.from(JSON.stringify(await asBatch(b)))));
    const batchBodies = batchJson.map((b) => gzipSync(b));
    process.stderr.write('otlp bench: waggle serve, POST /v1/traces\n');
    const otlp = await serverRun(tmp, protoBodies, otlpSender, 'otlp');
    process.stderr.write('otlp bench: waggle serve, POST /1/batch with the same events\n');
    const batch = await serverRun(tmp, batchBodies, undefined, 'batch');
    process.stderr.write('otlp bench: decoding alone\n');
    const dec = await decodeBench(raw, batchJson);

    const perM = (r) => (r.cpuSeconds / r.events) * 1e6;
    const mainPerM = (r) => (r.mainCpuSeconds / r.events) * 1e6;
    const rate = (r) => r.events / r.seconds;
    const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
    const avg = (bs) => bs.reduce((n, b) => n + b.length, 0) / bs.length;
    console.log(
      `\nOTLP: POST /v1/traces, ${BATCH} spans per export as gzipped protobuf (${(avg(raw) / BATCH).toFixed(0)} bytes/span, ` +
        `gzip ${(avg(raw) / avg(protoBodies)).toFixed(1)}x), against POST /1/batch with the same ${BATCH} events as gzipped JSON ` +
        `(${(avg(batchJson) / BATCH).toFixed(0)} bytes/event); same connections and length; each on a fresh server\n`,
    );
    console.log('| run | spans or events/s | CPU s per M | of which the JS thread | CPU per span vs /1/batch per event | request p50 / p99 ms |');
    console.log('|---|---|---|---|---|---|');
    for (const [name, r] of [['POST /1/batch, the same events (the baseline)', batch], ['POST /v1/traces, OTLP protobuf', otlp]]) {
      console.log(
        `| ${name} | ${rate(r).toFixed(0)} | ${perM(r).toFixed(2)} | ${mainPerM(r).toFixed(2)} | ${(perM(r) / perM(batch)).toFixed(2)}x | ` +
          `${pct(r.latencies, 50).toFixed(0)} / ${pct(r.latencies, 99).toFixed(0)} |`,
      );
    }
    console.log(`\nTargets: >= 100,000 spans/s (${rate(otlp) >= 100_000 ? 'met' : 'NOT met'}); CPU per span <= 1.3x /1/batch per event (${perM(otlp) / perM(batch) <= 1.3 ? 'met' : 'NOT met'}).`);
    console.log(`\nDecoding one ${BATCH}-span body in this process (gunzipped; median of ${DECODE_ROUNDS} interleaved rounds over the ${BODIES} bodies), µs per span, ratio to Waggle's decoder\n`);
    console.log('| step | µs per span | ratio |');
    console.log('|---|---|---|');
    for (const [name, ms] of [
      ["Waggle's protobuf decoder (the model translation reads)", dec.waggleDecode],
      ['protobufjs: its decode alone (its own objects: Long times, byte ids, wrapped values)', dec.protobufjs],
      ["protobufjs: decode, then mapped to the model (the library's cost for the same result)", dec.protobufjsModelled],
      ["Waggle's decoder + translation into columns, in JavaScript (WAGGLE_INGEST_NATIVE=off)", dec.waggleTranslate],
      ['the native trace reader: protobuf straight into columns (what an ingest thread does)', dec.nativeTraces],
      ['/1/batch: JSON.parse + normalising the same events into columns', dec.batchJson],
      ['/1/batch: the native JSON reader, the same events into columns', dec.batchNative],
    ]) {
      console.log(`| ${name} | ${perSpanUs(ms).toFixed(2)} | ${(ms / dec.waggleDecode).toFixed(2)}x |`);
    }
    return { otlp, batch, dec };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const isMain = process.argv[1] === fileURLToPath(import.meta.url);
if (isMain && process.argv[2] === '--server-only') {
  // The OTLP server run alone, one JSON line: for back-to-back pairs when trying a change (e.g.
  // WAGGLE_INGEST_NATIVE=off against on; the machine drifts too much between full runs).
  const tmp = mkdtempSync(join(tmpdir(), 'waggle-bench-otlp-'));
  try {
    const bodies = Array.from({ length: BODIES }, (_, i) => gzipSync(traceRequest(i + 1)));
    const r = await serverRun(tmp, bodies, otlpSender, 'otlp');
    const perM = (x) => Number(((x / r.events) * 1e6).toFixed(2));
    const pct = (p) => Math.round([...r.latencies].sort((a, b) => a - b)[Math.floor((p / 100) * r.latencies.length)]);
    console.log(JSON.stringify({ spansPerSecond: Math.round(r.events / r.seconds), cpuSecondsPerM: perM(r.cpuSeconds), jsThreadPerM: perM(r.mainCpuSeconds), p50: pct(50), p99: pct(99) }));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
} else if (isMain && process.argv[2] === '--decode-only') {
  const raw = Array.from({ length: BODIES }, (_, i) => traceRequest(i + 1));
  const batchJson = await Promise.all(raw.map(async (b) => Buffer.from(JSON.stringify(await asBatch(b)))));
  const d = await decodeBench(raw, batchJson);
  console.log(JSON.stringify(Object.fromEntries(Object.entries(d).map(([k, ms]) => [k, Number(perSpanUs(ms).toFixed(2))]))));
} else if (isMain) await otlpBench();

