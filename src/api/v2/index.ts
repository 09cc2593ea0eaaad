import type { ApiContext, App } from '../context.js';
import { JSONAPI } from './jsonapi.js';
import { registerAuthV2 } from './auth.js';
import { registerEnvironments } from './environments.js';
import { registerApiKeys } from './api-keys.js';

export async function registerV2(app: App, ctx: ApiContext): Promise<void> {
  // Every /2/ body is JSON:API, successes included; bodies are capped lower than on /1/.
  app.addHook('onRoute', (route) => {
    route.bodyLimit = ctx.settings.managementBodyLimit;
    // For the OpenAPI document: /2/ bodies are JSON:API both ways.
    if (route.schema) route.schema = { ...route.schema, consumes: [JSONAPI], produces: [JSONAPI] };
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode < 400 && payload !== undefined && payload !== '') reply.type(JSONAPI);
    return payload;
  });
  registerAuthV2(app, ctx);
  registerEnvironments(app, ctx);
  registerApiKeys(app, ctx);
}
