import koffi from 'koffi';

/**
 * The process's malloc heap, as glibc keeps it: how much it holds free, and a way to give the
 * free pages back to the system (`malloc_trim`). Reached through koffi (a C FFI with prebuilt
 * binaries for each platform), so the service compiles nothing for two calls into libc.
 */
export interface NativeHeap {
  /** Bytes malloc holds in free chunks, over every arena (`mallinfo2().fordblks`): memory it could reuse or give back. */
  freeBytes(): number;
  /** Gives every whole free page of every arena back to the system (`malloc_trim(0)`); true when some was. */
  trim(): boolean;
}

/** The fields of glibc's `struct mallinfo2` (glibc 2.33 and later), in their order; each a `size_t`. */
const MALLINFO2_FIELDS = ['arena', 'ordblks', 'smblks', 'hblks', 'hblkhd', 'usmblks', 'fsmblks', 'uordblks', 'fordblks', 'keepcost'] as const;

let opened: NativeHeap | { readonly unavailable: string } | undefined;

/**
 * The process's glibc malloc heap, or why it cannot be reached: another C library (musl has
 * neither call), a glibc older than 2.33, or a platform koffi has no binary for. Opened once.
 */
export function openNativeHeap(): NativeHeap | { readonly unavailable: string } {
  opened ??= open();
  return opened;
}

function open(): NativeHeap | { readonly unavailable: string } {
  try {
    const libc = koffi.load('libc.so.6');
    const mallinfo2Struct = koffi.struct(Object.fromEntries(MALLINFO2_FIELDS.map((field) => [field, 'size_t'])));
    const mallinfo2 = libc.func('mallinfo2', mallinfo2Struct, []) as () => Record<(typeof MALLINFO2_FIELDS)[number], number | bigint>;
    const mallocTrim = libc.func('int malloc_trim(size_t pad)') as (pad: number) => number;
    return {
      freeBytes: () => Number(mallinfo2().fordblks),
      trim: () => mallocTrim(0) === 1,
    };
  } catch (error) {
    return { unavailable: error instanceof Error ? error.message : String(error) };
  }
}
