// Ingest admission: how many ingest requests are in progress and how many bytes of their bodies
// (as sent) they hold, both bounded, so that a burst of large bodies cannot grow the process
// without limit (WAGGLE_INGEST_MAX_IN_FLIGHT alone lets 1,000 × 5 MB in). Checked when a request
// arrives, before its body is read: a declared Content-Length is reserved whole; a chunked body
// is counted as it arrives and refused mid-way if it passes the budget. A request is always
// admitted when no other is in progress, so one body of WAGGLE_INGEST_BODY_LIMIT gets through
// whatever the budget.
import { Transform, type Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

export class IngestAdmission {
  /** Ingest requests in progress. */
  requests = 0;
  /** Bytes of their bodies reserved or received. */
  bytes = 0;
  private readonly held = new WeakMap<FastifyRequest, { bytes: number }>();

  constructor(
    private readonly maxRequests: number,
    private readonly maxBytes: number,
  ) {}

  /** Admits the request or throws 503 with Retry-After; its place is given back when its answer is sent (or the connection drops). */
  admit(request: FastifyRequest, reply: FastifyReply): void {
    if (this.requests >= this.maxRequests) {
      throw new ApiError(503, `${this.maxRequests} ingest requests are in progress (WAGGLE_INGEST_MAX_IN_FLIGHT); retry later`, { retryAfter: 1 });
    }
    const declared = Number(request.headers['content-length']);
    const reserve = Number.isSafeInteger(declared) && declared > 0 ? declared : 0;
    if (this.requests > 0 && this.bytes + reserve > this.maxBytes) throw this.full();
    const held = { bytes: reserve };
    this.requests++;
    this.bytes += reserve;
    this.held.set(request, held);
    reply.raw.once('close', () => {
      this.requests--;
      this.bytes -= held.bytes;
    });
  }

  /** A chunked body of an admitted request (no Content-Length), counted as it arrives; undefined when nothing is to count. */
  countChunked(request: FastifyRequest, payload: Readable): Readable | undefined {
    const held = this.held.get(request);
    if (!held || request.headers['content-length'] !== undefined) return undefined;
    const admission = this;
    return payload.pipe(
      new Transform({
        transform(chunk: Buffer, _encoding, done) {
          held.bytes += chunk.length;
          admission.bytes += chunk.length;
          // Alone, a request may take the whole budget and more (its body limit still applies).
          if (admission.bytes > admission.maxBytes && admission.bytes > held.bytes) done(admission.full());
          else done(null, chunk);
        },
      }),
    );
  }

  private full(): ApiError {
    return new ApiError(503, `the ingest request bodies in progress would pass ${this.maxBytes} bytes (WAGGLE_INGEST_MAX_IN_FLIGHT_BYTES); retry later`, { retryAfter: 1 });
  }
}
