import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createListFilesTool } from '../../../src/tools/computer/list-files.js';
import { createSandbox, runForText, runTool, type Sandbox } from './file-tool-harness.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(async () => {
  await sandbox.remove();
});

describe('list_files', () => {
  it('lists a folder in name order: folders with a slash, files with sizes', async () => {
    await mkdir(path.join(sandbox.home, 'src', 'lib'), { recursive: true });
    await writeFile(path.join(sandbox.home, 'src', 'b.ts'), 'x'.repeat(1229));
    await writeFile(path.join(sandbox.home, 'src', 'a.ts'), 'abc');
    await writeFile(path.join(sandbox.home, 'src', 'lib', 'deep.ts'), 'deep');
    const { text, result, activity, completed } = await runForText(createListFilesTool({ home: sandbox.home }), {
      path: 'src',
    });
    expect(text).toBe('Contents of src/, 3 entries:\na.ts (3 B)\nb.ts (1.2 KB)\nlib/');
    expect(activity).toBe('Listing src/');
    expect(completed).toBe('Listed src/ (3 entries)');
    expect(result.details).toEqual({ path: 'src', entries: 3, recursive: false, truncated: false });
  });

  it('lists the home folder by default', async () => {
    await writeFile(path.join(sandbox.home, 'notes.md'), 'hi');
    const { text, activity, completed } = await runForText(createListFilesTool({ home: sandbox.home }), {});
    expect(text).toBe('Contents of the home folder, 1 entry:\nnotes.md (2 B)');
    expect(activity).toBe('Listing the home folder');
    expect(completed).toBe('Listed the home folder (1 entry)');
  });

  it('lists recursively with paths relative to the folder, naming .git without opening it', async () => {
    await mkdir(path.join(sandbox.home, 'project', 'docs'), { recursive: true });
    await mkdir(path.join(sandbox.home, 'project', '.git', 'objects'), { recursive: true });
    await writeFile(path.join(sandbox.home, 'project', 'docs', 'guide.md'), 'guide');
    await writeFile(path.join(sandbox.home, 'project', 'readme.md'), 'read me');
    const { text } = await runForText(createListFilesTool({ home: sandbox.home }), { path: 'project/', recursive: true });
    expect(text).toBe(
      [
        'Contents of project/ (recursive), 4 entries:',
        '.git/ (not opened; list it by its path to see inside)',
        'docs/',
        'docs/guide.md (5 B)',
        'readme.md (7 B)',
      ].join('\n'),
    );
  });

  it('shows symbolic links as name -> target and never follows them out of the home', async () => {
    await writeFile(path.join(sandbox.outside, 'secret.txt'), 'secret');
    await symlink(sandbox.outside, path.join(sandbox.home, 'escape'));
    await symlink(path.join(sandbox.outside, 'gone.txt'), path.join(sandbox.home, 'dangling'));
    const { text } = await runForText(createListFilesTool({ home: sandbox.home }), { recursive: true });
    expect(text).toBe(
      [
        'Contents of the home folder (recursive), 2 entries:',
        `dangling -> ${path.join(sandbox.outside, 'gone.txt')}`,
        `escape -> ${sandbox.outside}`,
      ].join('\n'),
    );
    expect(text).not.toContain('secret.txt');
  });

  it('stops at 1000 entries with a note', async () => {
    await mkdir(path.join(sandbox.home, 'many'));
    await Promise.all(
      Array.from({ length: 1005 }, (_, index) =>
        writeFile(path.join(sandbox.home, 'many', `f${String(index).padStart(4, '0')}.txt`), ''),
      ),
    );
    const { text, result, completed } = await runForText(createListFilesTool({ home: sandbox.home }), { path: 'many' });
    const lines = text.split('\n');
    expect(lines[0]).toBe('Contents of many/, 1000 entries:');
    expect(lines[1000]).toBe('f0999.txt (0 B)');
    expect(lines[1001]).toBe('[Stopped at 1000 entries; there are more. List a subfolder by its path to see the rest.]');
    expect(result.details).toMatchObject({ entries: 1000, truncated: true });
    expect(completed).toBe('Listed many/ (1000 entries)');
  });

  it('does not open folders deeper than the depth limit, and says so', async () => {
    const levels = Array.from({ length: 10 }, (_, index) => `d${index}`);
    await mkdir(path.join(sandbox.home, ...levels), { recursive: true });
    const { text, result } = await runForText(createListFilesTool({ home: sandbox.home }), { recursive: true });
    expect(text).toContain(`${levels.slice(0, 9).join('/')}/ (not opened: too deep)`);
    expect(text).not.toContain(`${levels.join('/')}/`);
    expect(text).toContain('[Folders more than 8 levels down were not opened; list them by their path.]');
    expect(result.details).toMatchObject({ truncated: true });
  });

  it('says when a folder is empty', async () => {
    await mkdir(path.join(sandbox.home, 'empty'));
    const { text, completed } = await runForText(createListFilesTool({ home: sandbox.home }), { path: 'empty' });
    expect(text).toBe('empty/ is empty.');
    expect(completed).toBe('Listed empty/ (0 entries)');
  });

  it('refuses a file, pointing to read_file, and a missing folder', async () => {
    await writeFile(path.join(sandbox.home, 'notes.md'), 'hi');
    const tool = createListFilesTool({ home: sandbox.home });
    await expect(runTool(tool, { path: 'notes.md' })).rejects.toThrow('notes.md is a file, not a folder; use read_file to read it');
    await expect(runTool(tool, { path: 'nope' })).rejects.toThrow('nope does not exist');
  });
});
