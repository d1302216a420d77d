import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { spawnModuleWorker } from '../../concurrency/spawn-module-worker.js';
import type { ReplayOutcome, ReplayRequest } from './replay-protocol.js';

/** The worker's heap beyond QuickJS's own limit: a guest can never grow the thread past this. */
const WORKER_RESOURCE_LIMITS = { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 };
/** Starting a worker loads the QuickJS WebAssembly module; the wall-clock bound allows for it. */
const WALL_CLOCK_SLACK_MS = 5_000;

interface Slot {
  worker: Worker | undefined;
  ready: Promise<Worker> | undefined;
  busy: boolean;
}

/**
 * Runs workflow script replays in `worker_threads` workers, so a busy guest never blocks the
 * service's event loop. A small pool of long-lived workers (QuickJS loads once per worker);
 * each replay gets a fresh QuickJS runtime with its memory and CPU limits. A worker that does
 * not answer within the wall-clock bound, or dies (its heap limit), is terminated and replaced,
 * and the replay reports it.
 */
export class ScriptRunner {
  readonly #slots: Slot[];
  readonly #waiting: (() => void)[] = [];
  readonly #logger: Logger;
  #closed = false;

  constructor(options: { readonly workers: number; readonly logger: Logger }) {
    this.#slots = Array.from({ length: options.workers }, () => ({ worker: undefined, ready: undefined, busy: false }));
    this.#logger = options.logger;
  }

  async replay(request: ReplayRequest): Promise<ReplayOutcome> {
    const slot = await this.#acquire();
    try {
      return await this.#run(slot, request);
    } finally {
      slot.busy = false;
      this.#waiting.shift()?.();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#slots.map((slot) => slot.worker?.terminate() ?? Promise.resolve(0)));
  }

  async #acquire(): Promise<Slot> {
    for (;;) {
      if (this.#closed) throw new Error('the script runner is closed');
      const free = this.#slots.find((slot) => !slot.busy);
      if (free !== undefined) {
        free.busy = true;
        return free;
      }
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
  }

  #run(slot: Slot, request: ReplayRequest): Promise<ReplayOutcome> {
    return new Promise<ReplayOutcome>((resolve, reject) => {
      this.#start(slot).then((worker) => {
        const finish = (outcome: ReplayOutcome | Error): void => {
          clearTimeout(timer);
          worker.off('message', onMessage);
          worker.off('exit', onExit);
          if (outcome instanceof Error) reject(outcome);
          else resolve(outcome);
        };
        const discard = (): void => {
          slot.worker = undefined;
          slot.ready = undefined;
          void worker.terminate();
        };
        const onMessage = (message: ReplayOutcome): void => {
          finish(message);
        };
        const onExit = (): void => {
          slot.worker = undefined;
          slot.ready = undefined;
          finish({ kind: 'out_of_memory', calls: [], message: 'the script ran out of memory (its worker thread hit its heap limit)' });
        };
        const timer = setTimeout(() => {
          discard();
          finish({ kind: 'out_of_time', calls: [], message: `the script ran out of time (no answer within ${request.cpuLimitMs + WALL_CLOCK_SLACK_MS} ms)` });
        }, request.cpuLimitMs + WALL_CLOCK_SLACK_MS);
        worker.on('message', onMessage);
        worker.once('exit', onExit);
        worker.postMessage(request);
      }, reject);
    });
  }

  #start(slot: Slot): Promise<Worker> {
    if (slot.ready !== undefined) return slot.ready;
    const ready = new Promise<Worker>((resolve, reject) => {
      const worker = spawnModuleWorker(import.meta.url, 'script-worker', { resourceLimits: WORKER_RESOURCE_LIMITS });
      slot.worker = worker;
      worker.once('message', () => {
        resolve(worker);
      });
      worker.once('error', (error: unknown) => {
        this.#logger.warn({ err: error }, 'a workflow script worker failed');
        reject(error instanceof Error ? error : new Error(`a workflow script worker failed: ${String(error)}`));
      });
      worker.unref();
    });
    ready.catch(() => {
      slot.ready = undefined;
      slot.worker = undefined;
    });
    slot.ready = ready;
    return ready;
  }
}
