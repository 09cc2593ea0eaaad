// `waggle serve` as a process of its own, for the benches that query it over HTTP (query.mjs,
// wide.mjs): started on a data directory with the Node flags of `waggle`, rate limits off, and
// waited for until it answers; and a small JSON client of its API.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './ingest.mjs';
import { serverNodeEnv, serverNodeFlags } from './server-node.mjs';
import { sleep } from './stats.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * `waggle serve` on dataDir, answering; `stop()` ends it with SIGTERM (checkpoint and close) and
 * resolves with how it exited. `nodeArgs` go after `waggle`'s Node flags, `env` over the rest.
 */
export async function serveWaggle(dataDir, { nodeArgs = [], env = {}, waitMs = 60_000 } = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, [...serverNodeFlags(), ...nodeArgs, 'dist/main.js', 'serve', '--port', String(port), '--data-dir', dataDir], {
    cwd: ROOT,
    env: {
      ...serverNodeEnv(),
      ...process.env,
      WAGGLE_LOG_LEVEL: 'warn',
      WAGGLE_RATE_LIMIT: 'off',
      WAGGLE_INGEST_RATE_LIMIT: 'off',
      WAGGLE_QUERY_RESULT_RATE_LIMIT: 'off',
      WAGGLE_QUERY_TIMEOUT_MS: '120000',
      WAGGLE_OTLP_GRPC_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  const until = Date.now() + waitMs;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`waggle serve exited (${child.exitCode}) before it answered`);
      try {
        const r = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) });
        if (r.ok) break;
      } catch {
        if (Date.now() > until) throw new Error('waggle serve did not come up');
        await sleep(50);
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, child, stop };
}

/** A JSON request to the server with a team key (undefined for an empty answer); throws on a status of 300 or more. */
export async function api(port, key, method, path, body) {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { 'x-honeycomb-team': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : undefined;
}
