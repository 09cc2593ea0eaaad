// parseArrayInPieces (src/ingest/decode.ts), the element-by-element parse of large JSON batch
// bodies, against JSON.parse itself: the same value, or undefined (the caller then parses the
// whole body, which gives the error). The HTTP side is in ingest.test.ts and ingest-limits.test.ts.
import { describe, expect, it } from 'vitest';
import { parseArrayInPieces } from '../src/ingest/decode.js';
import { random as rng } from './random.js';

const ALPHABET = ['a', 'Z', '"', '\\', '{', '}', '[', ']', ',', ':', ' ', '\n', 'é', '🐝', '\u0000', '\u2028'];

function value(r: () => number, depth: number): unknown {
  const k = Math.floor(r() * (depth > 2 ? 4 : 7));
  if (k === 0) return Math.floor(r() * 2000) - 1000;
  if (k === 1) return r() < 0.5 ? true : null;
  if (k === 2 || k === 3) return Array.from({ length: Math.floor(r() * 8) }, () => ALPHABET[Math.floor(r() * ALPHABET.length)]).join('');
  if (k === 4) return r() * 1e6;
  if (k === 5) return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
  return object(r, depth + 1);
}

function object(r: () => number, depth: number): Record<string, unknown> {
  return Object.fromEntries(Array.from({ length: Math.floor(r() * 5) }, () => [String(value(r, 9)), value(r, depth)]));
}

describe('parseArrayInPieces', () => {
  it('reads arrays of objects and arrays exactly as JSON.parse does, whatever their strings hold', () => {
    const r = rng(7);
    for (let n = 0; n < 300; n++) {
      const items = Array.from({ length: Math.floor(r() * 12) }, () => (r() < 0.8 ? object(r, 0) : [value(r, 1), object(r, 1)]));
      const space = () => [' ', '\n', '\t', '\r', ''][Math.floor(r() * 5)];
      const text = `${space()}[${space()}${items.map((x) => JSON.stringify(x, null, r() < 0.3 ? 2 : undefined)).join(`${space()},${space()}`)}${space()}]${space()}`;
      expect(parseArrayInPieces(Buffer.from(text))).toEqual(JSON.parse(text));
    }
  });

  it('gives up (undefined) on whatever is not an array of objects or arrays, valid JSON or not', () => {
    for (const text of [
      '{"a":1}',
      '"text"',
      '[1, {"a":1}]',
      '[{"a":1}, "x"]',
      '[{"a":1},]',
      '[,{"a":1}]',
      '[{"a":1} {"b":2}]',
      '[{"a":1}] x',
      '[{"a":1}][{"b":2}]',
      '[{"a":"unterminated}]',
      '[{"a":1]}]',
      '[{"a":1}',
      '\uFEFF[{"a":1}]',
      '[{"a":tru}]',
      '',
      '   ',
    ]) {
      expect(parseArrayInPieces(Buffer.from(text)), text).toBeUndefined();
    }
  });

  it('keeps invalid UTF-8 as JSON.parse of the decoded body does (U+FFFD)', () => {
    const raw = Buffer.concat([Buffer.from('[{"s":"a'), Buffer.from([0xe2, 0x82]), Buffer.from('"},{"t":"'), Buffer.from([0xff]), Buffer.from('"}]')]);
    expect(parseArrayInPieces(raw)).toEqual(JSON.parse(raw.toString('utf8')));
  });
});
