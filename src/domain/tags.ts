// Tags: the `{key, value}` labels boards, SLOs and triggers carry. One set of rules for all of
// them (SPEC "Tag", Honeycomb's OpenAPI `Tag` schema, the Terraform provider's validators):
//   key    required string, 1..32 lowercase ASCII letters (`^[a-z]{1,32}$`)
//   value  required string, 1..128 characters, a lowercase letter first, then lowercase letters,
//          digits, `/` and `-` (`^[a-z][a-z0-9/-]*$`)
//   at most 10 tags per resource, checked before any tag is read (one problem for a long list).
//
// Decisions:
// - Omitted or `null` tags mean "no tags" (the Terraform client sends `"tags": null`), and a
//   resource without tags answers without the `tags` member, as Honeycomb does (not `[]`).
// - Two tags with the same key are refused (422 on the second one): every client we know models
//   tags as a map from key to value (Terraform's `tags = { team = "blue" }`), so a second value
//   for a key could not be read back.
// - Unknown fields inside a tag are ignored and not echoed; tags keep the client's order.
// - Lengths count Unicode code points (JSON Schema's maxLength), though only ASCII can pass.
import { validationError, type TypeDetail } from '../errors.js';
import { BLANK, jsonType, Problems, textLength as length } from '../validation.js';

export interface Tag {
  key: string;
  value: string;
}

export const MAX_TAGS = 10;
export const TAG_KEY_MAX_LENGTH = 32;
export const TAG_VALUE_MAX_LENGTH = 128;
export const TAG_KEY_PATTERN = /^[a-z]+$/;
export const TAG_VALUE_PATTERN = /^[a-z][a-z0-9/-]*$/;


/**
 * Checks a `tags` field as sent. Returns the tags to store (`{key, value}` only, in the client's
 * order) and the problems found, each naming its field as `<field>.<i>.key` / `<field>.<i>.value`.
 */
export function checkTags(input: unknown, field = 'tags', max = MAX_TAGS): { tags: Tag[]; problems: TypeDetail[] } {
  const problems: TypeDetail[] = [];
  const add = (f: string, code: TypeDetail['code'], message: string): false => {
    problems.push({ field: f, code, description: message });
    return false;
  };
  if (input === undefined || input === null) return { tags: [], problems };
  const p = new Problems();
  if (!p.array(field, input, max)) return { tags: [], problems: p.list };
  const tags: Tag[] = [];
  const seen = new Set<string>();
  input.forEach((item, i) => {
    const at = `${field}.${i}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      add(at, 'incorrect_type', `must be an object, not ${jsonType(item)}`);
      return;
    }
    const { key, value } = item as Record<string, unknown>;
    let ok = true;
    if (key === undefined || key === null) ok = add(`${at}.key`, 'missing', BLANK);
    else if (typeof key !== 'string') ok = add(`${at}.key`, 'incorrect_type', `must be a string, not ${jsonType(key)}`);
    else if (key === '') ok = add(`${at}.key`, 'invalid', 'must not be empty');
    else if (length(key) > TAG_KEY_MAX_LENGTH) ok = add(`${at}.key`, 'invalid', `must be at most ${TAG_KEY_MAX_LENGTH} characters`);
    else if (!TAG_KEY_PATTERN.test(key)) ok = add(`${at}.key`, 'invalid', 'must contain only lowercase letters (a-z)');
    else if (seen.has(key)) ok = add(`${at}.key`, 'invalid', `duplicates the key ${JSON.stringify(key)}`);
    if (value === undefined || value === null) ok = add(`${at}.value`, 'missing', BLANK);
    else if (typeof value !== 'string') ok = add(`${at}.value`, 'incorrect_type', `must be a string, not ${jsonType(value)}`);
    else if (value === '') ok = add(`${at}.value`, 'invalid', 'must not be empty');
    else if (length(value) > TAG_VALUE_MAX_LENGTH) ok = add(`${at}.value`, 'invalid', `must be at most ${TAG_VALUE_MAX_LENGTH} characters`);
    else if (!TAG_VALUE_PATTERN.test(value)) {
      ok = add(`${at}.value`, 'invalid', 'must begin with a lowercase letter and contain only lowercase letters, digits, "/" and "-"');
    }
    if (typeof key === 'string') seen.add(key);
    if (ok) tags.push({ key: key as string, value: value as string });
  });
  return { tags, problems };
}

/**
 * The rule of tags a schema cannot say (src/api/v1/schemas.ts's TagSchema says the rest): two tags
 * with the same key, a problem on the second one's `key`.
 */
export function duplicateTagKeys(tags: readonly Tag[] | null | undefined, field = 'tags'): TypeDetail[] {
  const seen = new Set<string>();
  const problems: TypeDetail[] = [];
  (tags ?? []).forEach(({ key }, i) => {
    if (seen.has(key)) problems.push({ field: `${field}.${i}.key`, code: 'invalid', description: `duplicates the key ${JSON.stringify(key)}` });
    seen.add(key);
  });
  return problems;
}

/** The tags to store of tags the schema has checked: `{key, value}` only, in the client's order; null is none. */
export const storedTags = (tags: readonly Tag[] | null | undefined): Tag[] => (tags ?? []).map(({ key, value }) => ({ key, value }));

/** The `tags` member of a response: absent when there are none (see the header). */
export function tagsMember(tags: readonly Tag[] | undefined): { tags?: Tag[] } {
  return tags && tags.length > 0 ? { tags: [...tags] } : {};
}

/** The tags to store; throws one 422 naming every problem (see checkTags). */
export function validateTags(input: unknown, field = 'tags', max = MAX_TAGS): Tag[] {
  const { tags, problems } = checkTags(input, field, max);
  if (problems.length > 0) throw validationError(problems);
  return tags;
}
