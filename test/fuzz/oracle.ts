// What the fuzz suite requires of every answer: no 5xx, and an error body in the dialect the
// route documents (docs/api.md: legacy `{error}`, RFC 7807 problems with `type_detail` on 422,
// JSON:API on /2/; docs/ingest.md: Firehose's shape on Kinesis; docs/otlp.md: a
// google.rpc.Status in the request's encoding). Returns every problem found, [] when none.
import { grpcCodeFor } from '../../src/http/errors.js';
import { decodeStatus } from '../otlp-helpers.js';
import type { BuiltRequest } from './cases.js';
import type { Dialect } from './endpoints.js';

export interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
  rawPayload: Buffer;
}

const DETAIL_CODES = new Set(['invalid', 'missing', 'incorrect_type', 'already_exists']);
const PROBLEM_STATUSES = new Set([400, 405, 409, 413, 415, 422, 429]);
const isString = (v: unknown) => typeof v === 'string';

function parse(a: Answer): { ok: true; body: any } | { ok: false } {
  try {
    return { ok: true, body: JSON.parse(a.body) };
  } catch {
    return { ok: false };
  }
}

/**
 * Whether the request still reaches its endpoint's route: a mutated path or method may reach
 * another route or none (then the prefix's own rules answer: the 404 of an unknown route, a
 * 415, …). The path is read as the URL parser reads it (`..` removed), with the trailing slash
 * the router ignores.
 */
function routesToEndpoint(req: BuiltRequest): boolean {
  if (!req.pathMutated) return true;
  if (req.method !== req.endpoint.method) return false;
  const path = new URL(req.url, 'http://localhost').pathname;
  const pattern = new RegExp(`^${req.endpoint.path.replace(/\{\w+\}/g, '[^/]+')}/?$`);
  return pattern.test(path);
}

/** Every way the answer breaks the rules, [] when it keeps them. */
export function answerProblems(req: BuiltRequest, a: Answer): string[] {
  const own = dialectProblems(req, a, req.endpoint.dialect);
  if (own.length === 0 || routesToEndpoint(req)) return own;
  // Another route (or none) may have answered: the prefix's rules.
  const path = new URL(req.url, 'http://localhost').pathname;
  const generic = dialectProblems(req, a, path.startsWith('/2/') ? 'v2' : 'v1');
  return generic.length === 0 ? [] : own;
}

function dialectProblems(req: BuiltRequest, a: Answer, d: Dialect): string[] {
  const problems: string[] = [];
  const type = String(a.headers['content-type'] ?? '');
  if (a.statusCode >= 500) problems.push(`answered ${a.statusCode}`);
  if (a.statusCode < 400) {
    // A success's body is what its Content-Type says, and a JSON body says so (Honeycomb's
    // clients decode by the Content-Type).
    const p = parse(a);
    if (/json/.test(type) && a.body !== '' && !p.ok) problems.push(`a ${a.statusCode} with ${type} whose body is not JSON`);
    if (p.ok && typeof p.body === 'object' && p.body !== null && !/^application\/([\w.+-]+\+)?json\b/.test(type)) {
      problems.push(`a ${a.statusCode} whose body is JSON, with Content-Type ${type || '(none)'}`);
    }
    return problems;
  }
  const path = new URL(req.url, 'http://localhost').pathname;
  const legacy = () => {
    if (!/^application\/json\b/.test(type)) return problems.push(`legacy error with Content-Type ${type}`);
    const p = parse(a);
    if (!p.ok || p.body === null || typeof p.body !== 'object' || !isString(p.body.error)) problems.push(`legacy error body is not {error}: ${a.body.slice(0, 300)}`);
  };
  if (d === 'v2' || path.startsWith('/2/')) {
    if (type !== 'application/vnd.api+json') problems.push(`/2/ error with Content-Type ${type}`);
    const p = parse(a);
    const errors = p.ok ? p.body?.errors : undefined;
    if (!Array.isArray(errors) || errors.length === 0) problems.push(`/2/ error body is not JSON:API errors: ${a.body.slice(0, 300)}`);
    else for (const e of errors) {
      if (!isString(e.id) || e.status !== String(a.statusCode) || !isString(e.code) || !isString(e.title) || !isString(e.detail)) problems.push(`malformed JSON:API error ${JSON.stringify(e).slice(0, 300)}`);
    }
    return problems;
  }
  if (d === 'otlp' && a.statusCode !== 414) {
    // The request's own type when it is one of OTLP's; JSON otherwise (415).
    const sent = req.headers['content-type'] ?? '';
    const json = a.statusCode === 415 || !/^application\/(x-)?protobuf\b/i.test(sent);
    if (json) {
      if (!/^application\/json\b/.test(type)) problems.push(`OTLP/JSON error with Content-Type ${type}`);
      const p = parse(a);
      if (!p.ok || !Number.isInteger(p.body?.code) || !isString(p.body?.message)) problems.push(`OTLP error is not a Status: ${a.body.slice(0, 300)}`);
      else if (p.body.code !== grpcCodeFor(a.statusCode)) problems.push(`OTLP Status code ${p.body.code} for HTTP ${a.statusCode}`);
    } else {
      if (!/^application\/(x-)?protobuf\b/.test(type)) problems.push(`OTLP/protobuf error with Content-Type ${type}`);
      try {
        const s = decodeStatus(a.rawPayload);
        if (s.code !== grpcCodeFor(a.statusCode) || !isString(s.message)) problems.push(`OTLP Status code ${s.code} for HTTP ${a.statusCode}`);
      } catch (err) {
        problems.push(`OTLP/protobuf error is not a Status: ${(err as Error).message}`);
      }
    }
    return problems;
  }
  if (d === 'kinesis' && a.statusCode !== 414) {
    const p = parse(a);
    const b = p.ok ? p.body : undefined;
    if (!/^application\/json\b/.test(type) || !isString(b?.requestId) || !Number.isInteger(b?.timestamp) || !isString(b?.errorMessage) || b?.error !== b?.errorMessage) {
      problems.push(`Kinesis error is not Firehose's {requestId, timestamp, errorMessage, error} (${type}): ${a.body.slice(0, 300)}`);
    }
    return problems;
  }
  if (d === 'ingest' || d === 'otlp' || d === 'kinesis' || !path.startsWith('/1/')) {
    legacy();
    return problems;
  }
  // /1/ configuration routes. Query annotations answer query problems with a legacy 400, as
  // Honeycomb's OpenAPI document specifies (docs/queries.md).
  if (a.statusCode === 400 && path.startsWith('/1/query_annotations/') && /^application\/json\b/.test(type)) {
    legacy();
    return problems;
  }
  if (PROBLEM_STATUSES.has(a.statusCode) || (a.statusCode === 404 && /problem/.test(type))) {
    if (!/^application\/problem\+json\b/.test(type)) return [...problems, `a /1/ ${a.statusCode} with Content-Type ${type}, not a problem`];
    const p = parse(a);
    const b = p.ok ? p.body : undefined;
    if (!b || !isString(b.error) || b.status !== a.statusCode || !isString(b.type) || !isString(b.title) || !isString(b.detail) || !isString(b.instance)) {
      return [...problems, `malformed problem: ${a.body.slice(0, 300)}`];
    }
    if (a.statusCode === 404 && (b.error !== 'Dataset not found' || !b.type.endsWith('/problems/not-found'))) problems.push(`a 404 problem that is not Dataset not found: ${a.body.slice(0, 300)}`);
    if (a.statusCode === 422) {
      if (!Array.isArray(b.type_detail) || b.type_detail.length === 0) problems.push(`a 422 without type_detail: ${a.body.slice(0, 300)}`);
      else for (const t of b.type_detail) {
        // description is the problem alone (the field is in `field`); detail names both.
        const ok = isString(t.field) && DETAIL_CODES.has(t.code) && isString(t.description) && t.description !== '' && !t.description.startsWith(`${t.field}:`) && b.detail.includes(`${t.field}: ${t.description}`);
        if (!ok) problems.push(`malformed type_detail ${JSON.stringify(t).slice(0, 300)}`);
      }
    }
    return problems;
  }
  if ([401, 403, 404, 414].includes(a.statusCode)) legacy();
  else problems.push(`a /1/ status the API does not document: ${a.statusCode}`);
  return problems;
}
