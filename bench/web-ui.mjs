// The web UI benchmark (part of `npm run bench`; alone with `BENCH_ONLY=web npm run bench`):
// its budgets, measured in Debian's Chromium (headless, the browser tests' flags) against
// `waggle serve` with real events, each figure beside a baseline measured in the same run.
//
//   - first load: the JavaScript the page loads first, gzipped (budget 250 KB), read from the
//     built page (dist/web) as served;
//   - drawing a results page of 50 groups × 120 points (COUNT and AVG(duration_ms) by `svc` over
//     2 hours): the time from the answer's arrival to every chart drawn, as the page reports it
//     (`data-draw-ms`; budget 200 ms), against the baseline of bare uPlot drawing the same charts
//     from the same numbers on an empty page (no app, no shaping, no tables);
//   - 10,000 points (10 groups × 1,000 one-second buckets): drawing, and staying responsive: the
//     time from a mouse move over the chart to the next frame after it (hover tooltip included),
//     over 60 moves, against the same on the bare uPlot page.
// Figures are medians of BENCH_WEB_ROUNDS (7) page loads. Needs /usr/bin/chromium
// (WAGGLE_CHROMIUM overrides); skipped with a notice without it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHROMIUM = process.env.WAGGLE_CHROMIUM ?? '/usr/bin/chromium';
const ROUNDS = Number(process.env.BENCH_WEB_ROUNDS ?? 7);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => `${x.toFixed(1)} ms`;

function firstLoadKb() {
  const web = join(ROOT, 'dist/web');
  const html = readFileSync(join(web, 'index.html'), 'utf8');
  let gz = 0;
  let raw = 0;
  for (const f of readdirSync(join(web, 'assets'))) {
    if (!f.endsWith('.js') || !html.includes(`assets/${f}`)) continue;
    const body = readFileSync(join(web, 'assets', f));
    raw += body.length;
    gz += gzipSync(body, { level: 9 }).length;
  }
  return { gz: gz / 1024, raw: raw / 1024 };
}

export async function startServer(dataDir) {
  const child = spawn(process.execPath, [join(ROOT, 'dist/main.js'), 'serve', '--port', '0', '--data-dir', dataDir], {
    env: { ...process.env, WAGGLE_LOG_LEVEL: 'info', WAGGLE_OTLP_GRPC_PORT: '0', WAGGLE_INGEST_RATE_LIMIT: 'off', WAGGLE_RATE_LIMIT: 'off', WAGGLE_UI_QUERY_RESULT_RATE_LIMIT: 'off', WAGGLE_QUERY_RESULT_RATE_LIMIT: 'off' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  await new Promise((resolve, reject) => {
    const read = (d) => {
      out += d;
      if (/Web UI: /.test(out)) {
        child.stdout.off('data', read);
        child.stdout.resume(); // (the request log is not kept)
        resolve();
      }
    };
    child.stdout.on('data', read);
    child.on('exit', (code) => reject(new Error(`waggle serve exited (${code}): ${out}`)));
  });
  return {
    child,
    url: /Web UI: (http:\/\/[^/\s]+)/.exec(out)[1],
    configuration: / configuration key \(X-Honeycomb-Team\): (\S+)$/m.exec(out)[1],
    ingest: / ingest key +\(X-Honeycomb-Team\): (\S+)$/m.exec(out)[1],
  };
}

export async function call(s, key, method, path, body) {
  const res = await fetch(`${s.url}${path}`, { method, headers: { 'x-honeycomb-team': key, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Events for `groups` values of `svc`, `perBucket` each per `step`-second bucket over `buckets` buckets before `end`. */
async function ingest(s, dataset, { groups, buckets, step, perBucket, end }) {
  const events = [];
  for (let b = 0; b < buckets; b++) {
    for (let g = 0; g < groups; g++) {
      for (let k = 0; k < perBucket; k++) {
        const t = end - (buckets - b) * step + (k + 0.5) * (step / perBucket);
        events.push({ time: new Date(t * 1000).toISOString(), data: { svc: `service-${String(g).padStart(2, '0')}`, duration_ms: 20 + ((g * 37 + b * 11 + k) % 400) } });
      }
    }
  }
  for (let i = 0; i < events.length; i += 5000) await call(s, s.ingest, 'POST', `/1/batch/${dataset}`, events.slice(i, i + 5000));
  return events.length;
}

/** In the page: time from a mouse move over the first chart to the next frame, `moves` times. */
function hoverFrames(moves) {
  return (async () => {
    const over = document.querySelector('.u-over');
    const r = over.getBoundingClientRect();
    const times = [];
    for (let i = 0; i < moves; i++) {
      const t0 = performance.now();
      over.dispatchEvent(new MouseEvent('mousemove', { clientX: r.left + ((i + 0.5) / moves) * r.width, clientY: r.top + r.height / 2, bubbles: true }));
      await new Promise((res) => requestAnimationFrame(() => res()));
      times.push(performance.now() - t0);
    }
    return times;
  })();
}

/** The baseline page: bare uPlot drawing `charts` (each {times, lines}) from the same numbers. */
async function baselineDraw(page, charts) {
  return page.evaluate(async (charts) => {
    const t0 = performance.now();
    const colors = ['#5b8def', '#e8823a', '#3fb27f', '#d9534f', '#9b6bdf'];
    for (const c of charts) {
      const el = document.createElement('div');
      document.body.appendChild(el);
      // eslint-disable-next-line no-undef
      new uPlot(
        { width: 1000, height: 220, legend: { show: false }, series: [{}, ...c.lines.map((_, i) => ({ stroke: colors[i % colors.length], width: 1.5 }))] },
        [c.times, ...c.lines],
        el,
      );
    }
    await new Promise((res) => requestAnimationFrame(() => res()));
    return performance.now() - t0;
  }, charts);
}

/** The charts' numbers from the API's answer, as uPlot takes them (a series per group). */
function chartsOf(answer, calcs, breakdown) {
  const times = [...new Set(answer.data.series.map((r) => Date.parse(r.time) / 1000))].sort((a, b) => a - b);
  const groups = answer.data.results.map((r) => r.data[breakdown]);
  return calcs.map((calc) =>
    ({
      times,
      lines: groups.map((g) => {
        const byTime = new Map(answer.data.series.filter((r) => r.data[breakdown] === g).map((r) => [Date.parse(r.time) / 1000, r.data[calc]]));
        return times.map((t) => byTime.get(t) ?? null);
      }),
    }),
  );
}

export async function webBench() {
  console.log('\n== Web UI (bench/web-ui.mjs) ==');
  const load = firstLoadKb();
  console.log(`first-load JavaScript: ${load.gz.toFixed(1)} KB gzipped (${load.raw.toFixed(0)} KB raw) = ${(load.gz / 250).toFixed(2)}x the 250 KB budget`);
  if (!existsSync(CHROMIUM)) {
    console.log(`*** Chromium not found at ${CHROMIUM}: the drawing figures are SKIPPED (apt-get install chromium). ***`);
    return;
  }
  const { chromium } = await import('playwright-core');
  const dataDir = mkdtempSync(join(tmpdir(), 'waggle-bench-web-'));
  const s = await startServer(dataDir);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const now = Math.floor(Date.now() / 1000);
    // (absolute windows on whole minutes: exactly 120 and 1,000 buckets, whenever the bench runs)
    const end50 = Math.floor(now / 60) * 60;
    const end10k = Math.floor(now / 60) * 60 - 60;
    const n50 = await ingest(s, 'fifty', { groups: 50, buckets: 120, step: 60, perBucket: 2, end: end50 });
    const n10k = await ingest(s, 'tenk', { groups: 10, buckets: 1000, step: 1, perBucket: 1, end: end10k });
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await context.newPage();
    page.on('crash', () => console.log('the results page crashed'));
    page.on('pageerror', (e) => console.log('page error:', e.message));
    await page.goto(`${s.url}/login`);
    await page.fill('#key', s.configuration);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=environment]');
    const baseline = await context.newPage();
    await baseline.setContent('<!doctype html><body></body>');
    await baseline.addStyleTag({ path: join(ROOT, 'node_modules/uplot/dist/uPlot.min.css') });
    await baseline.addScriptTag({ path: join(ROOT, 'node_modules/uplot/dist/uPlot.iife.min.js') });

    const cases = [
      { name: '50 groups × 120 points', dataset: 'fifty', spec: { calculations: [{ op: 'COUNT' }, { op: 'AVG', column: 'duration_ms' }], breakdowns: ['svc'], start_time: end50 - 7200, end_time: end50, granularity: 60 }, events: n50 },
      { name: '10 groups × 1,000 points (10,000)', dataset: 'tenk', spec: { calculations: [{ op: 'COUNT' }], breakdowns: ['svc'], start_time: end10k - 1000, end_time: end10k, granularity: 1 }, events: n10k },
    ];
    for (const c of cases) {
      const answer = await (async () => {
        const q = await call(s, s.configuration, 'POST', `/1/queries/${c.dataset}`, c.spec);
        let r = await call(s, s.configuration, 'POST', `/1/query_results/${c.dataset}`, { query_id: q.id });
        while (!r.complete) r = await call(s, s.configuration, 'GET', `/1/query_results/${c.dataset}/${r.id}`);
        return r;
      })();
      const charts = chartsOf(answer, c.spec.calculations.map((x) => (x.column ? `${x.op}(${x.column})` : x.op)), 'svc');
      const points = charts[0].lines.length * charts[0].times.length;
      const url = `${s.url}/my-team/environments/production/datasets/${c.dataset}?query=${encodeURIComponent(JSON.stringify(c.spec))}`;
      const draws = [];
      const hovers = [];
      const baseDraws = [];
      const baseHovers = [];
      for (let i = 0; i < ROUNDS; i++) {
        // (a page in the background gets one animation frame a second: measure the one in front)
        await page.bringToFront();
        await page.goto(url);
        const el = await page.waitForSelector('[data-draw-ms]', { timeout: 60_000 });
        draws.push(Number(await el.getAttribute('data-draw-ms')));
        hovers.push(median(await page.evaluate(hoverFrames, 60)));
        await baseline.bringToFront();
        await baseline.evaluate(() => (document.body.innerHTML = ''));
        baseDraws.push(await baselineDraw(baseline, charts));
        baseHovers.push(median(await baseline.evaluate(hoverFrames, 60)));
      }
      const d = median(draws);
      const bd = median(baseDraws);
      const h = median(hovers);
      const bh = median(baseHovers);
      console.log(`${c.name} (${charts.length} chart${charts.length > 1 ? 's' : ''}, ${points} points each, from ${c.events} events):`);
      console.log(`  drawn after the answer: ${ms(d)} (budget 200 ms) = ${(d / bd).toFixed(2)}x bare uPlot drawing the same (${ms(bd)})`);
      console.log(`  mouse move → next frame: ${ms(h)} median = ${(h / bh).toFixed(2)}x bare uPlot (${ms(bh)})`);
    }
  } finally {
    await browser.close();
    s.child.kill('SIGTERM');
    await new Promise((r) => s.child.on('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await webBench();

