// Request-body validation helpers shared by every route and domain module, so that the shape of
// a validation problem (RFC 7807 `type_detail` entries: `field`, `code`, `description` the
// problem alone, the field being in `field`) is decided in one place. Routes collect problems in a `Problems` and
// throw them all at once as one 422 (see `validationError` in errors.ts).
import { ApiError, BLANK, validationError, type DetailCode, type TypeDetail } from './errors.js';

export { BLANK };

export type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
export const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
export const has = (o: Json, k: string) => Object.prototype.hasOwnProperty.call(o, k);
/**
 * The JSON Schema `pattern` of a string that must not be blank (a non-space somewhere): a route
 * schema's blank string is answered as a missing one (`missing`, `cannot be blank`), as
 * Problems.string({ notBlank }) answers it.
 */
export const NOT_BLANK = '\\S';
/** Length in code points, as JSON Schema's minLength/maxLength count. */
export const textLength = (s: string) => [...s].length;

/** Collects problems; every check returns whether the value passed. */
export class Problems {
  readonly list: TypeDetail[] = [];
  get count() {
    return this.list.length;
  }
  add(field: string, code: DetailCode, message: string): false {
    this.list.push({ field, code, description: message });
    return false;
  }
  /** Adds problems found elsewhere (e.g. by duplicateTagKeys), one by one: never spread into a call. */
  addAll(details: readonly TypeDetail[]): void {
    for (const d of details) this.list.push(d);
  }
  type(field: string, expected: string, value: unknown): false {
    return this.add(field, 'incorrect_type', `must be ${expected}, not ${jsonType(value)}`);
  }
  missing(field: string): false {
    return this.add(field, 'missing', BLANK);
  }
  /** A required non-empty string of at most `max` characters (and not blank with `notBlank`). */
  string(field: string, v: unknown, { max = Infinity, notBlank = false, required = true } = {}): v is string {
    if (v === undefined || v === null) return required ? this.missing(field) : false;
    if (typeof v !== 'string') return this.type(field, 'a string', v);
    if (v === '' || (notBlank && v.trim() === '')) return required ? this.missing(field) : this.add(field, 'invalid', 'must not be empty');
    if (textLength(v) > max) return this.add(field, 'invalid', `must be at most ${max} characters, not ${textLength(v)}`);
    return true;
  }
  enumOf<T extends string>(field: string, v: unknown, values: readonly T[]): v is T {
    if (typeof v !== 'string') return this.type(field, 'a string', v);
    if (!(values as readonly string[]).includes(v)) return this.add(field, 'invalid', `must be one of ${values.join(', ')}`);
    return true;
  }
  bool(field: string, v: unknown): v is boolean {
    return typeof v === 'boolean' || this.type(field, 'a boolean', v);
  }
  integer(field: string, v: unknown, min = 0, max = Number.MAX_SAFE_INTEGER): v is number {
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) return this.type(field, 'an integer', v);
    if (v < min) return this.add(field, 'invalid', `must be at least ${min}`);
    if (v > max) return this.add(field, 'invalid', `must be at most ${max}`);
    return true;
  }
  /** An array of at most `max` items; its length is checked before any item is. */
  array(field: string, v: unknown, max: number): v is unknown[] {
    if (!Array.isArray(v)) return this.type(field, 'an array', v);
    if (v.length > max) return this.add(field, 'invalid', `must have at most ${max} items, not ${v.length}`);
    return true;
  }
  throwIfAny(): void {
    if (this.list.length > 0) throw validationError(this.list);
  }
}

/** The 400 for a body that is absent or cannot be read as JSON (Honeycomb's `unparseable`). */
export const unparseable = (detail = 'request body is empty') =>
  new ApiError(400, 'could not parse request body', { detail: `could not parse request body: ${detail}` });

/** The request body as a JSON object: 400 when empty, 422 when not an object. */
export function bodyObject(input: unknown): Json {
  if (input === undefined) throw unparseable();
  if (!isObject(input)) {
    throw validationError([{ field: 'body', code: 'incorrect_type', description: `must be a JSON object, not ${jsonType(input)}` }]);
  }
  return input;
}
