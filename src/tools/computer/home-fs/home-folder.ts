import { closeSync, constants, fchown, fstatSync, openSync, readlinkSync, type Stats } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { syncCall } from './sync-call.js';

/** Opening a folder: never through a symbolic link, never anything but a folder. */
export const FOLDER_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

const fchownAsync = promisify(fchown);

/**
 * An open folder's descriptor: a plain fd, not a `FileHandle`. Every file tool call opens at
 * least the home, and a FileHandle costs several times as much to make and to close (the
 * profile of the turn bench showed it). Closing twice closes once: a number closed again
 * could be someone else's descriptor by then. Opening, fstat and closing are synchronous
 * calls (see sync-call.ts).
 */
export class FolderDescriptor {
  readonly fd: number;
  #closed = false;

  private constructor(fd: number) {
    this.fd = fd;
  }

  /** Opens a folder, never through a symbolic link (FOLDER_FLAGS). */
  static open(folder: string): Promise<FolderDescriptor> {
    return syncCall(() => new FolderDescriptor(openSync(folder, FOLDER_FLAGS)));
  }

  stat(): Promise<Stats> {
    return syncCall(() => fstatSync(this.fd));
  }

  chown(uid: number, gid: number): Promise<void> {
    return fchownAsync(this.fd, uid, gid);
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    return syncCall(() => {
      closeSync(this.fd);
    });
  }
}

/**
 * An open folder of an agent home, and the one safe way to name what is in it.
 *
 * Node has no `openat`, but `/proc/self/fd/N/name` is the same thing: the kernel resolves
 * `/proc/self/fd/N` to the very folder the descriptor holds (not to a path it looks up
 * again), then looks `name` up in it. So an operation on `entry(name)` acts on that folder
 * whatever anyone renamed or swapped for a symbolic link meanwhile; with `O_NOFOLLOW` (or
 * a call that never follows the last component: lstat, rename, unlink, mkdir, link) not
 * even `name` itself can lead elsewhere.
 */
export class HomeFolder {
  readonly handle: FolderDescriptor;
  /** The folder relative to the home, '' for the home itself. */
  readonly display: string;

  constructor(options: { handle: FolderDescriptor; display: string }) {
    this.handle = options.handle;
    this.display = options.display;
  }

  /** The folder itself, as a path the kernel resolves through the descriptor. */
  get path(): string {
    return `/proc/self/fd/${String(this.handle.fd)}`;
  }

  /** An entry of this folder, addressed through the descriptor. `name` is one path component. */
  entry(name: string): string {
    return `${this.path}/${name}`;
  }

  /** `name` inside this folder as the model sees it. */
  displayOf(name: string): string {
    return this.display === '' ? name : `${this.display}/${name}`;
  }

  /** Opens the subfolder `name` (refusing a link or a file in its place). */
  async openFolder(name: string): Promise<HomeFolder> {
    const handle = await FolderDescriptor.open(this.entry(name));
    return new HomeFolder({ handle, display: this.displayOf(name) });
  }

  /**
   * Whether the folder still lies inside `realHome` on the host. A folder cannot be moved
   * out of the home from inside the sandbox (the home is its own mount there, and a rename
   * across mounts fails), but a host process could; writes check this just before the rename.
   */
  async isInside(realHome: string): Promise<boolean> {
    const where = await syncCall(() => readlinkSync(this.path)).catch(() => undefined);
    if (where === undefined) return false;
    const relative = path.relative(realHome, where);
    const climbs = relative === '..' || relative.startsWith(`..${path.sep}`);
    return relative === '' || (!climbs && !path.isAbsolute(relative));
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}
