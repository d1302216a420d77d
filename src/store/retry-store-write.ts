import { setTimeout as sleep } from 'node:timers/promises';

/** Waits before the 2nd, 3rd and 4th attempt: a busy or briefly unreachable store gets ~1.3 s. */
const DEFAULT_DELAYS_MS: readonly number[] = [50, 250, 1_000];

/**
 * Runs a store write, retrying it after each delay when it fails; rejects with the last error
 * once the delays are used up. For writes that are safe to repeat (each is one transaction).
 */
export async function retryStoreWrite<T>(options: {
  readonly write: () => Promise<T>;
  readonly delaysMs?: readonly number[];
  readonly onRetry?: (error: unknown, attempt: number) => void;
}): Promise<T> {
  const delays = options.delaysMs ?? DEFAULT_DELAYS_MS;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await options.write();
    } catch (error) {
      const delay = delays[attempt - 1];
      if (delay === undefined) throw error;
      options.onRetry?.(error, attempt);
      await sleep(delay);
    }
  }
}
