// Tags: the `{key, value}` labels boards, SLOs and triggers carry. One set of rules for all of
// them (SPEC "Tag", Honeycomb's OpenAPI `Tag` schema, the Terraform provider's validators), said by
// one schema (src/api/v1/schemas.ts's TagSchema and TagsInput, built from the limits and patterns
// here) but for unique keys (duplicateTagKeys):
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
import type { TypeDetail } from '../errors.js';

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
