import { spawn, type ChildProcess, type IOType } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { Writable } from 'node:stream';
import type { Clock } from '../clock.js';
import { STARTED_MARKER } from './command-environment.js';
import { CommandSandboxError, type CommandRunResult, type CommandStatus } from './command-sandbox.js';
import { formatDuration } from '../format/format-duration.js';
import { createOutputCollector } from './output-collector.js';
import type { CommandCgroup } from './pids-cgroup.js';

export type CommandInput = string | Buffer | { readonly fd: number };

export interface CommandProcessOptions {
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /**
   * The child's fds 3, 4, 5 … in order: text or bytes written through a pipe and then closed,
   * or `{ fd }`, an open descriptor of this process handed over as it is.
   */
  readonly inputs: readonly CommandInput[];
  /** fds of this process the child would inherit; each one past the inputs is covered with /dev/null. */
  readonly inheritedFds: readonly number[];
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly outputLimitBytes: number;
  /** The command's own cgroups (the spawn line must join them first; the caller removes them). */
  readonly cgroups: readonly CommandCgroup[];
  /** The command runs in a PID namespace of its own (bubblewrap): when its first process ends, every other one does. */
  readonly pidNamespace: boolean;
  readonly clock: Clock;
  /** Told the process id of the command's first process once it is spawned. */
  readonly onSpawn?: (pid: number) => void;
}

/** How long pipes may stay open after the process exited before they are cut. */
const PIPE_DRAIN_MS = 500;
/** stderr before the start marker is bwrap's own reporting; more than this is not useful. */
const DIAGNOSTICS_LIMIT = 16 * 1024;

/**
 * Spawns the sandbox (or the bare shell) as the leader of a new process group and watches
 * it to the end. On timeout or abort the whole group gets SIGKILL at once, with no grace
 * period: a command has nothing to save that is worth a slow cancel, and what it wrote
 * to the home stays. Output is read as it comes and kept within the limit, so a command
 * printing gigabytes costs CPU time, not memory.
 */
export function runCommandProcess(options: CommandProcessOptions): Promise<CommandRunResult> {
  const startedAt = options.clock.monotonicMs();
  if (options.signal.aborted) {
    return Promise.resolve(endedResult({ status: 'aborted', durationMs: 0, reason: abortReasonText(options.signal.reason), spawned: false, allGone: true }));
  }
  const inherited = options.inheritedFds.filter((fd) => fd >= 3 + options.inputs.length);
  // Opened and closed synchronously (a character device answers at once): the spawn then follows
  // in the same turn of the event loop as the call, with no wait in the thread pool between.
  let devNull: number | undefined;
  try {
    devNull = inherited.length > 0 ? openSync('/dev/null', 'r') : undefined;
  } catch (error) {
    return Promise.reject(new CommandSandboxError(`could not start ${options.file}: ${messageOf(error)}`, { cause: error }));
  }
  const stdio: (IOType | number)[] = ['ignore', 'pipe', 'pipe', ...options.inputs.map((input) => (typeof input === 'object' && 'fd' in input ? input.fd : ('pipe' as const)))];
  for (const fd of inherited) {
    while (stdio.length <= fd) stdio.push('ignore');
    if (devNull !== undefined) stdio[fd] = devNull;
  }
  // Never throws: a failed spawn rejects `ended`. The spawn has happened (synchronously) when it
  // returns, so the child holds its own copy of /dev/null and ours can close.
  const ended = watchCommandProcess(options, stdio, startedAt);
  if (devNull !== undefined) closeSync(devNull);
  return ended;
}

function watchCommandProcess(options: CommandProcessOptions, stdio: (IOType | number)[], startedAt: number): Promise<CommandRunResult> {
  const { clock, signal } = options;
  return new Promise<CommandRunResult>((resolve, reject) => {
    const collector = createOutputCollector({ limitBytes: options.outputLimitBytes });
    let diagnostics = '';
    let started = false;
    let killedBy: { readonly status: 'timed-out' | 'aborted'; readonly atMs: number } | undefined;
    let exit: { readonly code: number | null; readonly signal: NodeJS.Signals | null; readonly atMs: number } | undefined;
    let settled = false;

    // Looked at again right before the spawn (the listener below is added after it).
    if (signal.aborted) {
      resolve(endedResult({ status: 'aborted', durationMs: 0, reason: abortReasonText(signal.reason), spawned: false, allGone: true }));
      return;
    }
    let child: ChildProcess;
    try {
      child = spawn(options.file, options.args, {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio,
      });
    } catch (error) {
      reject(new CommandSandboxError(`could not start ${options.file}: ${messageOf(error)}`, { cause: error }));
      return;
    }
    // Replaced once the timer and the abort listener exist.
    let stopWatching = (): void => undefined;
    // First of all: a spawn that failed (EMFILE, EAGAIN, ENOMEM) reports it as an 'error'
    // event, and an 'error' nobody listens to would end the whole service.
    child.on('error', (error) => {
      if (settled || child.pid !== undefined) return;
      settled = true;
      stopWatching();
      // After a failed spawn, child.stdio may be missing altogether.
      if (Array.isArray(child.stdio)) for (const stream of child.stdio) stream?.destroy();
      reject(new CommandSandboxError(`could not start ${options.file}: ${error.message}`, { cause: error }));
    });
    if (child.pid === undefined) {
      // Nothing started: no pipes to feed or read (child.stdio may even be missing).
      return;
    }
    options.onSpawn?.(child.pid);

    const killGroup = (): void => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // The group is already gone.
        }
      }
      for (const cgroup of options.cgroups) void cgroup.killAll();
    };

    const kill = (status: 'timed-out' | 'aborted'): void => {
      if (exit !== undefined || killedBy !== undefined) return;
      killedBy = { status, atMs: clock.monotonicMs() };
      killGroup();
    };

    const timer: NodeJS.Timeout = setTimeout(() => {
      kill('timed-out');
    }, options.timeoutMs);
    timer.unref();
    const onAbort = (): void => {
      kill('aborted');
    };
    signal.addEventListener('abort', onAbort, { once: true });

    stopWatching = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };

    const extraPipes = Array.from(child.stdio).slice(3, 3 + options.inputs.length);
    extraPipes.forEach((pipe, index) => {
      const input = options.inputs[index];
      if (pipe === null || pipe === undefined || input === undefined || (typeof input === 'object' && 'fd' in input)) return;
      pipe.on('error', () => undefined);
      // A readable end that is never read never ends, and the child's 'close' would wait for it.
      if ('resume' in pipe) pipe.resume();
      (pipe as Writable).end(input);
    });

    child.stdout?.on('data', (chunk: Buffer) => {
      collector.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (started) {
        collector.push(chunk);
        return;
      }
      diagnostics += chunk.toString('utf8');
      const marker = diagnostics.indexOf(STARTED_MARKER);
      if (marker >= 0) {
        started = true;
        const after = diagnostics.slice(marker + STARTED_MARKER.length);
        diagnostics = diagnostics.slice(0, marker);
        if (after !== '') collector.push(Buffer.from(after));
      } else if (diagnostics.length > DIAGNOSTICS_LIMIT) {
        diagnostics = diagnostics.slice(-DIAGNOSTICS_LIMIT);
      }
    });

    child.on('exit', (code, exitSignal) => {
      exit = { code, signal: exitSignal, atMs: clock.monotonicMs() };
      stopWatching();
      // What the command left behind dies with it (in bwrap the PID namespace already saw to it).
      killGroup();
      const drain = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        for (const pipe of extraPipes) pipe?.destroy();
      }, PIPE_DRAIN_MS);
      drain.unref();
      child.once('close', () => {
        clearTimeout(drain);
      });
    });

    child.on('close', () => {
      if (settled) return;
      settled = true;
      const endedAt = exit?.atMs ?? clock.monotonicMs();
      const output = collector.finish();
      if (killedBy !== undefined) {
        resolve(
          endedResult({
            status: killedBy.status,
            durationMs: endedAt - startedAt,
            elapsedAtKillMs: killedBy.atMs - startedAt,
            timeoutMs: options.timeoutMs,
            reason: abortReasonText(signal.reason),
            signal: 'SIGKILL',
            output,
            spawned: true,
            allGone: options.pidNamespace,
          }),
        );
        return;
      }
      if (!started) {
        const detail = diagnostics.trim() !== '' ? diagnostics.trim() : `it exited with ${exit?.signal ?? `code ${String(exit?.code)}`}`;
        reject(new CommandSandboxError(`the sandbox could not start the command: ${detail}`));
        return;
      }
      resolve(
        endedResult({
          status: exit?.signal != null ? 'signaled' : 'exited',
          durationMs: endedAt - startedAt,
          exitCode: exit?.code ?? null,
          signal: exit?.signal ?? null,
          output,
          spawned: true,
          allGone: options.pidNamespace,
        }),
      );
    });
  });
}

interface EndedOptions {
  readonly status: CommandStatus;
  readonly durationMs: number;
  readonly elapsedAtKillMs?: number;
  readonly timeoutMs?: number;
  readonly reason?: string;
  readonly exitCode?: number | null;
  readonly signal?: NodeJS.Signals | null;
  readonly output?: { readonly text: string; readonly totalBytes: number; readonly truncatedBytes: number };
  readonly spawned: boolean;
  readonly allGone: boolean;
}

function endedResult(options: EndedOptions): CommandRunResult {
  const durationMs = Math.max(0, Math.round(options.durationMs));
  const exitCode = options.exitCode ?? null;
  const signal = options.signal ?? null;
  return {
    status: options.status,
    exitCode,
    signal,
    durationMs,
    output: options.output?.text ?? '',
    outputBytes: options.output?.totalBytes ?? 0,
    truncatedBytes: options.output?.truncatedBytes ?? 0,
    summary: summarize(options, durationMs, exitCode, signal),
    spawned: options.spawned,
    allGone: options.allGone,
  };
}

function summarize(options: EndedOptions, durationMs: number, exitCode: number | null, signal: NodeJS.Signals | null): string {
  switch (options.status) {
    case 'timed-out':
      return `timed out after ${formatDuration(options.timeoutMs ?? durationMs)}, killed`;
    case 'aborted':
      return `aborted after ${formatDuration(options.elapsedAtKillMs ?? durationMs)}: ${options.reason ?? 'the turn was cancelled'}`;
    case 'signaled':
      return `was killed by ${String(signal)} after ${formatDuration(durationMs)}`;
    case 'exited':
      return `exited with code ${String(exitCode)} after ${formatDuration(durationMs)}`;
  }
}

/** Why the signal fired, in words: the loop aborts with a reason, or with the default AbortError. */
export function abortReasonText(reason: unknown): string {
  if (reason instanceof Error) {
    if (reason.name === 'TimeoutError') return 'the tool call timed out';
    if (reason.name === 'AbortError' || reason.message === '') return 'the turn was cancelled';
    return reason.message;
  }
  if (typeof reason === 'string' && reason.trim() !== '') return reason;
  return 'the turn was cancelled';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
