import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileAtomically } from '../../../src/tools/computer/write-file-atomically.js';

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'atomic-write-'));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('writeFileAtomically', () => {
  it('replaces the file and leaves only the file behind', async () => {
    const target = path.join(folder, 'a.txt');
    await writeFile(target, 'old');
    await writeFileAtomically({ absolute: target, content: 'new', signal: new AbortController().signal });
    expect(await readFile(target, 'utf8')).toBe('new');
    expect(await readdir(folder)).toEqual(['a.txt']);
  });

  it('calls the write off before the rename when aborted, removing its temporary file', async () => {
    const target = path.join(folder, 'a.txt');
    await writeFile(target, 'old');
    const reason = new Error('turn cancelled');
    await expect(
      writeFileAtomically({ absolute: target, content: 'new', signal: AbortSignal.abort(reason) }),
    ).rejects.toBe(reason);
    expect(await readFile(target, 'utf8')).toBe('old');
    expect(await readdir(folder)).toEqual(['a.txt']);
  });
});
