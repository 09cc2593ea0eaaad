// Error bodies for the OpenAPI document, matching what errors.ts renders.
import { Type, type TSchema } from '@sinclair/typebox';

const Legacy = Type.Object({ error: Type.String() }, { description: 'Legacy error' });
const Problem = Type.Object(
  {
    error: Type.String(),
    status: Type.Number(),
    type: Type.String(),
    title: Type.String(),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String()),
    type_detail: Type.Optional(
      Type.Array(
        Type.Object({
          field: Type.String(),
          code: Type.Union(['invalid', 'missing', 'incorrect_type', 'already_exists'].map((c) => Type.Literal(c))),
          description: Type.String(),
        }),
      ),
    ),
  },
  { description: 'RFC 7807 problem detail' },
);
const JsonApi = Type.Object(
  {
    errors: Type.Array(
      Type.Object({
        id: Type.String(),
        status: Type.Optional(Type.String()),
        code: Type.String(),
        title: Type.Optional(Type.String()),
        detail: Type.Optional(Type.String()),
        source: Type.Optional(Type.Object({ pointer: Type.Optional(Type.String()), parameter: Type.Optional(Type.String()) })),
      }),
    ),
  },
  { description: 'JSON:API errors' },
);

const mediaOf = (schema: TSchema, media: string, description: string) => ({ description, content: { [media]: { schema } } });

/**
 * The error responses every authenticated route can give, in the dialect of its prefix; `legacy`
 * for routes that answer every error as `{error}` (ingest).
 */
export function errorResponses(url: string, legacyErrors = false): Record<string, unknown> {
  if (url.startsWith('/2/')) {
    const e = (d: string) => mediaOf(JsonApi, 'application/vnd.api+json', d);
    return {
      400: e('Malformed body'), 401: e('Unauthorized'), 403: e('Missing scope'), 404: e('Not found'),
      409: e('Conflict'), 413: e('Body too large'), 415: e('Wrong Content-Type'), 422: e('Validation failed'),
      429: e('Rate limited'),
    };
  }
  const legacy = (d: string) => mediaOf(Legacy, 'application/json', d);
  if (legacyErrors) {
    return { 400: legacy('Malformed or too large body'), 401: legacy('Unauthorized'), 403: legacy('Missing permission'), 404: legacy('Not found'), 429: legacy('Rate limited') };
  }
  const problem = (d: string) => mediaOf(Problem, 'application/problem+json', d);
  // A dataset the path names and that does not exist is the problem "Dataset not found" (errors.ts).
  const notFound = url.includes(':datasetSlug')
    ? {
        description: 'Not found: a missing dataset is the problem "Dataset not found"; other missing resources are legacy',
        content: { 'application/problem+json': { schema: Problem }, 'application/json': { schema: Legacy } },
      }
    : legacy('Not found');
  return {
    400: problem('Malformed body'), 401: legacy('Unauthorized'), 403: legacy('Missing permission'),
    404: notFound, 413: problem('Body too large'), 415: problem('Content-Encoding that cannot be decoded'),
    422: problem('Validation failed'), 429: problem('Rate limited'),
  };
}
