// POST /1/derived_columns/<dataset>/validate (a Waggle extension; the web UI's live check of a
// calculated field as it is typed): the same checks a create or update makes — parse, types,
// cycles through other fields, in the dataset's scope or, for `__all__`, the environment's and
// every dataset's — without storing anything. 200 with the field's value type, or the 422 a
// create would answer (field `expression`, "at position N: problem"). `id`: the field an edit
// replaces (its own alias may then be reused and it is not its own cycle).
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envOf } from '../../http/auth.js';
import { calculatedFieldScope, checkExpression } from '../../domain/calculated-fields.js';
import type { ApiContext, App } from '../context.js';
import { SlugParams } from './schemas.js';

const CheckBody = Type.Object({
  alias: Type.String({ minLength: 1, maxLength: 255 }),
  expression: Type.String({ maxLength: 4095 }),
  id: Type.Optional(Type.String({ maxLength: 64, description: 'The calculated field an edit replaces.' })),
});

export function registerCalculatedFieldCheck(app: App, { store }: ApiContext): void {
  app.post(
    '/1/derived_columns/:datasetSlug/validate',
    {
      schema: {
        tags: ['Calculated Fields'],
        security: [{ configuration_key: [] }],
        params: SlugParams,
        body: CheckBody,
        description:
          'Waggle extension: checks a calculated field as a create or update would, storing nothing. 200 with its value type, or the 422 a create would answer.',
        response: { 200: Type.Object({ type: Type.String({ description: 'string, integer, float, boolean or null' }) }) },
      },
      // A path's 404 (its dataset) comes before a body's 422.
      preValidation: async (request: FastifyRequest) => void (await calculatedFieldScope(store, envOf(request), (request.params as { datasetSlug: string }).datasetSlug)),
      config: { auth: { kind: 'team', permission: 'manage_columns' } },
    },
    async (request) => {
      const scope = await calculatedFieldScope(store, envOf(request), request.params.datasetSlug);
      const { alias, expression, id } = request.body;
      return { type: await checkExpression(store, scope, { alias, expression }, id) };
    },
  );
}
