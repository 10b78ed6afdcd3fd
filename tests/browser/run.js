// Runs the browser tests (specs/*.test.js) with node's test runner, one file
// at a time, after checking that what they need is here: Chromium at
// /usr/bin/chromium (or FOGBLAST_CHROMIUM) and playwright-core installed by
// `npm ci` (and axe-core, which the accessibility spec runs in the page).
// `tests/run` at the repository root installs them.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM, SCREENSHOTS } from './lib/paths.js';

const here = dirname(fileURLToPath(import.meta.url));
const missing = [];
if (!existsSync(CHROMIUM)) missing.push(`Chromium is not at ${CHROMIUM} (apt-get install -y chromium)`);
for (const pkg of ['playwright-core', 'axe-core']) {
  if (!existsSync(join(here, 'node_modules', pkg, 'package.json'))) missing.push(`${pkg} is not installed (cd tests/browser && npm ci)`);
}
if (missing.length) {
  console.error(`browser tests cannot run: ${missing.join('; ')}.\nRun tests/run to install what they need and run every test.`);
  process.exit(2);
}

const only = process.argv.slice(2);
const files = readdirSync(join(here, 'specs'))
  .filter((f) => f.endsWith('.test.js'))
  .filter((f) => !only.length || only.some((o) => f.includes(o)))
  .sort()
  .map((f) => join('specs', f));
console.log(`browser tests: ${files.length} files; screenshots in ${SCREENSHOTS}`);
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=spec', ...files], {
  cwd: here,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
