import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface ServiceProcess {
  readonly baseUrl: string;
  readonly child: ChildProcess;
  readonly exited: Promise<unknown>;
  /** kill -9, and waits until it is gone. */
  kill(): Promise<void>;
}

/** The real service as its own process (`src/server.ts`), listening on a free port, healthy. */
export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: { PATH: process.env['PATH'] ?? '', PORT: String(port), LOG_LEVEL: 'silent', ...env },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('the service process did not start');
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    baseUrl,
    child,
    exited,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
