import { PatchError } from './patch-error.js';
import type { Hunk, HunkLine, ParsedPatch, PatchOperation } from './patch-operation.js';

/** Patches larger than this are refused before they are read. */
export const MAX_PATCH_BYTES = 1024 * 1024;

const BEGIN_PATCH = '*** Begin Patch';
const END_PATCH = '*** End Patch';
const END_OF_FILE = '*** End of File';
const FILE_OPERATION = /^\*\*\* (Add|Delete|Update) File:(.*)$/;
const MOVE_TO = /^\*\*\* Move to:(.*)$/;
/** `apply_patch <<'EOF'` as a model writes it when it thinks it is typing into a shell. */
const HEREDOC_OPENING = /^(?:apply_patch\s+)?<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1$/;
/** A unified-diff range (`-12,7 +12,8 @@ fn main`): no position is taken from it, only the text after it. */
const UNIFIED_RANGE = /^-\d+(?:,\d+)? \+\d+(?:,\d+)? @@\s*(.*)$/;
const OPERATION_HINT = "'*** Add File: <path>', '*** Update File: <path>' or '*** Delete File: <path>'";
const HUNK_LINE_HINT = "' ' (unchanged context), '-' (removed) or '+' (added)";

/**
 * Parses the Codex `apply_patch` format into typed operations, or throws a `PatchError`
 * naming the line and what was expected there. Like Codex it tolerates whitespace around
 * the `***` markers, a patch wrapped in a shell heredoc (`<<'EOF' … EOF`), a first hunk
 * without `@@`, and blank lines inside hunks (read as empty context lines).
 */
export function parsePatch(text: string): ParsedPatch {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_PATCH_BYTES) {
    throw new PatchError({
      message: `the patch is ${(bytes / 1024 / 1024).toFixed(1)} MiB, over the 1 MiB limit; split it into several smaller patches`,
    });
  }
  const lines = text.split(/\r?\n/);
  const { first, last } = findEnvelope(lines);
  const operations: PatchOperation[] = [];
  let index = first + 1;
  while (index < last) {
    const raw = lineAt(lines, index);
    const trimmed = raw.trim();
    if (trimmed === '') {
      index += 1;
      continue;
    }
    const match = FILE_OPERATION.exec(trimmed);
    if (match === null) {
      throw new PatchError({ line: index + 1, message: `expected a file operation (${OPERATION_HINT}), found ${quote(raw)}` });
    }
    const kind = match[1];
    const path = readPath({ value: match[2] ?? '', marker: `*** ${kind ?? ''} File:`, line: index + 1 });
    const parsed =
      kind === 'Add'
        ? parseAddFile({ lines, index, last, path })
        : kind === 'Delete'
          ? { operation: { kind: 'delete' as const, line: index + 1, path }, next: index + 1 }
          : parseUpdateFile({ lines, index, last, path });
    operations.push(parsed.operation);
    index = parsed.next;
  }
  if (operations.length === 0) {
    throw new PatchError({ line: last + 1, message: `the patch has no file operations; expected ${OPERATION_HINT} before '${END_PATCH}'` });
  }
  return { operations };
}

/** The indexes of the `*** Begin Patch` and `*** End Patch` lines, unwrapping a heredoc. */
function findEnvelope(lines: readonly string[]): { first: number; last: number } {
  let first = firstNonBlank(lines, 0, lines.length);
  let last = lastNonBlank(lines, 0, lines.length);
  if (first === undefined || last === undefined) {
    throw new PatchError({ line: 1, message: `the patch is empty; expected '${BEGIN_PATCH}' on the first line` });
  }
  const opening = lineAt(lines, first).trim();
  if (opening !== BEGIN_PATCH) {
    const heredoc = HEREDOC_OPENING.exec(opening);
    if (heredoc === null || last === first || lineAt(lines, last).trim() !== heredoc[2]) {
      throw new PatchError({ line: first + 1, message: `expected '${BEGIN_PATCH}' as the first line, found ${quote(lineAt(lines, first))}` });
    }
    const innerFirst = firstNonBlank(lines, first + 1, last);
    const innerLast = lastNonBlank(lines, first + 1, last);
    if (innerFirst === undefined || innerLast === undefined || lineAt(lines, innerFirst).trim() !== BEGIN_PATCH) {
      const line = innerFirst ?? first + 1;
      throw new PatchError({ line: line + 1, message: `expected '${BEGIN_PATCH}' after the heredoc opening, found ${quote(lineAt(lines, line))}` });
    }
    first = innerFirst;
    last = innerLast;
  }
  if (last === first) {
    throw new PatchError({ line: first + 1, message: `the patch ends right after '${BEGIN_PATCH}'; expected file operations and '${END_PATCH}'` });
  }
  if (lineAt(lines, last).trim() !== END_PATCH) {
    throw new PatchError({ line: last + 1, message: `expected '${END_PATCH}' as the last line, found ${quote(lineAt(lines, last))}` });
  }
  return { first, last };
}

interface ParseState {
  readonly lines: readonly string[];
  /** The index of the operation's header line. */
  readonly index: number;
  /** The index of `*** End Patch`. */
  readonly last: number;
  readonly path: string;
}

interface Parsed {
  readonly operation: PatchOperation;
  /** The index of the first line after the operation. */
  readonly next: number;
}

function parseAddFile(state: ParseState): Parsed {
  const { lines, last, path } = state;
  const content: string[] = [];
  let index = state.index + 1;
  while (index < last) {
    const raw = lineAt(lines, index);
    if (raw.startsWith('+')) {
      content.push(raw.slice(1));
      index += 1;
      continue;
    }
    if (raw.trim() === '') {
      // A blank line between `+` lines can only mean an empty line of the new file.
      const next = firstNonBlank(lines, index, last);
      if (next === undefined || !lineAt(lines, next).startsWith('+')) break;
      for (; index < next; index += 1) content.push('');
      continue;
    }
    if (raw.trimStart().startsWith('***')) break;
    throw new PatchError({
      line: index + 1,
      message: `every line of an added file starts with '+'; found ${quote(raw)} in '*** Add File: ${path}'`,
    });
  }
  return { operation: { kind: 'add', line: state.index + 1, path, lines: content }, next: index };
}

function parseUpdateFile(state: ParseState): Parsed {
  const { lines, last, path } = state;
  let index = state.index + 1;
  let moveTo: string | undefined;
  const move = index < last ? MOVE_TO.exec(lineAt(lines, index).trim()) : null;
  if (move !== null) {
    moveTo = readPath({ value: move[1] ?? '', marker: '*** Move to:', line: index + 1 });
    index += 1;
  }
  const hunks: Hunk[] = [];
  while (index < last) {
    const raw = lineAt(lines, index);
    if (raw.trim() === '') {
      index += 1;
      continue;
    }
    if (raw.trim() === END_OF_FILE) {
      throw new PatchError({ line: index + 1, message: `'${END_OF_FILE}' must follow the lines of a hunk` });
    }
    // As in Codex, a line starting with '*' ends the file's hunks: it is the next operation.
    if (raw.startsWith('*')) break;
    const parsed = parseHunk({ lines, index, last, first: hunks.length === 0 });
    hunks.push(parsed.hunk);
    index = parsed.next;
  }
  if (hunks.length === 0 && moveTo === undefined) {
    throw new PatchError({
      line: state.index + 1,
      message: `'*** Update File: ${path}' has no hunks; follow it with '@@' and the lines to change, each starting with ${HUNK_LINE_HINT}`,
    });
  }
  const operation: PatchOperation = {
    kind: 'update',
    line: state.index + 1,
    path,
    ...(moveTo === undefined ? {} : { moveTo }),
    hunks,
  };
  return { operation, next: index };
}

function parseHunk(state: { lines: readonly string[]; index: number; last: number; first: boolean }): { hunk: Hunk; next: number } {
  const { lines, last } = state;
  const start = state.index;
  let index = start;
  const headers: string[] = [];
  // Several `@@` lines in a row narrow step by step: `@@ class Foo` then `@@ def bar():`.
  for (let header = hunkHeader(lineAt(lines, index)); header !== undefined && index < last; header = hunkHeader(lineAt(lines, index))) {
    if (header !== '') headers.push(header);
    index += 1;
  }
  if (index === start && !state.first) {
    throw new PatchError({ line: start + 1, message: `expected '@@' to start the next hunk, found ${quote(lineAt(lines, start))}` });
  }
  const hunkLines: HunkLine[] = [];
  let endOfFile = false;
  while (index < last) {
    const raw = lineAt(lines, index);
    const prefix = raw.charAt(0);
    if (raw === '') {
      hunkLines.push({ kind: 'context', text: '' });
    } else if (prefix === ' ') {
      hunkLines.push({ kind: 'context', text: raw.slice(1) });
    } else if (prefix === '-') {
      hunkLines.push({ kind: 'remove', text: raw.slice(1) });
    } else if (prefix === '+') {
      hunkLines.push({ kind: 'add', text: raw.slice(1) });
    } else if (raw.trim() === END_OF_FILE) {
      if (hunkLines.length === 0) break;
      endOfFile = true;
      index += 1;
      break;
    } else if (hunkHeader(raw) !== undefined || raw.startsWith('*')) {
      break;
    } else {
      throw new PatchError({
        line: index + 1,
        message: `expected a hunk line starting with ${HUNK_LINE_HINT}, found ${quote(raw)}; prefix an unchanged line with a space`,
      });
    }
    index += 1;
  }
  if (hunkLines.length === 0) {
    throw new PatchError({
      line: start + 1,
      message: `the hunk has no lines; after '@@' give the lines to change, each starting with ${HUNK_LINE_HINT}`,
    });
  }
  return { hunk: { line: start + 1, headers, lines: hunkLines, endOfFile }, next: index };
}

/** The text of a `@@` line ('' for a bare `@@`), or undefined when the line is not one. */
function hunkHeader(raw: string): string | undefined {
  const line = raw.trimEnd();
  if (line === '@@') return '';
  if (!line.startsWith('@@ ') && !line.startsWith('@@\t')) return undefined;
  const text = line.slice(3).trim();
  const range = UNIFIED_RANGE.exec(text);
  return range === null ? text : (range[1] ?? '').trim();
}

function readPath(options: { value: string; marker: string; line: number }): string {
  const path = options.value.trim();
  if (path === '') throw new PatchError({ line: options.line, message: `'${options.marker}' needs a path relative to the agent home` });
  if (path.endsWith('/') || path.endsWith('\\')) {
    throw new PatchError({ line: options.line, message: `${quote(path)} names a folder; give the path of a file` });
  }
  return path;
}

function firstNonBlank(lines: readonly string[], from: number, to: number): number | undefined {
  for (let index = from; index < to; index += 1) if (lineAt(lines, index).trim() !== '') return index;
  return undefined;
}

function lastNonBlank(lines: readonly string[], from: number, to: number): number | undefined {
  for (let index = to - 1; index >= from; index -= 1) if (lineAt(lines, index).trim() !== '') return index;
  return undefined;
}

function lineAt(lines: readonly string[], index: number): string {
  return lines[index] ?? '';
}

/** A patch line as shown in an error: quoted, and cut when long. */
function quote(raw: string): string {
  return JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw);
}
