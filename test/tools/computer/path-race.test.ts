import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectCommandSandbox } from '../../../src/sandbox/detect-sandbox.js';
import { createApplyPatchTool } from '../../../src/tools/computer/apply-patch/apply-patch-tool.js';
import { createFileTools } from '../../../src/tools/computer/create-file-tools.js';
import { createRunCommandTool } from '../../../src/tools/computer/run-command.js';
import type { WorkerAgentTool } from '../../../src/tools/define-worker-tool.js';
import { resultText } from '../../../src/tools/tool-result.js';
import { silentLogger } from '../../sandbox/sandbox-support.js';
import { createSandbox, runTool, type Sandbox } from './file-tool-harness.js';
import { startFolderSwapper, stopFolderSwapper } from './folder-swapper.js';

/** Issue 7, escape 2: a folder of the home swapped for a symbolic link while the file tools use it. */
const OUTSIDE = 'OUTSIDE SECRET';

let sandbox: Sandbox;
let swapper: ChildProcess | undefined;
beforeEach(async () => {
  sandbox = await createSandbox();
  await mkdir(path.join(sandbox.home, 'd'));
  await writeFile(path.join(sandbox.home, 'd', 'notes.txt'), 'inside\n');
  await writeFile(path.join(sandbox.outside, 'notes.txt'), `${OUTSIDE}\n`);
  await writeFile(path.join(sandbox.outside, 'only-outside.txt'), `${OUTSIDE}\n`);
});
afterEach(async () => {
  await stopSwapper();
  await sandbox.remove();
});

/** Stops the swapper of the running test, if any. */
async function stopSwapper(): Promise<void> {
  const running = swapper;
  swapper = undefined;
  await stopFolderSwapper(running);
}

/** Another process on the host swapping home/d for a link to the outside folder, as fast as it can. */
function startOutsideSwapper(): ChildProcess {
  return startFolderSwapper({ home: sandbox.home, folder: 'd', outside: sandbox.outside });
}

async function outsideState(): Promise<string> {
  const names = (await readdir(sandbox.outside)).sort();
  const contents = await Promise.all(names.map((name) => readFile(path.join(sandbox.outside, name), 'utf8').catch(() => '?')));
  return JSON.stringify([names, contents]);
}

function tool(name: string): WorkerAgentTool {
  const found = [...createFileTools({ home: sandbox.home }), createApplyPatchTool({ home: sandbox.home })].find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(name);
  return found;
}

/** Runs `count` calls, started 3 ms apart so they meet every state of the swap, each answering whether it escaped. */
async function race(count: number, call: (index: number) => Promise<boolean>): Promise<{ escapes: number; succeeded: number }> {
  const results = await Promise.allSettled(
    Array.from({ length: count }, async (_unused, index) => {
      await new Promise((resolve) => setTimeout(resolve, index * 3));
      return call(index);
    }),
  );
  return {
    escapes: results.filter((result) => result.status === 'fulfilled' && result.value).length,
    succeeded: results.filter((result) => result.status === 'fulfilled').length,
  };
}

const readsOutside = async (name: string, args: Record<string, unknown>): Promise<boolean> => resultText((await runTool(tool(name), args)).content).includes(OUTSIDE);

describe('file tools raced by a host process swapping a folder for a link to the outside', () => {
  it('read_file: 60 reads, 0 escapes, while a plain path read in the same race does escape', async () => {
    swapper = startOutsideSwapper();
    const { escapes } = await race(60, () => readsOutside('read_file', { path: 'd/notes.txt' }));
    expect(escapes).toBe(0);
    // The race is real: a read by path, as the tools once did, is fooled in the same race.
    let fooled = false;
    for (let attempt = 0; attempt < 5_000 && !fooled; attempt += 1) {
      fooled = (await readFile(path.join(sandbox.home, 'd', 'notes.txt'), 'utf8').catch(() => '')).includes(OUTSIDE);
    }
    expect(fooled).toBe(true);
  });

  it('list_files: 60 listings, 0 escapes', async () => {
    swapper = startOutsideSwapper();
    const { escapes } = await race(60, async () => resultText((await runTool(tool('list_files'), { path: 'd', recursive: true })).content).includes('only-outside'));
    expect(escapes).toBe(0);
  });

  it('write_file: 40 writes, nothing created or changed outside', async () => {
    const before = await outsideState();
    swapper = startOutsideSwapper();
    await race(40, async (index) => {
      await runTool(tool('write_file'), { path: `d/new-${String(index)}.txt`, content: 'written\n' });
      await runTool(tool('write_file'), { path: 'd/notes.txt', content: `written ${String(index)}\n` });
      return false;
    });
    await stopSwapper();
    expect(await outsideState()).toBe(before);
  });

  it('edit_file: 40 edits, the outside file never changes', async () => {
    const before = await outsideState();
    swapper = startOutsideSwapper();
    await race(40, async () => {
      await runTool(tool('edit_file'), { path: 'd/notes.txt', old_string: OUTSIDE, new_string: 'EDITED' });
      return false;
    });
    await stopSwapper();
    expect(await outsideState()).toBe(before);
  });

  it('apply_patch: 40 patches, nothing outside read, created or changed', async () => {
    const before = await outsideState();
    swapper = startOutsideSwapper();
    const { escapes } = await race(40, async (index) => {
      const patch = ['*** Begin Patch', `*** Add File: d/patched-${String(index)}.txt`, '+new', '*** Update File: d/notes.txt', '@@', `-${OUTSIDE}`, '+PATCHED', '*** End Patch'].join('\n');
      const result = await runTool(tool('apply_patch'), { patch });
      // A patch whose Update matched the outside file's line would have read it.
      return resultText(result.content).includes('notes.txt');
    });
    await stopSwapper();
    expect(escapes).toBe(0);
    expect(await outsideState()).toBe(before);
  });
});

const commandSandbox = existsSync('/usr/bin/bwrap') ? await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger: silentLogger }) : undefined;

describe.runIf(commandSandbox !== undefined)("file tools raced by the agent's own command", () => {
  it('waits for the command: 60 reads and 40 writes while it swaps d for a link to /etc, 0 escapes', async () => {
    if (commandSandbox === undefined) return;
    // The home's parent is the test's 0700 folder: the sandbox user must pass through it.
    await chmod(sandbox.root, 0o711);
    const run = createRunCommandTool({ home: sandbox.home, sandbox: commandSandbox, settings: { defaultTimeoutMs: 20_000, maxTimeoutMs: 20_000 } });
    const loop = 'touch started; end=$(( $(date +%s) + 3 )); while [ "$(date +%s)" -lt "$end" ]; do mv d d.real; ln -s /etc d; rm d; mv d.real d; done; echo swapped';
    const command = runTool(run, { command: loop });
    // The command runs only once it holds the home's lock: its first file says it does.
    while (!existsSync(path.join(sandbox.home, 'started'))) await new Promise((resolve) => setTimeout(resolve, 10));
    let commandDone = false;
    void command.then(() => {
      commandDone = true;
    });
    const reads = race(60, async () => {
      const text = resultText((await runTool(tool('read_file'), { path: 'd/notes.txt' })).content);
      expect(commandDone).toBe(true);
      return text.includes('root:') || text.includes(OUTSIDE);
    });
    const writes = race(40, async (index) => {
      await runTool(tool('write_file'), { path: `d/from-race-${String(index)}.txt`, content: 'x\n' });
      expect(commandDone).toBe(true);
      return existsSync(`/etc/from-race-${String(index)}.txt`);
    });
    expect(resultText((await command).content)).toContain('swapped');
    const [read, written] = await Promise.all([reads, writes]);
    expect(read).toEqual({ escapes: 0, succeeded: 60 });
    expect(written).toEqual({ escapes: 0, succeeded: 40 });
  }, 60_000);
});
