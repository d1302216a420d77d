import { QuietSweep, type QuietEntry } from '../concurrency/quiet-sweep.js';
import { takeOutputJson, stringifyWithOutputJson } from '../output-json.js';
import type { StoredEvent } from '../store/turn-record.js';
import type { TurnEvent, TurnEventBody } from '../events/turn-events.js';

/** An event with its stored form. */
export interface NumberedEvent {
  readonly event: TurnEvent;
  readonly stored: StoredEvent;
}

/** Gives an event its place in its turn, and its JSON (made once, for the store and every stream). */
export function numberEvent(options: { readonly turnId: string; readonly seq: number; readonly at: string; readonly body: TurnEventBody }): NumberedEvent {
  // `type`, `turnId`, `seq`, `at` lead every event, so a person reading the stream sees them first.
  const { type, ...fields } = options.body;
  const event = { type, turnId: options.turnId, seq: options.seq, at: options.at, ...fields } as TurnEvent;
  // A tool's output comes with its JSON text made (see output-json.ts).
  const json = stringifyWithOutputJson(event, takeOutputJson(options.body));
  return { event, stored: { seq: event.seq, type: event.type, json } };
}

const MAX_EVENTS = 64;
const MAX_JSON_CHARS = 16 * 1024;
/** How long a window keeps more than its last event once its turn has gone quiet. */
export const QUIET_WINDOW_MS = 1000;

/**
 * The most recent delivered events of a running turn, bounded by count and by size (the last
 * event is always kept), so a turn does not live in memory: a listener that has caught up with
 * the store attaches here for what was delivered since its read, and everyone else reads the
 * store. Small on purpose: the window only has to bridge a store read and an attach, or a
 * consumer's short wait for its socket to drain, and every turn waiting on its model holds
 * one (with 1 MiB, a turn of eight file reads kept ~40 KB of event text here while it waited).
 *
 * For the same reason a window that has had no event for QUIET_WINDOW_MS lets all its events
 * go and keeps only the last one's seq (see quietWindows): a turn waiting seconds on its model
 * would otherwise hold its last tool output's event, the output and its JSON (~7.5 KB for the
 * bench's file reads), for listeners that find it in the store anyway. Every event here was
 * stored before it was delivered, so a listener behind the window reads the store up to the
 * last seq and attaches after it.
 */
export class EventWindow implements QuietEntry {
  readonly #entries: NumberedEvent[] = [];
  #chars = 0;
  #lastSeq = 0;
  /** When the last event came (performance.now()). */
  #lastPushAt = 0;

  push(entry: NumberedEvent): void {
    this.#entries.push(entry);
    this.#chars += entry.stored.json.length;
    this.#lastSeq = entry.event.seq;
    this.#lastPushAt = performance.now();
    while (this.#entries.length > 1 && (this.#entries.length > MAX_EVENTS || this.#chars > MAX_JSON_CHARS)) {
      const dropped = this.#entries.shift();
      this.#chars -= dropped?.stored.json.length ?? 0;
    }
    // Watched from the push that makes it non-empty until the sweep that empties it (see quietWindows).
    if (this.#entries.length === 1) quietWindows.watch(this);
  }

  /** True when every delivered event after `afterSeq` is still here. */
  covers(afterSeq: number): boolean {
    const first = this.#entries[0];
    return afterSeq >= this.#lastSeq || (first !== undefined && first.event.seq <= afterSeq + 1);
  }

  /** The events here after `afterSeq`, in order (a copy). */
  after(afterSeq: number): NumberedEvent[] {
    return this.#entries.filter((entry) => entry.event.seq > afterSeq);
  }

  /** Lets every event go if none came for QUIET_WINDOW_MS by `now` (the last seq is kept); true once none is left. */
  settleIfQuiet(now: number): boolean {
    return this.trimIfQuiet(now, QUIET_WINDOW_MS);
  }

  /** Lets every event go if none came for `quietMs` by `now` (the last seq is kept); true once none is left. */
  trimIfQuiet(now: number, quietMs: number): boolean {
    if (this.#entries.length === 0) return true;
    if (now - this.#lastPushAt < quietMs) return false;
    this.#entries.length = 0;
    this.#chars = 0;
    return true;
  }
}

/**
 * The windows holding events. A window leaves once trimmed, so a finished turn's window is held
 * here at most two sweeps. Trimming is cheap: the slices only matter for the sweep's neighbours.
 */
const quietWindows = new QuietSweep({ periodMs: QUIET_WINDOW_MS, sliceMs: 5 });
