import { z } from 'zod';
import { defineWorkerTool, type WorkerAgentTool } from '../define-worker-tool.js';
import type { AgentToolResult } from '../tool-result.js';
import { describeFileError } from './describe-file-error.js';
import { formatBytes, formatCount } from '../../format/format-bytes.js';
import { withAgentHomeLock } from './agent-home-lock.js';
import { ensureHomeRoom, type FileToolOptions } from './file-tool-options.js';
import { openHomePath, type OpenHomePath } from './home-fs/open-home-path.js';
import { writeHomeFile } from './home-fs/write-home-file.js';
import { cutLongLine, numberLine } from './numbered-line.js';
import { openTextFile } from './open-text-file.js';

/** Files larger than this are not edited in memory. */
export const EDIT_FILE_MAX_BYTES = 10 * 1024 * 1024;
/** Lines of context shown around the first replacement. */
const SNIPPET_CONTEXT_LINES = 3;
const SNIPPET_MAX_LINES = 30;

const editFileSchema = z.object({
  path: z.string().describe('The file to edit, relative to the agent home folder, e.g. "notes.md".'),
  old_string: z
    .string()
    .describe('The exact text to replace, copied from the file (without the line numbers read_file adds), including whitespace and indentation. Must not be empty. Include enough surrounding lines to make it occur only once.'),
  new_string: z.string().describe('The text to put in its place; must differ from old_string. An empty string deletes old_string.'),
  replace_all: z
    .boolean()
    .default(false)
    .describe('Replace every occurrence of old_string instead of exactly one. Default false.'),
});

export type EditFileParams = z.output<typeof editFileSchema>;

/** The edit_file tool: exact string replacement in a UTF-8 text file in the agent home. */
export function createEditFileTool(options: FileToolOptions): WorkerAgentTool<EditFileParams> {
  const { home } = options;
  return defineWorkerTool<EditFileParams>({
    name: 'edit_file',
    description: [
      'Change part of an existing text file in the agent home folder by exact string replacement:',
      'old_string is replaced with new_string. Read the file with read_file first and copy old_string',
      'exactly (without the line-number prefix). By default old_string must occur exactly once; add',
      'surrounding lines to make it unique, or set replace_all to change every occurrence (e.g. renaming).',
      'The file is rewritten atomically. To create a file or replace all of it, use write_file.',
      `Files over ${formatBytes(EDIT_FILE_MAX_BYTES)} cannot be edited.`,
    ].join(' '),
    schema: editFileSchema,
    executionMode: 'sequential',
    isReadOnly: false,
    isDestructive: true,
    describeActivity: (params) => `Editing ${params.path}`,
    describeCompletedActivity: (params, result) => {
      const display = typeof result.details?.['path'] === 'string' ? result.details['path'] : params.path;
      const replacements = result.details?.['replacements'];
      return typeof replacements === 'number'
        ? `Edited ${display} (${formatCount(replacements, 'replacement')})`
        : `Edited ${display}`;
    },
    execute: (params, context) => withAgentHomeLock({ home, mode: 'shared', signal: context.signal }, () => editText({ options, params, signal: context.signal })),
  });
}

async function editText(input: { options: FileToolOptions; params: EditFileParams; signal: AbortSignal }): Promise<AgentToolResult> {
  const { options, params, signal } = input;
  signal.throwIfAborted();
  if (params.old_string === '') {
    throw new Error('old_string is empty; copy the exact text to replace from the file (use write_file to fill an empty or new file)');
  }
  if (params.old_string === params.new_string) {
    throw new Error('old_string and new_string are the same, so nothing would change; give the new text in new_string');
  }
  const target = await openHomePath({ home: options.home, requested: params.path, followLast: true }).catch((error: unknown) => {
    throw describeFileError(error, params.path);
  });
  try {
    return await editOpened({ options, params, signal, target });
  } finally {
    await target.close();
  }
}

async function editOpened(input: { options: FileToolOptions; params: EditFileParams; signal: AbortSignal; target: OpenHomePath }): Promise<AgentToolResult> {
  const { options, params, signal, target } = input;
  signal.throwIfAborted();
  const { display } = target;
  if (target.stats === undefined) throw new Error(`${display} does not exist; use write_file to create it, or list_files to find the right path`);

  const { text, mode } = await readWholeTextFile({ absolute: target.entry, display, signal });
  signal.throwIfAborted();

  let search = params.old_string;
  let replacement = params.new_string;
  let positions = findAll(text, search);
  // read_file shows CRLF lines without their CR, so text copied from it has bare LFs.
  if (positions.length === 0 && text.includes('\r\n') && !search.includes('\r') && search.includes('\n')) {
    search = search.replaceAll('\n', '\r\n');
    replacement = replacement.replaceAll('\r\n', '\n').replaceAll('\n', '\r\n');
    positions = findAll(text, search);
  }
  if (positions.length === 0) {
    throw new Error(`old_string was not found in ${display}; read the file again and copy the exact text`);
  }
  if (positions.length > 1 && !params.replace_all) {
    throw new Error(
      `old_string occurs ${positions.length} times in ${display}; add surrounding lines to make it unique, or set replace_all`,
    );
  }
  const first = positions[0] ?? 0;
  // split/join, not String.replace: "$&" and friends in new_string must stay literal.
  const updated = params.replace_all
    ? text.split(search).join(replacement)
    : text.slice(0, first) + replacement + text.slice(first + search.length);

  try {
    const addBytes = Buffer.byteLength(updated);
    if (addBytes > Buffer.byteLength(text)) await ensureHomeRoom({ home: options.home, maxBytes: options.homeMaxBytes, addBytes, replacedBytes: Buffer.byteLength(text), display });
    await writeHomeFile({ target, content: updated, how: 'replace', mode, owner: options.owner, signal });
  } catch (error) {
    signal.throwIfAborted();
    throw describeFileError(error, display);
  }
  // Written: report it even if the turn was cancelled meanwhile (see write_file).

  const bytesBefore = Buffer.byteLength(text);
  const bytesAfter = Buffer.byteLength(updated);
  const snippet = snippetAround({ text: updated, start: first, length: replacement.length });
  const count = formatCount(positions.length, 'replacement');
  const shownNote = positions.length > 1 ? ' (around the first replacement)' : '';
  const summary = `Edited ${display}: ${count} (${formatBytes(bytesBefore)} → ${formatBytes(bytesAfter)}).`;
  return {
    content:
      updated === ''
        ? `${summary} The file is now empty.`
        : `${summary}\nLines ${snippet.firstLine}–${snippet.lastLine} now read${shownNote}:\n${snippet.text}`,
    details: {
      path: display,
      replacements: positions.length,
      bytesBefore,
      bytesAfter,
      firstChangedLine: snippet.changedLine,
    },
  };
}

async function readWholeTextFile(options: {
  absolute: string;
  display: string;
  signal: AbortSignal;
}): Promise<{ text: string; mode: number }> {
  const { absolute, display, signal } = options;
  const file = await openTextFile({ absolute, display });
  try {
    if (file.size > EDIT_FILE_MAX_BYTES) {
      throw new Error(
        `${display} is ${formatBytes(file.size)}, over the ${formatBytes(EDIT_FILE_MAX_BYTES)} edit_file handles`,
      );
    }
    signal.throwIfAborted();
    const bytes = await file.readAll(signal, display);
    try {
      // fatal: an edit must not turn bytes that are not UTF-8 into U+FFFD on the way back;
      // ignoreBOM: keep a byte-order mark so it is written back unchanged.
      return { text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes), mode: file.mode };
    } catch {
      throw new Error(`${display} is not valid UTF-8 text, so edit_file cannot change it safely`);
    }
  } catch (error) {
    signal.throwIfAborted();
    throw describeFileError(error, display);
  } finally {
    file.close();
  }
}

function findAll(text: string, search: string): number[] {
  const positions: number[] = [];
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + search.length)) positions.push(at);
  return positions;
}

/** The changed lines plus a little context, numbered as read_file numbers them. */
function snippetAround(options: { text: string; start: number; length: number }): {
  text: string;
  firstLine: number;
  lastLine: number;
  changedLine: number;
} {
  const { text, start, length } = options;
  const lines = text.split('\n');
  // A final newline ends the last line; it does not start another.
  if (lines.length > 1 && text.endsWith('\n')) lines.pop();
  const changedLine = countNewlines(text, 0, start) + 1;
  const changedEnd = changedLine + countNewlines(text, start, start + length);
  const firstLine = Math.max(1, changedLine - SNIPPET_CONTEXT_LINES);
  const lastLine = Math.min(lines.length, changedEnd + SNIPPET_CONTEXT_LINES, firstLine + SNIPPET_MAX_LINES - 1);
  const shown = lines
    .slice(firstLine - 1, lastLine)
    .map((line, index) => numberLine(firstLine + index, cutLongLine(line.replace(/\r$/, '')).text));
  return { text: shown.join('\n'), firstLine, lastLine, changedLine };
}

function countNewlines(text: string, from: number, to: number): number {
  let count = 0;
  for (let at = text.indexOf('\n', from); at !== -1 && at < to; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}
