// Shared helpers of the ingest tests: requests to /1/batch and /1/events, what a dataset really
// holds (read back with SQL from the DuckDB event store), and hand-built zstd frames (RFC 8878:
// no zstd compressor is installed, and raw and RLE blocks need none).
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import { afterAll, beforeAll, expect } from 'vitest';
import { slugify } from '../src/domain/ids.js';
import type { Column, Dataset } from '../src/stores/config/types.js';
import { tableName } from '../src/stores/events/types.js';
import { quoteIdent } from '../src/stores/events/duckdb-store.js';
import { duckdbDialect } from '../src/stores/events/duckdb-dialect.js';
import { storedValueSql } from '../src/stores/events/placement.js';
import { json, makeApp, type TestApp } from './helpers.js';
import { initialTenancy } from './tenancy-fixtures.js';

export const EMPTY = 'Request body should not be empty.';
export const MALFORMED = 'Request body is malformed and cannot be read.';
export const TOO_LARGE = 'Request body is too large.';
export const EVENT_TOO_MANY_COLUMNS = 'Event has too many columns.';
export const DATASET_TOO_MANY_COLUMNS = 'Dataset has too many columns.';

export type Res = { statusCode: number; headers: Record<string, unknown>; body: string; rawPayload: Buffer };

let counter = 0;
/** A dataset name no other test uses. */
export const fresh = (prefix = 'ds') => `${prefix}_${Date.now().toString(36)}_${++counter}`;

const asPayload = (body: unknown) => (typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));

/** POST /1/batch/{ds}; objects are sent as JSON (with a JSON Content-Type unless headers say otherwise). */
export function batch(t: TestApp, ds: string, body: unknown, headers: Record<string, string> = {}): Promise<Res> {
  const typed = typeof body === 'string' || Buffer.isBuffer(body) ? {} : { 'content-type': 'application/json' };
  return t.app.inject({
    method: 'POST',
    url: `/1/batch/${ds}`,
    headers: { ...t.ingest, ...typed, ...headers },
    payload: asPayload(body),
  }) as Promise<Res>;
}

/** POST /1/events/{ds}. */
export function single(t: TestApp, ds: string, body: unknown, headers: Record<string, string> = {}): Promise<Res> {
  const typed = typeof body === 'string' || Buffer.isBuffer(body) ? {} : { 'content-type': 'application/json' };
  return t.app.inject({
    method: 'POST',
    url: `/1/events/${ds}`,
    headers: { ...t.ingest, ...typed, ...headers },
    payload: asPayload(body),
  }) as Promise<Res>;
}

/** The 200 batch answer: a JSON array of per-event results. */
export function results(res: Res): { status: number; error?: string }[] {
  expect(res.statusCode, res.body).toBe(200);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json\b/);
  const body = json(res);
  expect(Array.isArray(body)).toBe(true);
  for (const r of body) {
    if (r.status === 202) expect(Object.keys(r)).toEqual(['status']);
    else {
      expect(r.status).toBe(400);
      expect(Object.keys(r).sort()).toEqual(['error', 'status']);
      expect(typeof r.error).toBe('string');
      expect(r.error.length).toBeGreaterThan(0);
    }
  }
  return body;
}

/** Expects a legacy `{error}` answer and returns its text. */
export function legacyError(res: Res, status: number): string {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json\b/);
  const body = json(res);
  expect(Object.keys(body)).toEqual(['error']);
  expect(typeof body.error).toBe('string');
  return body.error;
}

/** The dataset a name refers to in the initial environment (or `envId`). */
export async function datasetOf(t: TestApp, name: string, envId?: string): Promise<Dataset | undefined> {
  const id = envId ?? (await initialTenancy(t)).environment.id;
  return t.store.getDataset(id, slugify(name));
}

export async function columnsOf(t: TestApp, name: string, envId?: string): Promise<Map<string, Column>> {
  const ds = await datasetOf(t, name, envId);
  if (!ds) return new Map();
  return new Map((await t.store.listColumns(ds.id)).map((c) => [c.keyName, c]));
}

export async function tableExists(t: TestApp, datasetId: string): Promise<boolean> {
  const rows = await t.events.query(`SELECT count(*)::INTEGER AS n FROM information_schema.tables WHERE table_name = ?`, [tableName(datasetId)]);
  return rows[0].n === 1;
}

/** SQL types of a dataset's field columns by field name (VARCHAR, BIGINT, DOUBLE, BOOLEAN). */
export async function sqlTypes(t: TestApp, name: string): Promise<Record<string, string>> {
  const ds = (await datasetOf(t, name))!;
  const byPhysical = new Map((await t.store.listColumns(ds.id)).map((c) => [c.physical, c.keyName]));
  const rows = await t.events.query(`SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ?`, [tableName(ds.id)]);
  const out: Record<string, string> = {};
  for (const r of rows) {
    const key = byPhysical.get(String(r.column_name));
    if (key !== undefined) out[key] = String(r.data_type);
  }
  return out;
}

export interface StoredRow {
  /** `epoch_us(__time)`: the event time to the microsecond. */
  time: bigint;
  samplerate: number;
  /** Field values by field name; NULLs left out. BIGINTs that fit a double exactly become numbers. */
  fields: Record<string, unknown>;
}

/** Every event of a dataset, in insertion order, read back with SQL (fields as their stored types). [] when there is no dataset. */
export async function stored(t: TestApp, name: string, envId?: string): Promise<StoredRow[]> {
  const ds = await datasetOf(t, name, envId);
  if (!ds || !(await tableExists(t, ds.id))) return [];
  const cols = await t.store.listColumns(ds.id);
  const select = [
    'epoch_us(__time) AS "__t"',
    '__samplerate AS "__sr"',
    // (Each field where it is stored: its column or its attribute, as its stored type.)
    ...cols.map((c, i) => `${storedValueSql(duckdbDialect, c.physical, c.storedType)} AS "f${i}"`),
  ].join(', ');
  const rows = await t.events.query(`SELECT ${select} FROM ${quoteIdent(tableName(ds.id))} ORDER BY rowid`);
  return rows.map((r) => {
    const fields: Record<string, unknown> = {};
    cols.forEach((c, i) => {
      let v = r[`f${i}`];
      if (v === null || v === undefined) return;
      if (typeof v === 'bigint' && Number.isSafeInteger(Number(v))) v = Number(v);
      // defineProperty: a field named __proto__ is an own property, not the prototype.
      Object.defineProperty(fields, c.keyName, { value: v, enumerable: true, writable: true, configurable: true });
    });
    return { time: r.__t as bigint, samplerate: Number(r.__sr), fields };
  });
}

/** Polls until `check` holds (or the time is up); returns the last value. */
export async function eventually<T>(fn: () => Promise<T>, check: (v: T) => boolean, timeoutMs = 5000): Promise<T> {
  const until = Date.now() + timeoutMs;
  let v = await fn();
  while (!check(v) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    v = await fn();
  }
  return v;
}

// --- zstd frames by hand (RFC 8878, section 3.1.1)

const MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
const MAX_BLOCK = 128 * 1024;

function blockHeader(last: boolean, type: 0 | 1, size: number): number[] {
  const h = (last ? 1 : 0) | (type << 1) | (size << 3);
  return [h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff];
}

/** Window_Descriptor byte for a window of 2^log bytes (log 10..41). */
export const windowDescriptor = (log: number) => (log - 10) << 3;

/** One block of a frame: raw bytes, or one byte repeated `count` times (RLE). */
export type ZBlock = { raw: Buffer } | { rle: number; count: number };

/**
 * A zstd frame without a content size or checksum: Frame_Header_Descriptor 0, a Window_Descriptor
 * (128 KiB unless told), then the blocks, each at most 128 KiB (raw blocks longer are split).
 */
export function zstdFrame(blocks: ZBlock[], window = windowDescriptor(17)): Buffer {
  const out: Buffer[] = [Buffer.from([...MAGIC, 0x00, window])];
  const parts: ZBlock[] = [];
  for (const b of blocks) {
    if ('raw' in b) for (let i = 0; i < b.raw.length || i === 0; i += MAX_BLOCK) parts.push({ raw: b.raw.subarray(i, i + MAX_BLOCK) });
    else for (let left = b.count; left > 0; left -= MAX_BLOCK) parts.push({ rle: b.rle, count: Math.min(left, MAX_BLOCK) });
  }
  parts.forEach((b, i) => {
    const last = i === parts.length - 1;
    if ('raw' in b) out.push(Buffer.from(blockHeader(last, 0, b.raw.length)), b.raw);
    else out.push(Buffer.from([...blockHeader(last, 1, b.count), b.rle]));
  });
  return Buffer.concat(out);
}

/** A frame holding `data` in raw blocks. */
export const zstdRaw = (data: Buffer | string, window?: number) => zstdFrame([{ raw: Buffer.from(data) }], window);

/**
 * A single-segment frame that declares its content size (4-byte Frame_Content_Size) — the
 * window is then that size — followed by RLE blocks of `byte`.
 */
export function zstdSingleSegment(declaredSize: number, byte: number, count: number): Buffer {
  const fcs = Buffer.alloc(4);
  fcs.writeUInt32LE(declaredSize);
  const body = zstdFrame([{ rle: byte, count }]).subarray(6); // drop magic, descriptor, window
  return Buffer.concat([Buffer.from([...MAGIC, 0x80 | 0x20]), fcs, body]);
}

/** A skippable frame (ignored by decoders). */
export function zstdSkippable(content: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt32LE(0x184d2a50, 0);
  h.writeUInt32LE(content.length, 4);
  return Buffer.concat([h, content]);
}

/** A gzip stream of `bytes` zeros (a multiple of 1 MiB), compressed chunk by chunk (never holding the zeros at once). */
export async function gzipBomb(bytes: number): Promise<Buffer> {
  const MiB = 1024 * 1024;
  const gz = createGzip({ level: 9 });
  const chunks: Buffer[] = [];
  gz.on('data', (c: Buffer) => chunks.push(c));
  const ended = once(gz, 'end');
  const zeros = Buffer.alloc(MiB);
  for (let i = 0; i < bytes / MiB; i++) if (!gz.write(zeros)) await once(gz, 'drain');
  gz.end();
  await ended;
  return Buffer.concat(chunks);
}

/**
 * Two servers for a describe block, on one clock: `native` reads with the native readers
 * (native/columns), `javascript` without them. They must answer and store the same.
 */
export function withAndWithoutNative(): { native: TestApp; javascript: TestApp } {
  const apps = {} as { native: TestApp; javascript: TestApp };
  beforeAll(async () => {
    apps.native = await makeApp({ settings: { ingestNative: true } });
    apps.javascript = await makeApp({ settings: { ingestNative: false } });
    apps.javascript.clock.ms = apps.native.clock.ms;
  });
  afterAll(async () => {
    await apps.native.close();
    await apps.javascript.close();
  });
  return apps;
}
