import koffi from 'koffi';
import { describe, expect, it } from 'vitest';
import { openNativeHeap, type NativeHeap } from '../../src/memory/native-heap.js';
import { NativeHeapTrimmer, startNativeHeapTrimmer } from '../../src/memory/native-heap-trimmer.js';
import { pino } from 'pino';

const MB = 1024 * 1024;

/** glibc's own malloc, free and memset, to leave its heap the way a burst does: mostly free, with a live chunk on every few pages. */
const libc = koffi.load('libc.so.6');
const malloc = libc.func('void *malloc(size_t size)') as (size: number) => unknown;
const free = libc.func('void free(void *ptr)') as (pointer: unknown) => void;
const memset = libc.func('void *memset(void *s, int c, size_t n)') as (pointer: unknown, value: number, size: number) => unknown;

/**
 * Allocates `chunks` chunks of 4,000 bytes on the calling thread's arena, touches each (so its
 * pages are resident), then frees all but every twentieth: ~76 MB free for 80 MB allocated, none
 * of it at the arena's top, so malloc gives none of it back by itself. Returns the survivors' release.
 */
function fragment(chunks = 20_000): () => void {
  const pointers = Array.from({ length: chunks }, () => {
    const pointer = malloc(4_000);
    memset(pointer, 1, 4_000);
    return pointer;
  });
  const survivors = pointers.filter((_, index) => index % 20 === 19);
  for (const [index, pointer] of pointers.entries()) if (index % 20 !== 19) free(pointer);
  return () => {
    for (const pointer of survivors) free(pointer);
  };
}

function openHeap(): NativeHeap {
  const heap = openNativeHeap();
  if ('unavailable' in heap) throw new Error(`glibc malloc expected on this machine: ${heap.unavailable}`);
  return heap;
}

describe('the native heap (glibc malloc, through koffi)', () => {
  it('reads the memory malloc holds free, and gives its whole pages back to the system with a trim', () => {
    const heap = openHeap();
    heap.trim();
    const freeBefore = heap.freeBytes();
    const release = fragment();
    try {
      const freeAfterBurst = heap.freeBytes();
      expect(freeAfterBurst - freeBefore).toBeGreaterThan(60 * MB);
      const rssBefore = process.memoryUsage.rss();
      expect(heap.trim()).toBe(true);
      // Free chunks stay free (only their pages go): the free bytes hold, the RSS falls by most of the ~76 MB.
      expect(heap.freeBytes()).toBeGreaterThan(60 * MB + freeBefore);
      expect(rssBefore - process.memoryUsage.rss()).toBeGreaterThan(40 * MB);
    } finally {
      release();
    }
  });

  it('is trimmed by the process trimmer once a burst has left it free memory, and not again while nothing grows', async () => {
    const trims: number[] = [];
    const trimmer = new NativeHeapTrimmer({ heap: openHeap(), everyMs: 20, minGrowthBytes: 16 * MB, onTrim: (trim) => trims.push(trim.releasedBytes) });
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const before = trimmer.trims;
      const release = fragment();
      try {
        for (let waited = 0; trimmer.trims === before && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
        expect(trimmer.trims).toBe(before + 1);
        expect(trims.at(-1)).toBeGreaterThan(40 * MB);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(trimmer.trims).toBe(before + 1);
      } finally {
        release();
      }
    } finally {
      trimmer.stop();
    }
  });

  it('starts with the process on its interval, and not at all with 0', () => {
    const logger = pino({ level: 'silent' });
    expect(startNativeHeapTrimmer({ everyMs: 0, logger })).toBeUndefined();
    const trimmer = startNativeHeapTrimmer({ everyMs: 60_000, logger });
    expect(trimmer).toBeInstanceOf(NativeHeapTrimmer);
    trimmer?.stop();
  });
});

describe('NativeHeapTrimmer', () => {
  /** A heap whose readings the test sets, counting its trims. */
  function scriptedHeap(): { heap: NativeHeap; state: { free: number; rss: number; trims: number } } {
    const state = { free: 10 * MB, rss: 200 * MB, trims: 0 };
    return {
      state,
      heap: {
        freeBytes: () => state.free,
        trim: () => {
          state.trims += 1;
          state.rss -= state.free / 2;
          return true;
        },
      },
    };
  }

  it('trims when the free memory or the RSS has grown by the threshold since its lowest reading, and only then', () => {
    const { heap, state } = scriptedHeap();
    const trimmer = new NativeHeapTrimmer({ heap, everyMs: 60_000, minGrowthBytes: 8 * MB, rssBytes: () => state.rss });
    try {
      state.free += 7 * MB;
      expect(trimmer.check()).toBe(false);
      state.free += 2 * MB; // 9 MB over the first reading
      expect(trimmer.check()).toBe(true);
      expect(trimmer.check()).toBe(false); // nothing grew since
      state.free -= 6 * MB; // reused …
      expect(trimmer.check()).toBe(false);
      state.free += 8 * MB; // … and freed again: 8 MB over the low point, though only 2 MB over the last trim
      expect(trimmer.check()).toBe(true);
      state.rss += 8 * MB;
      expect(trimmer.check()).toBe(true);
      expect(state.trims).toBe(3);
      expect(trimmer.trims).toBe(3);
    } finally {
      trimmer.stop();
    }
  });
});
