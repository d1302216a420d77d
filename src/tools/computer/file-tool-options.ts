import { formatBytes } from '../../format/format-bytes.js';
import type { HomeOwner } from './home-fs/open-home-path.js';
import { measureHome } from './home-fs/measure-home.js';

/** What one agent home may hold unless configured otherwise (AGENT_HOME_MAX_BYTES). */
export const DEFAULT_HOME_MAX_BYTES = 1024 ** 3;

/** What every file tool of one agent home is built with. */
export interface FileToolOptions {
  /** The agent home on the host. */
  readonly home: string;
  /** Who what the tools create belongs to (the sandbox user when the service is root); undefined: the service's user. */
  readonly owner?: HomeOwner | undefined;
  /** What the whole home may hold; a write that would go over it is refused. Default 1 GiB. */
  readonly homeMaxBytes?: number | undefined;
}

/**
 * Refuses a write of `addBytes` (replacing `replacedBytes`) that would take the home over its
 * limit, before anything is written. The home is measured as it is now, on disk.
 */
export async function ensureHomeRoom(options: { home: string; maxBytes: number | undefined; addBytes: number; replacedBytes: number; display: string }): Promise<void> {
  const maxBytes = options.maxBytes ?? DEFAULT_HOME_MAX_BYTES;
  const measure = await measureHome({ home: options.home });
  const after = measure.bytes - options.replacedBytes + options.addBytes;
  if (after > maxBytes) {
    throw new Error(
      `writing ${options.display} (${formatBytes(options.addBytes)}) would take the agent home to ${formatBytes(after)}, over its limit of ${formatBytes(maxBytes)}; ` +
        'delete files you no longer need first (it holds ' +
        `${formatBytes(measure.bytes)} now)`,
    );
  }
}
