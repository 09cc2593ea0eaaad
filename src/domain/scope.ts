// Tenancy of stored objects: an object is seen only through the environment that owns it, and a
// dataset's object only under that dataset's path segment (null: the environment-wide set,
// `__all__`). Routes answer 404 otherwise (src/api/resource.ts), as if it did not exist.
import type { Dataset, Environment, StoredObject } from '../stores/config/types.js';

/**
 * Whether `obj` exists and belongs to `env` and, when `dataset` is given (null included), to that
 * dataset or the environment-wide set.
 */
export function belongsTo<T>(obj: StoredObject<T> | undefined, env: Environment, dataset?: Dataset | null): obj is StoredObject<T> {
  if (!obj || obj.environmentId !== env.id) return false;
  return dataset === undefined || obj.datasetId === (dataset?.id ?? null);
}
