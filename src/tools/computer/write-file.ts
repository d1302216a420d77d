import { z } from 'zod';
import type { JsonObject } from '../../json.js';
import { defineWorkerTool, type WorkerAgentTool } from '../define-worker-tool.js';
import type { AgentToolResult } from '../tool-result.js';
import { describeFileError } from './describe-file-error.js';
import { formatBytes, formatCount } from '../../format/format-bytes.js';
import { withAgentHomeLock } from './agent-home-lock.js';
import { ensureHomeRoom, type FileToolOptions } from './file-tool-options.js';
import { openHomePath, type OpenHomePath } from './home-fs/open-home-path.js';
import { writeHomeFile } from './home-fs/write-home-file.js';

const writeFileSchema = z.object({
  path: z
    .string()
    .describe('The file to write, relative to the agent home folder, e.g. "summary.md" or "reports/2024/q1.md". Missing folders are created.'),
  content: z.string().describe('The complete new content of the file, as UTF-8 text. It replaces whatever the file held.'),
});

export type WriteFileParams = z.output<typeof writeFileSchema>;

/** The write_file tool: creates or replaces a whole text file in the agent home, atomically. */
export function createWriteFileTool(options: FileToolOptions): WorkerAgentTool<WriteFileParams> {
  const { home } = options;
  return defineWorkerTool<WriteFileParams>({
    name: 'write_file',
    description: [
      'Create a text file in the agent home folder, or replace an existing file with new content.',
      'Missing parent folders are created. The whole file is written at once: a reader never sees a',
      'half-written file. Overwriting discards the old content, so to change part of an existing file',
      'use edit_file instead, and read a file before replacing it. The result says whether the file was',
      'created or overwritten, and its size.',
    ].join(' '),
    schema: writeFileSchema,
    executionMode: 'sequential',
    isReadOnly: false,
    isDestructive: true,
    describeActivity: (params) => `Writing ${params.path}`,
    describeCompletedActivity: (params, result) => {
      const display = typeof result.details?.['path'] === 'string' ? result.details['path'] : params.path;
      const bytes = result.details?.['bytes'];
      return typeof bytes === 'number' ? `Wrote ${display} (${formatBytes(bytes)})` : `Wrote ${display}`;
    },
    execute: (params, context) => withAgentHomeLock({ home, mode: 'shared', signal: context.signal }, () => writeWhole({ options, params, signal: context.signal })),
  });
}

async function writeWhole(input: { options: FileToolOptions; params: WriteFileParams; signal: AbortSignal }): Promise<AgentToolResult> {
  const { options, params, signal } = input;
  signal.throwIfAborted();
  if (/[\\/]$/.test(params.path.trim())) {
    throw new Error(`"${params.path}" ends with a slash, so it names a folder; give the path of a file`);
  }
  let target: OpenHomePath;
  try {
    target = await openHomePath({ home: options.home, requested: params.path, followLast: true });
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOTDIR') {
      throw new Error(`cannot create the folders for ${params.path}: a part of that path is a file, not a folder`, { cause: error });
    }
    throw describeFileError(error, params.path);
  }
  const { display } = target;
  let previous: { bytes: number; mode: number } | undefined;
  try {
    signal.throwIfAborted();
    const stats = target.stats;
    if (stats !== undefined) {
      if (stats.isDirectory()) throw new Error(`${display} is a folder; give the path of a file inside it`);
      if (!stats.isFile()) throw new Error(`${display} is not a regular file (it is a device, pipe or socket) and cannot be written`);
      previous = { bytes: stats.size, mode: stats.mode };
    }
    await ensureHomeRoom({ home: options.home, maxBytes: options.homeMaxBytes, addBytes: Buffer.byteLength(params.content), replacedBytes: stats?.blocks === undefined ? 0 : stats.blocks * 512, display });
    signal.throwIfAborted();
    await target.createFolders(options.owner);
    await writeHomeFile({ target, content: params.content, how: 'replace', mode: previous?.mode, owner: options.owner, signal });
  } catch (error) {
    signal.throwIfAborted();
    throw describeFileError(error, display);
  } finally {
    await target.close();
  }
  // Once renamed into place the file is written: the result says so even if the turn
  // was cancelled meanwhile, rather than recording a change that happened as aborted.

  const bytes = Buffer.byteLength(params.content);
  const lines = countLines(params.content);
  const created = previous === undefined;
  const size = `${formatBytes(bytes)}, ${formatCount(lines, 'line')}`;
  const details: JsonObject = { path: display, bytes, lines, created };
  if (previous !== undefined) details['previousBytes'] = previous.bytes;
  return {
    content: created
      ? `Created ${display} (${size}).`
      : `Overwrote ${display} (${size}; it was ${formatBytes(previous?.bytes ?? 0)}).`,
    details,
  };
}

function countLines(text: string): number {
  if (text === '') return 0;
  let lines = 1;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines += 1;
  return text.endsWith('\n') ? lines - 1 : lines;
}
