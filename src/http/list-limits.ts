// List limits for routes whose body the route schema validates (Fastify's ajv). ajv checks an
// array's `maxItems` first but, collecting every error, then goes on to check each of its
// items: a list of 160,000 bad items would make 160,000 problems. So before ajv runs, the body
// is walked along its schema and every list longer than its schema's `maxItems` is refused with
// one 422 naming the list and its limit, without looking at any of its items. Routes that
// validate by hand check their lists with Problems.array the same way (docs/api.md, "Limits").
import type { preValidationAsyncHookHandler, RouteOptions } from 'fastify';
import { isObject, Problems } from '../validation.js';

type Schema = Record<string, unknown>;

/** Adds a problem to `p` for every list of `value` longer than `schema` allows; items of such a list are not read. */
export function checkListLimits(p: Problems, schema: unknown, value: unknown, field: string): void {
  if (!isObject(schema)) return;
  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) {
    const alternatives = schema[k];
    // The first alternative that has anything to say decides, so a list is reported once.
    if (Array.isArray(alternatives)) {
      for (const alt of alternatives) {
        const before = p.count;
        checkListLimits(p, alt, value, field);
        if (p.count > before) return;
      }
    }
  }
  // An `if`/`then` (e.g. a board panel's members by its type): the lists its `then` names.
  if (isObject(schema.then)) {
    const before = p.count;
    checkListLimits(p, schema.then, value, field);
    if (p.count > before) return;
  }
  if (Array.isArray(value)) {
    const max = schema.maxItems;
    if (typeof max === 'number' && !p.array(field || 'body', value, max)) return;
    const items = schema.items;
    if (isObject(items)) value.forEach((item, i) => checkListLimits(p, items, item, field ? `${field}.${i}` : String(i)));
    return;
  }
  const properties = schema.properties;
  if (isObject(value) && isObject(properties)) {
    for (const [key, sub] of Object.entries(properties)) {
      if (Object.prototype.hasOwnProperty.call(value, key)) checkListLimits(p, sub, value[key], field ? `${field}.${key}` : key);
    }
  }
}

/** Makes a schema-validated route refuse over-long lists before its schema is checked. */
export function addListLimits(route: RouteOptions): void {
  const body = (route.schema as Schema | undefined)?.body;
  if (!body || route.validatorCompiler) return;
  const hook: preValidationAsyncHookHandler = async (request) => {
    const p = new Problems();
    checkListLimits(p, body, request.body, '');
    p.throwIfAny();
  };
  // After the route's own preValidation hooks: a path's 404 (its dataset, its object) comes first.
  const existing = route.preValidation;
  route.preValidation = [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), hook];
}
