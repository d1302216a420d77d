import { PatchApplyError } from './patch-apply-error.js';
import type { Hunk, HunkLine } from './patch-operation.js';
import { createLineSeeker, type LineSeeker } from './create-line-seeker.js';

export interface AppliedHunks {
  readonly text: string;
  /** Lines the hunks added and removed. */
  readonly added: number;
  readonly removed: number;
}

interface FileLine {
  readonly text: string;
  /** The line's own ending, kept for unchanged lines; added lines take the file's usual one. */
  readonly ending: string;
}

interface Edit {
  readonly start: number;
  readonly removeCount: number;
  readonly insert: readonly FileLine[];
}

/** How many of a hunk's old lines an error message quotes. */
const QUOTED_LINES = 3;

/**
 * Applies update hunks to a file's text, in memory. Hunks are located in order, each after
 * the previous one (and after the line its `@@` headers name), with the whitespace-tolerant
 * matching of `createLineSeeker`. Unchanged context lines keep the file's own text, so a loosely
 * matched line is never rewritten. Line endings are the file's: CRLF stays CRLF (a mixed
 * file keeps each line's ending and gives added lines the more common one), and a file that
 * did not end with a newline still does not; an empty file gets one.
 *
 * Throws a `PatchApplyError` naming the file and the hunk (its number, patch line and first
 * old lines) that did not match.
 */
export function applyHunks(options: { path: string; text: string; hunks: readonly Hunk[] }): AppliedHunks {
  const { path, hunks } = options;
  const file = splitLines(options.text);
  const texts = file.lines.map((line) => line.text);
  const seek = createLineSeeker(texts);
  const edits: Edit[] = [];
  let cursor = 0;
  let added = 0;
  let removed = 0;

  hunks.forEach((hunk, hunkIndex) => {
    const label = `${path}: hunk ${hunkIndex + 1} of ${hunks.length} (patch line ${hunk.line})`;
    for (const header of hunk.headers) {
      const found = seek({ pattern: [header], from: cursor });
      if (found === undefined) {
        throw new PatchApplyError({
          path,
          message: `${label}: the line ${JSON.stringify(header)} named by its '@@' header was not found${cursor > 0 ? ' after the previous hunk' : ''}. Nothing was changed; read the file again and resend the patch.`,
        });
      }
      cursor = found + 1;
    }

    let lines = hunk.lines;
    let old = oldLines(lines);
    if (old.length === 0) {
      // Pure addition: right after the `@@` line it names, else at the end of the file.
      const start = hunk.headers.length > 0 && !hunk.endOfFile ? cursor : texts.length;
      edits.push({ start, removeCount: 0, insert: lines.map((line) => ({ text: line.text, ending: file.ending })) });
      added += lines.length;
      return;
    }
    let start = seek({ pattern: old, from: cursor, atEnd: hunk.endOfFile });
    if (start === undefined && lines.at(-1)?.kind === 'context' && lines.at(-1)?.text.trim() === '') {
      // Blank lines at a hunk's end are usually the patch's own spacing, or stand for the
      // file's final newline (which is not a line here): retry without them, as Codex does.
      lines = withoutTrailingBlankContext(lines);
      old = oldLines(lines);
      start = seek({ pattern: old, from: cursor, atEnd: hunk.endOfFile });
    }
    if (start === undefined) throw mismatchError({ label, path, hunk, old, seek, cursor });

    const insert: FileLine[] = [];
    let offset = start;
    for (const line of lines) {
      if (line.kind === 'context') {
        insert.push(file.lines[offset] ?? { text: line.text, ending: file.ending });
        offset += 1;
      } else if (line.kind === 'remove') {
        removed += 1;
        offset += 1;
      } else {
        insert.push({ text: line.text, ending: file.ending });
        added += 1;
      }
    }
    edits.push({ start, removeCount: old.length, insert });
    cursor = start + old.length;
  });

  return { text: joinLines(replaceRanges(file.lines, edits), file.endsWithNewline), added, removed };
}

function oldLines(lines: readonly HunkLine[]): string[] {
  return lines.filter((line) => line.kind !== 'add').map((line) => line.text);
}

function withoutTrailingBlankContext(lines: readonly HunkLine[]): readonly HunkLine[] {
  let end = lines.length;
  while (end > 0 && lines[end - 1]?.kind === 'context' && lines[end - 1]?.text.trim() === '') end -= 1;
  return lines.slice(0, end);
}

function mismatchError(options: {
  path: string;
  label: string;
  hunk: Hunk;
  old: readonly string[];
  seek: LineSeeker;
  cursor: number;
}): PatchApplyError {
  const { path, label, hunk, old, seek, cursor } = options;
  const quoted = old.slice(0, QUOTED_LINES).map((line) => `  ${JSON.stringify(line)}`);
  if (old.length > QUOTED_LINES) quoted.push(`  … and ${old.length - QUOTED_LINES} more`);
  const where = [
    hunk.headers.length > 0 ? `after the '@@ ${hunk.headers.at(-1) ?? ''}' line` : '',
    cursor > 0 && hunk.headers.length === 0 ? 'after the previous hunk' : '',
    hunk.endOfFile ? 'at the end of the file' : '',
  ].filter((part) => part !== '');
  const newLines = hunk.lines.filter((line) => line.kind !== 'remove').map((line) => line.text);
  const alreadyApplied =
    hunk.lines.some((line) => line.kind !== 'context') && seek({ pattern: newLines, from: 0 }) !== undefined;
  return new PatchApplyError({
    path,
    message: [
      `${label} does not match the file: these context and '-' lines were not found${where.length > 0 ? ` ${where.join(' ')}` : ''}:`,
      ...quoted,
      alreadyApplied
        ? 'The file already contains the lines this hunk would produce; the change may have been applied already. Nothing was changed.'
        : 'Nothing was changed. Read the file again and copy the context and removed lines exactly, in file order.',
    ].join('\n'),
  });
}

function splitLines(text: string): { lines: FileLine[]; endsWithNewline: boolean; ending: string } {
  if (text === '') return { lines: [], endsWithNewline: true, ending: '\n' };
  const parts = text.split('\n');
  const endsWithNewline = parts.at(-1) === '';
  if (endsWithNewline) parts.pop();
  let crlf = 0;
  let lf = 0;
  const raw = parts.map((part, index): { text: string; ending: string | undefined } => {
    const terminated = index < parts.length - 1 || endsWithNewline;
    if (terminated && part.endsWith('\r')) {
      crlf += 1;
      return { text: part.slice(0, -1), ending: '\r\n' };
    }
    if (terminated) lf += 1;
    return { text: part, ending: terminated ? '\n' : undefined };
  });
  const ending = crlf > 0 && crlf >= lf ? '\r\n' : '\n';
  return { lines: raw.map((line) => ({ text: line.text, ending: line.ending ?? ending })), endsWithNewline, ending };
}

function replaceRanges(lines: readonly FileLine[], edits: readonly Edit[]): FileLine[] {
  const ordered = [...edits].sort((left, right) => left.start - right.start);
  const result: FileLine[] = [];
  let position = 0;
  for (const edit of ordered) {
    result.push(...lines.slice(position, edit.start), ...edit.insert);
    position = Math.max(position, edit.start + edit.removeCount);
  }
  result.push(...lines.slice(position));
  return result;
}

function joinLines(lines: readonly FileLine[], endsWithNewline: boolean): string {
  return lines.map((line, index) => (index < lines.length - 1 || endsWithNewline ? line.text + line.ending : line.text)).join('');
}
