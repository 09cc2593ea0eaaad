// A real HTTP server standing in for webhook, Slack, MS Teams and PagerDuty endpoints: it records
// every request and answers from a per-path script.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}
export type Reply = { status?: number; body?: string; headers?: Record<string, string>; hang?: boolean };

export class HttpReceiver {
  readonly requests: Received[] = [];
  /** Per path: replies used in order; when used up, `fallback` (default 200 "ok"). */
  readonly script = new Map<string, Reply[]>();
  readonly fallback = new Map<string, (r: Received) => Reply>();
  private server!: Server;
  private hanging = new Set<ServerResponse>();
  url = '';

  async start() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r: Received = { method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        this.requests.push(r);
        const queue = this.script.get(r.path);
        const reply = queue?.length ? queue.shift()! : (this.fallback.get(r.path)?.(r) ?? {});
        if (reply.hang) {
          this.hanging.add(res);
          return;
        }
        res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? 'ok');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  at(path: string) {
    return this.requests.filter((r) => r.path === path);
  }
  async stop() {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
