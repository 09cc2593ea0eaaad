// The size and seam targets of src/ (issue 36), checked with the layer rules (check-deps.mjs runs
// this first, so both `npm test` and `npm run check:deps` do; `node scripts/check-modules.mjs`
// alone). It reads src/ itself, not the build:
// - no module under src/api/v1/ over 250 lines;
// - no module of src/ over 500 lines unless its header comment (the comment lines it starts with)
//   says why, in a sentence beginning "Over 500 lines:";
// - src/query/ and src/jobs/ write none of one engine's own SQL (quantile_disc, SEMI JOIN,
//   QUALIFY, USING SAMPLE, assumeNotNull): each engine's statements are stores/events/'s.
// Each finding names the file (and line); the exit status is 1 if there is any.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const API_V1_LIMIT = 250;
const SRC_LIMIT = 500;
const REASON = /Over 500 lines:\s*\S/;
const ENGINE_SQL = /quantile_disc|SEMI JOIN|QUALIFY|USING SAMPLE|assumeNotNull/;

const sources = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [join(dir, e.name)] : [],
  );

/** The comment lines a module starts with (blank lines between them included), up to its first line of code. */
function header(lines) {
  const out = [];
  let block = false;
  for (const line of lines) {
    const t = line.trim();
    if (block) {
      out.push(t);
      if (t.includes('*/')) block = false;
    } else if (t.startsWith('//') || t.startsWith('#!') || t === '') out.push(t);
    else if (t.startsWith('/*')) {
      out.push(t);
      block = !t.includes('*/');
    } else break;
  }
  return out.join('\n');
}

/** Findings for the src/ under root, each a line naming the file. */
export function checkModules(root) {
  const findings = [];
  for (const file of sources(join(root, 'src'))) {
    const path = relative(root, file).split(sep).join('/');
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n');
    if (text.endsWith('\n')) lines.pop();
    const n = lines.length;
    if (path.startsWith('src/api/v1/') && n > API_V1_LIMIT) {
      findings.push(`${path}: ${n} lines, over the ${API_V1_LIMIT} an api/v1 module may have`);
    } else if (n > SRC_LIMIT && !REASON.test(header(lines))) {
      findings.push(`${path}: ${n} lines, over ${SRC_LIMIT}, and its header comment gives no reason ("Over 500 lines: …")`);
    }
    if (path.startsWith('src/query/') || path.startsWith('src/jobs/')) {
      lines.forEach((line, i) => {
        const m = ENGINE_SQL.exec(line);
        if (m) findings.push(`${path}:${i + 1}: "${m[0]}" is one engine's SQL; it belongs in src/stores/events/ (the dialects)`);
      });
    }
  }
  return findings;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const findings = checkModules(fileURLToPath(new URL('..', import.meta.url)));
  for (const f of findings) console.error(`check-modules: ${f}`);
  process.exit(findings.length > 0 ? 1 : 0);
}
