import { describe, expect, it } from 'vitest';
import { PatchError } from '../../../src/tools/computer/apply-patch/patch-error.js';
import { MAX_PATCH_BYTES, parsePatch } from '../../../src/tools/computer/apply-patch/parse-patch.js';

function parseError(text: string): PatchError {
  try {
    parsePatch(text);
  } catch (error) {
    if (error instanceof PatchError) return error;
    throw error;
  }
  throw new Error('the patch parsed');
}

describe('parsePatch', () => {
  it('reads add, delete and update-with-move operations in order', () => {
    const patch = [
      '*** Begin Patch',
      '*** Add File: path/add.py',
      '+abc',
      '+def',
      '*** Delete File: path/delete.py',
      '*** Update File: path/update.py',
      '*** Move to: path/update2.py',
      '@@ def f():',
      '-    pass',
      '+    return 123',
      '*** End Patch',
    ].join('\n');
    expect(parsePatch(patch).operations).toEqual([
      { kind: 'add', line: 2, path: 'path/add.py', lines: ['abc', 'def'] },
      { kind: 'delete', line: 5, path: 'path/delete.py' },
      {
        kind: 'update',
        line: 6,
        path: 'path/update.py',
        moveTo: 'path/update2.py',
        hunks: [
          {
            line: 8,
            headers: ['def f():'],
            lines: [
              { kind: 'remove', text: '    pass' },
              { kind: 'add', text: '    return 123' },
            ],
            endOfFile: false,
          },
        ],
      },
    ]);
  });

  it('reads several hunks, blank lines inside a hunk as empty context, and *** End of File', () => {
    const patch = ['*** Begin Patch', '*** Update File: a.txt', '@@', ' a', '-b', '+B', '@@ section', '', ' c', '-d', '*** End of File', '*** End Patch'].join('\n');
    const [operation] = parsePatch(patch).operations;
    expect(operation?.kind === 'update' ? operation.hunks : []).toEqual([
      { line: 3, headers: [], lines: [{ kind: 'context', text: 'a' }, { kind: 'remove', text: 'b' }, { kind: 'add', text: 'B' }], endOfFile: false },
      { line: 7, headers: ['section'], lines: [{ kind: 'context', text: '' }, { kind: 'context', text: 'c' }, { kind: 'remove', text: 'd' }], endOfFile: true },
    ]);
  });

  it('accepts a first hunk without @@, as Codex does', () => {
    const [operation] = parsePatch('*** Begin Patch\n*** Update File: file2.py\n import foo\n+bar\n*** End Patch').operations;
    expect(operation).toMatchObject({ kind: 'update', hunks: [{ headers: [], lines: [{ kind: 'context', text: 'import foo' }, { kind: 'add', text: 'bar' }] }] });
  });

  it('collects consecutive @@ lines as narrowing headers and ignores unified-diff line ranges', () => {
    const patch = ['*** Begin Patch', '*** Update File: a.py', '@@ class Base', '@@ \t def method():', ' x', '@@ -12,7 +12,8 @@ def other():', '-y', '@@ -1 +1 @@', '-z', '*** End Patch'].join('\n');
    const [operation] = parsePatch(patch).operations;
    expect(operation?.kind === 'update' ? operation.hunks.map((hunk) => hunk.headers) : []).toEqual([['class Base', 'def method():'], ['def other():'], []]);
  });

  it('tolerates whitespace around the markers (Codex fixtures 017, 018, 020)', () => {
    const patch = ' *** Begin Patch \n  *** Update File: foo.txt\n@@\n-old\n+new\n *** End Patch \n';
    expect(parsePatch(patch).operations).toMatchObject([{ kind: 'update', path: 'foo.txt' }]);
  });

  it('tolerates CRLF patch text and blank lines around the envelope', () => {
    const patch = '\r\n\r\n*** Begin Patch\r\n*** Add File: a.txt\r\n+one\r\n*** End Patch\r\n\r\n';
    expect(parsePatch(patch).operations).toEqual([{ kind: 'add', line: 4, path: 'a.txt', lines: ['one'] }]);
  });

  it.each([`<<EOF`, `<<'EOF'`, `<<"EOF"`, `apply_patch <<'PATCH'`])('unwraps a patch sent as a heredoc (%s)', (opening) => {
    const word = opening.includes('PATCH') ? 'PATCH' : 'EOF';
    const patch = `${opening}\n*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n${word}\n`;
    expect(parsePatch(patch).operations).toEqual([{ kind: 'add', line: 3, path: 'a.txt', lines: ['hi'] }]);
  });

  it('refuses a heredoc with mismatched quotes', () => {
    const error = parseError(`<<"EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\n`);
    expect(error.line).toBe(1);
    expect(error.message).toContain("expected '*** Begin Patch'");
  });

  it('reads a blank line between + lines of an added file as an empty line', () => {
    const [operation] = parsePatch('*** Begin Patch\n*** Add File: a.md\n+# Title\n\n+text\n\n*** End Patch').operations;
    expect(operation).toMatchObject({ kind: 'add', lines: ['# Title', '', 'text'] });
  });

  it('allows an update that only renames', () => {
    const [operation] = parsePatch('*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n*** End Patch').operations;
    expect(operation).toEqual({ kind: 'update', line: 2, path: 'a.txt', moveTo: 'b.txt', hunks: [] });
  });

  describe('refuses malformed patches with the line and what was expected', () => {
    it('a missing *** Begin Patch', () => {
      const error = parseError('*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch');
      expect(error.line).toBe(1);
      expect(error.message).toBe(`invalid patch, line 1: expected '*** Begin Patch' as the first line, found "*** Update File: a.txt"`);
    });

    it('a missing *** End Patch', () => {
      const error = parseError('*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n');
      expect(error.line).toBe(5);
      expect(error.message).toContain(`expected '*** End Patch' as the last line, found "+b"`);
    });

    it('an unknown operation header', () => {
      const error = parseError('*** Begin Patch\n*** Add File: a.txt\n+x\n*** Modify File: b.txt\n+y\n*** End Patch');
      expect(error.line).toBe(4);
      expect(error.message).toContain("expected a file operation ('*** Add File: <path>', '*** Update File: <path>' or '*** Delete File: <path>')");
      expect(error.message).toContain('"*** Modify File: b.txt"');
    });

    it('a hunk line without a prefix', () => {
      const error = parseError('*** Begin Patch\n*** Update File: a.txt\n@@\n context\nno prefix here\n+x\n*** End Patch');
      expect(error.line).toBe(5);
      expect(error.message).toContain(`expected a hunk line starting with ' ' (unchanged context), '-' (removed) or '+' (added), found "no prefix here"`);
    });

    it('an added-file line without +', () => {
      const error = parseError('*** Begin Patch\n*** Add File: a.txt\n+one\ntwo\n*** End Patch');
      expect(error.line).toBe(4);
      expect(error.message).toContain(`every line of an added file starts with '+'; found "two"`);
    });

    it('an update without hunks', () => {
      const error = parseError('*** Begin Patch\n*** Update File: test.py\n*** End Patch');
      expect(error.line).toBe(2);
      expect(error.message).toContain("'*** Update File: test.py' has no hunks");
    });

    it('a @@ with no lines after it', () => {
      const error = parseError('*** Begin Patch\n*** Update File: a.txt\n@@ fn main\n*** Delete File: b.txt\n*** End Patch');
      expect(error.line).toBe(3);
      expect(error.message).toContain('the hunk has no lines');
    });

    it('*** End of File without hunk lines', () => {
      expect(parseError('*** Begin Patch\n*** Update File: a.txt\n*** End of File\n*** End Patch').line).toBe(3);
    });

    it('an empty patch and a patch with no operations', () => {
      expect(parseError('  \n').message).toContain('the patch is empty');
      expect(parseError('*** Begin Patch\n\n*** End Patch').message).toBe(
        "invalid patch, line 3: the patch has no file operations; expected '*** Add File: <path>', '*** Update File: <path>' or '*** Delete File: <path>' before '*** End Patch'",
      );
      expect(parseError('*** Begin Patch').message).toContain('the patch ends right after');
    });

    it('an operation without a path, or with a folder path', () => {
      expect(parseError('*** Begin Patch\n*** Delete File:   \n*** End Patch').message).toContain("'*** Delete File:' needs a path");
      expect(parseError('*** Begin Patch\n*** Add File: docs/\n+x\n*** End Patch').message).toContain('names a folder');
    });

    it('counts line numbers in the text as sent, including leading blank lines', () => {
      expect(parseError('\n\n*** Begin Patch\n*** Update File: a\n@@\nbad\n*** End Patch').line).toBe(6);
    });
  });

  it('refuses a patch over 1 MiB before reading it', () => {
    const big = `*** Begin Patch\n*** Add File: big.txt\n${'+x'.repeat(MAX_PATCH_BYTES / 2)}\n*** End Patch`;
    const error = parseError(big);
    expect(error.line).toBeUndefined();
    expect(error.message).toContain('over the 1 MiB limit');
  });
});
