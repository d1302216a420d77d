import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';

/** A path the model asked for, refused because it could reach outside the agent home. */
export class HomePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HomePathError';
  }
}

export interface HomePath {
  /** The real, absolute path to read or write (symlinks resolved). */
  readonly absolute: string;
  /** The path relative to the home, as the model and the person see it. */
  readonly display: string;
  /** Whether something exists there now. */
  readonly exists: boolean;
}

/**
 * Resolves a model-supplied path inside the agent home and proves it stays there: NUL
 * bytes, absolute paths and `..` that climbs out are refused before touching the disk, and
 * the real path (after every symlink, including one in a parent folder or a dangling one at
 * the end) must still be inside the real home. Callers do their I/O on `absolute`.
 */
export async function resolveHomePath(home: string, requested: string): Promise<HomePath> {
  if (requested.includes('\0')) throw new HomePathError('the path contains a NUL byte');
  const trimmed = requested.trim();
  if (trimmed === '') throw new HomePathError('the path is empty');
  if (path.isAbsolute(trimmed) || /^[A-Za-z]:[\\/]/.test(trimmed) || trimmed.startsWith('~')) {
    throw new HomePathError(`"${requested}" is absolute; give a path relative to the agent home`);
  }
  const realHome = await realpath(home);
  const lexical = path.resolve(realHome, trimmed);
  if (!isInside(realHome, lexical)) throw new HomePathError(`"${requested}" leads outside the agent home`);

  const existing = await realpathOfExisting(lexical);
  if (existing.danglingLink) {
    throw new HomePathError(`"${requested}" is a symbolic link to something that does not exist`);
  }
  const absolute = existing.rest === '' ? existing.real : path.join(existing.real, existing.rest);
  if (!isInside(realHome, absolute)) {
    throw new HomePathError(`"${requested}" leads outside the agent home through a symbolic link`);
  }
  const display = path.relative(realHome, absolute) || '.';
  return { absolute, display, exists: existing.rest === '' };
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  // `..` as a whole segment climbs out; a name that merely starts with dots ("..notes.md") does not.
  const climbs = relative === '..' || relative.startsWith(`..${path.sep}`);
  return relative === '' || (!climbs && !path.isAbsolute(relative));
}

/** The real path of the deepest existing ancestor, and what remains below it. */
async function realpathOfExisting(target: string): Promise<{ real: string; rest: string; danglingLink: boolean }> {
  let current = target;
  const missing: string[] = [];
  for (;;) {
    try {
      const real = await realpath(current);
      return { real, rest: missing.reverse().join(path.sep), danglingLink: false };
    } catch (error) {
      if (!isNotFound(error)) throw error;
      const isLink = await lstat(current).then(
        (stats) => stats.isSymbolicLink(),
        () => false,
      );
      if (isLink) return { real: current, rest: '', danglingLink: true };
      const parent = path.dirname(current);
      if (parent === current) throw error;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof Error && 'code' in error && (error.code === 'ENOENT' || error.code === 'ENOTDIR');
}
