import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { ConfigError } from './config.js';

/**
 * Makes sure the data folder exists and this process may write it, before anything opens it:
 * a volume mounted read-only or owned by another user is the operator's to fix, so it stops
 * the process with a message naming DATA_DIR (exit 78), not with a stack trace from SQLite.
 */
export async function checkDataDir(options: { readonly dataDir: string; readonly uid: number | undefined }): Promise<void> {
  const { dataDir } = options;
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await access(dataDir, constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'unknown error';
    const who = options.uid === undefined ? 'this process' : `this process (uid ${options.uid})`;
    throw new ConfigError([`DATA_DIR: ${dataDir} cannot be created or written by ${who} (${code}); mount it writable, or give it to that user (in the image: chown 1000:1000)`]);
  }
}
