import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';

/** A real service process (`src/server.ts` under tsx) on a free loopback port. */
export interface ServiceProcess {
  readonly baseUrl: string;
  readonly child: ChildProcess;
  /** kill -9, and wait for it to be gone. */
  kill(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: { PATH: process.env['PATH'] ?? '', PORT: String(port), LOG_LEVEL: 'silent', ...env },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else
      child.once('exit', () => {
        resolve();
      });
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const service = {
    baseUrl,
    child,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
  const deadline = performance.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) return service;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || performance.now() > deadline) {
      await service.kill();
      throw new Error(`the service process did not start (exit ${String(child.exitCode)})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
