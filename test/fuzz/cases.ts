// The fuzz suite's cases: a valid request of one endpoint (endpoints.ts) and what a hostile
// client does to it — mutations of its JSON body (type swaps, deleted keys, huge strings and
// arrays, extreme numbers, lone surrogates, deep nesting, duplicate keys), of its bytes
// (truncation, invalid UTF-8, flipped bytes), of its headers (Content-Type, Content-Encoding,
// key or web UI session) and of its path and query. All drawn by fast-check, so a failing case
// shrinks to a small one and replays from its seed.
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { ENDPOINTS, OWN_ORIGIN, kinesisWire, otlpProtobuf, type Endpoint, type Fixtures } from './endpoints.js';
import type { TestApp } from '../helpers.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Markers put in the body as strings and replaced in its serialised bytes (what JSON.stringify cannot write). */
const MARK = '\u0001fuzz:';

export type BodyMutation =
  | { op: 'swap'; at: number; value: Json }
  | { op: 'delete'; at: number }
  | { op: 'unknownKey'; at: number }
  | { op: 'hugeString'; at: number; length: number; char: string }
  | { op: 'hugeArray'; at: number; length: number }
  | { op: 'number'; at: number; value: number }
  | { op: 'literal'; at: number; text: string }
  | { op: 'string'; at: number; value: string }
  | { op: 'surrogateKey'; at: number; suffix: string }
  | { op: 'deep'; at: number; depth: number; kind: 'array' | 'object' }
  | { op: 'duplicateKey'; at: number; value: Json }
  | { op: 'badUtf8'; at: number; bytes: number[] };

export type WireMutation =
  | { op: 'none' }
  | { op: 'truncate'; fraction: number }
  | { op: 'insertBytes'; fraction: number; bytes: number[] }
  | { op: 'flipByte'; fraction: number; xor: number };

export interface Case {
  endpoint: number;
  body: BodyMutation[];
  wire: WireMutation;
  contentType: string | null | 'default';
  encoding: 'identity' | 'gzip' | 'x-gzip' | 'gzip-corrupt' | 'zstd-corrupt' | 'br' | 'deflate' | 'gzip, gzip' | 'none';
  path: { param: number; value: string } | null;
  suffix: string;
  query: string | null;
  method: string | null;
  auth: 'key' | 'session';
}

const at = fc.nat();
const jsonScalar = fc.oneof(
  fc.constantFrom<Json>(null, true, false, 0, -1, 1.5, '', 'x', [], {}, [1, 'a', null], { a: 1 }, '1', 'true', 'null'),
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const extremeNumbers = [1e308, -1e308, 5e-324, -5e-324, 2 ** 53, 2 ** 53 + 2, -(2 ** 63), 2 ** 64, 1e21, -0, 0.1, 1e-7, 2147483648, -2147483649, 9007199254740993];
const literals = ['1e400', '-1e400', '1'.repeat(400), '-0', '0.0000000000000000000000000000001', '1E+2', '123456789012345678901234567890'];
const strings = [
  '', ' ', '\u0000', '\ud800', '\udfff', 'a\udc00b', '\ud83d', 'x\ud800\udfff\udfff', '\u{1F600}', '\u202e', 'é'.repeat(300), '../../etc/passwd', '%00', '%ED%A0%80',
  '__all__', '$duration_ms', '"; DROP TABLE x; --', "' OR 1=1 --", 'NaN', 'Infinity', '-1', '1e400', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z',
  '2026-13-45T99:99:99Z', 'null', 'undefined', '{}', '[]', '<script>', 'a'.repeat(256), 'a'.repeat(1001), '\n\r\t', ' padded ', 'UPPER', 'trace.trace_id',
  'COUNT', 'HEATMAP', 'in', 'between', '#zzzzzz', 'http://[::1', 'javascript:alert(1)', 'IF(', 'GT($a, ', '$'.repeat(50), 'x'.repeat(100) + '\ud800',
];
const badUtf8 = [[0xff], [0xfe, 0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc0, 0xaf], [0xe0, 0x80], [0x80]];

const bodyMutation: fc.Arbitrary<BodyMutation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('swap' as const), at, value: jsonScalar }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('delete' as const), at }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('unknownKey' as const), at }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('hugeString' as const), at, length: fc.constantFrom(256, 1001, 5000, 70_000, 300_000, 1_100_000), char: fc.constantFrom('x', 'é', '\u{1F600}', '\ud800') }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('hugeArray' as const), at, length: fc.constantFrom(11, 101, 1001, 10_001, 160_000) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('number' as const), at, value: fc.constantFrom(...extremeNumbers) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('literal' as const), at, text: fc.constantFrom(...literals) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('string' as const), at, value: fc.constantFrom(...strings) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('surrogateKey' as const), at, suffix: fc.constantFrom('\ud800', '\udfff\ud800', '\uffff', '', '\u0000', 'é', ' ') }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('deep' as const), at, depth: fc.constantFrom(64, 1000, 20_000, 200_000), kind: fc.constantFrom('array' as const, 'object' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('duplicateKey' as const), at, value: jsonScalar }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('badUtf8' as const), at, bytes: fc.constantFrom(...badUtf8) }) },
);

const wireMutation: fc.Arbitrary<WireMutation> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ op: 'none' as const }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('truncate' as const), fraction: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('insertBytes' as const), fraction: fc.double({ min: 0, max: 1, noNaN: true }), bytes: fc.oneof(fc.constantFrom(...badUtf8), fc.array(fc.nat(255), { minLength: 1, maxLength: 8 })) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('flipByte' as const), fraction: fc.double({ min: 0, max: 1, noNaN: true }), xor: fc.integer({ min: 1, max: 255 }) }) },
);

/** Path parameter values a hostile client tries (percent-encoded as sent). */
const PATH_VALUES = [
  'nope', 'x'.repeat(255), 'x'.repeat(256), 'x'.repeat(1000), 'x'.repeat(1001), '%ED%A0%80', '%E0%A4%A', '%', '%00', '..', '.', '%2E%2E', '%2F', 'a%2Fb',
  '__all__', '%F0%9F%98%80', '%20', 'A', 'Fuzz', 'FUZZ%20', 'fuzz-new', '-', '_', '%FF%FE', 'a'.repeat(120) + '%ED%B0%80', '0', '-1', '1e400', 'null',
];
/** Path values that name the fixture dataset (`fuzz`) under another spelling. */
const ALIASES = new Set(['Fuzz', 'FUZZ%20']);
/** Path values the URL parser removes with the segment before them. */
const DOT_SEGMENTS = new Set(['..', '.', '%2E%2E']);
const QUERIES = [
  'detailed=true', 'detailed=maybe', 'limit=-1', 'limit=1e400', 'limit=99999999999', 'page[size]=0', 'page[size]=abc', 'page[after]=%ED%A0%80', 'key_name=%FF',
  'alias=' + 'a'.repeat(2000), 'slo_id=nope', 'include_board_annotations=2', 'filter[type]=nope', 'a=1&a=2', '%', 'x[y][z]=1', 'time_range=-5',
];

export function caseArbitrary(): fc.Arbitrary<Case> {
  return fc.record({
    endpoint: fc.noBias(fc.nat(ENDPOINTS.length - 1)),
    body: fc.array(bodyMutation, { maxLength: 3 }),
    wire: wireMutation,
    contentType: fc.oneof(
      { weight: 10, arbitrary: fc.constant('default' as const) },
      { weight: 1, arbitrary: fc.constantFrom(null, 'text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'application/json; charset=latin1', 'application/vnd.api+json', 'application/x-protobuf', 'application/json', 'multipart/form-data; boundary=x', 'application/protobuf', ';;', 'application/json; charset=utf-8') },
    ),
    encoding: fc.oneof(
      { weight: 10, arbitrary: fc.constant('none' as const) },
      { weight: 1, arbitrary: fc.constantFrom('identity' as const, 'gzip' as const, 'x-gzip' as const, 'gzip-corrupt' as const, 'zstd-corrupt' as const, 'br' as const, 'deflate' as const, 'gzip, gzip' as const) },
    ),
    path: fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.record({ param: fc.nat(), value: fc.constantFrom(...PATH_VALUES) }) }),
    suffix: fc.oneof({ weight: 12, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('/', '//', '/extra', '/%ED%A0%80', '/..', '/' + 'y'.repeat(1001)) }),
    query: fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom(...QUERIES) }),
    // Never DELETE: it would delete the fixtures the other cases name (the DELETE routes are
    // fuzzed on targets of their own, `prepare`).
    method: fc.oneof({ weight: 25, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'OPTIONS') }),
    auth: fc.oneof({ weight: 5, arbitrary: fc.constant('key' as const) }, { weight: 1, arbitrary: fc.constant('session' as const) }),
  });
}

// --- Applying mutations to a JSON value.

type Slot = { parent: Json[] | { [k: string]: Json } | null; key: string | number; value: Json };

/** Every node of a value with where it sits, the root first. */
function slots(root: Json): Slot[] {
  const out: Slot[] = [{ parent: null, key: '', value: root }];
  for (let i = 0; i < out.length && out.length < 5000; i++) {
    const v = out[i].value;
    if (Array.isArray(v)) v.forEach((x, k) => out.push({ parent: v, key: k, value: x }));
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) out.push({ parent: v, key: k, value: x });
  }
  return out;
}

function replace(root: Json, s: Slot, value: Json): Json {
  if (s.parent === null) return value;
  (s.parent as Record<string | number, Json>)[s.key] = value;
  return root;
}

/** Applies one mutation; `marks` collects text to put in place of marker strings once serialised. */
function mutate(root: Json, m: BodyMutation, marks: Map<string, Buffer>): Json {
  const all = slots(root);
  const s = all[m.at % all.length];
  const mark = (bytes: Buffer) => {
    const id = `${MARK}${marks.size}`;
    marks.set(JSON.stringify(id), bytes);
    return id;
  };
  switch (m.op) {
    case 'swap':
      return replace(root, s, m.value);
    case 'delete':
      if (s.parent === null) return root;
      if (Array.isArray(s.parent)) s.parent.splice(s.key as number, 1);
      else delete s.parent[s.key as string];
      return root;
    case 'unknownKey':
      if (s.value !== null && typeof s.value === 'object' && !Array.isArray(s.value)) s.value.zz_unknown_field = 'x';
      return root;
    case 'hugeString':
      return replace(root, s, m.char.repeat(Math.ceil(m.length / m.char.length)));
    case 'hugeArray': {
      const first = Array.isArray(s.value) ? (s.value[0] ?? 1) : s.value;
      // Many copies of a big item would make bodies of hundreds of megabytes: a small item then.
      const item = (JSON.stringify(first)?.length ?? 0) > 200 ? 1 : first;
      // At most about 2 MB (past every body limit, so the 413 path is covered without sending more).
      const length = Math.min(m.length, Math.floor(2_000_000 / ((JSON.stringify(item)?.length ?? 1) + 1)));
      // Copies, not one shared item: a later mutation inside one must not reach them all.
      return replace(root, s, Array.from({ length }, () => structuredClone(item)));
    }
    case 'number':
      return replace(root, s, m.value);
    case 'literal':
      return replace(root, s, mark(Buffer.from(m.text)));
    case 'string':
      return replace(root, s, m.value);
    case 'surrogateKey': {
      const o = s.value;
      if (o === null || typeof o !== 'object' || Array.isArray(o)) return root;
      const [first] = Object.keys(o);
      if (first === undefined) return root;
      const v = o[first];
      delete o[first];
      o[first + m.suffix] = v;
      return root;
    }
    case 'deep': {
      // Written as text: building it as a value would overflow our own JSON.stringify.
      const text = m.kind === 'array' ? '['.repeat(m.depth) + ']'.repeat(m.depth) : '{"a":'.repeat(m.depth) + '1' + '}'.repeat(m.depth);
      return replace(root, s, mark(Buffer.from(text)));
    }
    case 'duplicateKey': {
      const o = s.value;
      if (o === null || typeof o !== 'object' || Array.isArray(o)) return root;
      const [first] = Object.keys(o);
      if (first === undefined) return root;
      // A second member of the same name: the marker key is replaced by the first key's name.
      const id = `${MARK}${marks.size}`;
      marks.set(JSON.stringify(id), Buffer.from(JSON.stringify(first)));
      o[id] = m.value;
      return root;
    }
    case 'badUtf8': {
      const str = typeof s.value === 'string' ? s.value : 'x';
      return replace(root, s, mark(Buffer.concat([Buffer.from(JSON.stringify(str).slice(0, -1)), Buffer.from(m.bytes), Buffer.from('"')])));
    }
  }
}

function serialise(value: Json, marks: Map<string, Buffer>): Buffer {
  const text = JSON.stringify(value) ?? '';
  if (marks.size === 0) return Buffer.from(text);
  // Splits the text at each marker (a JSON string literal) and joins the parts with its bytes.
  const parts: Buffer[] = [];
  const pattern = new RegExp([...marks.keys()].map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  let last = 0;
  for (const hit of text.matchAll(pattern)) {
    parts.push(Buffer.from(text.slice(last, hit.index)), marks.get(hit[0])!);
    last = hit.index! + hit[0].length;
  }
  parts.push(Buffer.from(text.slice(last)));
  return Buffer.concat(parts);
}

function applyWire(buf: Buffer, w: WireMutation): Buffer {
  const pos = (f: number) => Math.min(buf.length, Math.floor(f * buf.length));
  switch (w.op) {
    case 'none':
      return buf;
    case 'truncate':
      return buf.subarray(0, pos(w.fraction));
    case 'insertBytes':
      return Buffer.concat([buf.subarray(0, pos(w.fraction)), Buffer.from(w.bytes), buf.subarray(pos(w.fraction))]);
    case 'flipByte': {
      if (buf.length === 0) return buf;
      const out = Buffer.from(buf);
      out[Math.min(out.length - 1, pos(w.fraction))] ^= w.xor;
      return out;
    }
  }
}

export interface BuiltRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: Buffer;
  endpoint: Endpoint;
  /** The URL's path was changed (it may name no route at all). */
  pathMutated: boolean;
}

const PARAM = /\{(\w+)\}/g;

/** The request a case describes, against the fixtures (`params` override them: a DELETE's own target). */
export function buildRequest(c: Case, t: TestApp, f: Fixtures, params: Record<string, string> = {}): BuiltRequest {
  const endpoint = ENDPOINTS[c.endpoint];
  const names = [...endpoint.path.matchAll(PARAM)].map((m) => m[1]);
  const valueOf = (name: string) => params[name] ?? String((f as unknown as Record<string, unknown>)[name]);
  const mutatedParam = c.path && names.length > 0 ? names[c.path.param % names.length] : null;
  // A DELETE never names a fixture: not the dataset under another spelling, nor a parent
  // through a dot segment (`/1/boards/B/views/..` is `/1/boards/B`). Either would be gone for
  // the rest of the run.
  const deletes = endpoint.method === 'DELETE';
  const mutated = deletes && (ALIASES.has(c.path?.value ?? '') || DOT_SEGMENTS.has(c.path?.value ?? '')) ? 'nope' : c.path?.value;
  let path = endpoint.path.replace(PARAM, (_, name: string) => (name === mutatedParam ? mutated! : encodeURIComponent(valueOf(name))));
  path += deletes && c.suffix.includes('..') ? '' : c.suffix;
  const query = [endpoint.query?.replace(PARAM, (_, name: string) => encodeURIComponent(valueOf(name))), c.query].filter(Boolean).join('&');
  const url = query ? `${path}?${query}` : path;

  const headers: Record<string, string> = {};
  if (endpoint.dialect === 'v2') Object.assign(headers, t.mgmt);
  else if (endpoint.name === 'POST /1/ui/session') headers.origin = OWN_ORIGIN;
  else if (endpoint.dialect === 'kinesis') Object.assign(headers, { 'x-amz-firehose-access-key': t.init.keys.ingest, 'x-amz-firehose-request-id': 'fuzz-request' });
  else if (c.auth === 'session' && endpoint.dialect === 'v1') Object.assign(headers, { cookie: f.cookie, origin: OWN_ORIGIN });
  else if (endpoint.dialect === 'ingest' || endpoint.dialect === 'otlp') Object.assign(headers, t.ingest);
  else Object.assign(headers, t.config);

  let payload: Buffer | undefined;
  const valid = endpoint.body?.(f) as Json | undefined;
  if (valid !== undefined) {
    const marks = new Map<string, Buffer>();
    let body: Json = structuredClone(valid);
    for (const m of c.body) body = mutate(body, m, marks);
    if (endpoint.dialect === 'kinesis') body = kinesisWire(body) as Json;
    payload = endpoint.encoding === 'protobuf' ? otlpProtobuf(endpoint.signal!, body, valid) : serialise(body, marks);
    payload = applyWire(payload, c.wire);
  } else if (c.wire.op === 'insertBytes') {
    payload = Buffer.from(c.wire.bytes); // a body where none belongs
  }

  const defaultType = endpoint.dialect === 'v2' ? 'application/vnd.api+json' : endpoint.encoding === 'protobuf' ? 'application/x-protobuf' : 'application/json';
  if (payload !== undefined) {
    if (c.contentType === 'default') headers['content-type'] = defaultType;
    else if (c.contentType !== null) headers['content-type'] = c.contentType;
    else delete headers['content-type'];
    switch (c.encoding) {
      case 'none':
        break;
      case 'gzip':
      case 'x-gzip':
        payload = gzipSync(payload);
        headers['content-encoding'] = c.encoding;
        break;
      case 'gzip, gzip':
        payload = gzipSync(gzipSync(payload));
        headers['content-encoding'] = c.encoding;
        break;
      case 'gzip-corrupt':
        headers['content-encoding'] = 'gzip';
        break;
      case 'zstd-corrupt':
        headers['content-encoding'] = 'zstd';
        break;
      default:
        headers['content-encoding'] = c.encoding;
    }
  }
  return { method: c.method ?? endpoint.method, url, headers, payload, endpoint, pathMutated: mutatedParam !== null || c.suffix !== '' || c.method !== null };
}
