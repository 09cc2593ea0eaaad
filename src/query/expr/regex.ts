// Compile-time check of regular expressions against RE2's syntax (the engine DuckDB's regexp_*
// functions use, which is also Go's syntax as Honeycomb documents it). A pattern is rejected when
// RE2 would reject it — backreferences, lookaround, atomic groups, possessive or doubled
// quantifiers, bad escapes, unbalanced brackets, repetition counts above 1000 — so the error is a
// clear 422 at create time instead of a failed query later. Returns the number of capturing groups.
//
// Deliberately conservative in two corners: `\p{Name}` accepts the general categories and the
// common scripts listed below (rarer script names are refused), and patterns that RE2 accepts but
// cannot compile within its memory budget are only caught when a query runs.
import { ExpressionError } from './errors.js';

const POSIX_CLASSES = new Set(['alnum', 'alpha', 'ascii', 'blank', 'cntrl', 'digit', 'graph', 'lower', 'print', 'punct', 'space', 'upper', 'word', 'xdigit']);
const UNICODE_CLASSES = new Set([
  'Any',
  ...['C', 'Cc', 'Cf', 'Co', 'Cs', 'L', 'Ll', 'Lm', 'Lo', 'Lt', 'Lu', 'M', 'Mc', 'Me', 'Mn', 'N', 'Nd', 'Nl', 'No'],
  ...['P', 'Pc', 'Pd', 'Pe', 'Pf', 'Pi', 'Po', 'Ps', 'S', 'Sc', 'Sk', 'Sm', 'So', 'Z', 'Zl', 'Zp', 'Zs'],
  ...['Arabic', 'Armenian', 'Bengali', 'Bopomofo', 'Braille', 'Cherokee', 'Common', 'Cyrillic', 'Devanagari', 'Ethiopic'],
  ...['Georgian', 'Greek', 'Gujarati', 'Gurmukhi', 'Han', 'Hangul', 'Hebrew', 'Hiragana', 'Inherited', 'Kannada'],
  ...['Katakana', 'Khmer', 'Lao', 'Latin', 'Malayalam', 'Mongolian', 'Myanmar', 'Ogham', 'Oriya', 'Runic', 'Sinhala'],
  ...['Syriac', 'Tamil', 'Telugu', 'Thaana', 'Thai', 'Tibetan', 'Yi'],
]);
const PERL_CLASS = new Set(['d', 'D', 's', 'S', 'w', 'W']);
const ASSERTIONS = new Set(['b', 'B', 'A', 'z']);
const CONTROL = new Set(['a', 'f', 't', 'n', 'r', 'v']);
const MAX_REPEAT = 1000;

type Item = 'atom' | 'none';

export function checkRegex(pattern: string, literalPos: number): { groups: number } {
  const fail = (offset: number, message: string): never => {
    throw new ExpressionError(literalPos, `invalid regular expression (RE2 syntax) at offset ${offset} of the pattern: ${message}`);
  };
  const cps = Array.from(pattern);
  let i = 0;
  let groups = 0;
  // For each open group: the index where it started (to apply a following {n} to its content).
  const openGroups: number[] = [];
  /** What the previous item was: something repeatable, or nothing (start, after "(" or "|"). */
  let last: Item = 'none';
  let lastWasRepeat = false;
  /** Largest repetition product reached inside each currently open group, innermost last. */
  const innerMax: number[] = [1];
  let lastAtomInner = 1;

  const readEscape = (inClass: boolean): { kind: 'char'; cp: number } | { kind: 'class' } | { kind: 'assert' } | { kind: 'quote' } => {
    const at = i;
    i++; // backslash
    if (i >= cps.length) fail(at, 'trailing backslash');
    const c = cps[i];
    i++;
    if (c >= '1' && c <= '9') {
      if (c <= '7' && i < cps.length && cps[i] >= '0' && cps[i] <= '7') {
        let v = parseInt(c, 8);
        for (let k = 0; k < 2 && i < cps.length && cps[i] >= '0' && cps[i] <= '7'; k++) v = v * 8 + parseInt(cps[i++], 8);
        return { kind: 'char', cp: v };
      }
      fail(at, `backreferences such as \\${c} are not supported`);
    }
    if (c === '0') {
      let v = 0;
      for (let k = 0; k < 2 && i < cps.length && cps[i] >= '0' && cps[i] <= '7'; k++) v = v * 8 + parseInt(cps[i++], 8);
      return { kind: 'char', cp: v };
    }
    if (c === 'x') {
      if (cps[i] === '{') {
        const close = cps.indexOf('}', i);
        const hex = close < 0 ? '' : cps.slice(i + 1, close).join('');
        if (!/^[0-9A-Fa-f]{1,8}$/.test(hex) || parseInt(hex, 16) > 0x10ffff) fail(at, 'invalid \\x{…} escape');
        i = close + 1;
        return { kind: 'char', cp: parseInt(hex, 16) };
      }
      const hex = cps.slice(i, i + 2).join('');
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) fail(at, '\\x needs two hexadecimal digits or {…}');
      i += 2;
      return { kind: 'char', cp: parseInt(hex, 16) };
    }
    if (c === 'p' || c === 'P') {
      let name: string;
      if (cps[i] === '{') {
        const close = cps.indexOf('}', i);
        if (close < 0) fail(at, 'unterminated \\p{…}');
        name = cps.slice(i + 1, close).join('');
        i = close + 1;
        if (name.startsWith('^')) name = name.slice(1);
      } else {
        if (i >= cps.length) fail(at, '\\p needs a class name');
        name = cps[i++];
      }
      if (!UNICODE_CLASSES.has(name)) fail(at, `unknown Unicode class \\${c}{${name}}`);
      return { kind: 'class' };
    }
    if (PERL_CLASS.has(c)) return { kind: 'class' };
    if (CONTROL.has(c)) return { kind: 'char', cp: 0 };
    if (!inClass && (ASSERTIONS.has(c))) return { kind: 'assert' };
    if (!inClass && c === 'C') return { kind: 'class' };
    if (!inClass && c === 'Q') return { kind: 'quote' };
    const cp = c.codePointAt(0)!;
    if (cp < 0x80 && !/[A-Za-z0-9]/.test(c)) return { kind: 'char', cp };
    if (c === 'k') fail(at, 'named backreferences (\\k) are not supported');
    return fail(at, `invalid escape sequence \\${c}`);
  };

  const readClass = () => {
    const at = i;
    i++; // [
    if (cps[i] === '^') i++;
    let first = true;
    while (true) {
      if (i >= cps.length) fail(at, 'missing "]" to close the character class');
      const c = cps[i];
      if (c === ']' && !first) {
        i++;
        return;
      }
      first = false;
      if (c === '[' && cps[i + 1] === ':') {
        const close = cps.indexOf(']', i);
        const body = close < 0 ? '' : cps.slice(i + 2, close).join('');
        const m = /^\^?([a-z]+):$/.exec(body);
        if (m) {
          if (!POSIX_CLASSES.has(m[1])) fail(i, `unknown POSIX class [:${m[1]}:]`);
          i = close + 1;
          continue;
        }
      }
      let cp: number | undefined;
      if (c === '\\') {
        const e = readEscape(true);
        cp = e.kind === 'char' ? e.cp : undefined;
      } else {
        cp = c.codePointAt(0)!;
        i++;
      }
      // A range: prev "-" next, unless "-" is last before "]".
      if (cp !== undefined && cps[i] === '-' && cps[i + 1] !== ']' && i + 1 < cps.length) {
        const dash = i;
        i++;
        let hi: number | undefined;
        if (cps[i] === '\\') {
          const e = readEscape(true);
          if (e.kind !== 'char') fail(dash, 'a character class range must end in a single character');
          hi = (e as { cp: number }).cp;
        } else {
          hi = cps[i].codePointAt(0)!;
          i++;
        }
        if (hi! < cp) fail(dash, 'character class range is out of order');
      }
    }
  };

  const applyRepeat = (at: number, min: number, max: number | undefined, text: string) => {
    if (last === 'none') fail(at, `nothing to repeat before ${text}`);
    if (lastWasRepeat) fail(at, `a quantifier cannot follow another quantifier (${text})`);
    if (min > MAX_REPEAT || (max !== undefined && max > MAX_REPEAT)) fail(at, `repetition count above ${MAX_REPEAT} in ${text}`);
    if (max !== undefined && max < min) fail(at, `invalid repetition ${text}: minimum above maximum`);
    const count = max ?? min;
    if (count > 1 || text.startsWith('{')) {
      const product = lastAtomInner * Math.max(count, 1);
      if (product > MAX_REPEAT) {
        fail(at, `nested repetition counts multiply to more than ${MAX_REPEAT}`);
      }
      lastAtomInner = product;
    }
    innerMax[innerMax.length - 1] = Math.max(innerMax[innerMax.length - 1], lastAtomInner);
    lastWasRepeat = true;
    // A lazy marker may follow.
    if (cps[i] === '?') i++;
  };

  while (i < cps.length) {
    const c = cps[i];
    const at = i;
    if (c === '(') {
      i++;
      if (cps[i] === '?') {
        i++;
        const rest = cps.slice(i, i + 3).join('');
        if (rest.startsWith('P<')) {
          const close = cps.indexOf('>', i);
          const name = close < 0 ? '' : cps.slice(i + 2, close).join('');
          if (!/^\w+$/.test(name)) fail(at, 'invalid named group (?P<name>…)');
          i = close + 1;
          groups++;
        } else if (rest.startsWith('=') || rest.startsWith('!') || rest.startsWith('<=') || rest.startsWith('<!')) {
          fail(at, 'lookahead and lookbehind assertions are not supported');
        } else if (rest.startsWith('>')) {
          fail(at, 'atomic groups (?>…) are not supported');
        } else if (rest.startsWith('<')) {
          fail(at, 'named groups must be written (?P<name>…)');
        } else {
          // Flags: (?flags) or (?flags:…), flags from imsU with one optional "-".
          let j = i;
          let seenDash = false;
          let any = false;
          while (j < cps.length && /[imsU-]/.test(cps[j])) {
            if (cps[j] === '-') {
              if (seenDash) fail(at, 'invalid flags group');
              seenDash = true;
            } else any = true;
            j++;
          }
          if (cps[j] === ')') {
            if (!any && !seenDash && j === i) fail(at, 'empty flags group (?)');
            if (seenDash && cps[j - 1] === '-') fail(at, 'invalid flags group');
            i = j + 1;
            last = 'none';
            lastWasRepeat = false;
            lastAtomInner = 1;
            continue;
          }
          if (cps[j] !== ':') fail(at, `unsupported group syntax (?${cps[i] ?? ''}`);
          if (seenDash && cps[j - 1] === '-') fail(at, 'invalid flags group');
          i = j + 1;
        }
      } else {
        groups++;
      }
      openGroups.push(at);
      innerMax.push(1);
      last = 'none';
      lastWasRepeat = false;
      continue;
    }
    if (c === ')') {
      if (openGroups.length === 0) fail(at, 'unbalanced ")"');
      openGroups.pop();
      lastAtomInner = innerMax.pop()!;
      innerMax[innerMax.length - 1] = Math.max(innerMax[innerMax.length - 1], lastAtomInner);
      i++;
      last = 'atom';
      lastWasRepeat = false;
      continue;
    }
    if (c === '|') {
      i++;
      last = 'none';
      lastWasRepeat = false;
      lastAtomInner = 1;
      continue;
    }
    if (c === '*' || c === '+' || c === '?') {
      i++;
      applyRepeat(at, c === '+' ? 1 : 0, c === '?' ? 1 : undefined, c);
      continue;
    }
    if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(cps.slice(i, i + 24).join(''));
      if (m) {
        i += m[0].length;
        const min = Number(m[1]);
        const max = m[2] === undefined ? min : m[3] === '' ? undefined : Number(m[3]);
        applyRepeat(at, min, max, m[0]);
        continue;
      }
      // Not a repetition: a literal "{".
    }
    if (c === '[') {
      readClass();
    } else if (c === '\\') {
      const e = readEscape(false);
      if (e.kind === 'quote') {
        // \Q…\E: literal text up to \E or the end.
        let j = i;
        while (j < cps.length && !(cps[j] === '\\' && cps[j + 1] === 'E')) j++;
        const empty = j === i;
        i = j < cps.length ? j + 2 : j;
        if (empty) continue; // \Q\E is nothing: the previous item stays what it was
      }
    } else {
      i++;
    }
    last = 'atom';
    lastWasRepeat = false;
    lastAtomInner = 1;
  }
  if (openGroups.length > 0) fail(openGroups[openGroups.length - 1], 'missing ")" to close the group');
  return { groups };
}
