// An attribute bucket on DuckDB (placement.ts): one VARCHAR column per bucket, each event's
// attributes of that bucket as one text of entries `\x01<key>=<value>` (the key the field's
// number in decimal, the value its text). Reading an attribute finds `\x01<key>=` and takes what
// follows up to the next `\x01`; an event without it (or without any) reads NULL.
//
// Why text and not MAP(INTEGER, VARCHAR): DuckDB writes a MAP as a list of (key, value) rows,
// each appended, logged, checkpointed and compressed on its own, so a wide event's attributes
// cost DuckDB two to three times what the same values in typed columns do; one text per bucket
// costs about what one column value does, and a lookup reads it as fast as a MAP's subscript
// (docs/wide-events.md has the figures). A MAP's UPDATE also rewrites whole rows, a VARCHAR's
// is in place.
//
// A value's \x01 and \x02 bytes are escaped (\x01 as \x02 'a', \x02 as \x02 'b'), so that
// `\x01` only ever starts an entry; reads undo it.
import { attributeBucket } from './engine.js';
import { attributeText, type Attribute } from './placement.js';

/**
 * A bucket column's SQL definition: VARCHAR, always compressed with FSST. Left to choose, DuckDB's
 * checkpoint tries every string compression on every segment, and its dictionary's trial (which a
 * bucket's texts, all different, never take) was 29 % of a wide-ingest server's checkpoint time
 * (`perf`, bench/wide.mjs); FSST is what it chose for them, so the file is the same size.
 */
export const BUCKET_COLUMN_SQL = 'VARCHAR USING COMPRESSION fsst';

/** The byte that starts an entry, and the escape byte. */
export const ENTRY = 0x01;
export const ESCAPE = 0x02;
/** What follows ESCAPE for an escaped ENTRY, and for an escaped ESCAPE. */
export const ESCAPED_ENTRY = 0x61; // 'a'
export const ESCAPED_ESCAPE = 0x62; // 'b'

/** The bytes an entry starts with, before its value: `\x01<key>=`. */
export function entryHead(key: number): Uint8Array {
  const digits = String(Math.trunc(key));
  const out = new Uint8Array(digits.length + 2);
  out[0] = ENTRY;
  for (let i = 0; i < digits.length; i++) out[i + 1] = digits.charCodeAt(i);
  out[digits.length + 1] = 0x3d; // '='
  return out;
}

/** Bytes of a number's text at most (String of a double: "-1.2345678901234567e-308"). */
export const NUMBER_TEXT_BYTES = 25;

/**
 * Writes a number's (or boolean's) text as an attribute keeps it (attributeText) at `at`;
 * answers the byte after it. Safe integers, most of a wide event's numbers, are written digit by
 * digit (the same text as String's, without making a string).
 */
export function putNumberText(buf: Uint8Array, at: number, kind: 'integer' | 'float' | 'boolean', x: number): number {
  if (kind === 'integer' && Number.isSafeInteger(x)) {
    let v = x;
    if (v < 0) {
      buf[at++] = 0x2d; // '-'
      v = -v;
    }
    let digits = 1;
    for (let p = 10; p <= v; p *= 10) digits++;
    for (let i = at + digits - 1; i >= at; i--) {
      const q = Math.floor(v / 10);
      buf[i] = 0x30 + (v - q * 10);
      v = q;
    }
    return at + digits;
  }
  const text = attributeText(kind, x);
  for (let i = 0; i < text.length; i++) buf[at++] = text.charCodeAt(i);
  return at;
}

/** The bucket column and the SQL of its entry head for a key. */
function parts({ bucket, key }: Attribute): { b: string; head: string } {
  return { b: `"${attributeBucket(bucket)}"`, head: `(chr(1) || '${Math.trunc(key)}=')` };
}

/** SQL: whether the event has the attribute. */
export function hasAttributeSql(a: Attribute): string {
  const { b, head } = parts(a);
  return `contains(${b}, ${head})`;
}

/** SQL of the attribute's value as text (unescaped), NULL where the event has none. */
export function attributeTextSql(a: Attribute): string {
  const { b, head } = parts(a);
  const raw = `split_part(split_part(${b}, ${head}, 2), chr(1), 1)`;
  return `CASE WHEN contains(${b}, ${head}) THEN ${unescapeSql(raw)} END`;
}

/** SQL of the bucket without the attribute: NULL once nothing is left (as for an event written without any). */
export function withoutAttributeSql(a: Attribute): string {
  const { b } = parts(a);
  return `nullif(regexp_replace(${b}, '\\x01${Math.trunc(a.key)}=[^\\x01]*', ''), '')`;
}

/** SQL of an entry for a value given as text SQL (NULL when the value is NULL). */
export function entrySql(key: number, text: string): string {
  return entryOf(`'${Math.trunc(key)}'`, text);
}

/** SQL of an entry from SQL of its key's text and its value's text. */
function entryOf(keyText: string, text: string): string {
  return `(chr(1) || ${keyText} || '=' || ${escapeSql(text)})`;
}

/** SQL of a text with its \x02 and \x01 bytes escaped. */
function escapeSql(text: string): string {
  return `replace(replace(${text}, chr(2), chr(2) || 'b'), chr(1), chr(2) || 'a')`;
}

/** SQL of an escaped text undone (escaped \x01 first: an escape's second byte is never \x02). */
function unescapeSql(text: string): string {
  return `replace(replace(${text}, chr(2) || 'a', chr(1)), chr(2) || 'b', chr(2))`;
}

/**
 * SQL of a bucket of the earlier layout, a MAP(INTEGER, VARCHAR) column, as text: its entries in
 * order, NULL for an empty or NULL map.
 */
export function mapToTextSql(column: string): string {
  const entry = entryOf('CAST(e.key AS VARCHAR)', 'e.value');
  return `nullif(array_to_string(list_transform(coalesce(map_entries(${column}), []), lambda e: ${entry}), ''), '')`;
}
