import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { ConfigError } from './config-error.js';

/**
 * Creates the data folder (mode 0711: passable, not listable, so the sandbox's unprivileged
 * user can reach the agent homes below it) and checks that this process may write in it, before
 * anything opens it. A folder that cannot be made or written (a path through a file, a
 * read-only volume, one owned by another user) is the operator's to fix, so it is a
 * ConfigError naming DATA_DIR (exit 78), not a stack trace from SQLite.
 */
export async function prepareDataDir(dataDir: string): Promise<void> {
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o711 });
    await access(dataDir, constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'unknown error';
    const uid = process.getuid?.();
    const who = uid === undefined ? 'this process' : `this process (uid ${uid})`;
    throw new ConfigError([
      `DATA_DIR: cannot create or write the data folder: ${dataDir} cannot be created or written by ${who} (${code}); mount it writable, or give it to that user (in the image: chown 1000:1000)`,
    ]);
  }
}
