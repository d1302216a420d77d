import type { Dirent } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { z } from 'zod';
import { defineWorkerTool, type WorkerAgentTool } from '../define-worker-tool.js';
import type { AgentToolResult } from '../tool-result.js';
import { describeFileError } from './describe-file-error.js';
import { formatBytes, formatCount } from '../../format/format-bytes.js';
import { withAgentHomeLock } from './agent-home-lock.js';
import type { FileToolOptions } from './file-tool-options.js';
import type { HomeFolder } from './home-fs/home-folder.js';
import { openHomePath } from './home-fs/open-home-path.js';

/** The most entries one call lists. */
export const LIST_FILES_MAX_ENTRIES = 1000;
/** How many folder levels below the listed one a recursive listing opens. */
export const LIST_FILES_MAX_DEPTH = 8;
/** Folders a recursive listing names but does not open: large and rarely what is wanted. */
const NOT_EXPANDED = new Set(['.git', 'node_modules']);
const HOME_LABEL = 'the home folder';

const listFilesSchema = z.object({
  path: z
    .string()
    .default('.')
    .describe('The folder to list, relative to the agent home folder. Default "." (the home folder itself).'),
  recursive: z
    .boolean()
    .default(false)
    .describe(`Also list everything inside subfolders (up to ${LIST_FILES_MAX_DEPTH} levels deep). Default false: only the folder's own entries.`),
});

export type ListFilesParams = z.output<typeof listFilesSchema>;

interface Listing {
  readonly lines: string[];
  cutAtLimit: boolean;
  cutAtDepth: boolean;
}

/** The list_files tool: the entries of a folder in the agent home, optionally recursive. */
export function createListFilesTool(options: FileToolOptions): WorkerAgentTool<ListFilesParams> {
  const { home } = options;
  return defineWorkerTool<ListFilesParams>({
    name: 'list_files',
    description: [
      'List the files and folders in a folder of the agent home folder, sorted by name. Folders end',
      'with "/", files show their size, symbolic links show "name -> target" (links are never followed).',
      'Use it to find out what exists before reading or editing. With recursive, paths are shown',
      `relative to the listed folder, up to ${LIST_FILES_MAX_DEPTH} levels deep; .git and node_modules are`,
      `named but not opened. At most ${LIST_FILES_MAX_ENTRIES} entries are shown; a note says when the`,
      'listing was cut, so you can list a subfolder instead.',
    ].join(' '),
    schema: listFilesSchema,
    executionMode: 'parallel',
    isReadOnly: true,
    isDestructive: false,
    describeActivity: (params) => `Listing ${folderLabel(params.path)}`,
    describeCompletedActivity: (params, result) => {
      const display = typeof result.details?.['path'] === 'string' ? result.details['path'] : params.path;
      const entries = result.details?.['entries'];
      const label = folderLabel(display);
      return typeof entries === 'number' ? `Listed ${label} (${formatCount(entries, 'entry', 'entries')})` : `Listed ${label}`;
    },
    execute: (params, context) => withAgentHomeLock({ home, mode: 'shared', signal: context.signal }, () => list({ home, params, signal: context.signal })),
  });
}

async function list(input: { home: string; params: ListFilesParams; signal: AbortSignal }): Promise<AgentToolResult> {
  const { home, params, signal } = input;
  signal.throwIfAborted();
  const target = await openHomePath({ home, requested: params.path, followLast: true }).catch((error: unknown) => {
    throw describeFileError(error, params.path);
  });
  const { display } = target;
  const listing: Listing = { lines: [], cutAtLimit: false, cutAtDepth: false };
  try {
    signal.throwIfAborted();
    if (target.stats === undefined) throw new Error(`${display} does not exist; list the folder above it to see what is there`);
    if (!target.stats.isDirectory()) throw new Error(`${display} is a file, not a folder; use read_file to read it`);
    const folder = target.name === '' ? undefined : await target.parent.openFolder(target.name);
    try {
      await listFolder({ folder: folder ?? target.parent, prefix: '', depth: 0, recursive: params.recursive, listing, signal });
    } finally {
      await folder?.close();
    }
  } catch (error) {
    signal.throwIfAborted();
    throw describeFileError(error, display);
  } finally {
    await target.close();
  }
  signal.throwIfAborted();

  const label = folderLabel(display);
  const entries = listing.lines.length;
  const notes: string[] = [];
  if (listing.cutAtLimit) {
    notes.push(
      `[Stopped at ${LIST_FILES_MAX_ENTRIES} entries; there are more. List a subfolder by its path to see the rest.]`,
    );
  }
  if (listing.cutAtDepth) {
    notes.push(`[Folders more than ${LIST_FILES_MAX_DEPTH} levels down were not opened; list them by their path.]`);
  }
  const heading = `Contents of ${label}${params.recursive ? ' (recursive)' : ''}, ${formatCount(entries, 'entry', 'entries')}:`;
  const content =
    entries === 0 ? `${label === HOME_LABEL ? 'The home folder' : label} is empty.` : [heading, ...listing.lines, ...notes].join('\n');
  return {
    content,
    details: {
      path: display,
      entries,
      recursive: params.recursive,
      truncated: listing.cutAtLimit || listing.cutAtDepth,
    },
  };
}

/**
 * Lists one open folder into `listing`, depth first in name order. Entries come from `readdir`
 * with file types, which describe a symbolic link as a link, never as what it points to, so
 * a link is shown by its target text and not opened; sizes come from `lstat` for the same
 * reason. Stops as soon as the entry limit is reached.
 */
async function listFolder(options: {
  folder: HomeFolder;
  prefix: string;
  depth: number;
  recursive: boolean;
  listing: Listing;
  signal: AbortSignal;
}): Promise<void> {
  const { folder, prefix, depth, recursive, listing, signal } = options;
  signal.throwIfAborted();
  const entries = await readdir(folder.path, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (listing.lines.length >= LIST_FILES_MAX_ENTRIES) {
      listing.cutAtLimit = true;
      return;
    }
    signal.throwIfAborted();
    const name = prefix + entry.name;
    const entryPath = folder.entry(entry.name);
    if (!entry.isDirectory()) {
      listing.lines.push(await describeEntry(entry, name, entryPath));
      continue;
    }
    if (!recursive) {
      listing.lines.push(`${name}/`);
    } else if (NOT_EXPANDED.has(entry.name)) {
      listing.lines.push(`${name}/ (not opened; list it by its path to see inside)`);
    } else if (depth >= LIST_FILES_MAX_DEPTH) {
      listing.lines.push(`${name}/ (not opened: too deep)`);
      listing.cutAtDepth = true;
    } else {
      const index = listing.lines.push(`${name}/`) - 1;
      try {
        // Opened through this folder's descriptor, never following a link swapped in since readdir.
        const child = await folder.openFolder(entry.name);
        try {
          await listFolder({ folder: child, prefix: `${name}/`, depth: depth + 1, recursive, listing, signal });
        } finally {
          await child.close();
        }
      } catch (error) {
        if (signal.aborted) throw error;
        // One unreadable subfolder should not hide the rest of the listing.
        listing.lines[index] = `${name}/ (cannot be opened: ${describeFileError(error, `${name}/`).message})`;
      }
    }
  }
}

async function describeEntry(entry: Dirent, name: string, entryPath: string): Promise<string> {
  try {
    if (entry.isSymbolicLink()) return `${name} -> ${await readlink(entryPath)}`;
    if (entry.isFile()) return `${name} (${formatBytes((await lstat(entryPath)).size)})`;
  } catch {
    // Gone or unreadable since readdir: still worth naming.
    return name;
  }
  if (entry.isFIFO()) return `${name} (pipe)`;
  if (entry.isSocket()) return `${name} (socket)`;
  return `${name} (device)`;
}

/** "src" or "src/" → "src/"; "." → "the home folder". */
function folderLabel(folder: string): string {
  const trimmed = folder.trim().replace(/[\\/]+$/, '').replace(/^\.\//, '');
  if (trimmed === '' || trimmed === '.') return HOME_LABEL;
  return `${trimmed}/`;
}
