// /1/datasets: list, create (201 new / 200 existing; delete protected unless the body says
// otherwise), get, PUT (fields omitted keep their values), DELETE (202; 409 while protected).
import { Type } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { createOrGetDataset, datasetResponse, deleteDataset, findDataset } from '../../domain/datasets.js';
import type { ApiContext, App } from '../context.js';
import type { Dataset as DatasetRecord } from '../../stores/config/types.js';
import { Dataset, DatasetCreationPayload, DatasetUpdatePayload, SlugParams } from './schemas.js';

const tags = ['Datasets'];
const security = [{ configuration_key: [] }];

export function registerDatasets(app: App, { store, writer }: ApiContext): void {
  /** `regular_columns_count` is the number of columns, null before the first one. */
  const respond = async (ds: DatasetRecord) => datasetResponse(ds, (await store.listColumns(ds.id)).length || null);

  app.get(
    '/1/datasets',
    { schema: { tags, security, response: { 200: Type.Array(Dataset) } }, config: { auth: { kind: 'team' } } },
    async (request) => Promise.all((await store.listDatasets(envOf(request).id)).map((ds) => respond(ds))),
  );

  app.post(
    '/1/datasets',
    {
      schema: { tags, security, body: DatasetCreationPayload, response: { 200: Dataset, 201: Dataset } },
      config: { auth: { kind: 'team', permission: 'create_datasets' } },
    },
    async (request, reply) => {
      const { dataset, created } = await createOrGetDataset(store, envOf(request), request.body);
      // Not sendCreated: an existing dataset of that name answers 200 (as Honeycomb's), a new one 201 without Location.
      return reply.code(created ? 201 : 200).send(await respond(dataset));
    },
  );

  app.get(
    '/1/datasets/:datasetSlug',
    { schema: { tags, security, params: SlugParams, response: { 200: Dataset } }, config: { auth: { kind: 'team' } } },
    async (request) => respond(await findDataset(store, envOf(request), request.params.datasetSlug)),
  );

  app.put(
    '/1/datasets/:datasetSlug',
    {
      schema: { tags, security, params: SlugParams, body: DatasetUpdatePayload, response: { 200: Dataset } },
      config: { auth: { kind: 'team', permission: 'create_datasets' } },
    },
    async (request) => {
      const env = envOf(request);
      const ds = await findDataset(store, env, request.params.datasetSlug);
      // Omitted fields keep their values: the Terraform provider sends only what changed (and
      // `name`, `slug` and zero timestamps, which are read-only and ignored).
      const { description, expand_json_depth, settings } = request.body;
      const updated = await store.updateDataset(env.id, ds.slug, {
        description,
        expandJsonDepth: expand_json_depth,
        deleteProtected: settings?.delete_protected,
      });
      return respond(updated!);
    },
  );

  app.delete(
    '/1/datasets/:datasetSlug',
    {
      schema: { tags, security, params: SlugParams, description: 'Answers 202 with no body; the events go with the dataset.' },
      config: { auth: { kind: 'team', permission: 'create_datasets' } },
    },
    async (request, reply) => {
      await deleteDataset(store, envOf(request), request.params.datasetSlug, (id) => writer.dropDataset(id));
      return reply.code(202).send();
    },
  );
}
