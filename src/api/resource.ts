// What the resource routes do the same way: find an object the caller may see (else a 404, as if
// it did not exist), turn a unique-key clash into the resource's 409, answer 201 and 204.
import type { FastifyReply } from 'fastify';
import { notFound, type ApiError } from '../errors.js';
import { belongsTo } from '../domain/scope.js';
import { UniqueViolation, type ConfigStore, type Dataset, type Environment, type StoredObject } from '../stores/config/types.js';

/**
 * `obj` when it belongs to `env` (and, when `dataset` is given, to that dataset or, for null, to
 * the environment-wide set; src/domain/scope.ts); else 404 `<what> not found`.
 */
export function owned<T>(obj: StoredObject<T> | undefined, what: string, env: Environment, dataset?: Dataset | null): StoredObject<T> {
  if (!belongsTo(obj, env, dataset)) throw notFound(what);
  return obj;
}

/** The object `id` of `kind`, owned as `owned` says; 404 `<what> not found` otherwise. */
export async function findOwned<T>(
  store: ConfigStore,
  kind: string,
  id: string,
  what: string,
  env: Environment,
  dataset?: Dataset | null,
): Promise<StoredObject<T>> {
  return owned(await store.getObject<T>(kind, id), what, env, dataset);
}

/** The write's result; a unique-key clash (UniqueViolation) becomes the resource's 409, `conflict()`. */
export async function orConflict<T>(write: Promise<T>, conflict: () => ApiError): Promise<T> {
  try {
    return await write;
  } catch (err) {
    if (err instanceof UniqueViolation) throw conflict();
    throw err;
  }
}

/** 201 with the created resource, and its `Location` when given. */
export function sendCreated(reply: FastifyReply, body: unknown, location?: string): FastifyReply {
  if (location !== undefined) reply.header('location', location);
  return reply.code(201).send(body);
}

/** 204 with no body. */
export const sendDeleted = (reply: FastifyReply): FastifyReply => reply.code(204).send(null);
