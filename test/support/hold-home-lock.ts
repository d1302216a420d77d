/**
 * Another service process's side of the agent home lock: `tsx hold-home-lock.ts <home>
 * <shared|exclusive>` takes the lock, prints "locked", and holds it until its stdin ends
 * (or it is killed).
 */
import { acquireHomeLock, type HomeLockMode } from '../../src/tools/computer/agent-home-lock.js';

const [home, mode] = process.argv.slice(2) as [string, HomeLockMode];
const release = await acquireHomeLock({ home, mode, signal: new AbortController().signal });
process.stdout.write('locked\n');
process.stdin.resume();
process.stdin.on('end', () => {
  release();
  process.stdout.write('released\n');
  process.exit(0);
});
