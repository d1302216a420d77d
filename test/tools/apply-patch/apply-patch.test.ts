import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyPatch } from '../../../src/tools/computer/apply-patch/apply-patch.js';
import { commitPatchPlan } from '../../../src/tools/computer/apply-patch/commit-patch-plan.js';
import { PatchApplyError } from '../../../src/tools/computer/apply-patch/patch-apply-error.js';
import { PatchError } from '../../../src/tools/computer/apply-patch/patch-error.js';
import { parsePatch } from '../../../src/tools/computer/apply-patch/parse-patch.js';
import { planPatch } from '../../../src/tools/computer/apply-patch/plan-patch.js';

let root: string;
let home: string;
let outside: string;
const signal = new AbortController().signal;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'apply-patch-'));
  home = path.join(root, 'home');
  outside = path.join(root, 'outside');
  await mkdir(home);
  await mkdir(outside);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function patchOf(...lines: string[]): string {
  return ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');
}

async function put(relative: string, content: string): Promise<void> {
  await mkdir(path.dirname(path.join(home, relative)), { recursive: true });
  await writeFile(path.join(home, relative), content);
}

async function read(relative: string): Promise<string> {
  return readFile(path.join(home, relative), 'utf8');
}

async function exists(absolute: string): Promise<boolean> {
  return stat(absolute).then(
    () => true,
    () => false,
  );
}

/** Every file under the home with its bytes, inode and mtime: what "nothing was written" compares. */
async function snapshot(): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const entry of await readdir(home, { recursive: true, withFileTypes: true })) {
    const absolute = path.join(entry.parentPath, entry.name);
    const relative = path.relative(home, absolute);
    if (entry.isFile()) {
      const stats = await stat(absolute, { bigint: true });
      result[relative] = `${(await readFile(absolute)).toString('base64')} ino=${stats.ino} mtime=${stats.mtimeNs}`;
    } else {
      result[relative] = entry.isDirectory() ? 'folder' : 'other';
    }
  }
  return result;
}

async function applyError(patch: string, options: { signal?: AbortSignal } = {}): Promise<Error> {
  try {
    await applyPatch({ home, patch, signal: options.signal ?? signal });
  } catch (error) {
    if (error instanceof Error) return error;
    throw error;
  }
  throw new Error('the patch applied');
}

describe('applyPatch', () => {
  it('adds, updates, moves and deletes files and reports each with its line counts', async () => {
    await put('src/app.py', 'def greet():\n    print("Hi")\n');
    await put('old/name.txt', 'old content\n');
    await put('obsolete.txt', 'one\ntwo\nthree\n');
    const summary = await applyPatch({
      home,
      signal,
      patch: patchOf(
        '*** Add File: docs/nested/new.md',
        '+# New',
        '+text',
        '*** Update File: src/app.py',
        '@@ def greet():',
        '-    print("Hi")',
        '+    print("Hello, world!")',
        '*** Update File: old/name.txt',
        '*** Move to: renamed/dir/name.txt',
        '@@',
        '-old content',
        '+new content',
        '*** Delete File: obsolete.txt',
      ),
    });
    expect(await read('docs/nested/new.md')).toBe('# New\ntext\n');
    expect(await read('src/app.py')).toBe('def greet():\n    print("Hello, world!")\n');
    expect(await read('renamed/dir/name.txt')).toBe('new content\n');
    expect(await exists(path.join(home, 'old/name.txt'))).toBe(false);
    expect(await exists(path.join(home, 'obsolete.txt'))).toBe(false);
    expect(summary).toEqual({
      changes: [
        { operation: 'add', path: 'docs/nested/new.md', added: 2, removed: 0 },
        { operation: 'update', path: 'src/app.py', added: 1, removed: 1 },
        { operation: 'move', path: 'old/name.txt', movedTo: 'renamed/dir/name.txt', added: 1, removed: 1 },
        { operation: 'delete', path: 'obsolete.txt', added: 0, removed: 3 },
      ],
      linesAdded: 4,
      linesRemoved: 5,
    });
    expect((await readdir(home, { recursive: true })).filter((name) => name.includes('.tmp'))).toEqual([]);
  });

  it('applies several hunks to one file', async () => {
    await put('multi.txt', 'foo\nbar\nbaz\nqux\n');
    await applyPatch({ home, signal, patch: patchOf('*** Update File: multi.txt', '@@', ' foo', '-bar', '+BAR', '@@', ' baz', '-qux', '+QUX') });
    expect(await read('multi.txt')).toBe('foo\nBAR\nbaz\nQUX\n');
  });

  it('keeps a CRLF file CRLF and an executable file executable', async () => {
    await put('run.cmd', 'echo one\r\necho two\r\n');
    await chmod(path.join(home, 'run.cmd'), 0o755);
    await applyPatch({ home, signal, patch: patchOf('*** Update File: run.cmd', '@@', ' echo one', '-echo two', '+echo 2', '+echo 3') });
    expect(await read('run.cmd')).toBe('echo one\r\necho 2\r\necho 3\r\n');
    expect((await stat(path.join(home, 'run.cmd'))).mode & 0o777).toBe(0o755);
  });

  it('unwraps a heredoc and tolerates padded markers', async () => {
    await put('file.txt', 'one\n');
    await applyPatch({ home, signal, patch: "<<'EOF'\n *** Begin Patch\n*** Update File: file.txt\n@@\n-one\n+two\n*** End Patch \nEOF\n" });
    expect(await read('file.txt')).toBe('two\n');
  });

  it('leaves every file untouched when the second hunk of the second file does not match', async () => {
    await put('first.txt', 'a\nb\n');
    await put('second.txt', 'x\ny\nz\n');
    const before = await snapshot();
    const error = await applyError(
      patchOf(
        '*** Update File: first.txt',
        '@@',
        '-a',
        '+A',
        '*** Add File: created.txt',
        '+new',
        '*** Update File: second.txt',
        '@@',
        ' x',
        '-y',
        '+Y',
        '@@',
        ' not in the file',
        '-z',
        '+Z',
      ),
    );
    expect(error).toBeInstanceOf(PatchApplyError);
    expect(error.message).toContain('second.txt: hunk 2 of 2 (patch line 13) does not match the file');
    expect(error.message).toContain('"not in the file"');
    expect(await snapshot()).toEqual(before);
  });

  describe('refuses hostile paths and writes nothing', () => {
    const cases: [string, string[]][] = [
      ['a path that climbs out', ['*** Add File: ../x', '+evil']],
      ['an absolute path', ['*** Update File: /etc/passwd', '@@', '+evil']],
      ['a home-relative ~ path', ['*** Delete File: ~/x']],
      ['a Move out of the home', ['*** Update File: keep.txt', '*** Move to: ../x', '@@', '+evil']],
      ['a path with a NUL byte', ['*** Add File: a\0b', '+evil']],
    ];
    it.each(cases)('%s', async (_name, operation) => {
      await put('keep.txt', 'keep\n');
      const before = await snapshot();
      const error = await applyError(patchOf('*** Add File: innocent.txt', '+hello', ...operation));
      expect(error).toBeInstanceOf(PatchApplyError);
      expect(error.message).toMatch(/refused: .*(outside the agent home|absolute|NUL byte)/);
      expect(error.message).toContain('patch line 4');
      expect(await snapshot()).toEqual(before);
      expect(await exists(path.join(root, 'x'))).toBe(false);
    });

    it('a symbolic link that leads out of the home', async () => {
      await writeFile(path.join(outside, 'secret.txt'), 'secret\n');
      await symlink(outside, path.join(home, 'escape'));
      await symlink(path.join(outside, 'secret.txt'), path.join(home, 'secret-link.txt'));
      const before = await snapshot();
      for (const operation of [
        ['*** Update File: secret-link.txt', '@@', '-secret', '+owned'],
        ['*** Add File: escape/new.txt', '+owned'],
        ['*** Delete File: escape/secret.txt'],
      ]) {
        const error = await applyError(patchOf('*** Add File: innocent.txt', '+hello', ...operation));
        expect(error.message).toContain('leads outside the agent home through a symbolic link');
      }
      expect(await snapshot()).toEqual(before);
      expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
      expect(await readdir(outside)).toEqual(['secret.txt']);
    });

    it('deleting or moving a symbolic link inside the home', async () => {
      await put('target.txt', 'data\n');
      await symlink('target.txt', path.join(home, 'link.txt'));
      const before = await snapshot();
      expect((await applyError(patchOf('*** Delete File: link.txt'))).message).toContain('link.txt is a symbolic link');
      expect((await applyError(patchOf('*** Update File: link.txt', '*** Move to: moved.txt'))).message).toContain('is a symbolic link');
      expect(await snapshot()).toEqual(before);
    });
  });

  it('treats a Move to the same path as a plain update', async () => {
    await put('same.txt', 'a\n');
    const summary = await applyPatch({ home, signal, patch: patchOf('*** Update File: same.txt', '*** Move to: ./same.txt', '@@', '-a', '+b') });
    expect(await read('same.txt')).toBe('b\n');
    expect(summary.changes).toEqual([{ operation: 'update', path: 'same.txt', added: 1, removed: 1 }]);
  });

  it('updates a file through a symbolic link inside the home, keeping the link', async () => {
    await put('target.txt', 'old\n');
    await symlink('target.txt', path.join(home, 'link.txt'));
    const summary = await applyPatch({ home, signal, patch: patchOf('*** Update File: link.txt', '@@', '-old', '+new') });
    expect(await read('target.txt')).toBe('new\n');
    expect(await read('link.txt')).toBe('new\n');
    expect(summary.changes[0]?.path).toBe('target.txt');
  });

  describe('refuses and writes nothing', () => {
    it.each([
      ['an Add of a file that exists', patchOf('*** Add File: exists.txt', '+x'), 'cannot add exists.txt (patch line 2): it already exists'],
      ['an Update of a missing file', patchOf('*** Update File: missing.txt', '@@', '+x'), "cannot update missing.txt (patch line 2): it does not exist; use '*** Add File: missing.txt'"],
      ['a Delete of a missing file', patchOf('*** Delete File: missing.txt'), 'cannot delete missing.txt (patch line 2): it does not exist'],
      ['a Move onto an existing file', patchOf('*** Update File: exists.txt', '*** Move to: other.txt', '@@', '-here', '+there'), 'cannot move exists.txt to other.txt (patch line 2): other.txt already exists'],
      ['the same path twice', patchOf('*** Update File: exists.txt', '@@', '-here', '+a', '*** Delete File: ./exists.txt'), 'touches exists.txt, which'],
      ['a Move onto a path another operation adds', patchOf('*** Add File: new.txt', '+x', '*** Update File: exists.txt', '*** Move to: new.txt'), 'touches new.txt, which'],
      ['a Delete of a folder', patchOf('*** Delete File: folder'), 'folder is a folder'],
      ['an Add below a file', patchOf('*** Add File: exists.txt/child.txt', '+x'), 'exists.txt is a file, not a folder'],
      ['an Update of a binary file', patchOf('*** Update File: binary.bin', '@@', '+x'), 'binary.bin is a binary file'],
    ])('%s', async (_name, patch, message) => {
      await put('exists.txt', 'here\n');
      await put('other.txt', 'other\n');
      await put('folder/inside.txt', 'inside\n');
      await writeFile(path.join(home, 'binary.bin'), Buffer.from([0x00, 0x01, 0x0a]));
      const before = await snapshot();
      const error = await applyError(patch);
      expect(error).toBeInstanceOf(PatchApplyError);
      expect(error.message).toContain(message);
      expect(error.message).toContain('Nothing was changed');
      expect(await snapshot()).toEqual(before);
    });
  });

  it('refuses a malformed patch with a line-numbered PatchError', async () => {
    await put('a.txt', 'a\n');
    const before = await snapshot();
    const error = await applyError(patchOf('*** Update File: a.txt', '@@', 'a', '+b'));
    expect(error).toBeInstanceOf(PatchError);
    expect(error.message).toContain('line 4');
    expect(await snapshot()).toEqual(before);
  });

  it('writes nothing when the signal is already aborted', async () => {
    await put('a.txt', 'a\n');
    const before = await snapshot();
    const controller = new AbortController();
    controller.abort();
    const error = await applyError(patchOf('*** Add File: b.txt', '+b', '*** Update File: a.txt', '@@', '-a', '+A'), { signal: controller.signal });
    expect(error.name).toBe('AbortError');
    expect(await snapshot()).toEqual(before);
  });

  it('rolls back the files already written when a later write fails, and says so', async () => {
    await put('first.txt', 'one\n');
    await put('gone.txt', 'bye\n');
    const { operations } = parsePatch(
      patchOf(
        '*** Update File: first.txt',
        '@@',
        '-one',
        '+ONE',
        '*** Add File: made/deep/new.txt',
        '+new',
        '*** Add File: late.txt',
        '+late',
        '*** Delete File: gone.txt',
      ),
    );
    const plan = await planPatch({ home, operations, signal });
    // Something takes late.txt between the plan and the write: the link that would create it fails.
    await mkdir(path.join(home, 'late.txt'));
    const before = await snapshot();
    const error = await commitPatchPlan({ plan }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(PatchApplyError);
    expect((error as Error).message).toContain('could not write late.txt');
    expect((error as Error).message).toContain('The 2 files already written were restored; nothing was changed.');
    const after = await snapshot();
    expect(await read('first.txt')).toBe('one\n');
    expect(await read('gone.txt')).toBe('bye\n');
    expect(await exists(path.join(home, 'made'))).toBe(false);
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
  });
});
