import { describe, expect, it } from 'vitest';
import { applyHunks } from '../../../src/tools/computer/apply-patch/apply-hunks.js';
import { PatchApplyError } from '../../../src/tools/computer/apply-patch/patch-apply-error.js';
import type { Hunk } from '../../../src/tools/computer/apply-patch/patch-operation.js';
import { parsePatch } from '../../../src/tools/computer/apply-patch/parse-patch.js';

/** The hunks of a one-file update patch, written as its body lines. */
function hunks(...body: string[]): readonly Hunk[] {
  const [operation] = parsePatch(['*** Begin Patch', '*** Update File: f.txt', ...body, '*** End Patch'].join('\n')).operations;
  if (operation?.kind !== 'update') throw new Error('not an update');
  return operation.hunks;
}

function apply(text: string, ...body: string[]): string {
  return applyHunks({ path: 'f.txt', text, hunks: hunks(...body) }).text;
}

function applyError(text: string, ...body: string[]): PatchApplyError {
  try {
    apply(text, ...body);
  } catch (error) {
    if (error instanceof PatchApplyError) return error;
    throw error;
  }
  throw new Error('the hunks applied');
}

describe('applyHunks', () => {
  it('replaces lines and counts what was added and removed', () => {
    expect(applyHunks({ path: 'f.txt', text: 'foo\nbar\n', hunks: hunks('@@', ' foo', '-bar', '+baz', '+qux') })).toEqual({
      text: 'foo\nbaz\nqux\n',
      added: 2,
      removed: 1,
    });
  });

  it('applies several hunks in file order (Codex interleaved-changes case)', () => {
    expect(apply('a\nb\nc\nd\ne\nf\n', '@@', ' a', '-b', '+B', '@@', ' c', ' d', '-e', '+E', '@@', ' f', '+g', '*** End of File')).toBe(
      'a\nB\nc\nd\nE\nf\ng\n',
    );
  });

  it('uses the @@ header to pick between identical blocks', () => {
    const text = 'function one() {\n  return 1;\n}\nfunction two() {\n  return 1;\n}\n';
    expect(apply(text, '@@ function two() {', '-  return 1;', '+  return 2;')).toBe(
      'function one() {\n  return 1;\n}\nfunction two() {\n  return 2;\n}\n',
    );
  });

  it('narrows with several @@ headers in a row', () => {
    const text = 'class A\n  def run\n    x = 1\nclass B\n  def stop\n    x = 1\n  def run\n    x = 1\n';
    expect(apply(text, '@@ class B', '@@ def run', '-    x = 1', '+    x = 2')).toBe(
      'class A\n  def run\n    x = 1\nclass B\n  def stop\n    x = 1\n  def run\n    x = 2\n',
    );
  });

  it('matches ignoring trailing whitespace, then surrounding whitespace, then typographic punctuation', () => {
    expect(apply('foo   \nbar\t\n', '@@', ' foo', '-bar', '+baz')).toBe('foo   \nbaz\n');
    expect(apply('    foo\n        bar\n', '@@', ' foo', '-bar', '+    baz')).toBe('    foo\n    baz\n');
    expect(apply('say \u201Chi\u201D \u2014 ok\n', '@@', '-say "hi" - ok', '+say "hello"')).toBe('say "hello"\n');
  });

  it('prefers an exact match over an earlier loose one', () => {
    expect(apply('  x = 1\nx = 1\n', '@@', '-x = 1', '+x = 2')).toBe('  x = 1\nx = 2\n');
  });

  it('keeps the file’s own text for loosely matched context lines', () => {
    expect(apply('\tkeep  \nold\n', '@@', ' keep', '-old', '+new')).toBe('\tkeep  \nnew\n');
  });

  it('anchors a hunk marked *** End of File at the end of the file', () => {
    const text = 'x\nend\ny\nend\n';
    expect(apply(text, '@@', '-end', '+END', '*** End of File')).toBe('x\nend\ny\nEND\n');
    expect(applyError('end\nlast\n', '@@', '-end', '+END', '*** End of File').message).toContain('at the end of the file');
  });

  it('keeps CRLF line endings, for added lines too', () => {
    expect(apply('one\r\ntwo\r\nthree\r\n', '@@', ' one', '-two', '+2', '+2.5', ' three')).toBe('one\r\n2\r\n2.5\r\nthree\r\n');
  });

  it('keeps each line’s ending in a mixed file and gives added lines the more common one', () => {
    expect(apply('a\r\nb\nc\r\nd\r\n', '@@', ' b', '+new', ' c')).toBe('a\r\nb\nnew\r\nc\r\nd\r\n');
  });

  it('keeps a missing final newline missing, and an existing one present', () => {
    expect(apply('a\nb', '@@', ' a', '-b', '+B')).toBe('a\nB');
    expect(apply('a\nb', '@@', ' b', '+c', '*** End of File')).toBe('a\nb\nc');
    expect(apply('a\nb\n', '@@', '-b')).toBe('a\n');
    expect(apply('a\r\nb', '@@', ' b', '+c')).toBe('a\r\nb\r\nc');
  });

  it('fills an empty file, ending it with a newline', () => {
    expect(apply('', '@@', '+first', '+second')).toBe('first\nsecond\n');
  });

  it('puts a pure addition at the end of the file, or right after the line its @@ names', () => {
    expect(apply('line1\nline2\n', '@@', '+added line 1', '+added line 2')).toBe('line1\nline2\nadded line 1\nadded line 2\n');
    expect(apply('import os\n\ncode()\n', '@@ import os', '+import sys')).toBe('import os\nimport sys\n\ncode()\n');
  });

  it('retries without blank context lines at the end of a hunk', () => {
    expect(apply('a\nb\n', '@@', ' a', '-b', '+B', '', '')).toBe('a\nB\n');
  });

  it('keeps a byte-order mark', () => {
    expect(apply('\uFEFFfirst\nsecond\n', '@@', ' first', '-second', '+2')).toBe('\uFEFFfirst\n2\n');
  });

  it('names the file, the hunk and its first lines when a hunk does not match', () => {
    const error = applyError('a\nb\nc\n', '@@', ' a', '-b', '+B', '@@', ' q1', ' q2', ' q3', '-q4', '+Q');
    expect(error.path).toBe('f.txt');
    expect(error.message).toContain('f.txt: hunk 2 of 2 (patch line 7) does not match the file');
    expect(error.message).toContain('after the previous hunk');
    expect(error.message).toContain('  "q1"\n  "q2"\n  "q3"\n  … and 1 more');
    expect(error.message).toContain('Nothing was changed');
  });

  it('names a @@ header that is not in the file', () => {
    expect(applyError('a\n', '@@ def missing():', '-a').message).toContain(`hunk 1 of 1 (patch line 3): the line "def missing():" named by its '@@' header was not found`);
  });

  it('says when the file already has the hunk’s result', () => {
    expect(applyError('a\nB\n', '@@', ' a', '-b', '+B').message).toContain('may have been applied already');
  });

  it('refuses hunks given out of file order', () => {
    expect(applyError('a\nb\nc\n', '@@', '-c', '+C', '@@', '-a', '+A').message).toContain('hunk 2 of 2');
  });
});
