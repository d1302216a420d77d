import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReadFileTool } from '../../../src/tools/computer/read-file.js';
import { createSandbox, runForText, runTool, type Sandbox } from './file-tool-harness.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(async () => {
  await sandbox.remove();
});

const numbered = (count: number, from = 1): string =>
  Array.from({ length: count }, (_, index) => `line ${from + index}`).join('\n') + '\n';

describe('read_file', () => {
  it('shows a small file with cat -n style line numbers and labels it by size', async () => {
    await writeFile(path.join(sandbox.home, 'notes.md'), '# Notes\n\nBuy milk\n');
    const tool = createReadFileTool({ home: sandbox.home });
    const { text, result, activity, completed } = await runForText(tool, { path: 'notes.md' });
    expect(text).toBe('     1\t# Notes\n     2\t\n     3\tBuy milk');
    expect(activity).toBe('Reading notes.md');
    expect(completed).toBe('Read notes.md (18 B)');
    expect(result.details).toMatchObject({ path: 'notes.md', bytes: 18, totalLines: 3, startLine: 1, endLine: 3, truncated: false });
  });

  it('labels a larger file in KB', async () => {
    await writeFile(path.join(sandbox.home, 'notes.md'), 'x'.repeat(1229));
    const { completed } = await runForText(createReadFileTool({ home: sandbox.home }), { path: 'notes.md' });
    expect(completed).toBe('Read notes.md (1.2 KB)');
  });

  it('counts a last line that has no newline and reads files in subfolders', async () => {
    await mkdir(path.join(sandbox.home, 'docs'));
    await writeFile(path.join(sandbox.home, 'docs', 'a.txt'), 'one\ntwo');
    const { text, result } = await runForText(createReadFileTool({ home: sandbox.home }), { path: './docs/a.txt' });
    expect(text).toBe('     1\tone\n     2\ttwo');
    expect(result.details).toMatchObject({ path: 'docs/a.txt', totalLines: 2 });
  });

  it('pages a long file: 2000 lines by default, then a note with the exact offset to continue', async () => {
    await writeFile(path.join(sandbox.home, 'big.txt'), numbered(5000));
    const tool = createReadFileTool({ home: sandbox.home });

    const first = await runForText(tool, { path: 'big.txt' });
    const firstLines = first.text.split('\n');
    expect(firstLines[0]).toBe('     1\tline 1');
    expect(firstLines[1999]).toBe('  2000\tline 2000');
    expect(first.text).toContain('[Showing lines 1–2000 of 5000 in big.txt. To read more, call read_file with path "big.txt" and offset 2001.]');
    expect(first.completed).toBe('Read big.txt lines 1–2000 of 5000');

    const second = await runForText(tool, { path: 'big.txt', offset: 2001 });
    expect(second.text.split('\n')[0]).toBe('  2001\tline 2001');
    expect(second.text).toContain('offset 4001.]');
    expect(second.completed).toBe('Read big.txt lines 2001–4000 of 5000');

    const last = await runForText(tool, { path: 'big.txt', offset: 4001 });
    expect(last.text.split('\n')).toHaveLength(1000);
    expect(last.text.endsWith('  5000\tline 5000')).toBe(true);
    expect(last.text).not.toContain('To read more');
    expect(last.completed).toBe('Read big.txt lines 4001–5000 of 5000');
  });

  it('honours offset and limit together', async () => {
    await writeFile(path.join(sandbox.home, 'notes.md'), numbered(900));
    const { text, completed, result } = await runForText(createReadFileTool({ home: sandbox.home }), {
      path: 'notes.md',
      offset: 200,
      limit: 201,
    });
    expect(text.split('\n')[0]).toBe('   200\tline 200');
    expect(text).toContain('   400\tline 400\n\n[Showing lines 200–400 of 900 in notes.md.');
    expect(text).toContain('offset 401.]');
    expect(completed).toBe('Read notes.md lines 200–400 of 900');
    expect(result.details).toMatchObject({ startLine: 200, endLine: 400, totalLines: 900, truncated: true });
  });

  it('refuses an offset past the end, saying how many lines there are', async () => {
    await writeFile(path.join(sandbox.home, 'notes.md'), numbered(10));
    await expect(runTool(createReadFileTool({ home: sandbox.home }), { path: 'notes.md', offset: 11 })).rejects.toThrow(
      'offset 11 is past the end of notes.md, which has 10 lines; use an offset from 1 to 10',
    );
  });

  it('rejects a limit over 2000 and an offset of 0 before running', () => {
    const tool = createReadFileTool({ home: sandbox.home });
    expect(tool.checkArguments({ path: 'a', limit: 2001 }).ok).toBe(false);
    expect(tool.checkArguments({ path: 'a', offset: 0 }).ok).toBe(false);
    expect(tool.checkArguments({ path: 'a', offset: 1.5 }).ok).toBe(false);
  });

  it('stops at 256 KB of output with a note giving the next offset', async () => {
    const line = 'y'.repeat(1000);
    await writeFile(path.join(sandbox.home, 'wide.txt'), `${line}\n`.repeat(2000));
    const { text, result } = await runForText(createReadFileTool({ home: sandbox.home }), { path: 'wide.txt' });
    const shown = Number(result.details?.['endLine']);
    expect(shown).toBeGreaterThan(200);
    expect(shown).toBeLessThan(2000);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(256 * 1024 + 300);
    expect(text).toContain(`[Output stopped at 256 KB. Showing lines 1–${shown} of 2000 in wide.txt.`);
    expect(text).toContain(`offset ${shown + 1}.]`);
  });

  it('cuts a very long line with a marker and keeps reading the lines after it', async () => {
    await writeFile(path.join(sandbox.home, 'min.js'), `${'z'.repeat(100_000)}\nafter\n`);
    const { text, result } = await runForText(createReadFileTool({ home: sandbox.home }), { path: 'min.js' });
    const [first, second] = text.split('\n');
    expect(first).toBe(`     1\t${'z'.repeat(2000)} … [line cut: 100000 characters in all]`);
    expect(second).toBe('     2\tafter');
    expect(result.details).toMatchObject({ cutLines: 1, totalLines: 2 });
  });

  it('decodes multi-byte characters that straddle read chunks and drops CR from CRLF lines', async () => {
    const lines = Array.from({ length: 8000 }, (_, index) => `héllo wörld ✓ 日本 ${'é'.repeat(index % 7)}${index}`);
    const bytes = Buffer.from(lines.join('\r\n'));
    // The reader works in 64 KiB chunks: the first chunk edge falls inside a character, in the window.
    expect((bytes[64 * 1024] ?? 0) & 0xc0).toBe(0x80);
    await writeFile(path.join(sandbox.home, 'utf8.txt'), bytes);
    const { text, result } = await runForText(createReadFileTool({ home: sandbox.home }), { path: 'utf8.txt', limit: 2000 });
    const shown = text.split('\n').slice(0, 2000);
    shown.forEach((row, index) => {
      expect(row).toBe(`${String(index + 1).padStart(6)}\t${lines[index]}`);
    });
    expect(result.details).toMatchObject({ totalLines: 8000 });
  });

  it('says so when a file is empty', async () => {
    await writeFile(path.join(sandbox.home, 'empty.txt'), '');
    const { text, completed } = await runForText(createReadFileTool({ home: sandbox.home }), { path: 'empty.txt' });
    expect(text).toBe('empty.txt is empty (0 lines).');
    expect(completed).toBe('Read empty.txt (0 B)');
  });

  it('refuses a binary file', async () => {
    await writeFile(path.join(sandbox.home, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    await expect(runTool(createReadFileTool({ home: sandbox.home }), { path: 'image.png' })).rejects.toThrow(
      'image.png is a binary file (it contains NUL bytes); only UTF-8 text files can be read or edited',
    );
  });

  it('refuses a folder and points to list_files', async () => {
    await mkdir(path.join(sandbox.home, 'src'));
    await expect(runTool(createReadFileTool({ home: sandbox.home }), { path: 'src' })).rejects.toThrow(
      'src is a folder; use list_files to see what it contains',
    );
  });

  it('says a missing file does not exist, without the host path', async () => {
    const failure = runTool(createReadFileTool({ home: sandbox.home }), { path: 'nope.md' });
    await expect(failure).rejects.toThrow('nope.md does not exist; use list_files to see what is there');
    await expect(failure).rejects.not.toThrow(sandbox.home);
  });

  it('refuses a named pipe instead of hanging on it', async () => {
    const fifo = path.join(sandbox.home, 'pipe');
    try {
      execFileSync('mkfifo', [fifo]);
    } catch {
      return; // no mkfifo on this system
    }
    await expect(runTool(createReadFileTool({ home: sandbox.home }), { path: 'pipe' })).rejects.toThrow(
      'pipe is not a regular file',
    );
  });
});

describe('read_file on a symbolic link loop', () => {
  it('explains the loop without showing the host path', async () => {
    await symlink('loop-b', path.join(sandbox.home, 'loop-a'));
    await symlink('loop-a', path.join(sandbox.home, 'loop-b'));
    const failure = runTool(createReadFileTool({ home: sandbox.home }), { path: 'loop-a' });
    await expect(failure).rejects.toThrow('loop-a goes through a symbolic link loop');
    await expect(failure).rejects.not.toThrow(sandbox.root);
  });
});
