import type { Worker } from 'node:worker_threads';
import { spawnModuleWorker } from '../concurrency/spawn-module-worker.js';
import { CommandSandboxError, type CommandRunResult } from './command-sandbox.js';
import type { CommandCgroupPlace } from './pids-cgroup.js';
import { abortReasonText, type CommandProcessOptions } from './run-command-process.js';

/** Runs one command process to its end (runCommandProcess, here or elsewhere). */
export type LaunchCommand = (options: CommandProcessOptions) => Promise<CommandRunResult>;

/** A command for the launcher thread: CommandProcessOptions without what cannot cross threads. */
export interface LaunchRequest {
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly inputs: readonly (string | Uint8Array | { readonly fd: number })[];
  readonly inheritedFds: readonly number[];
  readonly timeoutMs: number;
  readonly outputLimitBytes: number;
  readonly cgroups: readonly CommandCgroupPlace[];
  readonly pidNamespace: boolean;
  /** Set when the request's signal had already fired: why. */
  readonly abortedBecause?: string;
}

export type ToLauncher = { readonly type: 'run'; readonly id: number; readonly request: LaunchRequest } | { readonly type: 'abort'; readonly id: number; readonly reason: string };

export type FromLauncher =
  | { readonly type: 'spawned'; readonly id: number; readonly pid: number }
  | { readonly type: 'ended'; readonly id: number; readonly result: CommandRunResult }
  | { readonly type: 'failed'; readonly id: number; readonly message: string; readonly sandboxError: boolean };

/**
 * The launcher thread's heap. Its work is light (a few objects per command; output is kept in
 * Buffers, outside the heap), and a small young generation is collected often and cheaply:
 * with V8's default, the thread kept 20 MiB of garbage after a storm of 600 commands. A thread
 * past the old generation's bound dies, and its commands with it (see `lost`).
 */
const LAUNCHER_HEAP = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 128 };

/** How long the launcher thread stays without a command before it ends (a new one takes ~20 ms to start). */
const IDLE_EXIT_MS = 10_000;

interface InFlight {
  readonly resolve: (result: CommandRunResult) => void;
  readonly reject: (error: Error) => void;
  readonly stopWatching: () => void;
  readonly onSpawn?: (pid: number) => void;
  pid: number | undefined;
}

/**
 * Starts commands from a thread of their own (command-launcher-worker.ts), never from the
 * event loop that serves turns. Node's spawn forks the whole service process, and a fork
 * copies its page tables: about 3.5 ms at 150 MB of RSS, and more as it grows, with the
 * thread that spawns stopped meanwhile. Fifty commands starting together held the event loop
 * for ~175 ms, and every client that left in that time waited for it (the disconnect storm,
 * docs/benchmarks.md). The launcher thread also watches each process to its end and kills
 * it: a cancel is one message, and the kill, the cgroup's emptying and the pipes' draining run
 * there. One thread serves the whole process; it keeps the process alive only while a command
 * runs, and ends after IDLE_EXIT_MS without one.
 */
export class CommandLauncherThread {
  #worker: Worker | undefined;
  readonly #inFlight = new Map<number, InFlight>();
  readonly #idleExitMs: number;
  #nextId = 1;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(options: { readonly idleExitMs?: number } = {}) {
    this.#idleExitMs = options.idleExitMs ?? IDLE_EXIT_MS;
  }

  /** True while the thread is there (from the first command until it ends, idle or stopped). */
  get threadRunning(): boolean {
    return this.#worker !== undefined;
  }

  /**
   * Ends the thread now. The commands it still watches are killed (their process groups; the
   * callers remove their cgroups) and their runs fail with a CommandSandboxError, as when the
   * thread dies. The next command starts another thread.
   */
  async stop(): Promise<void> {
    clearTimeout(this.#idleTimer);
    const worker = this.#worker;
    if (worker === undefined) return;
    await worker.terminate();
  }

  run(options: CommandProcessOptions): Promise<CommandRunResult> {
    const worker = this.#started();
    clearTimeout(this.#idleTimer);
    const id = this.#nextId;
    this.#nextId += 1;
    const { signal } = options;
    return new Promise<CommandRunResult>((resolve, reject) => {
      const onAbort = (): void => {
        worker.postMessage({ type: 'abort', id, reason: abortReasonText(signal.reason) } satisfies ToLauncher);
      };
      this.#inFlight.set(id, {
        resolve,
        reject,
        pid: undefined,
        ...(options.onSpawn === undefined ? {} : { onSpawn: options.onSpawn }),
        stopWatching: () => {
          signal.removeEventListener('abort', onAbort);
        },
      });
      if (this.#inFlight.size === 1) worker.ref();
      const request: LaunchRequest = {
        file: options.file,
        args: options.args,
        env: options.env,
        cwd: options.cwd,
        // A Buffer arrives as a Uint8Array; the launcher makes it a Buffer again.
        inputs: options.inputs,
        inheritedFds: options.inheritedFds,
        timeoutMs: options.timeoutMs,
        outputLimitBytes: options.outputLimitBytes,
        cgroups: options.cgroups.map((cgroup) => cgroup.place),
        pidNamespace: options.pidNamespace,
        ...(signal.aborted ? { abortedBecause: abortReasonText(signal.reason) } : {}),
      };
      worker.postMessage({ type: 'run', id, request } satisfies ToLauncher);
      if (!signal.aborted) signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  #started(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = spawnModuleWorker(import.meta.url, 'command-launcher-worker', { resourceLimits: LAUNCHER_HEAP });
    worker.unref();
    worker.on('message', (message: FromLauncher) => {
      const entry = this.#inFlight.get(message.id);
      if (entry === undefined) return;
      if (message.type === 'spawned') {
        entry.pid = message.pid;
        entry.onSpawn?.(message.pid);
        return;
      }
      this.#settle(message.id, entry);
      if (message.type === 'ended') entry.resolve(message.result);
      else entry.reject(message.sandboxError ? new CommandSandboxError(message.message) : new Error(message.message));
    });
    const lost = (why: string): void => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      clearTimeout(this.#idleTimer);
      for (const [id, entry] of this.#inFlight) {
        // Its watcher is gone: what it started must not run on unwatched.
        if (entry.pid !== undefined) killGroup(entry.pid);
        this.#settle(id, entry);
        entry.reject(new CommandSandboxError(`the command launcher thread stopped (${why}); the command was killed`));
      }
    };
    worker.on('error', (error: unknown) => {
      lost(error instanceof Error ? error.message : String(error));
    });
    worker.on('exit', (code) => {
      lost(`exit code ${String(code)}`);
    });
    this.#worker = worker;
    return worker;
  }

  #settle(id: number, entry: InFlight): void {
    entry.stopWatching();
    this.#inFlight.delete(id);
    if (this.#inFlight.size > 0) return;
    this.#worker?.unref();
    // Idle for a while: the thread goes, and its heap with it; the next command starts another.
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      const idle = this.#worker;
      if (idle === undefined || this.#inFlight.size > 0) return;
      this.#worker = undefined;
      void idle.terminate();
    }, this.#idleExitMs);
    this.#idleTimer.unref();
  }
}

let shared: CommandLauncherThread | undefined;

/** Runs the command from the process's launcher thread (started on first use); its durations are timed by the system clock there. */
export const launchInThread: LaunchCommand = (options) => {
  shared ??= new CommandLauncherThread();
  return shared.run(options);
};

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is gone already.
  }
}
