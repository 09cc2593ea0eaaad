// Tokens of the calculated-field language. Positions are 0-based offsets into the text
// (UTF-16 code units, as JavaScript counts them).
import { ExpressionError } from './errors.js';

export type Token =
  | { t: 'int'; pos: number; end: number; text: string }
  | { t: 'float'; pos: number; end: number; text: string }
  | { t: 'string'; pos: number; end: number; value: string; raw: boolean }
  | { t: 'column'; pos: number; end: number; name: string }
  | { t: 'ident'; pos: number; end: number; name: string }
  | { t: 'op'; pos: number; end: number; op: string }
  | { t: 'eof'; pos: number; end: number };

/** Characters of a bare `$name` (after the first): letters, digits and `_ . / : = + ? -`. */
const NAME_CHAR = /[\p{L}\p{N}_./:=+?-]/u;
/** The first character of a bare `$name`: not a digit nor an operator character. */
const NAME_START = /[\p{L}_./:?]/u;
const IDENT_START = /[A-Za-z]/;
const IDENT_CHAR = /[A-Za-z0-9_]/;
const DIGIT = /[0-9]/;
const TWO_CHAR_OPS = new Set(['!=', '<=', '>=']);
const ONE_CHAR_OPS = new Set(['+', '-', '*', '/', '%', '=', '<', '>', '!', '(', ')', ',']);

const describe = (ch: string) => (ch === '' ? 'end of expression' : JSON.stringify(ch));

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = text.length;
  while (true) {
    while (i < n && /\s/.test(text[i])) i++;
    if (i >= n) {
      tokens.push({ t: 'eof', pos: n, end: n });
      return tokens;
    }
    const start = i;
    const c = text[i];
    if (c === '$') {
      const next = text[i + 1] ?? '';
      if (next === '"') {
        const { value, end } = readQuoted(text, i + 1, 'column name');
        tokens.push({ t: 'column', pos: start, end, name: value });
        i = end;
      } else if (next === '`') {
        const { value, end } = readRaw(text, i + 1, 'column name');
        tokens.push({ t: 'column', pos: start, end, name: value });
        i = end;
      } else {
        let j = i + 1;
        const first = String.fromCodePoint(text.codePointAt(j) ?? 0);
        if (j >= n || !NAME_START.test(first)) {
          throw new ExpressionError(
            start,
            DIGIT.test(first)
              ? 'a column name starting with a digit must be quoted: $"name"'
              : `expected a column name after "$", found ${describe(text[j] ?? '')}`,
          );
        }
        while (j < n) {
          const ch = String.fromCodePoint(text.codePointAt(j)!);
          if (!NAME_CHAR.test(ch)) break;
          j += ch.length;
        }
        tokens.push({ t: 'column', pos: start, end: j, name: text.slice(i + 1, j) });
        i = j;
      }
      continue;
    }
    if (c === '"') {
      const { value, end } = readQuoted(text, i, 'string');
      tokens.push({ t: 'string', pos: start, end, value, raw: false });
      i = end;
      continue;
    }
    if (c === '`') {
      const { value, end } = readRaw(text, i, 'string');
      tokens.push({ t: 'string', pos: start, end, value, raw: true });
      i = end;
      continue;
    }
    if (DIGIT.test(c) || (c === '.' && DIGIT.test(text[i + 1] ?? ''))) {
      let j = i;
      let isFloat = false;
      while (j < n && DIGIT.test(text[j])) j++;
      if (text[j] === '.') {
        isFloat = true;
        j++;
        while (j < n && DIGIT.test(text[j])) j++;
      }
      if (text[j] === 'e' || text[j] === 'E') {
        let k = j + 1;
        if (text[k] === '+' || text[k] === '-') k++;
        if (!DIGIT.test(text[k] ?? '')) throw new ExpressionError(j, 'malformed number: expected digits after the exponent');
        while (k < n && DIGIT.test(text[k])) k++;
        isFloat = true;
        j = k;
      }
      if (j < n && (IDENT_CHAR.test(text[j]) || text[j] === '.')) {
        throw new ExpressionError(j, `malformed number: unexpected ${describe(text[j])}`);
      }
      tokens.push({ t: isFloat ? 'float' : 'int', pos: start, end: j, text: text.slice(i, j) });
      i = j;
      continue;
    }
    if (IDENT_START.test(c)) {
      let j = i + 1;
      while (j < n && IDENT_CHAR.test(text[j])) j++;
      tokens.push({ t: 'ident', pos: start, end: j, name: text.slice(i, j) });
      i = j;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (TWO_CHAR_OPS.has(two)) {
      tokens.push({ t: 'op', pos: start, end: i + 2, op: two });
      i += 2;
      continue;
    }
    if (ONE_CHAR_OPS.has(c)) {
      tokens.push({ t: 'op', pos: start, end: i + 1, op: c });
      i += 1;
      continue;
    }
    throw new ExpressionError(start, `unexpected character ${describe(String.fromCodePoint(text.codePointAt(i)!))}`);
  }
}

/** A back-quoted raw string starting at `start` (the backquote): no escapes, may span lines. */
function readRaw(text: string, start: number, what: string): { value: string; end: number } {
  const close = text.indexOf('`', start + 1);
  if (close < 0) throw new ExpressionError(start, `unterminated raw ${what}: missing closing \``);
  return { value: text.slice(start + 1, close), end: close + 1 };
}

const SIMPLE_ESCAPES: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92, '"': 34 };
const HEX = /^[0-9A-Fa-f]+$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A double-quoted string starting at `start` (the quote), with Go's escapes: \a \b \f \n \r \t
 * \v \\ \" , \xHH and \ooo (one byte each), \uXXXX and \UXXXXXXXX (a code point). The bytes must
 * form valid UTF-8. A raw newline inside is an error.
 */
function readQuoted(text: string, start: number, what: string): { value: string; end: number } {
  const bytes: number[] = [];
  const pushCodePoint = (cp: number) => {
    for (const b of Buffer.from(String.fromCodePoint(cp), 'utf8')) bytes.push(b);
  };
  let i = start + 1;
  while (true) {
    if (i >= text.length) throw new ExpressionError(start, `unterminated ${what}: missing closing "`);
    const c = text[i];
    if (c === '"') break;
    if (c === '\n') throw new ExpressionError(i, `newline in ${what} (write \\n)`);
    if (c !== '\\') {
      const cp = text.codePointAt(i)!;
      if (cp >= 0xd800 && cp <= 0xdfff) throw new ExpressionError(i, `invalid character in ${what}`);
      pushCodePoint(cp);
      i += cp > 0xffff ? 2 : 1;
      continue;
    }
    const e = text[i + 1] ?? '';
    if (e in SIMPLE_ESCAPES) {
      bytes.push(SIMPLE_ESCAPES[e]);
      i += 2;
    } else if (e === 'x') {
      const h = text.slice(i + 2, i + 4);
      if (h.length < 2 || !HEX.test(h)) throw new ExpressionError(i, 'invalid escape: \\x needs two hexadecimal digits');
      bytes.push(parseInt(h, 16));
      i += 4;
    } else if (e === 'u' || e === 'U') {
      const len = e === 'u' ? 4 : 8;
      const h = text.slice(i + 2, i + 2 + len);
      if (h.length < len || !HEX.test(h)) throw new ExpressionError(i, `invalid escape: \\${e} needs ${len} hexadecimal digits`);
      const cp = parseInt(h, 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) throw new ExpressionError(i, `invalid escape: \\${e}${h} is not a valid Unicode code point`);
      pushCodePoint(cp);
      i += 2 + len;
    } else if (/[0-7]/.test(e)) {
      const o = text.slice(i + 1, i + 4);
      if (!/^[0-7]{3}$/.test(o)) throw new ExpressionError(i, 'invalid escape: an octal escape needs three octal digits (\\000 to \\377)');
      const v = parseInt(o, 8);
      if (v > 255) throw new ExpressionError(i, `invalid escape: octal value \\${o} is above \\377`);
      bytes.push(v);
      i += 4;
    } else {
      throw new ExpressionError(i, e === '' ? `unterminated ${what}` : `unknown escape sequence \\${e}`);
    }
  }
  let value: string;
  try {
    value = utf8.decode(Uint8Array.from(bytes));
  } catch {
    throw new ExpressionError(start, `${what} is not valid UTF-8 (check its \\x and octal escapes)`);
  }
  return { value, end: i + 1 };
}
