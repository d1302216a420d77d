import type { DurableQueueOptions } from './durable-work.js';

/** Seconds before the retry that follows delivery number `attempt` (1-based), as pg-boss counts them. */
export function retryDelaySeconds(options: { readonly queue: DurableQueueOptions; readonly attempt: number }): number {
  const { queue, attempt } = options;
  if (!queue.backoff) return queue.retryDelaySeconds;
  return queue.retryDelaySeconds * 2 ** Math.min(attempt - 1, 16);
}
