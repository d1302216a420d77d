import { HomePathError } from './home-path-error.js';

/**
 * Turns a failed file-system call into an Error the model can act on. Node's own messages
 * carry the absolute path on the host (`ENOENT: no such file or directory, open
 * '/srv/homes/…'`), which tells the model nothing useful and leaks the layout, so they are
 * rewritten around the path as the model wrote it. Anything that is not a system error (a
 * HomePathError, a message written for the model, an abort reason) passes through unchanged.
 */
export function describeFileError(error: unknown, display: string): Error {
  if (error instanceof HomePathError || !isSystemError(error)) {
    return error instanceof Error ? error : new Error(String(error));
  }
  switch (error.code) {
    case 'ENOENT':
      return new Error(`${display} does not exist; use list_files to see what is there`);
    case 'ENOTDIR':
      return new Error(`${display} cannot be reached: a part of the path is a file, not a folder`);
    case 'EISDIR':
      return new Error(`${display} is a folder; use list_files to see what it contains`);
    case 'EACCES':
    case 'EPERM':
      return new Error(`permission denied for ${display}`);
    case 'ELOOP':
      return new Error(`${display} goes through a symbolic link loop or a link that may not be followed`);
    case 'ENAMETOOLONG':
      return new Error(`${display} is too long a path`);
    case 'ENOSPC':
    case 'EDQUOT':
      return new Error(`no space left to write ${display}`);
    case 'EROFS':
      return new Error(`${display} is on a read-only file system`);
    case 'EEXIST':
      return new Error(`${display} cannot be created: something is already in the way`);
    default:
      return new Error(`${display}: file system error ${error.code}`);
  }
}

/** A Node system error (it names the failed call), as opposed to an error written by hand. */
function isSystemError(error: unknown): error is Error & { code: string; syscall: string } {
  return (
    error instanceof Error &&
    'code' in error &&
    typeof error.code === 'string' &&
    'syscall' in error &&
    typeof error.syscall === 'string'
  );
}
