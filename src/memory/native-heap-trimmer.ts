import type { Logger } from 'pino';
import { openNativeHeap, type NativeHeap } from './native-heap.js';

/**
 * Gives back to the system the memory glibc's malloc holds free after a burst.
 *
 * Why: a thousand turns starting together allocate and free native memory by the hundred
 * megabytes (sockets' read buffers, HTTP parsers, zlib, the backing stores of V8's buffers).
 * malloc reuses what is freed, but gives back only the free memory at the very top of an arena:
 * the rest stays in the process's RSS, held between the long-lived chunks around it, until some
 * later allocation reuses it. With 1,000 turns waiting on their model after such a burst, that
 * was ~70 KB of RSS per waiting turn, as much as the turns' whole V8 heap (README, Load, item 33).
 * `malloc_trim(0)` hands every whole free page back (`madvise(MADV_DONTNEED)`), in ~1 ms.
 *
 * When: every `everyMs`, the heap's free bytes are read (`mallinfo2`, microseconds). A trim runs
 * when they have grown by `minGrowthBytes` since their lowest reading after the last trim, or
 * when the process's RSS has: a burst's memory freed, or memory reused and grown again. A
 * process that idles, or holds steady, reads two numbers and trims nothing. Its timer is
 * unref'd: it never keeps the process alive.
 */
export class NativeHeapTrimmer {
  readonly #heap: NativeHeap;
  readonly #minGrowthBytes: number;
  readonly #rssBytes: () => number;
  readonly #onTrim: (trim: NativeHeapTrim) => void;
  readonly #timer: NodeJS.Timeout;
  /** The lowest readings since the last trim (or the start): growth is counted from them. */
  #lowFreeBytes: number;
  #lowRssBytes: number;
  #trims = 0;

  constructor(options: {
    readonly heap: NativeHeap;
    readonly everyMs: number;
    readonly minGrowthBytes: number;
    /** Told of each trim, with the RSS it gave back: for the log and the metrics. */
    readonly onTrim?: (trim: NativeHeapTrim) => void;
    /** The process's resident set, in bytes; injectable for tests. */
    readonly rssBytes?: () => number;
  }) {
    this.#heap = options.heap;
    this.#minGrowthBytes = options.minGrowthBytes;
    this.#rssBytes = options.rssBytes ?? (() => process.memoryUsage.rss());
    this.#onTrim = options.onTrim ?? (() => undefined);
    this.#lowFreeBytes = this.#heap.freeBytes();
    this.#lowRssBytes = this.#rssBytes();
    this.#timer = setInterval(() => {
      this.check();
    }, options.everyMs).unref();
  }

  /** How many trims have run. */
  get trims(): number {
    return this.#trims;
  }

  /** One reading, and a trim if the heap's free bytes or the RSS have grown enough since their low point; true when it trimmed. */
  check(): boolean {
    const freeBytes = this.#heap.freeBytes();
    const rssBytes = this.#rssBytes();
    this.#lowFreeBytes = Math.min(this.#lowFreeBytes, freeBytes);
    this.#lowRssBytes = Math.min(this.#lowRssBytes, rssBytes);
    const grown = freeBytes - this.#lowFreeBytes >= this.#minGrowthBytes || rssBytes - this.#lowRssBytes >= this.#minGrowthBytes;
    if (!grown) return false;
    const startedAt = performance.now();
    this.#heap.trim();
    const tookMs = performance.now() - startedAt;
    this.#trims += 1;
    const rssAfter = this.#rssBytes();
    // Free chunks stay free chunks after a trim (only their pages go back), so the free bytes' new low is where they are now.
    this.#lowFreeBytes = this.#heap.freeBytes();
    this.#lowRssBytes = rssAfter;
    this.#onTrim({ freeBytes, releasedBytes: Math.max(0, rssBytes - rssAfter), tookMs });
    return true;
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

export interface NativeHeapTrim {
  /** What malloc held free when the trim began. */
  readonly freeBytes: number;
  /** How much the RSS fell across the trim. */
  readonly releasedBytes: number;
  readonly tookMs: number;
}

/** Where trims are counted (the service metrics' `turn_runtime_native_heap_*` counters). */
export interface TrimCounters {
  readonly nativeHeapTrims: { inc(): void };
  readonly nativeHeapReleasedBytes: { inc(value: number): void };
}

/** The process's trimmer on the settings' interval (`NATIVE_HEAP_TRIM_MS`); none when it is 0 or glibc's malloc is not there to trim. */
export function startNativeHeapTrimmer(options: { readonly everyMs: number; readonly logger: Logger; readonly metrics?: TrimCounters }): NativeHeapTrimmer | undefined {
  const { everyMs, logger, metrics } = options;
  if (everyMs === 0) return undefined;
  const heap = openNativeHeap();
  if ('unavailable' in heap) {
    logger.info({ reason: heap.unavailable }, 'native heap trimming is off: glibc malloc is not reachable');
    return undefined;
  }
  return new NativeHeapTrimmer({
    heap,
    everyMs,
    minGrowthBytes: MIN_GROWTH_BYTES,
    onTrim: (trim) => {
      metrics?.nativeHeapTrims.inc();
      metrics?.nativeHeapReleasedBytes.inc(trim.releasedBytes);
      logger.debug(trim, 'gave the memory malloc held free back to the system');
    },
  });
}

/** Growth of malloc's free memory, or of the RSS, that is worth a trim: a burst's worth, not the noise of a few requests. */
const MIN_GROWTH_BYTES = 8 * 1024 * 1024;
