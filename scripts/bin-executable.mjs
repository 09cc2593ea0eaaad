// The build makes package.json's bin (dist/main.js) executable: tsc writes it without the mode
// bit, and `npx waggle` runs the project's own bin through `sh`, which refuses a file it may not
// execute ("waggle: Permission denied").
import { chmodSync, readFileSync } from 'node:fs';

const { bin } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
for (const file of Object.values(bin)) chmodSync(new URL(`../${file}`, import.meta.url), 0o755);
