// The one place that writes values into ClickHouse SQL text. ClickHouse 18.16 has no
// server-side query parameters, so a statement's `$1`, `$2`, … placeholders are replaced here by
// literals; every value that reaches ClickHouse in SQL goes through clickhouseLiteral().
//
// Strings: single-quoted, with the backslash and the quote escaped and NUL written as \0 (a raw
// NUL would end some clients' buffers; ClickHouse reads \0 back as the byte 0). Other bytes pass
// as they are: inside a quoted literal only \ and ' mean anything. Text is sent as UTF-8; a lone
// UTF-16 surrogate (JavaScript strings can hold one) becomes U+FFFD on encoding, so the text
// sent is always valid UTF-8. Numbers: integers as exact digits (bigint too), other finite
// numbers in JavaScript's round-trip form (subnormals as an exact product); NaN and ±Infinity are refused (no literal of either
// is portable). Booleans are 1 and 0 (ClickHouse has no boolean type before 21.x).

/** A value as a ClickHouse literal. */
export function clickhouseLiteral(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  switch (typeof v) {
    case 'string':
      return `'${escapeString(v)}'`;
    case 'bigint':
      return v.toString();
    case 'number':
      if (!Number.isFinite(v)) throw new Error(`ClickHouse literal: not a finite number (${v})`);
      if (v === 0) return '0';
      // Subnormal numbers (below 2^-1022) do not parse in 18.16: written as an exact product of
      // two normal ones (scaling by a power of two loses no bits).
      if (Math.abs(v) < 2 ** -1022) return `(${String(v * 2 ** 600)} * ${String(2 ** -600)})`;
      // Integers beyond 2^53 print in exponent form, which ClickHouse reads as Float64.
      return String(v);
    case 'boolean':
      return v ? '1' : '0';
    default:
      throw new Error(`ClickHouse literal: unsupported value of type ${typeof v}`);
  }
}

function escapeString(s: string): string {
  // The replacements never produce a quote or backslash that is not itself escaped.
  return s.replace(/[\\'\0]/g, (c) => (c === '\\' ? '\\\\' : c === "'" ? "\\'" : '\\0'));
}

/** Quotes an identifier (backticks; a backtick or backslash inside is escaped). */
export function clickhouseIdent(name: string): string {
  return `\`${name.replace(/[\\`]/g, (c) => `\\${c}`)}\``;
}

/**
 * Replaces the `$n` placeholders of a statement by the literals of params[n - 1]. Placeholders
 * inside quoted text ('…', "…", `…`) are left alone; a placeholder without a value is an error.
 */
export function bindParams(sql: string, params: readonly unknown[]): string {
  if (params.length === 0 && !sql.includes('$')) return sql;
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i];
    if (ch === "'" || ch === '"' || ch === '`') {
      // Copy the quoted run whole (backslash escapes and doubled quotes both stay inside it).
      let j = i + 1;
      while (j < sql.length) {
        if (sql[j] === '\\') j += 2;
        else if (sql[j] === ch) {
          if (sql[j + 1] === ch) j += 2;
          else break;
        } else j++;
      }
      out += sql.slice(i, j + 1);
      i = j + 1;
    } else if (ch === '$' && /[0-9]/.test(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (j < sql.length && /[0-9]/.test(sql[j])) j++;
      const n = Number(sql.slice(i + 1, j));
      if (n < 1 || n > params.length) throw new Error(`ClickHouse statement: no value for $${n}`);
      out += clickhouseLiteral(params[n - 1]);
      i = j;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}
