// Checks that README.md and docs/*.md stay true to the repository (test/docs.test.ts runs them).
// Each check returns findings (file, line, what is wrong) instead of failing at the first one.
//
// What counts as a command: only code — inline code spans and fenced blocks tagged sh/bash/shell/
// console or untagged (yaml, json, sql blocks are configuration, not commands). Prose is never read
// as a command, so "Waggle serves…" is no claim about a `waggle serves` subcommand. Within code, a
// command is a shell segment (split at |, &&, ;, $( and backquotes) whose first word, after any
// VAR=value words, is `waggle`, `npx waggle`, `node [flags] dist/main.js`, `npm run`, `npm start` or
// `npm test`. In a table's code span `\|` is read as an alternative (`--type a\|b`), not a pipe.
// Words such as `[--port`, `DIR]` and `…` are synopsis notation and are read as `--port`, `DIR`,
// nothing.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface Finding {
  file: string;
  line: number;
  problem: string;
}

export const showFinding = (f: Finding): string => `${f.file}:${f.line}: ${f.problem}`;

// ---------------------------------------------------------------------------------------------
// Reading Markdown: just enough of GitHub's rendering to find headings, links and code.

export interface Heading {
  text: string;
  anchor: string;
  line: number;
}

export interface Doc {
  file: string;
  lines: string[];
  /** The text with code spans and fenced blocks blanked (newlines kept): where links are looked for. */
  prose: string;
  headings: Heading[];
  /** Bold lead-ins of paragraphs and list items (`**Public base URL.** …`), which docs cite as sections. */
  leads: string[];
  spans: { text: string; line: number }[];
  fences: { info: string; lines: { text: string; line: number }[] }[];
  /** Lines inside fenced blocks (1-based), which are not Markdown. */
  fenced: Set<number>;
  lineOf(offset: number): number;
}

const FENCE = /^\s*(`{3,}|~{3,})\s*([\w+-]*)/;

/** The id GitHub gives a heading: the rendered text lowercased, punctuation removed, spaces to hyphens. */
export function githubAnchor(heading: string): string {
  return renderInline(heading)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Heading text as rendered: code, links, emphasis and HTML tags reduced to their text. */
function renderInline(s: string): string {
  return s
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`+([^`]*)`+/g, '$1')
    .replace(/\*\*?([^*]+)\*\*?/g, '$1')
    .replace(/(^|\W)__?([^_]+)__?(?=\W|$)/g, '$1$2')
    .trim();
}

export function parseDoc(file: string, text: string): Doc {
  const lines = text.split('\n');
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  const lineOf = (offset: number) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };

  const fences: Doc['fences'] = [];
  const fenced = new Set<number>();
  const proseLines: string[] = [];
  let open: { marker: string; info: string; lines: { text: string; line: number }[] } | undefined;
  lines.forEach((l, i) => {
    const m = FENCE.exec(l);
    if (open) {
      fenced.add(i + 1);
      if (m && m[1][0] === open.marker[0] && m[1].length >= open.marker.length && l.trim() === m[1]) {
        fences.push({ info: open.info, lines: open.lines });
        open = undefined;
      } else open.lines.push({ text: l, line: i + 1 });
      proseLines.push(' '.repeat(l.length));
    } else if (m) {
      fenced.add(i + 1);
      open = { marker: m[1], info: m[2].toLowerCase(), lines: [] };
      proseLines.push(' '.repeat(l.length));
    } else proseLines.push(l);
  });

  // Code spans: a run of backquotes closed by a run of the same length, within one paragraph.
  const withCode = proseLines.join('\n');
  const spans: Doc['spans'] = [];
  const blanked: string[] = [];
  let done = 0;
  const tick = /`+/g;
  for (let m = tick.exec(withCode); m; m = tick.exec(withCode)) {
    const closer = new RegExp(`(?<!\`)${m[0]}(?!\`)`, 'g');
    closer.lastIndex = m.index + m[0].length;
    const c = closer.exec(withCode);
    if (!c) continue;
    const body = withCode.slice(m.index + m[0].length, c.index);
    if (/\n\s*\n/.test(body)) continue;
    spans.push({ text: body.replace(/\n/g, ' ').replace(/^ (.*) $/, '$1'), line: lineOf(m.index) });
    const end = c.index + c[0].length;
    blanked.push(withCode.slice(done, m.index), withCode.slice(m.index, end).replace(/[^\n]/g, ' '));
    done = tick.lastIndex = end;
  }
  const prose = blanked.join('') + withCode.slice(done);

  const headings: Heading[] = [];
  const leads: string[] = [];
  const seen = new Map<string, number>();
  lines.forEach((l, i) => {
    if (fenced.has(i + 1)) return;
    const h = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(l);
    if (h) {
      // GitHub numbers repeated anchors: x, x-1, x-2.
      const base = githubAnchor(h[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      headings.push({ text: renderInline(h[1]), anchor: n ? `${base}-${n}` : base, line: i + 1 });
    }
    const lead = /^\s*(?:[-*+]\s+|\d+\.\s+)?\*\*([^*]+?)\*\*/.exec(l);
    if (lead) leads.push(renderInline(lead[1]).replace(/[.:]$/, ''));
  });

  return { file, lines, prose, headings, leads, spans, fences, fenced, lineOf };
}

/** README.md and docs/*.md, as repository-relative paths. */
export function docFiles(): string[] {
  const docs = readdirSync(posix.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort();
  return ['README.md', ...docs.map((f) => `docs/${f}`)];
}

export function readDoc(file: string): Doc {
  return parseDoc(file, readFileSync(posix.join(ROOT, file), 'utf8'));
}

// ---------------------------------------------------------------------------------------------
// The repository's files: what git tracks or would (new files not yet added), so that a link to
// something only a build or a run makes (dist/, data/) counts as broken, as it is on GitHub.

export function repositoryFiles(): Set<string> {
  let files: string[];
  try {
    files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      // git lists files deleted but not yet staged; they are not there.
      .filter((f) => existsSync(posix.join(ROOT, f)));
  } catch {
    throw new Error('docs check: `git ls-files` failed; it needs a git work tree');
  }
  const all = new Set<string>();
  for (const f of files) {
    all.add(f);
    for (let d = posix.dirname(f); d !== '.'; d = posix.dirname(d)) all.add(d);
  }
  return all;
}

// ---------------------------------------------------------------------------------------------
// Links

export function checkLinks(docs: Doc[], repo: Set<string>): Finding[] {
  const findings: Finding[] = [];
  const byFile = new Map(docs.map((d) => [d.file, d]));
  const docAt = (file: string) => {
    let d = byFile.get(file);
    if (!d) byFile.set(file, (d = readDoc(file)));
    return d;
  };
  // Inline links and images, `[text](target "title")` (the text may hold one level of brackets),
  // and the definitions of reference links, `[name]: target`.
  const link = /!?\[((?:[^[\]]|\[[^[\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)|^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)/gm;
  // A section cited by name after its link: `[Operating Waggle](operations.md), "Bounded memory"`.
  const cited = /^,\s+"([^"]+)"/;
  for (const doc of docs) {
    for (const m of doc.prose.matchAll(link)) {
      const target = m[2] ?? m[3];
      const line = doc.lineOf(m.index + m[0].search(/\]\(|\]:/));
      if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const anchor = hash < 0 ? '' : decodeURIComponent(target.slice(hash + 1));
      const file = pathPart ? posix.normalize(posix.join(posix.dirname(doc.file), pathPart)).replace(/\/$/, '') : doc.file;
      if (file === '..' || file.startsWith('../')) {
        findings.push({ file: doc.file, line, problem: `link ${target} leads out of the repository` });
        continue;
      }
      if (file !== doc.file && !repo.has(file)) {
        findings.push({ file: doc.file, line, problem: `link ${target}: no file ${file} in the repository` });
        continue;
      }
      if (!file.endsWith('.md')) continue;
      const targetDoc = docAt(file);
      if (anchor && !targetDoc.headings.some((h) => h.anchor === anchor)) {
        findings.push({ file: doc.file, line, problem: `link ${target}: ${file} has no heading with the anchor #${anchor}` });
      }
      const c = cited.exec(doc.prose.slice(m.index + m[0].length));
      if (c) {
        const name = c[1].replace(/\s+/g, ' ').toLowerCase();
        // Docs cite a section by the start of its heading or by a part of it ("Soak figures: the full hour").
        const found =
          targetDoc.headings.some((h) => h.text.toLowerCase().includes(name)) ||
          targetDoc.leads.some((l) => l.toLowerCase().startsWith(name));
        if (!found) findings.push({ file: doc.file, line, problem: `"${c[1]}": ${file} has no such heading or bold paragraph lead` });
      }
    }
  }
  return findings;
}

/** A table broken by a blank line renders its later rows as text with raw pipes. */
export function checkTables(docs: Doc[]): Finding[] {
  const findings: Finding[] = [];
  const delimiter = /^ {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
  for (const doc of docs) {
    const isRow = (i: number) => i >= 0 && !doc.fenced.has(i + 1) && /^ {0,3}\|/.test(doc.lines[i]);
    for (let i = 0; i < doc.lines.length; i++) {
      // The first of a run of rows must be a header, followed by the delimiter row.
      if (!isRow(i) || isRow(i - 1)) continue;
      if (!delimiter.test(doc.lines[i + 1] ?? '')) {
        findings.push({ file: doc.file, line: i + 1, problem: 'table rows without a header and |---| line (a blank line inside a table?): they render as text' });
      }
    }
  }
  return findings;
}

// ---------------------------------------------------------------------------------------------
// Commands

/** A command of the CLI as commander defines it: its names, its options' flags, its subcommands. */
export interface CliCommand {
  name: string;
  aliases: string[];
  flags: string[];
  commands: CliCommand[];
}

// Run in a child process on the built CLI (dist/main.js, which `npm test` builds first): main.js
// parses process.argv as soon as it is imported, so its program is caught at that call instead
// and printed. One process rather than a `--help` per command; the built CLI rather than src/
// imported into vitest, because its modules load natively in half the time, and in parallel
// with the rest of the check.
const DUMP_PROGRAM = `
const { Command } = await import('commander');
let program;
Command.prototype.parse = function () { program ??= this; return this; };
Command.prototype.parseAsync = async function () { program ??= this; return this; };
await import(process.argv[1]);
const tree = (c) => ({ name: c.name(), aliases: c.aliases(), flags: c.options.flatMap((o) => [o.long, o.short].filter(Boolean)), commands: c.commands.map(tree) });
process.stdout.write(JSON.stringify(program ? tree(program) : null));
`;

/** The `waggle` program of dist/main.js, refused when dist/ is older than the CLI's sources. */
export async function loadCli(): Promise<CliCommand> {
  const main = posix.join(ROOT, 'dist/main.js');
  if (!existsSync(main)) throw new Error('docs check: dist/main.js is missing; run `npm run build` (npm test does)');
  const sources = ['src/main.ts', ...readdirSync(posix.join(ROOT, 'src/cli')).map((f) => `src/cli/${f}`)];
  const newer = sources.find((f) => statSync(posix.join(ROOT, f)).mtimeMs > statSync(main).mtimeMs);
  if (newer) throw new Error(`docs check: ${newer} is newer than dist/main.js; run \`npm run build\` (npm test does)`);
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', DUMP_PROGRAM, main], { cwd: ROOT, timeout: 20_000 });
  const program = JSON.parse(stdout) as CliCommand | null;
  if (!program) throw new Error('docs check: dist/main.js parsed no commander program on import; update DUMP_PROGRAM in test/docs-check.ts');
  return program;
}

/** Shell words of each command in `text`, split at |, &&, ||, ;, &, (, ), $( and backquotes. */
export function shellCommands(text: string): string[][] {
  const commands: string[][] = [[]];
  let word = '';
  let inWord = false;
  let quote = '';
  const end = () => {
    if (inWord) commands[commands.length - 1].push(word);
    word = '';
    inWord = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = '';
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && text[i + 1] === '\n') i++;
    else if (/\s/.test(c)) {
      end();
      if (c === '\n') commands.push([]);
    } else if ('|&;()`'.includes(c) || (c === '$' && text[i + 1] === '(')) {
      end();
      commands.push([]);
      if (c === '$') i++;
    } else if (c === '#' && !inWord) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
    } else {
      word += c;
      inWord = true;
    }
  }
  end();
  return commands.filter((c) => c.length > 0);
}

/** Synopsis notation around a word: `[--port` → `--port`, `DIR],` → `DIR`. */
const unwrap = (w: string) => w.replace(/^[[({]+/, '').replace(/[\])},.;]+$/, '');

/** What is wrong with `waggle <args>` for this program, if anything. */
export function checkWaggleArgs(program: CliCommand, args: string[]): string[] {
  const words = args.map(unwrap).filter((w) => w && w !== '…' && w !== '...');
  const chain = [program];
  let i = 0;
  // Subcommands come first; a placeholder (`<command>`) or `help` ends what can be checked.
  while (i < words.length && !words[i].startsWith('-') && chain[chain.length - 1].commands.length > 0) {
    const w = words[i];
    if (/^[<[]/.test(w) || w === 'help') return [];
    const cmd = chain[chain.length - 1];
    const sub = cmd.commands.find((c) => c.name === w || c.aliases.includes(w));
    if (!sub) return [`\`${chain.map((c) => c.name).join(' ')}\` has no subcommand "${w}"`];
    chain.push(sub);
    i++;
  }
  const problems: string[] = [];
  for (const w of words.slice(i)) {
    if (!/^--?[A-Za-z]/.test(w)) continue;
    const flag = w.split('=')[0];
    if (flag === '--help' || flag === '-h') continue;
    // An option of the command or of a command above it (commander reads both).
    if (!chain.some((c) => c.flags.includes(flag))) {
      problems.push(`\`${chain.map((c) => c.name).join(' ')}\` has no option ${flag}`);
    }
  }
  return problems;
}

const SHELL_FENCES = new Set(['', 'sh', 'bash', 'shell', 'console', 'zsh']);
const PREFIX_WORDS = new Set(['env', 'exec', 'nohup', 'sudo', 'time']);

/** Each shell command shown in a doc, with the line it starts on. */
export function commandsOf(doc: Doc): { words: string[]; line: number }[] {
  const out: { words: string[]; line: number }[] = [];
  for (const s of doc.spans) {
    for (const words of shellCommands(s.text.replace(/\\\|/g, '/'))) out.push({ words, line: s.line });
  }
  for (const f of doc.fences) {
    if (!SHELL_FENCES.has(f.info)) continue;
    // One logical line at a time (joined at trailing backslashes), without a `$ ` prompt.
    for (let i = 0; i < f.lines.length; i++) {
      const first = f.lines[i].line;
      let text = f.lines[i].text.replace(/^\s*\$ /, '');
      while (/\\\s*$/.test(text) && i + 1 < f.lines.length) text = `${text.replace(/\\\s*$/, '')} ${f.lines[++i].text}`;
      for (const words of shellCommands(text)) out.push({ words, line: first });
    }
  }
  return out;
}

export function checkCommands(docs: Doc[], program: CliCommand, scripts: Record<string, string>): Finding[] {
  const findings: Finding[] = [];
  for (const doc of docs) {
    for (const { words: all, line } of commandsOf(doc)) {
      const add = (problem: string) => findings.push({ file: doc.file, line, problem: `\`${all.join(' ')}\`: ${problem}` });
      let words = all;
      while (words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]) || PREFIX_WORDS.has(words[0]))) words = words.slice(1);
      const [w0, w1] = words;
      if (w0 === 'waggle') checkWaggleArgs(program, words.slice(1)).forEach(add);
      else if (w0 === 'npx' && w1 === 'waggle') checkWaggleArgs(program, words.slice(2)).forEach(add);
      else if (w0 === 'node') {
        // Node's own flags come before the script; -e/-p run code, not a file.
        let i = 1;
        while (i < words.length && words[i].startsWith('-')) {
          if (/^(-e|-p|--eval|--print)$/.test(words[i])) break;
          i++;
        }
        if (i < words.length && !words[i].startsWith('-') && words[i].replace(/^\.\//, '') === 'dist/main.js') {
          checkWaggleArgs(program, words.slice(i + 1)).forEach(add);
        }
      } else if (w0 === 'npm' && ['run', 'run-script', 'start', 'test'].includes(w1)) {
        const script = w1 === 'start' || w1 === 'test' ? w1 : words[2];
        if (!script) continue;
        if (!(script in scripts)) {
          add(`package.json has no script "${script}"`);
          continue;
        }
        // Arguments after `--` go to the script; when it runs the CLI, they are CLI arguments.
        const dash = words.indexOf('--');
        const cli = /dist\/main\.js((?:\s+[a-z][\w-]*)*)/.exec(scripts[script]);
        if (dash >= 0 && cli) checkWaggleArgs(program, [...cli[1].trim().split(/\s+/).filter(Boolean), ...words.slice(dash + 1)]).forEach(add);
      }
    }
  }
  return findings;
}

// ---------------------------------------------------------------------------------------------
// Paths named in code: `src/query/plan.ts`, `node bench/otlp.mjs`.

/** The repository's own top-level folders; paths under dist/, data/ and the like are made by a build or a run. */
const SOURCE_FOLDERS = /^(?:\.\/)?((?:src|test|bench|scripts|native|web|docs|\.ci)\/[^\s]*)$/;

export function checkPaths(docs: Doc[], repo: Set<string>): Finding[] {
  const findings: Finding[] = [];
  for (const doc of docs) {
    const words = [
      ...doc.spans.flatMap((s) => s.text.split(/\s+/).map((w) => ({ w, line: s.line }))),
      ...doc.fences.filter((f) => SHELL_FENCES.has(f.info)).flatMap((f) => f.lines.flatMap((l) => l.text.split(/\s+/).map((w) => ({ w, line: l.line })))),
    ];
    for (const { w, line } of words) {
      const m = SOURCE_FOLDERS.exec(unwrap(w).replace(/[:#].*$/, ''));
      // Globs and placeholders (`bench/*.mjs`, `test/<name>.test.ts`, `src/…`) name no one file.
      if (!m || /[*?<>{}…]/.test(m[1])) continue;
      const path = m[1].replace(/\/$/, '');
      if (!repo.has(path)) findings.push({ file: doc.file, line, problem: `${m[1]}: no such file or folder in the repository` });
    }
  }
  return findings;
}

// ---------------------------------------------------------------------------------------------
// Environment variables

const NAME = /\b(?:WAGGLE|BENCH|SOAK)_[A-Z0-9_]*[A-Z0-9]\b/g;

/** Names read from an environment object in `source`: `env.X`, `env['X']`, and with `literals`
 *  also a bare `'X'` (settings.ts hands names to its readers: `int('WAGGLE_SMTP_PORT', …)`). */
export function envReads(source: string, literals: boolean): Set<string> {
  const p = 'WAGGLE_[A-Z0-9_]*[A-Z0-9]';
  const re = new RegExp(`env\\.(${p})\\b|env\\[['"](${p})['"]\\]${literals ? `|['"](${p})['"]` : ''}`, 'g');
  return new Set([...source.matchAll(re)].map((m) => m[1] ?? m[2] ?? m[3]));
}

export interface KnownNames {
  /** WAGGLE_* settings src/settings.ts reads. */
  settings: Set<string>;
  /** WAGGLE_* variables only the tests and their scripts read (test/, scripts/). */
  testOnly: Set<string>;
  /** Text of bench/*.mjs, where BENCH_* and SOAK_* are read. */
  bench: string;
}

export function knownNames(): KnownNames {
  const read = (dir: string, ext: RegExp) =>
    readdirSync(posix.join(ROOT, dir))
      .filter((f) => ext.test(f) && statSync(posix.join(ROOT, dir, f)).isFile())
      .map((f) => readFileSync(posix.join(ROOT, dir, f), 'utf8'))
      .join('\n');
  const settings = envReads(readFileSync(posix.join(ROOT, 'src/settings.ts'), 'utf8'), true);
  const testOnly = new Set(
    [...envReads(read('test', /\.ts$/) + read('scripts', /\.m?js$/), false)].filter((n) => !settings.has(n)),
  );
  return { settings, testOnly, bench: read('bench', /\.mjs$/) };
}

export function checkEnvNames(docs: Doc[], known: KnownNames): Finding[] {
  const findings: Finding[] = [];
  for (const doc of docs) {
    doc.lines.forEach((l, i) => {
      for (const [name] of l.matchAll(NAME)) {
        const ok = name.startsWith('WAGGLE_') ? known.settings.has(name) || known.testOnly.has(name) : new RegExp(`\\b${name}\\b`).test(known.bench);
        if (!ok) {
          const where = name.startsWith('WAGGLE_') ? 'src/settings.ts (nor test/ or scripts/)' : 'bench/*.mjs';
          findings.push({ file: doc.file, line: i + 1, problem: `${name}: not read by ${where}` });
        }
      }
    });
  }
  return findings;
}

/** Every setting settings.ts reads is in docs/settings.md. */
export function checkSettingsDocumented(known: KnownNames): Finding[] {
  const settingsDoc = readFileSync(posix.join(ROOT, 'docs/settings.md'), 'utf8');
  const source = readFileSync(posix.join(ROOT, 'src/settings.ts'), 'utf8').split('\n');
  return [...known.settings]
    .filter((name) => !new RegExp(`\\b${name}\\b`).test(settingsDoc))
    .map((name) => ({
      file: 'src/settings.ts',
      line: source.findIndex((l) => l.includes(name)) + 1,
      problem: `${name} is read but not in docs/settings.md`,
    }));
}
