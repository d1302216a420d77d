import { spawn } from 'node:child_process';
import path from 'node:path';

export type HomeLockMode = 'shared' | 'exclusive';

/** Where the lock of a home lives: beside it, never inside, so no command can touch it. */
export function homeLockFile(home: string): string {
  const absolute = path.resolve(home);
  return path.join(path.dirname(absolute), `.${path.basename(absolute)}.lock`);
}

/**
 * Runs `task` while holding the agent home's lock: `exclusive` for a command (which may
 * change anything in the home at any moment), `shared` for the file tools (which may run
 * side by side, but never while a command of the same agent runs, so an agent cannot race
 * its own file tools with a rename loop). The lock is a `flock(2)` on a file beside the
 * home, held by a small util-linux `flock` process: it works across turns and across every
 * service process on this host, and it is released by the kernel when that process ends,
 * even if the service dies with it (its stdin is our pipe). Waiting ends when `signal` fires.
 */
export async function withAgentHomeLock<T>(options: { home: string; mode: HomeLockMode; signal: AbortSignal }, task: () => Promise<T>): Promise<T> {
  const release = await acquireHomeLock(options);
  try {
    return await task();
  } finally {
    await release();
  }
}

/** Acquires the lock; resolves with the function that releases it. */
export function acquireHomeLock(options: { home: string; mode: HomeLockMode; signal: AbortSignal }): Promise<() => Promise<void>> {
  const { signal } = options;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const holder = spawn('flock', [options.mode === 'shared' ? '--shared' : '--exclusive', homeLockFile(options.home), 'sh', '-c', 'echo locked; exec cat >/dev/null'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: '/usr/bin:/bin' },
    });
    let settled = false;
    let errors = '';
    const exited = new Promise<void>((done) => {
      holder.once('close', () => {
        done();
      });
    });
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      holder.kill('SIGKILL');
      reject(error);
    };
    const onAbort = (): void => {
      fail(signal.reason instanceof Error ? signal.reason : new Error('the turn was cancelled while waiting for the agent home'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    holder.on('error', (error) => {
      fail(new Error(`could not lock the agent home: ${error.message}`));
    });
    holder.stdin.on('error', () => undefined);
    holder.stderr.on('data', (chunk: Buffer) => {
      errors += chunk.toString('utf8');
    });
    holder.stdout.once('data', () => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      resolve(async () => {
        holder.stdin.end();
        await exited;
      });
    });
    holder.once('close', (code) => {
      fail(new Error(`could not lock the agent home: flock exited with ${String(code)}${errors.trim() === '' ? '' : `: ${errors.trim()}`}`));
    });
  });
}
