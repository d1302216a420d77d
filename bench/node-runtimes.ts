/**
 * The Node.js versions the turn benchmark runs the service and the plain loop on: this one
 * (Node 24, the primary line, under `scripts/with-node`) and each version in BENCH_NODES
 * (default: the 26 that CI tests; `BENCH_NODES=22.23.5,26.12.1`, or `skip` for none).
 *
 * Each comes from the npm registry through `scripts/with-node --node <version>`, the same
 * install CI uses (the official binary, published as `node-linux-<arch>`, unpacked once into
 * `.node/<version>/`). Every native module the service has is N-API with a prebuilt binary,
 * so they all run this checkout's `dist/` and `node_modules/` as they are.
 *
 * Node 20 cannot run the service any more (better-sqlite3 13 needs N-API 10, pg-boss 12
 * Node 22.12): its figures in docs/benchmarks.md are from the last run before the move.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const DEFAULT_OTHER_NODES = ['26.12.1'];

export interface NodeRuntime {
  /** e.g. "Node 24.22.3" */
  readonly label: string;
  /** The node binary. */
  readonly node: string;
  /** Where `dist/src/server.js` and `bench/plain-loop.ts` are, with a node_modules that fits this Node. */
  readonly appDir: string;
}

export async function benchRuntimes(log: (line: string) => void): Promise<NodeRuntime[]> {
  const runtimes: NodeRuntime[] = [{ label: `Node ${process.versions.node}`, node: process.execPath, appDir: ROOT }];
  const wanted = process.env['BENCH_NODES'];
  if (wanted === 'skip') {
    log('other Nodes: left out (BENCH_NODES=skip)');
    return runtimes;
  }
  const versions = wanted === undefined ? DEFAULT_OTHER_NODES : wanted.split(',').map((version) => version.trim()).filter((version) => version !== '');
  for (const version of versions) {
    if (version === process.versions.node) continue;
    try {
      const { stdout } = await run(path.join(ROOT, 'scripts', 'with-node'), ['--node', version, 'node', '-p', 'process.execPath'], { cwd: ROOT });
      runtimes.push({ label: `Node ${version}`, node: stdout.trim(), appDir: ROOT });
    } catch (error) {
      log(`Node ${version}: could not be installed, so it is left out: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return runtimes;
}
