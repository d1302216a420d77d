/** Something that lets memory go once it has been quiet long enough (see QuietSweep). */
export interface QuietEntry {
  /** Asked on each sweep: lets go what it can if it has been quiet long enough by `now` (performance.now()); true once it needs no more sweeps. */
  settleIfQuiet(now: number): boolean;
}

/**
 * Entries swept every `periodMs` by one timer for the whole process (not one per turn), which
 * runs only while some entry is watched and never keeps the process alive. An entry leaves once
 * it says it is settled, or when it is unwatched.
 *
 * A sweep works in slices of at most `sliceMs`, with the event loop's other work between them:
 * when a thousand turns go quiet in the same second, letting their memory go (deflating text,
 * say) is a few hundred milliseconds of work, which in one piece would hold up every socket of
 * the process. Entries watched during a sweep are visited by it (a Set iterates what is added).
 */
export class QuietSweep {
  readonly #watched = new Set<QuietEntry>();
  readonly #periodMs: number;
  readonly #sliceMs: number;
  #timer: NodeJS.Timeout | undefined;
  /** The sweep under way, between its slices. */
  #sweeping: Iterator<QuietEntry> | undefined;

  constructor(options: { readonly periodMs: number; readonly sliceMs: number }) {
    this.#periodMs = options.periodMs;
    this.#sliceMs = options.sliceMs;
  }

  get size(): number {
    return this.#watched.size;
  }

  watch(entry: QuietEntry): void {
    this.#watched.add(entry);
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      this.#sweep();
    }, this.#periodMs);
    this.#timer.unref();
  }

  unwatch(entry: QuietEntry): void {
    this.#watched.delete(entry);
  }

  #sweep(): void {
    if (this.#sweeping !== undefined) return;
    this.#sweeping = this.#watched.values();
    this.#slice();
  }

  #slice(): void {
    const entries = this.#sweeping;
    if (entries === undefined) return;
    const deadline = performance.now() + this.#sliceMs;
    for (let next = entries.next(); next.done !== true; next = entries.next()) {
      if (next.value.settleIfQuiet(performance.now())) this.#watched.delete(next.value);
      if (performance.now() >= deadline) {
        setImmediate(() => {
          this.#slice();
        }).unref();
        return;
      }
    }
    this.#sweeping = undefined;
    if (this.#watched.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}
