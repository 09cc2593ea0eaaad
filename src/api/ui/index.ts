// The web UI's server side: its sign-in/sign-out routes and the page and assets themselves.
// Everything else the UI reads and runs is the public API (with the session cookie, auth.ts).
import type { ApiContext, App } from '../context.js';
import { registerSession } from './session.js';
import { registerStatic } from './static.js';

export async function registerUi(app: App, ctx: ApiContext): Promise<void> {
  registerSession(app, ctx);
  await registerStatic(app);
}
