import type { TurnEventBody } from '../events/turn-events.js';

/** A `message.delta` as it will be numbered, with the time its first part arrived. */
export interface ClosedDelta {
  readonly body: Extract<TurnEventBody, { type: 'message.delta' }>;
  readonly at: string;
}

/** At most this much text per stored `message.delta` (a single larger delta is kept whole). */
const MAX_DELTA_CHARS = 1_024;

/**
 * Merges consecutive `message.delta` parts of one iteration into one event of up to 1 KiB of
 * text. The turn closes the open delta whenever another event comes and at every flush (every
 * few milliseconds), so a reader sees text as promptly as before, while a 200 KB answer in
 * 7-character deltas is some 200 rows instead of 28,000.
 */
export class DeltaCoalescer {
  readonly #now: () => string;
  #open: { iteration: number; text: string; at: string } | undefined;

  constructor(options: { readonly now: () => string }) {
    this.#now = options.now;
  }

  /** Adds a part; returns the deltas that are complete (zero, one or two), in order. */
  add(part: { readonly iteration: number; readonly delta: string }): ClosedDelta[] {
    const closed: ClosedDelta[] = [];
    const open = this.#open;
    if (open !== undefined && open.iteration === part.iteration && open.text.length + part.delta.length <= MAX_DELTA_CHARS) {
      open.text += part.delta;
    } else {
      const previous = this.take();
      if (previous !== undefined) closed.push(previous);
      this.#open = { iteration: part.iteration, text: part.delta, at: this.#now() };
    }
    if ((this.#open?.text.length ?? 0) >= MAX_DELTA_CHARS) {
      const full = this.take();
      if (full !== undefined) closed.push(full);
    }
    return closed;
  }

  /** Closes and returns the open delta, if any. */
  take(): ClosedDelta | undefined {
    const open = this.#open;
    this.#open = undefined;
    if (open === undefined) return undefined;
    return { body: { type: 'message.delta', iteration: open.iteration, delta: open.text }, at: open.at };
  }
}
