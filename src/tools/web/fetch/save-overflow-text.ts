import { randomUUID } from 'node:crypto';
import { mkdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { resolveHomePath } from '../../computer/home-path.js';
import { overflowFileName } from './overflow-file-name.js';

/** The folder in the agent home that holds full texts too long for a tool output. */
export const WEB_FETCH_FOLDER = '.web';

/**
 * Saves a page's full text in the agent home under `.web/` and returns its path as the
 * model sees it. Safe to run from parallel calls: the name is fixed by the URL and the
 * content, so two writers of one name write the same bytes; each writes a private temp
 * file (`wx`: never through an existing file or link) and renames it into place, so a
 * reader sees a whole file or none. An existing file is never replaced.
 */
export async function saveOverflowText(options: {
  readonly home: string;
  readonly url: string;
  readonly text: string;
  readonly extension: 'md' | 'json' | 'txt';
}): Promise<string> {
  const folder = await resolveHomePath(options.home, WEB_FETCH_FOLDER);
  await mkdir(folder.absolute, { recursive: true });
  const name = overflowFileName(options);
  const target = await resolveHomePath(options.home, `${WEB_FETCH_FOLDER}/${name}`);
  const size = Buffer.byteLength(options.text);
  if (target.exists) {
    const existing = await stat(target.absolute);
    if (existing.isFile() && existing.size === size) return target.display;
    throw new Error(`${target.display} already exists with other content`);
  }
  const temporary = `${target.absolute}.${randomUUID()}.partial`;
  try {
    await writeFile(temporary, options.text, { flag: 'wx', mode: 0o644 });
    await rename(temporary, target.absolute);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  return target.display;
}
