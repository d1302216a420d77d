/**
 * Aborts asked for during one turn of the event loop, run together in one callback.
 *
 * When hundreds of clients leave at once, each socket's `close` would abort its turn and then,
 * before the next socket is even read, run that turn's whole unwinding: the model stream's and
 * the tools' errors, the loop's last events, the store's final write — about four times the
 * cost of the abort itself. The last client to leave then waits for every earlier turn's
 * unwinding before its own model request is closed. Queued here instead, the departures read
 * in one poll of the event loop are aborted in one synchronous loop (each abort closes its
 * upstream sockets at once), and their unwinding follows.
 *
 * The cost is one `setImmediate`: an abort lands after the I/O callbacks already due, never
 * later. Process-wide on purpose, like the event loop it schedules on.
 *
 * The errors the aborts make as they run, synchronously, carry no stack: the signals' own
 * `AbortError`s, undici's `RequestAbortedError`s, and the errors sockets are destroyed with
 * (whose stacks Node's stream `destroy` formats at once). A CPU profile of 200 clients leaving
 * together had a third of each abort in capturing and formatting those stacks, and every one of
 * them says only that the client went away. The unwinding that follows, after the loop, makes
 * its errors with their stacks as usual.
 */
const queued: { readonly controller: AbortController; readonly reason: unknown }[] = [];

export function abortTogether(controller: AbortController, reason: unknown): void {
  queued.push({ controller, reason });
  if (queued.length === 1) setImmediate(abortQueued);
}

function abortQueued(): void {
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  lastAbortsAt = performance.now();
  try {
    for (const { controller, reason } of queued.splice(0)) controller.abort(reason);
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/**
 * How long the departures must have stopped before the unwinding waiting in `untilAbortsSettle`
 * goes on, and the longest it waits.
 */
const SETTLE_QUIET_MS = 2;
const SETTLE_MAX_MS = 30;

let lastAbortsAt = Number.NEGATIVE_INFINITY;
const settleWaiters: { readonly resolve: () => void; readonly since: number }[] = [];
let settleTimer: NodeJS.Timeout | undefined;

/**
 * Resolves once no departure has been aborted for `SETTLE_QUIET_MS` (at most `SETTLE_MAX_MS`
 * after the call). The unwinding of a cancelled turn awaits this before its costly part (its
 * tools' and model call's failures, its last events), so that a crowd's later departures are
 * read and aborted first: a crowd does not reach the service in one read of the event loop,
 * and the unwinding of the first few, run at once, held up the reading of the rest. Cheap when
 * nobody is leaving: one 2 ms timer, shared by every waiter.
 */
export function untilAbortsSettle(): Promise<void> {
  return new Promise((resolve) => {
    settleWaiters.push({ resolve, since: performance.now() });
    settleTimer ??= setTimeout(onSettleTimer, SETTLE_QUIET_MS);
  });
}

/**
 * The quiet period has passed by the clock: look again once this turn of the event loop has read
 * its I/O. The timer fires at the top of the loop's turn, before the poll that reads sockets; on
 * a busy machine the service may not have run at all for those 2 ms, with departures waiting
 * unread in their sockets. Those read in the poll are queued before the check phase, where this
 * looks, so they count.
 */
function onSettleTimer(): void {
  setImmediate(releaseSettled);
}

function releaseSettled(): void {
  settleTimer = undefined;
  const now = performance.now();
  const quiet = queued.length === 0 && now - lastAbortsAt >= SETTLE_QUIET_MS;
  while (settleWaiters.length > 0 && (quiet || now - (settleWaiters[0]?.since ?? now) >= SETTLE_MAX_MS)) settleWaiters.shift()?.resolve();
  if (settleWaiters.length > 0) settleTimer = setTimeout(onSettleTimer, SETTLE_QUIET_MS);
}
