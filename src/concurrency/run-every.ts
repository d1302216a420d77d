import type { Logger } from 'pino';

/**
 * Runs `task` every `intervalMs` without holding the process open. A failed run is logged as
 * "<what> failed" and the next one goes on. Returns the timer, for `clearInterval`.
 */
export function runEvery(options: { readonly intervalMs: number; readonly what: string; readonly task: () => Promise<unknown>; readonly logger: Logger }): NodeJS.Timeout {
  const { what, task, logger } = options;
  const timer = setInterval(() => {
    task().catch((error: unknown) => {
      logger.warn({ err: error }, `${what} failed`);
    });
  }, options.intervalMs);
  timer.unref();
  return timer;
}
