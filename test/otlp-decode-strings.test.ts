// The OTLP protobuf decoder's string cache (src/ingest/otlp/decode-proto.ts keeps the last short
// string decoded per hash of its bytes): every string comes out exactly as its bytes say, across
// requests, past the cache's size, for strings of one length that share a slot, non-ASCII text
// and invalid UTF-8 (U+FFFD, as Buffer decodes it). The HTTP side is in otlp-traces.test.ts.
import { describe, expect, it } from 'vitest';
import { decodeTracesProto } from '../src/ingest/otlp/decode-proto.js';
import { span, toProtobuf, traces } from './otlp-helpers.js';
import { random as rng } from './random.js';

const ALPHABET = ['a', 'b', 'Z', '0', '.', '_', '/', ' ', 'é', 'ß', '漢', '🐝'];

/** Attribute values as the decoder gives them, span by span. */
function decodedValues(body: Buffer): unknown[][] {
  return decodeTracesProto(body).flatMap((r) => r.scopes.flatMap((s) => s.items.map((sp) => sp.attributes.map((a) => [a.key, a.value]))));
}

describe('the OTLP decoder’s string cache', () => {
  it('gives back every string exactly: 9,000 distinct (more than its 4,096 slots), repeated, of every length up to past its 40 bytes, across requests', () => {
    const r = rng(7);
    const distinct = new Set<string>();
    while (distinct.size < 9000) {
      const len = 1 + Math.floor(r() * 30);
      distinct.add(Array.from({ length: len }, () => ALPHABET[Math.floor(r() * ALPHABET.length)]).join(''));
    }
    const pool = [...distinct];
    // Each request: 500 spans of 6 attributes, keys and values drawn from the pool (so most repeat).
    for (let req = 0; req < 4; req++) {
      const expected: [string, string][][] = [];
      const spans = Array.from({ length: 500 }, (_, i) => {
        const pairs: [string, string][] = Array.from({ length: 6 }, (_, k) => [`k${k}.${pool[Math.floor(r() * 40)]}`, pool[Math.floor(r() * pool.length)]]);
        expected.push(pairs);
        return span(i, Object.fromEntries(pairs));
      });
      const got = decodedValues(toProtobuf('traces', traces('svc', spans)));
      expect(got).toEqual(expected);
    }
  });

  it('strings of one length with the same bytes but one, one after another, each come out as sent', () => {
    // 26 × 26 two-letter and many 12-byte strings differing in one byte: some share a slot.
    const values: string[] = [];
    for (let a = 0; a < 26; a++) for (let b = 0; b < 26; b++) values.push(String.fromCharCode(97 + a, 97 + b));
    for (let i = 0; i < 2000; i++) values.push(`host-${String(i).padStart(7, '0')}`);
    const spans = values.map((v, i) => span(i, { v, again: values[(i * 7919) % values.length] }));
    const got = decodedValues(toProtobuf('traces', traces('svc', spans)));
    expect(got).toEqual(values.map((v, i) => [['v', v], ['again', values[(i * 7919) % values.length]]]));
  });

  it('decodes invalid UTF-8 to U+FFFD, and a valid string of the same length after it as itself', () => {
    const marker = '\u0001\u0002\u0003';
    const body = toProtobuf('traces', traces('svc', [span(0, { bad: marker }), span(1, { bad: 'abc' }), span(2, { bad: marker })]));
    // Replace the marker's bytes (both places) with invalid UTF-8 of the same length.
    const invalid = Buffer.from([0xff, 0xc3, 0x28]);
    for (let at = body.indexOf(Buffer.from(marker)); at >= 0; at = body.indexOf(Buffer.from(marker), at + 1)) invalid.copy(body, at);
    const got = decodedValues(body);
    expect(got).toEqual([[['bad', invalid.toString('utf8')]], [['bad', 'abc']], [['bad', invalid.toString('utf8')]]]);
    expect(invalid.toString('utf8')).toBe('\ufffd\ufffd(');
  });
});
