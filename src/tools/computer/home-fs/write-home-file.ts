import { randomUUID } from 'node:crypto';
import { link, open, rename, unlink } from 'node:fs/promises';
import { HomePathError } from '../home-path-error.js';
import type { HomeOwner, OpenHomePath } from './open-home-path.js';

/** Errors of `link` that mean "this file system has no hard links", not "something is there". */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'ENOSYS']);

/**
 * Writes a file of the home so that a reader sees the old content or the new, never half:
 * the bytes go to a temporary file created (O_EXCL, so never through a link) in the target's
 * folder through that folder's descriptor, are flushed, given to `owner`, and then put in
 * place by name inside the same descriptor, after checking the folder is still inside the
 * home. `replace` renames over what is there (a link there is replaced, not written
 * through); `create` links the new file in and fails if anything appeared meanwhile.
 * The signal is checked before the rename, the last moment a write can be called off.
 */
export async function writeHomeFile(options: {
  readonly target: OpenHomePath;
  readonly content: string | Buffer;
  readonly how: 'replace' | 'create';
  readonly mode?: number | undefined;
  readonly owner?: HomeOwner | undefined;
  readonly signal?: AbortSignal;
}): Promise<void> {
  const { target, owner } = options;
  if (target.missingFolders.length > 0) throw new Error('writeHomeFile: the folders must be created first');
  const folder = target.parent;
  // Not named after the target: a long file name plus a suffix could exceed NAME_MAX.
  const temporary = folder.entry(`.turn-runtime-${randomUUID()}.tmp`);
  const handle = await open(temporary, 'wx', 0o644);
  try {
    try {
      if (options.mode !== undefined) await handle.chmod(options.mode & 0o7777);
      if (owner !== undefined) await handle.chown(owner.uid, owner.gid);
      await handle.writeFile(options.content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    options.signal?.throwIfAborted();
    if (!(await folder.isInside(target.realHome))) throw new HomePathError(`"${target.display}" was moved out of the agent home while it was written`);
    if (options.how === 'replace') {
      await rename(temporary, target.entry);
      return;
    }
    try {
      await link(temporary, target.entry);
    } catch (error) {
      const code = error instanceof Error && 'code' in error ? error.code : undefined;
      if (typeof code !== 'string' || !NO_HARD_LINKS.has(code)) throw error;
      // No hard links here: a rename, which could replace something created this very instant.
      await rename(temporary, target.entry);
    }
    await unlink(temporary).catch(() => undefined);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}
