// The fuzz suite (docs/testing.md): seeded, bounded property-based testing with fast-check.
// Every route of an in-process app gets mutated valid requests (test/fuzz/cases.ts); every
// answer must come in bounded time, never be a 5xx, and carry its error in the route's
// documented dialect (test/fuzz/oracle.ts); after anything that can change columns, and at the
// end, the configuration store and the event store agree (test/store-agreement.ts).
//
// `npm test` runs FUZZ_RUNS (default 2,000) cases from a fixed seed; `npm run fuzz`
// (scripts/fuzz.mjs) runs many more from a random one. A failure prints its seed and path:
// FUZZ_SEED=… FUZZ_PATH=… npm run fuzz replays it.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from './helpers.js';
import { storeDisagreements } from './store-agreement.js';
import { ENDPOINTS, makeFixtures, type Fixtures } from './fuzz/endpoints.js';
import { buildRequest, caseArbitrary, type BuiltRequest, type Case } from './fuzz/cases.js';
import { answerProblems, type Answer } from './fuzz/oracle.js';

const env = process.env;
const SEED = env.FUZZ_SEED ? Number(env.FUZZ_SEED) : 22;
const RUNS = env.FUZZ_RUNS ? Number(env.FUZZ_RUNS) : 2000;
const PATH = env.FUZZ_PATH || undefined;
/** How long one answer may take (the machine running `npm test` is busy). */
const ANSWER_MS = env.FUZZ_ANSWER_MS ? Number(env.FUZZ_ANSWER_MS) : 10_000;

let t: TestApp;
let f: Fixtures;
beforeAll(async () => {
  t = await makeApp({
    // No rate limits (they would answer most cases 429) and no background evaluation (a seed
    // replays the same answers).
    settings: { apiRateLimit: null, ingestRateLimit: null, queryResultRateLimit: null, uiQueryResultRateLimit: null, evaluationTickMs: 0 },
  });
  f = await makeFixtures(t);
}, 120_000);
afterAll(() => t?.close());

/** The request in a form that can be read and sent again (keys left out). */
function describeRequest(r: BuiltRequest): string {
  const headers = Object.fromEntries(Object.entries(r.headers).filter(([k]) => !['x-honeycomb-team', 'authorization', 'cookie', 'x-amz-firehose-access-key'].includes(k)));
  const body = r.payload === undefined ? '' : ` body (${r.payload.length} bytes): ${JSON.stringify(r.payload.subarray(0, 400).toString('latin1'))}`;
  return `${r.method} ${r.url.length > 300 ? `${r.url.slice(0, 300)}…` : r.url} ${JSON.stringify(headers)}${body}`;
}

async function send(r: BuiltRequest): Promise<Answer> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ANSWER_MS} ms`)), ANSWER_MS);
  });
  try {
    return (await Promise.race([t.app.inject({ method: r.method as 'GET', url: r.url, headers: r.headers, payload: r.payload }), late])) as Answer;
  } finally {
    clearTimeout(timer);
  }
}

/** With FUZZ_STATS=1: the slowest cases, printed at the end (to keep the suite fast and find slow routes). */
const slowest: { ms: number; what: string }[] = [];
const byEndpoint = new Map<string, { n: number; ms: number }>();
const byStatus = new Map<number, number>();
function record(name: string, what: string, ms: number, status: number) {
  byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  const e = byEndpoint.get(name) ?? { n: 0, ms: 0 };
  byEndpoint.set(name, { n: e.n + 1, ms: e.ms + ms });
  slowest.push({ ms, what });
  slowest.sort((a, b) => b.ms - a.ms).splice(15);
}
afterAll(() => {
  if (env.FUZZ_STATS !== '1') return;
  console.log([...byEndpoint].sort((a, b) => b[1].ms - a[1].ms).map(([k, v]) => `${k}: ${v.n} cases, ${v.ms.toFixed(0)} ms`).join('\n'));
  console.log(`answers by status: ${[...byStatus].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}: ${v}`).join(', ')}`);
  console.log(slowest.map((s) => `${s.ms.toFixed(0)} ms ${s.what}`).join('\n'));
});

/** Runs one case; throws, describing the request and every problem, when the server got it wrong. */
async function runCase(c: Case, checkStores = true): Promise<void> {
  const started = performance.now();
  const endpoint = ENDPOINTS[c.endpoint];
  const params = endpoint.prepare ? await endpoint.prepare(t, f) : {};
  let request: BuiltRequest;
  try {
    request = buildRequest(c, t, f, params);
  } catch (err) {
    throw new Error(`the fuzzer could not build the request (a fuzzer bug, not the server's): ${(err as Error).stack}`);
  }
  let answer: Answer;
  try {
    answer = await send(request);
  } catch (err) {
    throw new Error(`${endpoint.name}: ${describeRequest(request)} → ${(err as Error).message}`);
  }
  const problems = answerProblems(request, answer);
  if (checkStores && endpoint.changesColumns) problems.push(...(await storeDisagreements(t.store, t.events)));
  if (env.FUZZ_STATS === '1') record(endpoint.name, `${describeRequest(request).slice(0, 300)} → ${answer.statusCode}`, performance.now() - started, answer.statusCode);
  if (problems.length > 0) {
    throw new Error(`${endpoint.name}: ${describeRequest(request)} → ${answer.statusCode} ${answer.body.slice(0, 500)}\n  ${problems.join('\n  ')}`);
  }
}

/**
 * Several cases at once (FUZZ_PARALLEL > 1, for races: an ingest while a column is deleted, …);
 * the stores are compared once all have answered. Not in `npm test`: the order in which
 * concurrent requests run is not the seed's, so a failure may not replay.
 */
async function runConcurrently(cases: Case[]): Promise<void> {
  const settled = await Promise.allSettled(cases.map((c) => runCase(c, false)));
  const problems = settled.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error).message)] : []));
  if (cases.some((c) => ENDPOINTS[c.endpoint].changesColumns)) problems.push(...(await storeDisagreements(t.store, t.events)));
  if (problems.length > 0) throw new Error(`${cases.length} requests at once:\n${problems.join('\n')}`);
}
const PARALLEL = env.FUZZ_PARALLEL ? Number(env.FUZZ_PARALLEL) : 1;

describe('fuzz: mutated requests to every route', () => {
  it('starts from requests that succeed: every route answers its unmutated request with a 2xx, a JSON body as JSON', async () => {
    const failures: string[] = [];
    for (let i = 0; i < ENDPOINTS.length; i++) {
      const endpoint = ENDPOINTS[i];
      const params = endpoint.prepare ? await endpoint.prepare(t, f) : {};
      const request = buildRequest({ endpoint: i, body: [], wire: { op: 'none' }, contentType: 'default', encoding: 'none', path: null, suffix: '', query: null, method: null, auth: 'key' }, t, f, params);
      const answer = await send(request);
      if (answer.statusCode >= 300) failures.push(`${endpoint.name}: ${answer.statusCode} ${answer.body.slice(0, 400)}`);
      // The oracle's rules for a success, among them the Content-Type of a JSON body.
      else failures.push(...answerProblems(request, answer).map((p) => `${endpoint.name}: ${p}`));
    }
    expect(failures).toEqual([]);
    expect(await storeDisagreements(t.store, t.events)).toEqual([]);
  });

  it(`answer in time, never 5xx, in the route's dialect, and leave the stores agreeing (seed ${SEED}, ${RUNS} runs)`, async () => {
    const property = PARALLEL > 1
      ? fc.asyncProperty(fc.array(caseArbitrary(), { minLength: 1, maxLength: PARALLEL }), runConcurrently)
      : fc.asyncProperty(caseArbitrary(), (c) => runCase(c));
    const out = await fc.check(property as fc.IAsyncPropertyWithHooks<[unknown]>, { seed: SEED, numRuns: RUNS, path: PATH, endOnFailure: env.FUZZ_SHRINK === '0' });
    if (out.failed) {
      const error = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
      const replay = `FUZZ_SEED=${out.seed} FUZZ_PATH=${out.counterexamplePath}${PARALLEL > 1 ? ` FUZZ_PARALLEL=${PARALLEL}` : ''} npm run fuzz`;
      console.error(`\nfuzz failure after ${out.numRuns} runs (shrunk ${out.numShrinks} times). Replay: ${replay}\n${error}\n`);
      expect.fail(`fuzz failure, replay with ${replay}\n${error}\ncase: ${JSON.stringify(out.counterexample?.[0], (_, v) => (typeof v === 'string' && v.length > 200 ? `${v.slice(0, 200)}…(${v.length})` : v))}`);
    }
    expect(out.numRuns).toBe(PATH ? out.numRuns : RUNS);
    expect(await storeDisagreements(t.store, t.events)).toEqual([]);
  }, Number(env.FUZZ_TEST_TIMEOUT_MS ?? 300_000));
});
