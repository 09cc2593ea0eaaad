// The error every layer throws: an ApiError carries an HTTP status and, for a 422, the fields at
// fault. This module depends on nothing; how an error is written on the wire (its dialect: legacy
// `{error}`, RFC 7807 problem, JSON:API, OTLP status) is src/http/errors.ts.

export type Dialect = 'legacy' | 'problem' | 'jsonapi';
export type DetailCode = 'invalid' | 'missing' | 'incorrect_type' | 'already_exists';

export interface TypeDetail {
  field: string;
  code: DetailCode;
  description: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: {
      typeDetail?: TypeDetail[];
      /** Forces a dialect on /1/ (ingest routes answer in the legacy one). */
      dialect?: Exclude<Dialect, 'jsonapi'>;
      /** Seconds until a retry may succeed; sent as `Retry-After` when set. */
      retryAfter?: number;
      /** Longer explanation for problem `detail` / JSON:API `detail`. */
      detail?: string;
    } = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const INVALID_INPUT = 'The provided input is invalid.';

/**
 * 422 built from one or more field problems. As Honeycomb's: `title` and `error` are both
 * "The provided input is invalid."; each field's problem is in `type_detail`, its
 * `description` the problem alone (`cannot be blank`: Honeycomb's Go client prints
 * `<code> <field> - <description>`), and `detail` lists them as `<field>: <problem>`.
 */
export function validationError(typeDetail: TypeDetail[]): ApiError {
  const detail = typeDetail.map((d) => `${d.field}: ${d.description}`).join('; ') || INVALID_INPUT;
  return new ApiError(422, INVALID_INPUT, { typeDetail, detail });
}

/** What Honeycomb says of a required field that is absent, null or blank (code `missing`). */
export const BLANK = 'cannot be blank';

export const invalidField = (field: string, description: string, code: DetailCode = 'invalid') =>
  validationError([{ field, code, description }]);

export const notFound = (what: string) => new ApiError(404, `${what} not found`);

/**
 * The 404 of a dataset that a path names and that does not exist (or that the key's environment
 * cannot see), on every route that looks one up (src/domain/datasets.ts). As Honeycomb's own
 * client test shows it: a problem (`not-found`, "The requested resource cannot be found.") whose
 * `error` is `Dataset not found`. Ingest routes answer it in their legacy `{error}` dialect.
 * Other 404s stay legacy `{error}`, the other form the contract's NotFound response documents.
 */
export const datasetNotFound = () => new ApiError(404, 'Dataset not found', { dialect: 'problem' });

/** The 413 of a body (as sent, or once decompressed) over the route's limit of `limit` bytes. */
export const payloadTooLarge = (limit: number) => new ApiError(413, `Body size is larger than maximum size of ${limit} bytes`);
