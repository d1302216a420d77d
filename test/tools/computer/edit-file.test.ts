import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEditFileTool } from '../../../src/tools/computer/edit-file.js';
import { createSandbox, runForText, runTool, type Sandbox } from './file-tool-harness.js';

let sandbox: Sandbox;
let notes: string;
beforeEach(async () => {
  sandbox = await createSandbox();
  notes = path.join(sandbox.home, 'notes.md');
});
afterEach(async () => {
  await sandbox.remove();
});

const edit = (args: Record<string, unknown>) => runTool(createEditFileTool({ home: sandbox.home }), { path: 'notes.md', ...args });

describe('edit_file', () => {
  it('replaces the one occurrence, shows the changed lines numbered, and labels the edit', async () => {
    await writeFile(notes, 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n');
    const { text, result, activity, completed } = await runForText(createEditFileTool({ home: sandbox.home }), {
      path: 'notes.md',
      old_string: 'five',
      new_string: 'FIVE',
    });
    expect(await readFile(notes, 'utf8')).toBe('one\ntwo\nthree\nfour\nFIVE\nsix\nseven\neight\n');
    expect(text).toBe(
      'Edited notes.md: 1 replacement (40 B → 40 B).\nLines 2–8 now read:\n' +
        '     2\ttwo\n     3\tthree\n     4\tfour\n     5\tFIVE\n     6\tsix\n     7\tseven\n     8\teight',
    );
    expect(activity).toBe('Editing notes.md');
    expect(completed).toBe('Edited notes.md (1 replacement)');
    expect(result.details).toEqual({ path: 'notes.md', replacements: 1, bytesBefore: 40, bytesAfter: 40, firstChangedLine: 5 });
    expect(await readdir(sandbox.home)).toEqual(['notes.md']);
  });

  it('tells the model to read again when old_string is missing, and leaves the file alone', async () => {
    await writeFile(notes, 'alpha\n');
    await expect(edit({ old_string: 'beta', new_string: 'gamma' })).rejects.toThrow(
      'old_string was not found in notes.md; read the file again and copy the exact text',
    );
    expect(await readFile(notes, 'utf8')).toBe('alpha\n');
  });

  it('refuses an ambiguous old_string, saying how often it occurs', async () => {
    await writeFile(notes, 'todo\ntodo\ntodo\n');
    await expect(edit({ old_string: 'todo', new_string: 'done' })).rejects.toThrow(
      'old_string occurs 3 times in notes.md; add surrounding lines to make it unique, or set replace_all',
    );
    expect(await readFile(notes, 'utf8')).toBe('todo\ntodo\ntodo\n');
  });

  it('replaces every occurrence with replace_all', async () => {
    await writeFile(notes, 'todo\nkeep\ntodo\ntodo\n');
    const { completed, result } = await runForText(createEditFileTool({ home: sandbox.home }), {
      path: 'notes.md',
      old_string: 'todo',
      new_string: 'done',
      replace_all: true,
    });
    expect(await readFile(notes, 'utf8')).toBe('done\nkeep\ndone\ndone\n');
    expect(completed).toBe('Edited notes.md (3 replacements)');
    expect(result.details).toMatchObject({ replacements: 3, firstChangedLine: 1 });
  });

  it('inserts new_string literally, even with $ patterns', async () => {
    await writeFile(notes, 'price: X\n');
    await edit({ old_string: 'X', new_string: "$& $' $1 $$" });
    expect(await readFile(notes, 'utf8')).toBe("price: $& $' $1 $$\n");
  });

  it('refuses an empty old_string and an old_string equal to new_string', async () => {
    await writeFile(notes, 'same\n');
    await expect(edit({ old_string: '', new_string: 'x' })).rejects.toThrow('old_string is empty');
    await expect(edit({ old_string: 'same', new_string: 'same' })).rejects.toThrow(
      'old_string and new_string are the same, so nothing would change',
    );
    expect(await readFile(notes, 'utf8')).toBe('same\n');
  });

  it('deletes text when new_string is empty and says when the file is left empty', async () => {
    await writeFile(notes, 'only line\n');
    const { text } = await runForText(createEditFileTool({ home: sandbox.home }), {
      path: 'notes.md',
      old_string: 'only line\n',
      new_string: '',
    });
    expect(text).toBe('Edited notes.md: 1 replacement (10 B → 0 B). The file is now empty.');
    expect(await readFile(notes, 'utf8')).toBe('');
  });

  it('matches text copied from read_file in a CRLF file and keeps its CRLF line ends', async () => {
    await writeFile(notes, 'first\r\nsecond\r\nthird\r\n');
    await edit({ old_string: 'first\nsecond', new_string: 'one\ntwo' });
    expect(await readFile(notes, 'utf8')).toBe('one\r\ntwo\r\nthird\r\n');
  });

  it('keeps a byte-order mark', async () => {
    await writeFile(notes, '\uFEFFhello\n');
    await edit({ old_string: 'hello', new_string: 'bye' });
    expect([...(await readFile(notes)).subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(await readFile(notes, 'utf8')).toBe('\uFEFFbye\n');
  });

  it('refuses a missing file, pointing to write_file', async () => {
    await expect(edit({ old_string: 'a', new_string: 'b' })).rejects.toThrow(
      'notes.md does not exist; use write_file to create it',
    );
    expect(await readdir(sandbox.home)).toEqual([]);
  });

  it('refuses binary files and files that are not UTF-8, leaving them unchanged', async () => {
    const binary = Buffer.from([0x61, 0x00, 0x62]);
    await writeFile(notes, binary);
    await expect(edit({ old_string: 'a', new_string: 'c' })).rejects.toThrow('notes.md is a binary file');
    expect(await readFile(notes)).toEqual(binary);

    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]); // "café" in Latin-1
    await writeFile(notes, latin1);
    await expect(edit({ old_string: 'caf', new_string: 'tea' })).rejects.toThrow(
      'notes.md is not valid UTF-8 text, so edit_file cannot change it safely',
    );
    expect(await readFile(notes)).toEqual(latin1);
  });
});
