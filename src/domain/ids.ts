// Identifiers, secrets and slugs in the formats real Honeycomb clients expect.
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const LOWER_ALPHANUMERIC = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Uniformly random string over `alphabet` (crypto RNG, no modulo bias). */
export function randomString(length: number, alphabet = ALPHANUMERIC): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** `hcxik_` / `hcxlk_` / `hcxmk_` / `hcxtm_` / `hcxen_` / `hcxds_` + 26 alphanumerics. */
export const prefixedId = (prefix: string) => `${prefix}_${randomString(26, LOWER_ALPHANUMERIC)}`;

/** Short opaque id for v1 resources (boards, queries, …), like Honeycomb's `2NeeaE9bBLd`. */
export const shortId = () => randomString(11);

/** A short id in the same format, derived from `seed`: the same seed always gives the same id. */
export function derivedId(seed: string): string {
  const bytes = createHash('sha256').update(seed).digest();
  let out = '';
  for (let i = 0; i < 11; i++) out += ALPHANUMERIC[bytes[i] % ALPHANUMERIC.length];
  return out;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Constant-time comparison of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Honeycomb's slug rule: lowercase, every character outside [a-z0-9_-] becomes `-` ("My Dataset!" → "my-dataset-"). */
export function slugify(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9_-]/g, '-');
}
