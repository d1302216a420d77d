import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../bench-support.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** One service process the torture started, in a process group of its own. */
export interface TortureService {
  readonly instanceId: string;
  readonly baseUrl: string;
  readonly pid: number;
  /** True once the process has exited. */
  exited(): boolean;
  /** kill -9 of its whole process group: nothing is cleaned up, as in a crash. */
  kill(): Promise<void>;
  /** SIGTERM to its process group (a drain), SIGKILL after 15 s. */
  stop(): Promise<void>;
}

/**
 * Starts the service (`src/server.ts` through tsx unless `entry` names the built one) as the
 * leader of a new process group, so that a kill reaches it and everything it started in that
 * group, and nothing else. Its log goes to `logFile`; waits until `/healthz` answers.
 */
export async function startTortureService(options: {
  readonly instanceId: string;
  readonly dataDir: string;
  readonly env: Readonly<Record<string, string>>;
  readonly logFile: string;
  readonly entry?: string;
  readonly startTimeoutMs?: number;
}): Promise<TortureService> {
  const port = await freePort();
  const entry = options.entry ?? 'src/server.ts';
  const log = openSync(options.logFile, 'a');
  const child = spawn(process.execPath, [...(entry.endsWith('.ts') ? ['--import', 'tsx'] : []), entry], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', DATA_DIR: options.dataDir, PORT: String(port), INSTANCE_ID: options.instanceId, ...options.env },
    stdio: ['ignore', log, log],
    detached: true,
  });
  closeSync(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`replica ${options.instanceId} could not be spawned`);
  const state = { exited: false };
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      state.exited = true;
      resolve();
    });
  });
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone already.
    }
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (state.exited) throw new Error(`replica ${options.instanceId} exited before it listened; its log:\n${tail(options.logFile)}`);
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) {
      killGroup('SIGKILL');
      await exited;
      throw new Error(`replica ${options.instanceId} did not start within the time; its log:\n${tail(options.logFile)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    instanceId: options.instanceId,
    baseUrl,
    pid,
    exited: () => state.exited,
    async kill() {
      killGroup('SIGKILL');
      await exited;
    },
    async stop() {
      if (state.exited) return;
      killGroup('SIGTERM');
      const timer = setTimeout(() => {
        killGroup('SIGKILL');
      }, 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-60).join('\n');
  } catch {
    return '(no log)';
  }
}
