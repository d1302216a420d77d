import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HEAD_BYTES, openTextFile } from '../../../src/tools/computer/open-text-file.js';

describe('openTextFile', () => {
  let folder: string;
  beforeEach(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'open-text-file-'));
  });
  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('holds a small file whole in its head, and reads a large one past it', async () => {
    const small = path.join(folder, 'small.txt');
    await writeFile(small, 'one\ntwo\n');
    const file = await openTextFile({ absolute: small, display: 'small.txt' });
    expect(file.head.toString()).toBe('one\ntwo\n');
    expect((await file.readAll(new AbortController().signal, 'small.txt')).toString()).toBe('one\ntwo\n');
    file.close();
    file.close();

    const large = path.join(folder, 'large.txt');
    const text = 'a line of text\n'.repeat(Math.ceil((HEAD_BYTES * 3) / 15));
    await writeFile(large, text);
    const big = await openTextFile({ absolute: large, display: 'large.txt' });
    expect(big.head.length).toBe(HEAD_BYTES);
    expect((await big.readAll(new AbortController().signal, 'large.txt')).toString()).toBe(text);
    big.close();
    await expect(big.read(Buffer.alloc(8), 0)).rejects.toThrow('the file was closed');
  });

  it('refuses a whole read of a file that grew after it was opened, instead of cutting it short', async () => {
    const growing = path.join(folder, 'growing.txt');
    await writeFile(growing, 'x'.repeat(HEAD_BYTES + 10));
    const file = await openTextFile({ absolute: growing, display: 'growing.txt' });
    await appendFile(growing, 'appended by another process\n');
    await expect(file.readAll(new AbortController().signal, 'growing.txt')).rejects.toThrow('growing.txt changed while it was being read; try again');
    file.close();
  });

  it('refuses folders, binary files and links, naming the path as the model gave it', async () => {
    await writeFile(path.join(folder, 'binary.bin'), Buffer.from([0x41, 0x00, 0x42]));
    await expect(openTextFile({ absolute: folder, display: 'here' })).rejects.toThrow('here is a folder');
    await expect(openTextFile({ absolute: path.join(folder, 'binary.bin'), display: 'binary.bin' })).rejects.toThrow('binary.bin is a binary file');
    await expect(openTextFile({ absolute: path.join(folder, 'absent.txt'), display: 'absent.txt' })).rejects.toThrow(/absent\.txt/);
  });
});
