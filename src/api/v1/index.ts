import type { App } from '../../http/app.js';
import type { ApiContext } from '../context.js';
import { registerAuth } from './auth.js';
import { registerDatasets } from './datasets.js';
import { registerDatasetDefinitions } from './dataset-definitions.js';

export async function registerV1(app: App, ctx: ApiContext): Promise<void> {
  registerAuth(app, ctx);
  registerDatasets(app, ctx);
  registerDatasetDefinitions(app, ctx);
}
