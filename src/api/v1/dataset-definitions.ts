// /1/dataset_definitions/{dataset}: created with the dataset; PATCH changes only the keys sent
// (definitionsChange, src/domain/datasets.ts). A key sent as null or with an empty name reverts to
// its default mapping. A key that names a calculated field the dataset sees (its own or an
// environment-wide one) reports `column_type: "derived_column"`, any other `column`; a
// `column_type` sent is ignored.
import { Type } from '@sinclair/typebox';
import { envOf } from '../../http/auth.js';
import { definitionsChange, definitionsResponse, findDataset } from '../../domain/datasets.js';
import { DEFINITION_KEYS } from '../../query/definitions.js';
import { listCalculatedFields } from '../../domain/calculated-fields.js';
import type { Dataset, Environment } from '../../stores/config/types.js';
import type { ApiContext, App } from '../context.js';
import { DatasetDefinition, SlugParams } from './schemas.js';

const DatasetDefinitions = Type.Object(
  Object.fromEntries(DEFINITION_KEYS.map((k) => [k, Type.Optional(DatasetDefinition)])),
  { additionalProperties: false },
);
const tags = ['Dataset Definitions'];
const security = [{ configuration_key: [] }];

export function registerDatasetDefinitions(app: App, { store }: ApiContext): void {
  const respond = async (env: Environment, ds: Dataset) =>
    definitionsResponse(ds, new Set((await listCalculatedFields(store, env, ds.id)).map((f) => f.name)));

  app.get(
    '/1/dataset_definitions/:datasetSlug',
    { schema: { tags, security, params: SlugParams, response: { 200: DatasetDefinitions } }, config: { auth: { kind: 'team' } } },
    async (request) => {
      const env = envOf(request);
      return respond(env, await findDataset(store, env, request.params.datasetSlug));
    },
  );

  app.patch(
    '/1/dataset_definitions/:datasetSlug',
    {
      schema: { tags, security, params: SlugParams, body: DatasetDefinitions, response: { 200: DatasetDefinitions } },
      config: { auth: { kind: 'team', permission: 'create_datasets' } },
    },
    async (request) => {
      const env = envOf(request);
      const ds = await findDataset(store, env, request.params.datasetSlug);
      const definitions = definitionsChange(ds, request.body as Record<string, { name: string } | null | undefined>);
      const updated = await store.updateDataset(env.id, ds.slug, { definitions });
      return respond(env, updated!);
    },
  );
}
