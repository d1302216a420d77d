import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** One real service process (`src/server.ts` under tsx), listening on a free loopback port. */
export interface ServiceProcess {
  readonly baseUrl: string;
  readonly dataDir: string;
  readonly instanceId: string;
  readonly child: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** kill -9: the process dies at once, with nothing cleaned up. */
  crash(): Promise<void>;
  /** SIGTERM (a graceful drain), then removes its data folder. */
  stop(): Promise<void>;
}

const ROOT = path.resolve(import.meta.dirname, '../..');

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * Starts the service as its own process, as a replica runs in production, and waits until
 * `/healthz` answers. `env` adds to a minimal environment (PATH only from this process).
 */
export async function startServiceProcess(options: {
  readonly instanceId: string;
  readonly env?: Record<string, string>;
  readonly startTimeoutMs?: number;
  /** The entry to run, relative to the repository: `src/server.ts` (through tsx) unless given, e.g. the built `dist/src/server.js`. */
  readonly entry?: string;
  /** The data folder of an earlier process (a restart); a new one under the temp folder otherwise. */
  readonly dataDir?: string;
}): Promise<ServiceProcess> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), `turn-runtime-${options.instanceId}-`)));
  // Commands run as the sandbox's unprivileged user, who must pass through the data folder.
  await chmod(dataDir, 0o711);
  const port = await freePort();
  const entry = options.entry ?? 'src/server.ts';
  const child = spawn(process.execPath, [...(entry.endsWith('.ts') ? ['--import', 'tsx'] : []), entry], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: process.env['TEST_LOG_LEVEL'] ?? 'silent', INSTANCE_ID: options.instanceId, ...options.env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else
      child.once('exit', () => {
        resolve();
      });
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`replica ${options.instanceId} exited with ${child.exitCode} before it listened`);
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`replica ${options.instanceId} did not start`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    baseUrl,
    dataDir,
    instanceId: options.instanceId,
    child,
    exited,
    async crash() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
