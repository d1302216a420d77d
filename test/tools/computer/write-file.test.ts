import { chmod, mkdir, readdir, readFile, stat, symlink, lstat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWriteFileTool } from '../../../src/tools/computer/write-file.js';
import { createSandbox, runForText, runTool, type Sandbox } from './file-tool-harness.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(async () => {
  await sandbox.remove();
});

describe('write_file', () => {
  it('creates a file and the folders above it, and labels it by size', async () => {
    const content = 'a'.repeat(2355);
    const { text, result, activity, completed } = await runForText(createWriteFileTool({ home: sandbox.home }), {
      path: 'reports/2024/summary.md',
      content,
    });
    expect(await readFile(path.join(sandbox.home, 'reports/2024/summary.md'), 'utf8')).toBe(content);
    expect(text).toBe('Created reports/2024/summary.md (2.3 KB, 1 line).');
    expect(activity).toBe('Writing reports/2024/summary.md');
    expect(completed).toBe('Wrote reports/2024/summary.md (2.3 KB)');
    expect(result.details).toEqual({ path: 'reports/2024/summary.md', bytes: 2355, lines: 1, created: true });
  });

  it('overwrites an existing file, says so, keeps its permissions and leaves no temporary file', async () => {
    const file = path.join(sandbox.home, 'summary.md');
    await writeFile(file, 'old text\n');
    await chmod(file, 0o600);
    const { text, result } = await runForText(createWriteFileTool({ home: sandbox.home }), {
      path: 'summary.md',
      content: 'new\ntext\n',
    });
    expect(await readFile(file, 'utf8')).toBe('new\ntext\n');
    expect(text).toBe('Overwrote summary.md (9 B, 2 lines; it was 9 B).');
    expect(result.details).toMatchObject({ created: false, previousBytes: 9, bytes: 9, lines: 2 });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(sandbox.home)).toEqual(['summary.md']);
  });

  it('replaces the file by rename, so a reader holding the old file keeps the old content', async () => {
    const file = path.join(sandbox.home, 'data.txt');
    await writeFile(file, 'before');
    const before = await stat(file);
    await runTool(createWriteFileTool({ home: sandbox.home }), { path: 'data.txt', content: 'after' });
    const after = await stat(file);
    // A new inode proves the content was not written into the old file in place.
    expect(after.ino).not.toBe(before.ino);
    expect(await readFile(file, 'utf8')).toBe('after');
  });

  it('writes an empty file', async () => {
    const { text } = await runForText(createWriteFileTool({ home: sandbox.home }), { path: 'empty.txt', content: '' });
    expect(text).toBe('Created empty.txt (0 B, 0 lines).');
    expect(await readFile(path.join(sandbox.home, 'empty.txt'), 'utf8')).toBe('');
  });

  it('writes through a symbolic link that stays inside the home to its target, keeping the link', async () => {
    await writeFile(path.join(sandbox.home, 'real.md'), 'old');
    await symlink('real.md', path.join(sandbox.home, 'link.md'));
    const { result } = await runForText(createWriteFileTool({ home: sandbox.home }), { path: 'link.md', content: 'new' });
    expect(result.details).toMatchObject({ path: 'real.md', created: false });
    expect(await readFile(path.join(sandbox.home, 'real.md'), 'utf8')).toBe('new');
    expect((await lstat(path.join(sandbox.home, 'link.md'))).isSymbolicLink()).toBe(true);
  });

  it('refuses to write over a folder', async () => {
    await mkdir(path.join(sandbox.home, 'docs'));
    await expect(runTool(createWriteFileTool({ home: sandbox.home }), { path: 'docs', content: 'x' })).rejects.toThrow(
      'docs is a folder; give the path of a file inside it',
    );
  });

  it('refuses a path ending with a slash', async () => {
    await expect(runTool(createWriteFileTool({ home: sandbox.home }), { path: 'notes/', content: 'x' })).rejects.toThrow(
      '"notes/" ends with a slash, so it names a folder; give the path of a file',
    );
    expect(await readdir(sandbox.home)).toEqual([]);
  });

  it('explains when a part of the path is a file', async () => {
    await writeFile(path.join(sandbox.home, 'notes.md'), 'text');
    await expect(
      runTool(createWriteFileTool({ home: sandbox.home }), { path: 'notes.md/inner.txt', content: 'x' }),
    ).rejects.toThrow('cannot create the folders for notes.md/inner.txt: a part of that path is a file, not a folder');
    expect(await readFile(path.join(sandbox.home, 'notes.md'), 'utf8')).toBe('text');
  });
});
