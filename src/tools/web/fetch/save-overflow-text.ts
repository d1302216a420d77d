import { lstat } from 'node:fs/promises';
import { withAgentHomeLock } from '../../computer/agent-home-lock.js';
import { openHomePath, type HomeOwner } from '../../computer/home-fs/open-home-path.js';
import { writeHomeFile } from '../../computer/home-fs/write-home-file.js';
import { overflowFileName } from './overflow-file-name.js';

/** The folder in the agent home that holds full texts too long for a tool output. */
export const WEB_FETCH_FOLDER = '.web';

/**
 * Saves a page's full text in the agent home under `.web/` and returns its path as the
 * model sees it. Written like the file tools write: under the agent home's shared lock (never
 * while a command of the agent runs), the path resolved from a descriptor of the home
 * (`openHomePath`, so a `.web` swapped for a link out of the home is refused or not followed),
 * the folder created through it and the file put in place by `writeHomeFile`, both given to
 * `owner`. Safe to run from parallel calls: the name is fixed by the URL and the content, so
 * two writers of one name write the same bytes, and a reader sees a whole file or none. An
 * existing file is never replaced.
 */
export async function saveOverflowText(options: {
  readonly home: string;
  readonly url: string;
  readonly text: string;
  readonly extension: 'md' | 'json' | 'txt';
  readonly owner?: HomeOwner | undefined;
  readonly signal: AbortSignal;
}): Promise<string> {
  const { home, signal } = options;
  return withAgentHomeLock({ home, mode: 'shared', signal }, async () => {
    const target = await openHomePath({ home, requested: `${WEB_FETCH_FOLDER}/${overflowFileName(options)}`, followLast: false });
    try {
      const size = Buffer.byteLength(options.text);
      if (target.stats !== undefined) {
        if (target.stats.isFile() && target.stats.size === size) return target.display;
        throw new Error(`${target.display} already exists with other content`);
      }
      await target.createFolders(options.owner);
      try {
        await writeHomeFile({ target, content: options.text, how: 'create', mode: 0o644, owner: options.owner, signal });
      } catch (error) {
        // A parallel call saved the same page between the check and the write.
        if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST')) throw error;
        const existing = await lstat(target.entry);
        if (!existing.isFile() || existing.size !== size) throw new Error(`${target.display} already exists with other content`, { cause: error });
      }
      return target.display;
    } finally {
      await target.close();
    }
  });
}
