// How the benchmarks start Node for a server: with the flags and environment on dist/main.js's
// `#!` line (`#!/usr/bin/env -S NAME=value node --flag …`), as `waggle serve` and `npm start` run it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

const shebang = () => readFileSync(MAIN, 'utf8').split('\n', 1)[0].split(' ');

/** The Node flags of `waggle` (from dist/main.js's first line). */
export function serverNodeFlags() {
  return shebang().filter((w) => w.startsWith('--'));
}

/** The environment `waggle` sets for Node (MALLOC_ARENA_MAX=2), from the same line: `{ NAME: value }`. */
export function serverNodeEnv() {
  return Object.fromEntries(shebang().filter((w) => /^[A-Z_][A-Z0-9_]*=/.test(w)).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]));
}
