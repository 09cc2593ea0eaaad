// The big-trace bench (part of `npm run bench`; alone with `BENCH_ONLY=bigtrace npm run bench`):
// a trace of 100,000 spans (a root, 369 api spans one after another, 270 db queries under each,
// sent through /1/batch in bodies of 5,000) served by `waggle serve`, its page opened in Debian's
// Chromium (headless, the browser tests' flags):
//
//   - the answer: GET /1/traces/__all__/<id> from this process, its time and size;
//   - time to first paint of the waterfall: from the navigation's start to the frame after the
//     first waterfall row is in the DOM (a MutationObserver set up before the page's scripts, then
//     requestAnimationFrame), answer fetch and layout of the 100,000 spans included;
//   - frame time while scrolling: the waterfall scrolled from its top to its end in 240 steps, one
//     each animation frame (every frame a fresh set of rows), the requestAnimationFrame deltas'
//     p50 and p95 (16.7 ms is one frame at 60 Hz: the baseline);
//   - also a slow scroll, 4 rows a frame, 240 frames from the middle.
// Figures are medians over BENCH_BIGTRACE_ROUNDS (3) page loads. Needs /usr/bin/chromium
// (WAGGLE_CHROMIUM overrides); skipped with a notice without it.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, startServer } from './web-ui.mjs';

const CHROMIUM = process.env.WAGGLE_CHROMIUM ?? '/usr/bin/chromium';
const ROUNDS = Number(process.env.BENCH_BIGTRACE_ROUNDS ?? 3);
const API = 369;
const DB = 270; // 1 + 369 + 369 × 270 = 100,000 spans
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

function* spans(startMs) {
  const at = (offset) => new Date(startMs + offset).toISOString();
  const ev = (sid, parent, service, name, offset, ms, extra = {}) => ({
    time: at(offset),
    data: { 'trace.trace_id': 'bench-big', 'trace.span_id': sid, ...(parent ? { 'trace.parent_id': parent } : {}), 'service.name': service, name, duration_ms: ms, ...extra },
  });
  yield ev('root', undefined, 'frontend', 'GET /report', 0, API * 1000 + 5, { 'http.route': '/report', 'http.status_code': 200 });
  for (let i = 0; i < API; i++) {
    yield ev(`api-${i}`, 'root', 'api', `load part ${i}`, i * 1000 + 1, 900, { 'part.id': i });
    for (let k = 0; k < DB; k++) yield ev(`db-${i}-${k}`, `api-${i}`, 'db', 'SELECT rows', i * 1000 + 2 + k * 3, 20 + ((i * 7 + k * 13) % 80), { 'db.statement': `SELECT * FROM rows WHERE part = ${i} AND shard = ${k}` });
  }
}

/** In the page: scrolls the waterfall `frames` times by `step` px from `from`, a step each frame; the frame deltas. */
function scrollFrames([from, step, frames]) {
  return new Promise((resolve) => {
    const el = document.querySelector('[data-testid=waterfall]');
    el.scrollTop = from === 'end' ? 0 : from;
    const px = step === 'whole' ? (el.scrollHeight - el.clientHeight) / frames : step;
    const deltas = [];
    let last = 0;
    let n = 0;
    const tick = (t) => {
      if (last) deltas.push(t - last);
      last = t;
      if (n++ >= frames) return resolve(deltas);
      el.scrollTop += px;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

export async function bigTraceBench() {
  console.log('\n== A trace of 100,000 spans in the web UI (bench/big-trace.mjs) ==');
  if (!existsSync(CHROMIUM)) {
    console.log(`*** Chromium not found at ${CHROMIUM}: the big-trace figures are SKIPPED (apt-get install chromium). ***`);
    return;
  }
  const { chromium } = await import('playwright-core');
  const dataDir = mkdtempSync(join(tmpdir(), 'waggle-bench-bigtrace-'));
  const s = await startServer(dataDir);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const all = [...spans(Date.now() - 10 * 60_000)];
    for (let i = 0; i < all.length; i += 5000) await call(s, s.ingest, 'POST', '/1/batch/reports', all.slice(i, i + 5000));
    const answers = [];
    let bytes = 0;
    let count = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const t0 = performance.now();
      const res = await fetch(`${s.url}/1/traces/__all__/bench-big`, { headers: { 'x-honeycomb-team': s.configuration } });
      const body = await res.text();
      answers.push(performance.now() - t0);
      bytes = body.length;
      const parsed = JSON.parse(body);
      count = parsed.spans.length;
      if (parsed.truncated) throw new Error('the 100,000-span trace came back truncated');
    }
    if (count !== all.length) throw new Error(`the trace answered ${count} spans, not ${all.length}`);
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    await context.addInitScript(() => {
      const seen = () => document.querySelector('[data-testid=waterfall] .wf-row');
      const obs = new MutationObserver(() => {
        if (!seen()) return;
        obs.disconnect();
        requestAnimationFrame(() => (window.__wfPaint = performance.now()));
      });
      document.addEventListener('DOMContentLoaded', () => obs.observe(document.body, { childList: true, subtree: true }));
    });
    const page = await context.newPage();
    page.on('pageerror', (e) => console.log('page error:', e.message));
    await page.goto(`${s.url}/login`);
    await page.fill('#key', s.configuration);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=environment]');
    const paints = [];
    const fast = [];
    const slow = [];
    let rows = 0;
    for (let i = 0; i < ROUNDS; i++) {
      await page.goto(`${s.url}/my-team/environments/production/datasets/__all__/trace/bench-big`);
      await page.waitForFunction(() => window.__wfPaint !== undefined, null, { timeout: 120_000, polling: 50 });
      paints.push(await page.evaluate(() => window.__wfPaint));
      await page.waitForTimeout(300);
      fast.push(...(await page.evaluate(scrollFrames, [0, 'whole', 240])));
      rows = Math.max(rows, await page.locator('[data-testid=waterfall] .wf-row').count());
      const mid = await page.$eval('[data-testid=waterfall]', (el) => el.scrollHeight / 2);
      slow.push(...(await page.evaluate(scrollFrames, [mid, 4 * 28, 240])));
    }
    const f = (x) => `${x.toFixed(1)} ms`;
    console.log(`${count.toLocaleString('en-US')} spans (1 root, ${API} api, ${API * DB} db), ${ROUNDS} page loads`);
    console.log(`  GET /1/traces answer: ${f(median(answers))} median, ${(bytes / 1e6).toFixed(1)} MB of JSON`);
    console.log(`  time to first paint of the waterfall (navigation start → first rows drawn): ${f(median(paints))} median (${paints.map((p) => p.toFixed(0)).join(', ')})`);
    console.log(`  scrolling top to end in 240 frames: frame time p50 ${f(pct(fast, 0.5))}, p95 ${f(pct(fast, 0.95))}, max ${f(Math.max(...fast))} (one frame at 60 Hz: 16.7 ms)`);
    console.log(`  scrolling 4 rows a frame: frame time p50 ${f(pct(slow, 0.5))}, p95 ${f(pct(slow, 0.95))}, max ${f(Math.max(...slow))}`);
    console.log(`  row elements in the DOM at most: ${rows} (of ${count.toLocaleString('en-US')})`);
  } finally {
    await browser.close();
    s.child.kill('SIGTERM');
    await new Promise((r) => s.child.on('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await bigTraceBench();
