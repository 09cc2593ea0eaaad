// How the benchmarks start Node for a server: with the flags on dist/main.js's `#!` line
// (`#!/usr/bin/env -S node --flag …`), as `waggle serve` and `npm start` run it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** The Node flags of `waggle` (from dist/main.js's first line). */
export function serverNodeFlags() {
  const shebang = readFileSync(MAIN, 'utf8').split('\n', 1)[0];
  return shebang.split(' ').filter((w) => w.startsWith('--'));
}
