// Paths whose percent-encoding cannot be decoded (`%E0%A4%A`: a cut escape; `%ED%A0%80`: bytes
// that are not UTF-8). The router would refuse them before any route runs, with a body of its
// own; instead the undecodable parts are replaced by U+FFFD (percent-encoded), as a UTF-8
// decoder reads bad bytes, and the request reaches its route, which answers in its own dialect:
// a dataset name holding U+FFFD is refused by the naming rule (src/domain/datasets.ts), any
// other id simply names nothing (404).

const decoder = new TextDecoder('utf-8'); // not fatal: bad bytes become U+FFFD
const REPLACEMENT = encodeURIComponent('\ufffd');

/** `url` with its path's undecodable percent-encoding replaced; `url` itself when it decodes. */
export function repairPercentEncoding(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (!path.includes('%')) return url;
  try {
    decodeURI(path);
    return url;
  } catch {
    // A run of escapes is decoded as one byte sequence; a `%` that starts no escape is itself bad.
    const fixed = path.replace(/(?:%[0-9A-Fa-f]{2})+|%/g, (run) =>
      run === '%' ? REPLACEMENT : encodeURIComponent(decoder.decode(Buffer.from(run.replace(/%/g, ''), 'hex'))),
    );
    return q === -1 ? fixed : fixed + url.slice(q);
  }
}
