// A request answered (with an error) before its body was read: a 413 decided from
// Content-Length, or mid-way through the body. If the connection closed now, the bytes still
// arriving would make the kernel reset it, and a client still sending (Node's fetch) would see
// the reset instead of the answer. So the rest of the body is read and thrown away first, up to
// a bound: past it the answer goes out anyway and the connection closes.
import type { IncomingMessage } from 'node:http';

/** Most bytes, and longest time, spent reading a body nobody will use before answering. */
export const DISCARD_MAX_BYTES = 64 * 1024 * 1024;
export const DISCARD_MAX_MS = 10_000;

/** Reads and discards what is left of `raw`'s body; true once it has all arrived, false past the bounds. */
export function discardUnreadBody(raw: IncomingMessage, maxBytes = DISCARD_MAX_BYTES, maxMs = DISCARD_MAX_MS): Promise<boolean> {
  if (raw.complete || raw.readableEnded || raw.destroyed) return Promise.resolve(true);
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (all: boolean) => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('close', onClose);
      raw.off('error', onClose);
      resolve(all);
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > maxBytes) finish(false);
    };
    const onEnd = () => finish(true);
    const onClose = () => finish(raw.complete);
    const timer = setTimeout(() => finish(false), maxMs);
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.once('close', onClose);
    raw.once('error', onClose);
    raw.resume();
  });
}
