// The layer rules of src/ (.dependency-cruiser.cjs), checked on the build in dist/: the modules
// built from today's src/ (a moved file's old output stays in dist/ and is left out). Run by
// `npm test` after its build; `npm run check:deps` builds and checks alone. First, on src/ itself,
// the modules' size and seam targets (check-modules.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkModules } from './check-modules.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const findings = checkModules(root);
for (const f of findings) console.error(`check-modules: ${f}`);
const sources = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [join(dir, e.name)] : [],
  );
const modules = sources(join(root, 'src')).map((f) => relative(join(root, 'src'), f).replace(/\.ts$/, '.js'));
const missing = modules.filter((m) => !existsSync(join(root, 'dist', m)));
if (missing.length > 0) {
  console.error(`check-deps: not built: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''} (npm run build first)`);
  process.exit(1);
}
const cli = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const r = spawnSync(process.execPath, [cli, '--config', join(root, '.dependency-cruiser.cjs'), '--output-type', 'err', ...modules], {
  cwd: join(root, 'dist'),
  stdio: 'inherit',
});
process.exit(findings.length > 0 ? 1 : (r.status ?? 1));
