/**
 * The operator's fault suite (`npm run faults`): runs every scenario file in this folder
 * (`<topic>.ts`, each a standalone script that starts what it needs on loopback, stops by
 * itself and prints its figures), one after another, and exits non-zero if any failed.
 * Not part of `npm test`: scenarios take minutes and print figures rather than assert speed.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const folder = path.dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const scenarios = readdirSync(folder)
  .filter((name) => name.endsWith('.ts') && name !== 'run.ts' && !name.endsWith('-kit.ts'))
  .filter((name) => only.length === 0 || only.includes(path.basename(name, '.ts')))
  .sort();

let failed = 0;
for (const scenario of scenarios) {
  console.log(`\n== ${path.basename(scenario, '.ts')}`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(folder, scenario)], { stdio: 'inherit' });
  if (result.status !== 0) {
    failed += 1;
    console.log(`!! ${scenario} failed (exit ${result.status ?? result.signal ?? 'unknown'})`);
  }
}
console.log(`\n${scenarios.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
