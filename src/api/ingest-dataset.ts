// The dataset an ingest request writes to, shared by every way in (/1/batch, /1/events,
// Kinesis, OTLP over HTTP and gRPC): found by name, or created on first write when the key may
// create datasets, with the naming rules of domain/datasets.ts.
import { createOrGetDataset, datasetNameProblem, datasetSlug, nameFormProblem } from '../domain/datasets.js';
import type { AuthContext } from '../http/auth.js';
import { ApiError, datasetNotFound } from '../errors.js';
import type { Dataset } from '../stores/config/types.js';
import type { ApiContext } from './context.js';

/** The dataset a write goes to: `known` when it exists already; calling it creates it if not. */
export type DatasetTarget = (() => Promise<Dataset>) & { known?: Dataset };

/**
 * The dataset an ingest path names. A name no dataset can have (the naming rule,
 * datasetNameProblem) → 400 saying why, except that an existing dataset is found whatever its
 * length (see nameFormProblem); otherwise 404 unless it exists or the key may create datasets
 * (an ingest key with create_datasets, or a configuration key with it). The returned function
 * yields it, creating it on first write — called once the body has been read, so a malformed
 * request creates nothing.
 */
export async function ingestDataset(ctx: ApiContext, auth: AuthContext, name: string): Promise<DatasetTarget> {
  const env = auth.environment;
  if (!env) throw new Error('ingest without an environment-scoped key');
  const refuse = (problem: string) => new ApiError(400, `invalid dataset name ${quoted(name)}: ${problem}`);
  const form = nameFormProblem(name);
  if (form) throw refuse(form);
  const existing = await ctx.store.getDataset(env.id, datasetSlug(name));
  if (existing) return Object.assign(async () => existing, { known: existing });
  const problem = datasetNameProblem(name);
  if (problem) throw refuse(problem);
  if (!auth.key.permissions.create_datasets) throw datasetNotFound();
  return async () => (await createOrGetDataset(ctx.store, env, { name })).dataset;
}

/** The name as JSON text, cut after 64 characters: an OTLP `service.name` can be megabytes long. */
function quoted(name: string): string {
  const chars = [...name];
  return chars.length <= 64 ? JSON.stringify(name) : `${JSON.stringify(chars.slice(0, 64).join(''))}…`;
}
