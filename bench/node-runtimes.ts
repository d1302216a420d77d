/**
 * The Node.js versions the turn benchmark runs the service and the plain loop on: this one
 * (Node 20 here) and Node 24, the Dockerfile's.
 *
 * Node 24 comes from the npm registry, the way the `node` package gets it: the package
 * `node-linux-<arch>@24` is the official binary with its headers. It is unpacked under
 * `.bench/node-24/` (git-ignored, kept between runs). The service's one native addon that is
 * not N-API, better-sqlite3, is compiled against those headers (node-gyp, about two minutes
 * once) into an app folder beside it: `.bench/node-24/app/` holds a copy of `dist/` and
 * `bench/`, and a `node_modules/` of links to this checkout's packages but for that addon.
 *
 * `BENCH_NODE24=/path/to/node` uses a Node 24 binary of your own instead (the addon is still
 * built for it); `BENCH_NODE24=skip` leaves Node 24 out.
 */
import { execFile } from 'node:child_process';
import { access, cp, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const NODE_24 = process.env['BENCH_NODE24_VERSION'] ?? '24';

export interface NodeRuntime {
  /** e.g. "Node 20.20.2" */
  readonly label: string;
  /** The node binary. */
  readonly node: string;
  /** Where `dist/src/server.js` and `bench/plain-loop.ts` are, with a node_modules that fits this Node. */
  readonly appDir: string;
}

export async function benchRuntimes(log: (line: string) => void): Promise<NodeRuntime[]> {
  const runtimes: NodeRuntime[] = [{ label: `Node ${process.versions.node}`, node: process.execPath, appDir: ROOT }];
  const wanted = process.env['BENCH_NODE24'];
  if (wanted === 'skip') {
    log('Node 24: left out (BENCH_NODE24=skip)');
    return runtimes;
  }
  if (process.versions.node.startsWith('24.')) return runtimes;
  try {
    runtimes.push(await prepareNode24(wanted, log));
  } catch (error) {
    log(`Node 24: could not be prepared, so it is left out: ${error instanceof Error ? error.message : String(error)}`);
  }
  return runtimes;
}

async function prepareNode24(wanted: string | undefined, log: (line: string) => void): Promise<NodeRuntime> {
  const folder = path.join(ROOT, '.bench', 'node-24');
  await mkdir(folder, { recursive: true });
  const node = wanted ?? (await unpackNode24(folder, log));
  const nodeDir = path.resolve(path.dirname(node), '..');
  const { stdout } = await run(node, ['-p', 'process.versions.node + " " + process.versions.modules']);
  const [version = '', abi = ''] = stdout.trim().split(' ');
  const appDir = path.join(folder, 'app');
  await linkModules(appDir);
  await buildSqliteAddon({ appDir, node, nodeDir, abi, log });
  // This checkout's current build and bench code, copied every run (a link would resolve
  // their imports from this checkout's node_modules); what they read (ui/ …) is linked.
  for (const part of ['dist', 'bench', 'test/support', 'package.json']) {
    await rm(path.join(appDir, part), { recursive: true, force: true });
    await cp(path.join(ROOT, part), path.join(appDir, part), { recursive: true });
  }
  for (const part of ['ui', 'skills']) {
    const target = path.join(ROOT, part);
    if (!(await exists(target)) || (await exists(path.join(appDir, part)))) continue;
    await symlink(target, path.join(appDir, part));
  }
  return { label: `Node ${version}`, node, appDir };
}

/** `npm pack node-linux-<arch>@24`, unpacked once. */
async function unpackNode24(folder: string, log: (line: string) => void): Promise<string> {
  const runtime = path.join(folder, 'runtime');
  const node = path.join(runtime, 'bin', 'node');
  const marker = path.join(runtime, '.ready');
  if (await exists(marker)) return node;
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  log(`Node 24: fetching node-linux-${arch}@${NODE_24} from the npm registry …`);
  const { stdout } = await run('npm', ['pack', `node-linux-${arch}@${NODE_24}`, '--pack-destination', folder, '--json'], { maxBuffer: 16 * 1024 * 1024 });
  const [packed] = JSON.parse(stdout) as { filename: string }[];
  if (packed === undefined) throw new Error('npm pack named no file');
  await rm(runtime, { recursive: true, force: true });
  await mkdir(runtime, { recursive: true });
  await run('tar', ['xzf', path.join(folder, packed.filename), '-C', runtime, '--strip-components=1']);
  await rm(path.join(folder, packed.filename), { force: true });
  await writeFile(marker, '');
  return node;
}

/** app/node_modules: a link per package of this checkout, except better-sqlite3 (a copy, built below). */
async function linkModules(appDir: string): Promise<void> {
  const modules = path.join(appDir, 'node_modules');
  await mkdir(modules, { recursive: true });
  const present = new Set(await readdir(modules));
  for (const entry of await readdir(path.join(ROOT, 'node_modules'))) {
    if (entry === 'better-sqlite3' || present.has(entry)) continue;
    await symlink(path.join(ROOT, 'node_modules', entry), path.join(modules, entry));
  }
}

async function buildSqliteAddon(options: { appDir: string; node: string; nodeDir: string; abi: string; log: (line: string) => void }): Promise<void> {
  const addon = path.join(options.appDir, 'node_modules', 'better-sqlite3');
  const marker = path.join(addon, '.built-for-abi');
  const sourceVersion = (JSON.parse(await readFile(path.join(ROOT, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')) as { version: string }).version;
  const wantedMarker = `${options.abi} ${sourceVersion}`;
  if ((await readFile(marker, 'utf8').catch(() => '')) === wantedMarker) return;
  options.log(`Node 24: compiling better-sqlite3 ${sourceVersion} for ABI ${options.abi} (once; a few minutes) …`);
  await rm(addon, { recursive: true, force: true });
  await cp(path.join(ROOT, 'node_modules', 'better-sqlite3'), addon, { recursive: true });
  await rm(path.join(addon, 'build'), { recursive: true, force: true });
  const { stdout: npmRoot } = await run('npm', ['root', '-g']);
  const nodeGyp = path.join(npmRoot.trim(), 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  // npm's own settings (this machine's npm sets `nodedir` to the system Node's headers) would
  // win over the flag, so they are left out and the headers named in both places.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_config_')));
  await run(process.execPath, [nodeGyp, 'rebuild', '--release', `--nodedir=${options.nodeDir}`], {
    cwd: addon,
    env: { ...env, npm_config_nodedir: options.nodeDir },
    maxBuffer: 64 * 1024 * 1024,
  });
  // The addon must load on that Node, or the service would die at its first store access.
  await run(options.node, ['-e', `require(${JSON.stringify(path.join(addon, 'build', 'Release', 'better_sqlite3.node'))})`]);
  await writeFile(marker, wantedMarker);
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
