import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { STARTED_MARKER } from '../../src/sandbox/command-environment.js';
import { CommandLauncherThread } from '../../src/sandbox/command-launcher.js';
import { CommandSandboxError } from '../../src/sandbox/command-sandbox.js';
import type { CommandProcessOptions } from '../../src/sandbox/run-command-process.js';

/** The line the sandbox's preamble writes before the command (see commandPreamble). */
const MARK = `printf '%s' '${STARTED_MARKER}' >&2`;

/** A bare shell command (no sandbox), as the launcher runs it for the sandbox. */
function shell(command: string, extra: Partial<CommandProcessOptions> = {}): CommandProcessOptions {
  return {
    file: '/bin/sh',
    args: ['-c', `${MARK}; ${command}`],
    env: { PATH: '/usr/bin:/bin' },
    cwd: '/',
    inputs: [],
    inheritedFds: [],
    timeoutMs: 30_000,
    signal: new AbortController().signal,
    outputLimitBytes: 4096,
    cgroups: [],
    pidNamespace: false,
    clock: systemClock,
    ...extra,
  };
}

/** Running: the process is there and not a zombie. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('the command launcher thread', () => {
  it('runs a command, kills it on a cancel, and its result crosses back whole', async () => {
    const launcher = new CommandLauncherThread();
    try {
      const done = await launcher.run(shell('echo out'));
      expect(done).toMatchObject({ status: 'exited', exitCode: 0, spawned: true, output: 'out\n' });
      const controller = new AbortController();
      let pid = 0;
      const killed = launcher.run(shell('sleep 30', { signal: controller.signal, onSpawn: (spawned) => (pid = spawned) }));
      while (pid === 0) await sleep(10);
      controller.abort();
      expect(await killed).toMatchObject({ status: 'aborted', spawned: true, signal: 'SIGKILL' });
      expect(running(pid)).toBe(false);
    } finally {
      await launcher.stop();
    }
  });

  it('kills what it still watches when it is stopped, and fails those runs; the next command starts another thread', async () => {
    const launcher = new CommandLauncherThread();
    let pid = 0;
    const orphaned = launcher.run(shell('sleep 30', { onSpawn: (spawned) => (pid = spawned) }));
    while (pid === 0) await sleep(10);
    await launcher.stop();
    await expect(orphaned).rejects.toBeInstanceOf(CommandSandboxError);
    await expect(orphaned).rejects.toThrow(/the command launcher thread stopped .*the command was killed/);
    for (let waited = 0; running(pid) && waited < 2_000; waited += 20) await sleep(20);
    expect(running(pid)).toBe(false);
    expect(launcher.threadRunning).toBe(false);
    expect(await launcher.run(shell('true'))).toMatchObject({ status: 'exited', exitCode: 0 });
    await launcher.stop();
  });

  it('ends its thread after its idle time without a command, and starts one again when asked', async () => {
    const launcher = new CommandLauncherThread({ idleExitMs: 100 });
    try {
      await launcher.run(shell('true'));
      expect(launcher.threadRunning).toBe(true);
      for (let waited = 0; launcher.threadRunning && waited < 5_000; waited += 20) await sleep(20);
      expect(launcher.threadRunning).toBe(false);
      expect(await launcher.run(shell('echo again'))).toMatchObject({ status: 'exited', exitCode: 0, output: 'again\n' });
    } finally {
      await launcher.stop();
    }
  });
});
