/** Resolves when `signal` aborts (at once if it already has). Never rejects. */
export function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    signal.addEventListener(
      'abort',
      () => {
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * Resolves after `milliseconds`, or earlier when `signal` aborts. Never rejects, and does not
 * keep the process alive: for polls and grace periods, not for work that must happen.
 */
export function pause(milliseconds: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted === true) return Promise.resolve();
  return new Promise((resolve) => {
    // The abort listener goes when the pause ends: a poll that pauses on one signal many
    // times must not pile listeners onto it (MaxListenersExceededWarning).
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    timer.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
