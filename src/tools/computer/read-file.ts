import { z } from 'zod';
import type { JsonObject } from '../../json.js';
import { defineWorkerTool, type WorkerAgentTool } from '../define-worker-tool.js';
import type { AgentToolResult } from '../tool-result.js';
import { describeFileError } from './describe-file-error.js';
import { formatBytes } from '../../format/format-bytes.js';
import { withAgentHomeLock } from './agent-home-lock.js';
import type { FileToolOptions } from './file-tool-options.js';
import { openHomePath } from './home-fs/open-home-path.js';
import { numberLines } from './numbered-line.js';
import { openTextFile } from './open-text-file.js';
import { readLineWindow, type LineWindow } from './read-line-window.js';

/** The most lines one call shows. */
export const READ_FILE_MAX_LINES = 2000;
/** The most bytes of output one call returns. */
export const READ_FILE_MAX_OUTPUT_BYTES = 256 * 1024;

const readFileSchema = z.object({
  path: z.string().describe('The file to read, relative to the agent home folder, e.g. "notes.md" or "src/app.ts".'),
  offset: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('The 1-based line number to start at. Leave it out to start at line 1; use the offset a previous call told you to continue a long file.'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(READ_FILE_MAX_LINES)
    .default(READ_FILE_MAX_LINES)
    .describe(`How many lines to show, at most ${READ_FILE_MAX_LINES} (the default).`),
});

export type ReadFileParams = z.output<typeof readFileSchema>;

/** The read_file tool: a UTF-8 text file in the agent home, numbered by line, in pages. */
export function createReadFileTool(options: FileToolOptions): WorkerAgentTool<ReadFileParams> {
  const { home } = options;
  return defineWorkerTool<ReadFileParams>({
    name: 'read_file',
    description: [
      'Read a UTF-8 text file in the agent home folder. Each line is shown with its line number',
      '(a right-aligned number, then a tab, then the text); the number and tab are not part of the file.',
      `Shows up to ${READ_FILE_MAX_LINES} lines and ${formatBytes(READ_FILE_MAX_OUTPUT_BYTES)} per call; when a file is longer,`,
      'a note at the end gives the offset to pass to read the next part. Lines longer than 2000',
      'characters are cut with a marker. Read a file before editing it with edit_file, so you can copy its',
      'exact text. Binary files (images, archives, PDFs …) are refused; for folders use list_files.',
    ].join(' '),
    schema: readFileSchema,
    executionMode: 'parallel',
    isReadOnly: true,
    isDestructive: false,
    describeActivity: (params) => `Reading ${params.path}`,
    describeCompletedActivity: (params, result) => describeRead(params, result.details),
    execute: (params, context) => withAgentHomeLock({ home, mode: 'shared', signal: context.signal }, () => readPage({ home, params, signal: context.signal })),
  });
}

async function readPage(input: { home: string; params: ReadFileParams; signal: AbortSignal }): Promise<AgentToolResult> {
  const { home, params, signal } = input;
  signal.throwIfAborted();
  const target = await openHomePath({ home, requested: params.path, followLast: true }).catch((error: unknown) => {
    throw describeFileError(error, params.path);
  });
  let file: Awaited<ReturnType<typeof openTextFile>>;
  const { display } = target;
  try {
    signal.throwIfAborted();
    if (target.stats === undefined) throw new Error(`${display} does not exist; use list_files to see what is there`);
    file = await openTextFile({ absolute: target.entry, display });
  } finally {
    // The file's own descriptor is all that is needed from here on.
    await target.close();
  }
  let page: LineWindow;
  try {
    page = await readLineWindow({
      read: (buffer, position) => file.read(buffer, position),
      head: file.head,
      size: file.size,
      offset: params.offset ?? 1,
      limit: params.limit,
      maxOutputBytes: READ_FILE_MAX_OUTPUT_BYTES,
      signal,
    });
  } catch (error) {
    signal.throwIfAborted();
    throw describeFileError(error, display);
  } finally {
    file.close();
  }
  signal.throwIfAborted();

  const { lines, firstLine, totalLines, stoppedForBytes, cutLines } = page;
  const details: JsonObject = { path: display, bytes: file.size, totalLines, cutLines };
  if (totalLines === 0) {
    return { content: `${display} is empty (0 lines).`, details: { ...details, startLine: 0, endLine: 0 } };
  }
  if (lines.length === 0) {
    throw new Error(
      `offset ${params.offset ?? 1} is past the end of ${display}, which has ${totalLines} line${totalLines === 1 ? '' : 's'}; use an offset from 1 to ${totalLines}`,
    );
  }
  const lastLine = firstLine + lines.length - 1;
  let content = numberLines(lines, firstLine);
  if (lastLine < totalLines) {
    const reason = stoppedForBytes ? `Output stopped at ${formatBytes(READ_FILE_MAX_OUTPUT_BYTES)}. ` : '';
    content +=
      `\n\n[${reason}Showing lines ${firstLine}–${lastLine} of ${totalLines} in ${display}. ` +
      `To read more, call read_file with path "${display}" and offset ${lastLine + 1}.]`;
  }
  return {
    content,
    details: { ...details, startLine: firstLine, endLine: lastLine, truncated: lastLine < totalLines },
  };
}

function describeRead(params: ReadFileParams, details: JsonObject | undefined): string {
  const display = typeof details?.['path'] === 'string' ? details['path'] : params.path;
  const { startLine, endLine, totalLines, bytes } = details ?? {};
  if (typeof startLine !== 'number' || typeof endLine !== 'number' || typeof totalLines !== 'number') {
    return `Read ${display}`;
  }
  if (totalLines > 0 && (startLine > 1 || endLine < totalLines)) {
    return `Read ${display} lines ${startLine}–${endLine} of ${totalLines}`;
  }
  return typeof bytes === 'number' ? `Read ${display} (${formatBytes(bytes)})` : `Read ${display}`;
}
