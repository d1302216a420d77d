/**
 * Runs a synchronous file-system call and hands its result on as a promise, so callers await
 * it like any other.
 *
 * Why synchronous: the calls that walk and open a path of the home (lstat, readlink, open,
 * fstat, close, and a read of a file's first 64 KiB) are page-cache operations of a few
 * microseconds on the data folder's disk. Through libuv's thread pool each one cost two
 * cross-thread wake-ups, which on the turn bench's machine (a VM) was more CPU than the
 * calls themselves: the thread pool was the largest kernel cost of a turn in `perf`. The
 * event loop already waits on this disk synchronously for every store write (SQLite), so
 * these calls add no new way for it to stall. What can be large stays asynchronous: reads past
 * a file's first 64 KiB, writes, copies, and whole-tree walks.
 */
export function syncCall<T>(call: () => T): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (error) {
    // Node's fs calls throw Errors (with `code` and `syscall`); anything else is wrapped.
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
