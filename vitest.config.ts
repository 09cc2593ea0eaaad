import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two test files at once on CI's 2 cores (vitest's default is one fewer than the cores): most
    // files wait on servers they start (waggle serve, ClickHouse, Chromium), and one at a time
    // used about two thirds of one core. Each file keeps its own temp dirs, ports, PostgreSQL
    // schema and ClickHouse servers, so two never share state.
    maxWorkers: 2,
    // A worker keeps its imported modules between files (each file still starts its own servers and
    // stores): re-importing Fastify, DuckDB and src/ for each of ~120 files was about 2 s a file.
    isolate: false,
  },
});
