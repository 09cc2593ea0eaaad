// Validates our responses against the schemas of Honeycomb's published OpenAPI document
// (test/fixtures/honeycomb-api.yaml, a verbatim copy of shared/reference/api.yaml): the
// external contract real clients are written against.
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

/** Pointer (for ajv) to the response schema of an operation, status and content type. */
function schemaPointer(path: string, method: string, status: number, contentType: string): string | undefined {
  const op = doc.paths?.[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`no operation ${method} ${path} in the contract`);
  const key = String(status) in op.responses ? String(status) : 'default';
  let response = op.responses[key];
  let pointer = `#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method.toLowerCase()}/responses/${key}`;
  if (!response) return undefined;
  if (response.$ref) {
    pointer = response.$ref;
    response = resolve(response.$ref);
  }
  const media = contentType.split(';')[0].trim();
  if (!response.content?.[media]?.schema) return undefined;
  return `api${pointer}/content/${media.replace(/~/g, '~0').replace(/\//g, '~1')}/schema`;
}

/**
 * Throws unless the response matches the contract's schema for that operation, status and
 * content type. Returns false (and checks nothing) when the contract gives no schema.
 */
export function expectContract(
  path: string,
  method: string,
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
): boolean {
  const contentType = String(res.headers['content-type'] ?? '');
  const pointer = schemaPointer(path, method, res.statusCode, contentType);
  if (!pointer) return false;
  const validate = ajv.getSchema(pointer);
  if (!validate) throw new Error(`cannot compile ${pointer}`);
  const body = JSON.parse(res.body);
  if (!validate(body)) {
    throw new Error(
      `${method} ${path} ${res.statusCode} (${contentType}) does not match the contract:\n` +
        JSON.stringify(validate.errors, null, 2) + `\nbody: ${res.body}`,
    );
  }
  return true;
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
