// Shared assertions on the two error dialects of the /1/ API: RFC 7807 problems
// (application/problem+json, checked against the contract's DetailedError and ValidationError)
// and legacy `{error}` answers (application/json, checked against the contract's Error).
import { expect } from 'vitest';
import { json } from './helpers.js';
import { expectSchema } from './contract.js';

/** Problem `type`s start with the server's public base URL: for `inject`, the request's `http://localhost:80`. */
export const PROBLEM_BASE = 'http://localhost:80/problems';

export type Res = { statusCode: number; headers: Record<string, unknown>; body: string };

/** A problem answer of `status` and problem `type`; returns its body. */
export function expectProblem(res: Res, status: number, type: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json\b/);
  const body = json(res);
  expect(body.status).toBe(status);
  expect(body.type).toBe(`${PROBLEM_BASE}/${type}`);
  expect(typeof body.title).toBe('string');
  expect(typeof body.error).toBe('string');
  expectSchema('DetailedError', body);
  return body;
}

/** A 422 validation problem whose type_detail names `field` with `code`; returns the body. */
export function expectValidation(res: Res, field: string, code = 'invalid') {
  const body = expectProblem(res, 422, 'validation-failed');
  expect(body.title).toBe('The provided input is invalid.');
  // As Honeycomb's: the per-field text is in type_detail (and detail), never in `error`.
  expect(body.error).toBe('The provided input is invalid.');
  expectSchema('ValidationError', body);
  expect(Array.isArray(body.type_detail)).toBe(true);
  const entry = body.type_detail.find((d: { field: string }) => d.field === field);
  expect(entry, `type_detail for ${field} in ${res.body}`).toBeDefined();
  expect(entry.code, res.body).toBe(code);
  expect(Object.keys(entry).sort()).toEqual(['code', 'description', 'field']);
  // The problem alone: the field is in `field` (Honeycomb's Go client prints `missing name -
  // cannot be blank`); `detail` names it.
  expect(entry.description.startsWith(`${field}:`), entry.description).toBe(false);
  expect(body.detail).toContain(`${field}: ${entry.description}`);
  return body;
}

/** A legacy `{error}` answer of `status` (with the text `error` when given); returns its body. */
export function expectLegacy(res: Res, status: number, error?: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json\b/);
  const body = json(res);
  expect(Object.keys(body)).toEqual(['error']);
  expect(typeof body.error).toBe('string');
  expectSchema('Error', body);
  if (error !== undefined) expect(body.error).toBe(error);
  return body;
}

/**
 * The 404 of a dataset that a path names and that does not exist (or that the key cannot see):
 * a `not-found` problem whose `error` is `Dataset not found`, as Honeycomb answers it.
 */
export function expectDatasetNotFound(res: Res) {
  const body = expectProblem(res, 404, 'not-found');
  expect(body.title).toBe('The requested resource cannot be found.');
  expect(body.error).toBe('Dataset not found');
  expect(body.detail).toBe('Dataset not found');
  return body;
}
