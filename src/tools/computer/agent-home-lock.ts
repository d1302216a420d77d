import { closeSync, constants, openSync } from 'node:fs';
import path from 'node:path';
import { tryLock, unlock } from 'fs-native-extensions';
import { syncCall } from './home-fs/sync-call.js';

export type HomeLockMode = 'shared' | 'exclusive';

/** Where the lock of a home lives: beside it, never inside, so no command can touch it. */
export function homeLockFile(home: string): string {
  const absolute = path.resolve(home);
  return path.join(path.dirname(absolute), `.${path.basename(absolute)}.lock`);
}

/** How long to wait between two tries when another process holds the lock: doubling from the first to the last. */
const FIRST_RETRY_MS = 2;
const LAST_RETRY_MS = 25;

/**
 * Runs `task` while holding the agent home's lock: `exclusive` for a command (which may
 * change anything in the home at any moment), `shared` for the file tools (which may run
 * side by side, but never while a command of the same agent runs, so an agent cannot race
 * its own file tools with a rename loop). It holds across turns and across every service
 * process on this host, and the kernel releases it when the holder's descriptor closes,
 * even if the service dies. Waiting ends when `signal` fires.
 */
export async function withAgentHomeLock<T>(options: { home: string; mode: HomeLockMode; signal: AbortSignal }, task: () => Promise<T>): Promise<T> {
  const release = await acquireHomeLock(options);
  try {
    return await task();
  } finally {
    release();
  }
}

/**
 * Acquires the lock; resolves with the function that releases it (once; later calls do
 * nothing).
 *
 * Two layers. In this process, one queue per lock file, first come first served: shared
 * holders run together, an exclusive one waits for them and holds new ones back. Between
 * processes, an open-file-description lock (`fcntl(F_OFD_SETLK)`, through
 * `fs-native-extensions`) on the lock file, taken once for the whole group of this
 * process's holders: the first to enter opens it and locks it, the last to leave unlocks
 * it. So four parallel `read_file` calls cost one open, one lock and one close, where a
 * lock per call, or a lock-holding child process per call, would cost each of them.
 * Another process's conflicting lock is waited for by trying again (2 ms doubling to
 * 25 ms), never by a blocking call, which would hold a thread of libuv's small pool and
 * could not be cancelled.
 */
export async function acquireHomeLock(options: { home: string; mode: HomeLockMode; signal: AbortSignal }): Promise<() => void> {
  const { signal, mode } = options;
  signal.throwIfAborted();
  const file = homeLockFile(options.home);
  const lock = homeLocks.get(file) ?? new HomeLock(file);
  homeLocks.set(file, lock);
  return lock.acquire(mode, signal);
}

const homeLocks = new Map<string, HomeLock>();

interface Waiter {
  readonly mode: HomeLockMode;
  readonly grant: () => void;
}

/** One lock file's holders and waiters in this process (see `acquireHomeLock`). */
class HomeLock {
  readonly #file: string;
  #mode: HomeLockMode = 'shared';
  #holders = 0;
  readonly #queue: Waiter[] = [];
  /** The lock between processes, while this process has holders. */
  #held: HeldFileLock | undefined;

  constructor(file: string) {
    this.#file = file;
  }

  async acquire(mode: HomeLockMode, signal: AbortSignal): Promise<() => void> {
    await this.#enter(mode, signal);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.#leave();
    };
    try {
      // Every holder of the group waits for the same lock between processes.
      await abortable((this.#held ??= new HeldFileLock(this.#file, mode)).ready, signal);
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  /** Waits for this process's turn: together with other shared holders, or alone. */
  #enter(mode: HomeLockMode, signal: AbortSignal): Promise<void> {
    if (this.#queue.length === 0 && (this.#holders === 0 || (mode === 'shared' && this.#mode === 'shared'))) {
      this.#admit(mode);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.#queue.indexOf(waiter);
        if (index >= 0) this.#queue.splice(index, 1);
        // A waiter that leaves the front may let the ones behind it in.
        this.#pump();
        reject(cancelReason(signal));
      };
      const waiter: Waiter = {
        mode,
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.#queue.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  #admit(mode: HomeLockMode): void {
    this.#mode = mode;
    this.#holders += 1;
  }

  #leave(): void {
    this.#holders -= 1;
    if (this.#holders > 0) return;
    this.#held?.release();
    this.#held = undefined;
    this.#pump();
    if (this.#holders === 0 && this.#queue.length === 0) homeLocks.delete(this.#file);
  }

  /** Lets in the front of the queue: one exclusive waiter, or every shared waiter up to the next exclusive one. */
  #pump(): void {
    for (let next = this.#queue[0]; next !== undefined; next = this.#queue[0]) {
      const fits = this.#holders === 0 || (next.mode === 'shared' && this.#mode === 'shared');
      if (!fits) return;
      this.#queue.shift();
      this.#admit(next.mode);
      next.grant();
      if (next.mode === 'exclusive') return;
    }
  }
}

/** The lock file opened and locked for one group of holders; released once, by the last of them. */
class HeldFileLock {
  readonly ready: Promise<void>;
  #released = false;
  /** A plain descriptor, not a FileHandle: this is opened for every group of file tool calls, and a FileHandle costs several times as much to make and close. */
  #fd: number | undefined;
  #wake: (() => void) | undefined;

  constructor(file: string, mode: HomeLockMode) {
    this.ready = this.#lock(file, mode);
    // Holders that stop waiting (cancelled) must not leave this rejection unhandled.
    this.ready.catch(() => undefined);
  }

  async #lock(file: string, mode: HomeLockMode): Promise<void> {
    // Read and write, so an exclusive lock can be granted; never through a link. (libuv
    // opens every file close-on-exec, so no command inherits the lock.)
    // Synchronous, as the home's path walk is (see home-fs/sync-call.ts).
    const fd = await syncCall(() => openSync(file, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600)).catch((error: unknown) => {
      throw new Error(`could not lock the agent home: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    });
    if (this.#isReleased()) {
      // Every holder left while the file was being opened.
      closeQuietly(fd);
      throw new Error('the agent home lock was released before it was taken');
    }
    this.#fd = fd;
    for (let delayMs = FIRST_RETRY_MS; ; delayMs = Math.min(delayMs * 2, LAST_RETRY_MS)) {
      // Every holder left while this waited; release() has closed the descriptor.
      if (this.#isReleased()) throw new Error('the agent home lock was released before it was taken');
      if (tryFileLock(fd, mode)) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  #isReleased(): boolean {
    return this.#released;
  }

  /** Unlocks at once (so the next group, here or elsewhere, may lock), then closes the file. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#wake?.();
    const fd = this.#fd;
    if (fd === undefined) return;
    try {
      unlock(fd);
    } catch {
      // Closing below releases it as well.
    }
    closeQuietly(fd);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Nothing to do: the descriptor is gone either way.
  }
}

function tryFileLock(fd: number, mode: HomeLockMode): boolean {
  try {
    return tryLock(fd, { shared: mode === 'shared' });
  } catch (error) {
    // Linux may answer a conflict with EACCES as well as EAGAIN.
    if (error instanceof Error && 'code' in error && error.code === 'EACCES') return false;
    throw new Error(`could not lock the agent home: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

function cancelReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('the turn was cancelled while waiting for the agent home');
}

/** `promise`, or the signal's reason as soon as it fires. */
function abortable(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(cancelReason(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      reject(cancelReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
