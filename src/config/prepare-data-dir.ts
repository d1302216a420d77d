import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { ConfigError } from './config.js';

/**
 * Creates the data folder (mode 0700) and checks that this process may write in it. A folder
 * that cannot be made or written (a path through a file, a read-only or foreign mount) is the
 * operator's to fix, so it is a ConfigError naming DATA_DIR, not a stack trace.
 */
export async function prepareDataDir(dataDir: string): Promise<void> {
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await access(dataDir, constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'unknown error';
    throw new ConfigError([`DATA_DIR: cannot create or write the data folder ${dataDir} (${code}); point DATA_DIR at a writable folder`]);
  }
}
