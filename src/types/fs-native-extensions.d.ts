/** The part of `fs-native-extensions` (holepunchto, CommonJS, no types of its own) the service uses. */
declare module 'fs-native-extensions' {
  /**
   * Asks for an advisory lock on the whole file behind `fd` without waiting: `true` when it
   * was granted, `false` when another open file description holds a conflicting one. On
   * Linux an open-file-description lock (`F_OFD_SETLK`), so it is owned by the descriptor,
   * not the process. An exclusive lock needs a writable descriptor.
   */
  export function tryLock(fd: number, options?: { readonly shared?: boolean }): boolean;
  /** Releases the lock `fd` holds (closing the descriptor releases it too). */
  export function unlock(fd: number): void;
}
