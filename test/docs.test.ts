// README.md and docs/*.md stay true: their links lead somewhere, their tables render, and the
// commands, paths and environment variables they show are the ones the repository has
// (test/docs-check.ts says what counts as a command).
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  checkCommands,
  checkEnvNames,
  checkLinks,
  checkPaths,
  checkSettingsDocumented,
  checkTables,
  checkWaggleArgs,
  type CliCommand,
  type Doc,
  docFiles,
  type Finding,
  githubAnchor,
  knownNames,
  loadCli,
  parseDoc,
  readDoc,
  repositoryFiles,
  ROOT,
  showFinding,
} from './docs-check.js';

let docs: Doc[];
let repo: Set<string>;
// Read by a child process, which runs while the docs are read; only the tests of commands wait
// for it, so a CLI that is not built fails those alone.
let cli: Promise<CliCommand>;

beforeAll(() => {
  cli = loadCli();
  cli.catch(() => {}); // reported by the tests that await it
  docs = docFiles().map(readDoc);
  repo = repositoryFiles();
});

/** No findings; each is shown with its file and line. */
function expectNone(findings: Finding[]): void {
  expect(findings.map(showFinding)).toEqual([]);
}

describe('README.md and docs/*.md', () => {
  it('link to files and headings that exist, and cite sections that exist', () => {
    expectNone(checkLinks(docs, repo));
  });

  it('have no table broken by a blank line', () => {
    expectNone(checkTables(docs));
  });

  it('show only commands the CLI and package.json have', async () => {
    const { scripts } = JSON.parse(readFileSync(posix.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expectNone(checkCommands(docs, await cli, scripts));
  });

  it('name only paths in the repository', () => {
    expectNone(checkPaths(docs, repo));
  });

  it('name only environment variables the code reads, and document every setting', () => {
    const known = knownNames();
    expectNone([...checkEnvNames(docs, known), ...checkSettingsDocumented(known)]);
  });
});

// The check itself, on small documents: what it must catch and what it must let through.
describe('the docs check', () => {
  const doc = (text: string) => parseDoc('docs/x.md', text);

  it('makes anchors as GitHub does', () => {
    expect(githubAnchor('Soak figures: the full hour (2026-11-28)')).toBe('soak-figures-the-full-hour-2026-11-28');
    expect(githubAnchor('The `query_url` and *links*')).toBe('the-query_url-and-links');
    expect(githubAnchor('A — B')).toBe('a--b');
    const d = doc('# Metrics\n## Metrics\n');
    expect(d.headings.map((h) => h.anchor)).toEqual(['metrics', 'metrics-1']);
  });

  it('finds broken links, anchors and cited sections, and not links in code', () => {
    const d = doc(
      [
        '# Top',
        '[ok](../README.md) [ok](#top) [no](missing.md) [no](#nowhere)',
        '[out](../../x.md) `[code](missing.md)` [ok](https://example.com/x.md) [ref][r]',
        '[Operating',
        'Waggle](operations.md#metrics), "Bounded memory" and [x](operations.md), "No such part"',
        '```',
        '[fenced](missing.md)',
        '```',
        '[r]: ../no-such-dir/',
      ].join('\n'),
    );
    const found = checkLinks([d], repo).map((f) => `${f.line}: ${f.problem}`);
    expect(found).toEqual([
      '2: link missing.md: no file docs/missing.md in the repository',
      '2: link #nowhere: docs/x.md has no heading with the anchor #nowhere',
      '3: link ../../x.md leads out of the repository',
      '5: "No such part": docs/operations.md has no such heading or bold paragraph lead',
      '9: link ../no-such-dir/: no file no-such-dir in the repository',
    ]);
  });

  it('finds a table split by a blank line', () => {
    const d = doc('| a | b |\n|---|---|\n| 1 | 2 |\n\n| 3 | 4 |\n');
    expect(checkTables([d]).map((f) => f.line)).toEqual([5]);
  });

  it('reads subcommands and options from the CLI, synopsis notation included', async () => {
    const program = await cli;
    expect(checkWaggleArgs(program, ['keys', 'create', '--type', 'ingest/configuration', '[--ttl', 'RFC3339]'])).toEqual([]);
    expect(checkWaggleArgs(program, ['serve', '--data-dir=./x', '…'])).toEqual([]);
    expect(checkWaggleArgs(program, ['keys', 'rotate'])).toEqual(['`waggle keys` has no subcommand "rotate"']);
    expect(checkWaggleArgs(program, ['serve', '--no-such-flag'])).toEqual(['`waggle serve` has no option --no-such-flag']);
  });

  it('reads commands only from code, through env assignments, npx, node and npm', async () => {
    const program = await cli;
    const d = doc(
      [
        'Waggle serves no such thing; `waggle_http_requests_total` and `waggle-format.json` are not commands.',
        '`WAGGLE_PORT=1 waggle serve --bogus` `npm run nope` `npm start -- --port 1 --bogus`',
        '```sh',
        'X=$(npx waggle init --json) && node --max-semi-space-size=16 dist/main.js kees \\',
        '  --data-dir d',
        'WAGGLE_EVENT_STORE=clickhouse://h:8123/waggle npm start   # waggle --comment',
        '```',
        '```yaml',
        'waggle serve --yaml',
        '```',
      ].join('\n'),
    );
    const found = checkCommands([d], program, { start: 'node dist/main.js serve' }).map((f) => `${f.line}: ${f.problem}`);
    expect(found).toEqual([
      '2: `WAGGLE_PORT=1 waggle serve --bogus`: `waggle serve` has no option --bogus',
      '2: `npm run nope`: package.json has no script "nope"',
      '2: `npm start -- --port 1 --bogus`: `waggle serve` has no option --bogus',
      '4: `node --max-semi-space-size=16 dist/main.js kees --data-dir d`: `waggle` has no subcommand "kees"',
    ]);
  });

  it('finds paths and environment variables the repository does not have', () => {
    const d = doc('`src/settings.ts`, `native/json-columns`, `bench/*.mjs`, `WAGGLE_PORT`, `WAGGLE_NO_SUCH`, `BENCH_NO_SUCH`\n');
    expect(checkPaths([d], repo).map((f) => f.problem)).toEqual(['native/json-columns: no such file or folder in the repository']);
    expect(checkEnvNames([d], knownNames()).map((f) => f.problem)).toEqual([
      'WAGGLE_NO_SUCH: not read by src/settings.ts (nor test/ or scripts/)',
      'BENCH_NO_SUCH: not read by bench/*.mjs',
    ]);
  });
});
