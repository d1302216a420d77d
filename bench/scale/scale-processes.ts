/**
 * The processes of the scale benchmark: the counting PostgreSQL proxy and the service replicas
 * (compiled `dist/src/server.js`, each with its own data folder holding every agent's home, since
 * a turn of any agent may land on any replica).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { BENCH_FILES, benchFileText, freePort, spawnNode, waitForHealth } from '../bench-support.js';
import type { ProxyStats } from './pg-wire-proxy.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TURN_INPUT = 'Read the four files twice.';

/** Work to undo at the end of the run, pushed in the order it was done. */
export type Cleanups = (() => Promise<void>)[];

export interface Replica {
  readonly index: number;
  readonly baseUrl: string;
  readonly dataDir: string;
  readonly child: ChildProcess;
  readonly logFile: string;
}

/** The counting proxy's process, asked for its counters over stdin. */
export interface Proxy {
  readonly child: ChildProcess;
  readonly port: number;
  stats(): Promise<ProxyStats>;
}

export async function startProxy(postgresUrl: string, cleanups: Cleanups): Promise<Proxy> {
  const target = new URL(postgresUrl);
  const child = spawnNode(path.join(ROOT, 'bench/scale/pg-wire-proxy.ts'), [target.hostname, target.port === '' ? '5432' : target.port], { NODE_OPTIONS: '' });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const line = await lines.next();
    if (line.done === true) throw new Error('the PostgreSQL proxy exited');
    return line.value;
  };
  const first = await next();
  const port = Number(/^listening (\d+)$/.exec(first)?.[1]);
  if (!Number.isInteger(port)) throw new Error(`the PostgreSQL proxy said ${first}`);
  let queue: Promise<unknown> = Promise.resolve();
  cleanups.push(async () => {
    child.stdin!.end('exit\n');
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  });
  return {
    child,
    port,
    stats: () => {
      const answer = queue.then(async () => {
        child.stdin!.write('stats\n');
        return JSON.parse(await next()) as ProxyStats;
      });
      queue = answer.catch(() => undefined);
      return answer;
    },
  };
}

export async function startReplica(options: { index: number; databaseUrl: string; providerUrl: string; agents: number; cleanups: Cleanups }): Promise<Replica> {
  const { index, databaseUrl, providerUrl, agents, cleanups } = options;
  const dataDir = await mkdtemp(path.join(tmpdir(), `turn-runtime-scale-${index}-`));
  // Commands run as the sandbox's unprivileged user, who must pass through the data folder.
  await chmod(dataDir, 0o711);
  for (let slot = 0; slot < agents; slot += 1) {
    const home = path.join(dataDir, 'agents', agentId(slot), 'home');
    await mkdir(home, { recursive: true });
    for (const [fileIndex, file] of BENCH_FILES.entries()) {
      await writeFile(path.join(home, file), await benchFileText(fileIndex));
    }
  }
  const port = await freePort();
  const logFile = path.join(dataDir, 'service.log');
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/src/server.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      INSTANCE_ID: `scale-${index}`,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      OPENAI_BASE_URL: providerUrl,
      OPENAI_API_KEY: 'sk-bench',
      MODEL_MAX_RETRIES: '0',
      MAX_CONCURRENT_TURNS: '5000',
    },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const replica: Replica = { index, baseUrl: `http://127.0.0.1:${port}`, dataDir, child, logFile };
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dataDir, { recursive: true, force: true });
  });
  try {
    await waitForHealth(replica.baseUrl);
  } catch (error) {
    console.error((await readFile(logFile, 'utf8').catch(() => '')).slice(-2_000));
    throw error;
  }
  return replica;
}

export const agentId = (slot: number): string => `scale-${slot}`;
/** The bench's turn for the agent of a client slot. */
export const turnBody = (slot: number): string => JSON.stringify({ agent: { id: agentId(slot), tools: { computer: true } }, input: TURN_INPUT, model: { name: 'gpt-5.1' } });
