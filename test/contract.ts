// Validates our responses against the schemas of Honeycomb's published OpenAPI document
// (test/fixtures/honeycomb-api.yaml, a verbatim copy of it): the external contract real clients
// are written against.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

const doc = parse(readFileSync(fileURLToPath(new URL('./fixtures/honeycomb-api.yaml', import.meta.url)), 'utf8'));
const ajv = new Ajv2020.default({ strict: false, allErrors: true, validateFormats: true });
addFormats.default(ajv);
ajv.addSchema(doc, 'api');

function resolve(ref: string): any {
  return ref.replace(/^#\//, '').split('/').reduce((o: any, k) => o?.[k], doc);
}

/**
 * What the contract documents for an operation's answer of that status and content type: the
 * schema (a pointer for ajv), no body at all (a status documented without `content`), or nothing
 * (an undocumented status, or a media type it does not list), with why.
 */
function documented(path: string, method: string, status: number, contentType: string):
  { pointer: string } | { noBody: true } | { missing: string } {
  const op = doc.paths?.[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`no operation ${method} ${path} in the contract`);
  const key = String(status) in op.responses ? String(status) : 'default';
  let response = op.responses[key];
  let pointer = `#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method.toLowerCase()}/responses/${key}`;
  if (!response) return { missing: `status ${status} is not documented` };
  if (response.$ref) {
    pointer = response.$ref;
    response = resolve(response.$ref);
  }
  if (!response.content) return { noBody: true };
  const media = contentType.split(';')[0].trim();
  if (!response.content[media]?.schema) return { missing: `no schema in ${media || 'an answer without a Content-Type'} (documented: ${Object.keys(response.content).join(', ')})` };
  return { pointer: `api${pointer}/content/${media.replace(/~/g, '~0').replace(/\//g, '~1')}/schema` };
}

/**
 * Answers the contract gives no schema for that are right all the same, each with a one-line
 * reason: expectContract accepts them without checking their body. Keyed `METHOD path status
 * media type` (as sent, without parameters). An entry the contract does give a schema for is an
 * error, so the list cannot hide a check. Empty today: every answer the tests check is documented.
 */
export const CONTRACT_GAPS: Record<string, string> = {};

/**
 * Throws unless the response is what the contract documents for that operation, status and
 * content type: a body matching its schema, or no body where it documents none. An answer it
 * documents nothing for fails too, unless CONTRACT_GAPS lists it: a check that checked nothing
 * must not pass.
 */
export function expectContract(
  path: string,
  method: string,
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
): void {
  const contentType = String(res.headers['content-type'] ?? '');
  const gap = `${method.toUpperCase()} ${path} ${res.statusCode} ${contentType.split(';')[0].trim()}`;
  const what = documented(path, method, res.statusCode, contentType);
  if ('missing' in what) {
    if (gap in CONTRACT_GAPS) return;
    throw new Error(`${gap}: the contract documents no such answer (${what.missing}); body: ${res.body.slice(0, 300)}`);
  }
  if (gap in CONTRACT_GAPS) throw new Error(`CONTRACT_GAPS lists ${gap}, which the contract documents: remove the entry`);
  if ('noBody' in what) {
    if (res.body !== '') throw new Error(`${gap}: the contract documents no body; got ${res.body.slice(0, 300)}`);
    return;
  }
  const { pointer } = what;
  const validate = ajv.getSchema(pointer);
  if (!validate) throw new Error(`cannot compile ${pointer}`);
  const body = JSON.parse(res.body);
  if (!validate(body)) {
    throw new Error(
      `${method} ${path} ${res.statusCode} (${contentType}) does not match the contract:\n` +
        JSON.stringify(validate.errors, null, 2) + `\nbody: ${res.body}`,
    );
  }
}

/** The contract's list of documented statuses for an operation. */
export function documentedStatuses(path: string, method: string): string[] {
  return Object.keys(doc.paths[path][method.toLowerCase()].responses);
}

/**
 * Throws unless `body` matches the named schema of the contract's components (for example
 * `ValidationError`, `DetailedError`, `JSONAPIError`, `Dataset`). For responses whose status or
 * content type the operation does not document, but whose shape the contract still defines.
 */
export function expectSchema(schemaName: string, body: unknown): true {
  if (!doc.components?.schemas?.[schemaName]) throw new Error(`no schema ${schemaName} in the contract`);
  const validate = ajv.getSchema(`api#/components/schemas/${schemaName}`);
  if (!validate) throw new Error(`cannot compile schema ${schemaName}`);
  if (!validate(body)) {
    throw new Error(`body does not match ${schemaName}:\n${JSON.stringify(validate.errors, null, 2)}\nbody: ${JSON.stringify(body)}`);
  }
  return true;
}
