// JSON:API plumbing shared by the /2/ routes: the team in the path, cursor pagination, and
// request-body checks that the schemas cannot express.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { ApiError, invalidField, notFound } from '../../errors.js';
import type { Team } from '../../stores/config/types.js';

export const JSONAPI = 'application/vnd.api+json';

export const TeamParams = Type.Object({ teamSlug: Type.String() });
export const TeamIdParams = Type.Object({ teamSlug: Type.String(), ID: Type.String() });
export const PageQuery = Type.Object({
  'page[size]': Type.Optional(Type.String()),
  'page[after]': Type.Optional(Type.String()),
});
export const PaginationLinks = Type.Object({ next: Type.Union([Type.String(), Type.Null()]) });

/** The management key's own team; any other slug is answered as not found. */
export function teamOf(request: FastifyRequest, teamSlug: string): Team {
  const team = request.auth!.team;
  if (team.slug !== teamSlug) throw notFound('team');
  return team;
}

export interface PageRequest {
  size: number;
  after?: string;
}

/** Reads `page[size]` (1..100, default 20) and `page[after]` (an opaque cursor). */
export function readPage(query: { 'page[size]'?: string; 'page[after]'?: string }): PageRequest {
  const rawSize = query['page[size]'];
  const size = rawSize === undefined || rawSize === '' ? 20 : /^\d{1,3}$/.test(rawSize) ? Number(rawSize) : NaN;
  if (!(size >= 1 && size <= 100)) {
    throw invalidField('page[size]', 'must be an integer from 1 to 100');
  }
  const rawAfter = query['page[after]'];
  if (rawAfter === undefined || rawAfter === '') return { size };
  const after = Buffer.from(rawAfter, 'base64url').toString('utf8');
  if (!/^[a-z]{5}_[a-z0-9]{26}$/.test(after)) throw invalidField('page[after]', 'is not a cursor this server issued');
  return { size, after };
}

/**
 * Turns one over-fetched page (size + 1 rows, ordered by id) into the rows to send and the
 * `links.next` path, null on the last page.
 */
export function pageOut<T extends { id: string }>(rows: T[], page: PageRequest, basePath: string, extraQuery = '') {
  const more = rows.length > page.size;
  const items = more ? rows.slice(0, page.size) : rows;
  const cursor = more ? Buffer.from(items[items.length - 1].id).toString('base64url') : null;
  const next = cursor ? `${basePath}?${extraQuery}page[after]=${cursor}&page[size]=${page.size}` : null;
  return { items, links: { next } };
}

/** `data.id` of an update body must name the resource in the path. */
export function checkBodyId(bodyId: string, pathId: string): void {
  if (bodyId !== pathId) throw new ApiError(409, `data.id ${bodyId} does not match the id in the path`);
}
