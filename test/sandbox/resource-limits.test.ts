import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectCommandSandbox } from '../../src/sandbox/detect-sandbox.js';
import { createFileTools } from '../../src/tools/computer/create-file-tools.js';
import { createRunCommandTool } from '../../src/tools/computer/run-command.js';
import { resultText } from '../../src/tools/tool-result.js';
import { runTool } from '../tools/computer/file-tool-harness.js';
import { makeHome, silentLogger } from './sandbox-support.js';

const MiB = 1024 ** 2;
const sandbox = existsSync('/usr/bin/bwrap')
  ? await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger: silentLogger, limits: { maxMemoryBytes: 96 * MiB } })
  : undefined;

describe.runIf(sandbox !== undefined)('per-agent limits that hold', () => {
  let home: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ home, cleanup } = await makeHome());
  });
  afterEach(async () => {
    await cleanup();
  });
  const settings = { defaultTimeoutMs: 30_000, maxTimeoutMs: 30_000, homeMaxBytes: 4 * MiB };
  const tool = () => createRunCommandTool({ home, sandbox: sandbox ?? (undefined as never), settings });

  it('removes what a command wrote beyond the home limit, keeps what was there, says so, and the next command runs', async () => {
    await writeFile(path.join(home, 'kept.txt'), 'from before\n');
    const result = await runTool(tool(), { command: 'head -c 1048576 /dev/zero > small.bin; head -c 8388608 /dev/zero > big.bin; echo wrote' });
    const text = resultText(result.content);
    expect(text).toContain('wrote');
    expect(text).toMatch(/over its limit of 4 MB, so files it wrote were removed: big\.bin/);
    expect(result.details).toMatchObject({ removedOverLimit: ['big.bin'], limits: { homeMaxBytes: 4 * MiB } });
    expect(existsSync(path.join(home, 'big.bin'))).toBe(false);
    expect((await stat(path.join(home, 'small.bin'))).size).toBe(MiB);
    expect(await readFile(path.join(home, 'kept.txt'), 'utf8')).toBe('from before\n');
    const next = await runTool(tool(), { command: 'ls' });
    expect(resultText(next.content)).toContain('kept.txt');
  });

  it('refuses a file tool write that would go over the limit, writing nothing', async () => {
    const [, write] = createFileTools({ home, homeMaxBytes: 4 * MiB });
    await expect(runTool(write, { path: 'huge.txt', content: 'x'.repeat(5 * MiB) })).rejects.toThrow(/would take the agent home to .* over its limit of 4 MB/);
    expect(existsSync(path.join(home, 'huge.txt'))).toBe(false);
    await runTool(write, { path: 'fine.txt', content: 'ok' });
    expect(await readFile(path.join(home, 'fine.txt'), 'utf8')).toBe('ok');
  });

  it.runIf(sandbox?.enforcement?.memory !== undefined)('holds the memory of the whole command tree, and the service stays healthy', async () => {
    // Four processes of 40 MiB each: every one is far under RLIMIT_AS, together they are over 96 MiB.
    const hog = `python3 -c "import time; b = b'x' * (40 * 1024 * 1024); time.sleep(3)"`;
    const result = await runTool(tool(), { command: `pids=""; for i in 1 2 3 4; do ${hog} & pids="$pids $!"; done; for p in $pids; do wait $p; echo "rc=$?"; done` });
    const text = resultText(result.content);
    // The kernel's OOM killer, confined to the command's cgroup, kills at least one of them.
    expect(text).toMatch(/rc=137/);
    expect(result.details).toMatchObject({ limits: { maxMemoryBytes: 96 * MiB, memoryLimit: expect.stringMatching(/^memory cgroup v[12]$/) } });
    // The same command within the limit runs to its end.
    const fits = await runTool(tool(), { command: `python3 -c "b = b'x' * (20 * 1024 * 1024); print('fits')"` });
    expect(resultText(fits.content)).toContain('fits');
    expect(process.memoryUsage().rss).toBeLessThan(1024 * MiB);
  }, 60_000);

  it('lets commands change what the file tools wrote and what the service put in the home, as the sandbox user', async () => {
    const [, write] = createFileTools({ home, owner: sandbox?.homeOwner, homeMaxBytes: 4 * MiB });
    await runTool(write, { path: 'notes/by-tool.txt', content: 'tool\n' });
    // As web_fetch or use_skill would: a folder and file made by the service (root) by path.
    await import('node:fs/promises').then(async (fs) => {
      await fs.mkdir(path.join(home, '.web'));
      await fs.writeFile(path.join(home, '.web', 'page.md'), 'page\n');
    });
    const result = await runTool(tool(), { command: 'echo more >> notes/by-tool.txt && echo more >> .web/page.md && touch .web/new && echo ok' });
    expect(resultText(result.content)).toContain('ok');
    expect(await readFile(path.join(home, 'notes', 'by-tool.txt'), 'utf8')).toBe('tool\nmore\n');
    expect(await readFile(path.join(home, '.web', 'page.md'), 'utf8')).toBe('page\nmore\n');
    expect((await stat(path.join(home, 'notes', 'by-tool.txt'))).uid).toBe(sandbox?.homeOwner?.uid);
  });

  it('shows its limits in the tool description the model and GET /turns/:id/tools show', () => {
    expect(tool().description).toMatch(/the home folder may hold 4 MB/);
    if (sandbox?.enforcement?.memory !== undefined) expect(tool().description).toMatch(/96 MB for all of them together/);
  });
});
