// Builds the web UI (web/) into dist/web/, where `waggle serve` serves it (src/api/ui/static.ts).
// Part of `npm run build`. Writes .gz and .br next to every asset (served pre-compressed) and
// fails the build when the JavaScript the page loads first exceeds its budget (250 KB gzipped).
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const OUT = new URL('../dist/web/', import.meta.url).pathname;
const FIRST_LOAD_BUDGET = 250 * 1024;

function precompress(): Plugin {
  return {
    name: 'waggle-precompress',
    apply: 'build',
    closeBundle() {
      const assets = join(OUT, 'assets');
      const html = readFileSync(join(OUT, 'index.html'), 'utf8');
      let firstLoad = 0;
      for (const f of readdirSync(assets)) {
        if (!/\.(js|css|svg|map)$/.test(f)) continue;
        const body = readFileSync(join(assets, f));
        const gz = gzipSync(body, { level: 9 });
        writeFileSync(join(assets, `${f}.gz`), gz);
        writeFileSync(join(assets, `${f}.br`), brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
        if (f.endsWith('.js') && html.includes(`assets/${f}`)) firstLoad += gz.length;
      }
      const kb = (firstLoad / 1024).toFixed(1);
      console.log(`web UI: first-load JavaScript ${kb} KB gzipped (budget ${FIRST_LOAD_BUDGET / 1024} KB)`);
      if (firstLoad > FIRST_LOAD_BUDGET) throw new Error(`web UI first-load JavaScript is ${kb} KB gzipped, over the ${FIRST_LOAD_BUDGET / 1024} KB budget`);
    },
  };
}

export default defineConfig({
  root: new URL('.', import.meta.url).pathname,
  base: './',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: OUT,
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    sourcemap: false,
    // Nothing is fetched from anywhere but this server; Vite's preload helper stays same-origin.
    modulePreload: { polyfill: false },
  },
  plugins: [precompress()],
});
