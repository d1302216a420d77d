import { lstat, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileTools } from '../../../src/tools/computer/create-file-tools.js';
import { HomePathError } from '../../../src/tools/computer/home-path-error.js';
import type { WorkerAgentTool } from '../../../src/tools/define-worker-tool.js';
import { createSandbox, runTool, type Sandbox } from './file-tool-harness.js';

const SECRET = 'outside secret\n';

let sandbox: Sandbox;
let secretFile: string;
beforeEach(async () => {
  sandbox = await createSandbox();
  secretFile = path.join(sandbox.outside, 'secret.txt');
  await writeFile(secretFile, SECRET);
  await symlink(secretFile, path.join(sandbox.home, 'file-link')); // a file outside
  await symlink(sandbox.outside, path.join(sandbox.home, 'folder-link')); // a folder outside
  await symlink(path.join(sandbox.outside, 'missing.txt'), path.join(sandbox.home, 'dangling')); // nothing yet, outside
  await symlink('nothing-here', path.join(sandbox.home, 'dangling-inside')); // nothing yet, inside
  await mkdir(path.join(sandbox.home, 'a'));
});
afterEach(async () => {
  await sandbox.remove();
});

interface ToolCase {
  readonly name: string;
  /** Arguments that would change or reveal something if the path were honoured. */
  readonly args: (requested: string) => Record<string, unknown>;
}

const toolCases: readonly ToolCase[] = [
  { name: 'read_file', args: (requested) => ({ path: requested }) },
  { name: 'write_file', args: (requested) => ({ path: requested, content: 'overwritten by the agent' }) },
  { name: 'edit_file', args: (requested) => ({ path: requested, old_string: 'outside secret', new_string: 'edited by the agent' }) },
  { name: 'list_files', args: (requested) => ({ path: requested, recursive: true }) },
];

function toolNamed(name: string): WorkerAgentTool {
  const tool = createFileTools({ home: sandbox.home }).find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return tool;
}

/** What the outside folder holds, so every test can prove nothing there changed. */
async function outsideState(): Promise<string[]> {
  const names = (await readdir(sandbox.outside)).sort();
  return [...names, await readFile(secretFile, 'utf8')];
}

describe.each(toolCases)('$name refuses paths that leave the agent home', ({ name, args }) => {
  // /etc/passwd stands for "a real absolute path"; the tools that change files get an absolute
  // path into the test's own outside folder, so a broken guard could never damage the host.
  const absolute = (): string => (name === 'read_file' || name === 'list_files' ? '/etc/passwd' : secretFile);

  const hostile: readonly (readonly [string, () => string, RegExp])[] = [
    ['a parent-folder climb', () => '../outside/secret.txt', /leads outside the agent home/],
    ['a bare ../x', () => '../x', /leads outside the agent home/],
    ['an absolute path', absolute, /is absolute; give a path relative to the agent home/],
    ['a climb hidden behind a folder', () => 'a/../../x', /leads outside the agent home/],
    ['a NUL byte', () => 'notes\0.md', /the path contains a NUL byte/],
    ['a symbolic link to a file outside', () => 'file-link', /leads outside the agent home through a symbolic link/],
    ['a path through a linked folder outside', () => 'folder-link/secret.txt', /leads outside the agent home through a symbolic link/],
    ['a linked folder outside itself', () => 'folder-link', /leads outside the agent home through a symbolic link/],
    // Whether the outside target exists is not looked at (that would probe the host): refused as outside.
    ['a dangling symbolic link pointing outside', () => 'dangling', /leads outside the agent home through a symbolic link/],
    ['a new file under a dangling link', () => 'dangling/new.txt', /leads outside the agent home through a symbolic link/],
    ['a dangling symbolic link inside the home', () => 'dangling-inside', /is a symbolic link to something that does not exist/],
  ];

  it.each(hostile)('refuses %s', async (_label, requested, message) => {
    const before = await outsideState();
    const failure = runTool(toolNamed(name), args(requested()));
    await expect(failure).rejects.toBeInstanceOf(HomePathError);
    await expect(failure).rejects.toThrow(message);
    expect(await outsideState()).toEqual(before);
    expect(await readdir(sandbox.outside)).not.toContain('missing.txt');
    // The links are still links: nothing was replaced or written through them.
    expect((await lstat(path.join(sandbox.home, 'file-link'))).isSymbolicLink()).toBe(true);
    expect((await lstat(path.join(sandbox.home, 'dangling'))).isSymbolicLink()).toBe(true);
  });

  it('rejects with the abort reason when the signal is already aborted, touching nothing', async () => {
    await writeFile(path.join(sandbox.home, 'inside.txt'), 'outside secret\n');
    const reason = new Error('turn cancelled');
    const homeBefore = (await readdir(sandbox.home)).sort();
    const requested = name === 'list_files' ? '.' : name === 'write_file' ? 'new.txt' : 'inside.txt';
    await expect(runTool(toolNamed(name), args(requested), AbortSignal.abort(reason))).rejects.toBe(reason);
    expect((await readdir(sandbox.home)).sort()).toEqual(homeBefore);
    expect(await readFile(path.join(sandbox.home, 'inside.txt'), 'utf8')).toBe('outside secret\n');
  });
});

describe('read_file and write_file through a link to a file outside', () => {
  it('cannot read the outside file and cannot change it', async () => {
    const [read, write] = createFileTools({ home: sandbox.home });
    await expect(runTool(read, { path: 'file-link' })).rejects.toThrow(HomePathError);
    await expect(runTool(write, { path: 'file-link', content: 'pwned' })).rejects.toThrow(HomePathError);
    expect(await readFile(secretFile, 'utf8')).toBe(SECRET);
  });
});

describe('names that only look like a climb', () => {
  it('reads and writes files whose names start with two dots, inside the home', async () => {
    const [read, write] = createFileTools({ home: sandbox.home });
    await runTool(write, { path: '..notes.md', content: 'dots\n' });
    await runTool(write, { path: 'a/...', content: 'three dots\n' });
    expect(await readFile(path.join(sandbox.home, '..notes.md'), 'utf8')).toBe('dots\n');
    expect(await readFile(path.join(sandbox.home, 'a', '...'), 'utf8')).toBe('three dots\n');
    const result = await runTool(read, { path: '..notes.md' });
    expect(result.content).toBe('     1\tdots');
    // Beside the home only its lock file (taken by every file tool) may appear.
    expect((await readdir(sandbox.root)).sort()).toEqual(['.home.lock', 'home', 'outside']);
  });
});
