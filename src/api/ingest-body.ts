// Reading an ingest body (/1/events, /1/batch, Kinesis): decompressing and parsing it, and
// Honeycomb's whole-request errors when that fails.
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { DecodeError, decodeBody } from '../ingest/decode.js';
import type { ApiContext } from './context.js';

export const MALFORMED = 'Request body is malformed and cannot be read.';
export const EMPTY = 'Request body should not be empty.';
export const TOO_LARGE = 'Request body is too large.';

/** Honeycomb's whole-request error for a body that cannot be decoded. */
export function decodeFailure(kind: DecodeError['kind'], message: string): ApiError {
  if (kind === 'empty') return new ApiError(400, EMPTY);
  if (kind === 'too-large') return new ApiError(400, TOO_LARGE);
  if (kind === 'unsupported-encoding') return new ApiError(400, message);
  return new ApiError(400, MALFORMED, { detail: message });
}

/** Decompresses and parses an ingest body, mapping failures to Honeycomb's whole-request errors. */
export async function readIngestBody(ctx: ApiContext, request: FastifyRequest): Promise<unknown> {
  const body = request.body as Buffer | undefined;
  if (!body || body.length === 0) throw new ApiError(400, EMPTY);
  try {
    return await decodeBody(body, request.headers['content-encoding'], request.headers['content-type'], ctx.settings.ingestDecompressedLimit);
  } catch (err) {
    if (err instanceof DecodeError) throw decodeFailure(err.kind, err.message);
    throw err;
  }
}
