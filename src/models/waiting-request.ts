import { QuietSweep, type QuietEntry } from '../concurrency/quiet-sweep.js';
import { deflateItemTexts } from './item-json.js';
import type { ConversationItem } from './model-client.js';

/** How long a model request waits before its conversation's long texts are deflated. */
export const QUIET_REQUEST_MS = 1000;

/**
 * The sweep over waiting requests. Slices of 5 ms: when a thousand turns wait together, their
 * texts are 8,000 deflates of ~30 µs each, a quarter of a second of work that must not hold up
 * the process's sockets in one piece.
 */
const waitingRequests = new QuietSweep({ periodMs: QUIET_REQUEST_MS, sliceMs: 5 });

/**
 * A model request on its way, whose conversation is deflated if it waits: a turn waiting on its
 * model needs its items' texts again only for its next request, seconds away at the soonest, and
 * a thousand waiting turns hold little else. A request answered within QUIET_REQUEST_MS (and a
 * turn that has ended) deflates nothing, so a fast model costs no CPU here; a slow one costs a
 * deflate per long item, once, and an inflate per item in each later request (~30 and ~12 µs for
 * a 3.5 KB file read here). Call `end` when the answer is in, or the request has failed.
 */
export class WaitingRequest implements QuietEntry {
  #items: readonly ConversationItem[] | undefined;
  readonly #since = performance.now();

  constructor(items: readonly ConversationItem[]) {
    this.#items = items;
    waitingRequests.watch(this);
  }

  end(): void {
    this.#items = undefined;
    waitingRequests.unwatch(this);
  }

  settleIfQuiet(now: number): boolean {
    const items = this.#items;
    if (items === undefined) return true;
    if (now - this.#since < QUIET_REQUEST_MS) return false;
    deflateItemTexts(items);
    this.#items = undefined;
    return true;
  }
}
