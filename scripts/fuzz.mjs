// `npm run fuzz`: the fuzz suite (test/fuzz.test.ts, docs/testing.md) at length, from a random
// seed unless FUZZ_SEED is set. FUZZ_RUNS sets the number of cases (default 20,000); FUZZ_PATH
// replays one failing case of a seed (the failure message prints both); FUZZ_PARALLEL=n sends up
// to n cases at once (races; such a failure may not replay exactly).
import { spawnSync } from 'node:child_process';

const seed = process.env.FUZZ_SEED ?? String((Math.random() * 2 ** 31) | 0);
const runs = process.env.FUZZ_RUNS ?? '20000';
const path = process.env.FUZZ_PATH ?? '';
const parallel = process.env.FUZZ_PARALLEL ? ` FUZZ_PARALLEL=${process.env.FUZZ_PARALLEL}` : '';
console.log(`fuzz: seed ${seed}, ${path ? `path ${path}` : `${runs} runs`} (again: FUZZ_SEED=${seed} FUZZ_RUNS=${runs}${path ? ` FUZZ_PATH=${path}` : ''}${parallel} npm run fuzz)`);
const env = {
  ...process.env,
  FUZZ_SEED: seed,
  FUZZ_RUNS: runs,
  // About 50 ms a case on a busy machine, with room to spare.
  FUZZ_TEST_TIMEOUT_MS: process.env.FUZZ_TEST_TIMEOUT_MS ?? String(120_000 + Number(runs) * 200),
};
const r = spawnSync('npx', ['vitest', 'run', 'test/fuzz.test.ts'], { stdio: 'inherit', env });
console.log(r.status === 0 ? `fuzz: seed ${seed}: no failure` : `fuzz: seed ${seed}: FAILED (the replay command is above)`);
process.exit(r.status ?? 1);
