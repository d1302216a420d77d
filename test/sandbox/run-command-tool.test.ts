import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandSandboxError, detectCommandSandbox, type CommandSandbox } from '../../src/sandbox/detect-sandbox.js';
import { defaultSandboxLimits, type CommandRunRequest } from '../../src/sandbox/command-sandbox.js';
import { createRunCommandTool, type RunCommandParams } from '../../src/tools/computer/run-command.js';
import type { WorkerAgentTool } from '../../src/tools/define-worker-tool.js';
import { resultText, type AgentToolResult } from '../../src/tools/tool-result.js';
import { makeHome, silentLogger } from './sandbox-support.js';

const settings = { defaultTimeoutMs: 10_000, maxTimeoutMs: 20_000 };
const sandbox = existsSync('/usr/bin/bwrap')
  ? await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger: silentLogger, outputLimitBytes: 2048 })
  : undefined;

/** Validates arguments as the loop does, runs the tool, and returns what the model and the person would see. */
async function call(tool: WorkerAgentTool<RunCommandParams>, args: unknown, signal = new AbortController().signal, reports: string[] = []) {
  const checked = tool.checkArguments(args);
  if (!checked.ok) throw new Error(`invalid arguments: ${checked.issues.map((issue) => issue.message).join('; ')}`);
  const reportStopped = (outcome: string): void => {
    reports.push(outcome);
  };
  const result: AgentToolResult = await tool.execute(checked.params, { signal, callId: 'call_1', logger: silentLogger, present: () => undefined, reportStopped });
  return {
    text: resultText(result.content),
    details: result.details,
    activity: tool.describeActivity(checked.params),
    completed: tool.describeCompletedActivity?.(checked.params, result),
  };
}

/** A sandbox that records what it was asked and answers as told. */
function scriptedSandbox(answer: (request: CommandRunRequest) => Promise<Awaited<ReturnType<CommandSandbox['run']>>>): CommandSandbox & { requests: CommandRunRequest[] } {
  const requests: CommandRunRequest[] = [];
  return {
    kind: 'bubblewrap',
    isolated: true,
    allowNetwork: false,
    homeInside: '/home/agent',
    outputLimitBytes: 2048,
    limits: defaultSandboxLimits,
    requests,
    run: (request) => {
      requests.push(request);
      return answer(request);
    },
  };
}

describe('run_command definition', () => {
  const tool = createRunCommandTool({ home: '/tmp', sandbox: scriptedSandbox(() => Promise.reject(new Error('unused'))), settings });

  it('is a sequential, destructive tool whose loop timeout outlasts its own longest timeout', () => {
    expect(tool).toMatchObject({ name: 'run_command', executionMode: 'sequential', isReadOnly: false, isDestructive: true });
    expect(tool.timeoutMs).toBeGreaterThan(settings.maxTimeoutMs);
    expect(tool.parameters).toMatchObject({ type: 'object', required: ['command'] });
  });

  it('tells the model where it runs, what it may write, the network, and what to do with long output', () => {
    expect(tool.description).toContain('sandbox');
    expect(tool.description).toContain('/home/agent');
    expect(tool.description).toMatch(/Only the home folder is writable/);
    expect(tool.description).toMatch(/Network access is off/);
    expect(tool.description).toMatch(/redirect it to a file/);
    expect(tool.description).toMatch(/10 s unless you pass timeout_ms \(at most 20 s\)/);
    const networked = createRunCommandTool({ home: '/tmp', sandbox: { ...scriptedSandbox(() => Promise.reject(new Error('unused'))), allowNetwork: true }, settings });
    expect(networked.description).toMatch(/Network access is on/);
  });

  it('refuses an empty, blank, NUL-carrying or oversized command before anything runs', () => {
    for (const command of ['', '   \n', 'echo a\0b', 'x'.repeat(20_001)]) expect(tool.checkArguments({ command }).ok).toBe(false);
    expect(tool.checkArguments({}).ok).toBe(false);
    expect(tool.checkArguments({ command: 'ls', timeout_ms: -5 }).ok).toBe(false);
    expect(tool.checkArguments({ command: 'ls', timeout_ms: 1.5 }).ok).toBe(false);
    expect(tool.checkArguments({ command: 'ls', cwd: '' }).ok).toBe(false);
  });

  it('labels the activity with the command, shortened to about 60 characters', () => {
    expect(tool.describeActivity({ command: 'npm test' })).toBe('Running `npm test`');
    expect(tool.describeActivity({ command: 'npm test', cwd: 'web' })).toBe('Running `npm test` in web');
    const long = tool.describeActivity({ command: `echo ${'word '.repeat(30)}\n&& ls` });
    expect(long).toMatch(/^Running `echo word word .*…`$/);
    expect(long.length).toBeLessThanOrEqual('Running ``'.length + 60);
    expect(long).not.toContain('\n');
  });
});

describe('run_command with a scripted sandbox', () => {
  let home: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ home, cleanup } = await makeHome());
  });
  afterEach(async () => {
    await cleanup();
  });

  const exited = (overrides: Partial<Awaited<ReturnType<CommandSandbox['run']>>> = {}) =>
    Promise.resolve({
      status: 'exited' as const,
      exitCode: 0,
      signal: null,
      durationMs: 3_100,
      output: 'ok\n',
      outputBytes: 3,
      truncatedBytes: 0,
      summary: 'exited with code 0 after 3.1 s',
      spawned: true,
      allGone: true,
      ...overrides,
    });

  it('clamps timeout_ms to the maximum and uses the default when none is given', async () => {
    const fake = scriptedSandbox(() => exited());
    const tool = createRunCommandTool({ home, sandbox: fake, settings });
    await call(tool, { command: 'true', timeout_ms: 10_000_000 });
    await call(tool, { command: 'true' });
    await call(tool, { command: 'true', timeout_ms: 1_500 });
    expect(fake.requests.map((request) => request.timeoutMs)).toEqual([20_000, 10_000, 1_500]);
  });

  it('checks cwd with openHomePath: outside, through a symlink, missing, or a file are refused', async () => {
    const fake = scriptedSandbox(() => exited());
    const tool = createRunCommandTool({ home, sandbox: fake, settings });
    await mkdir(path.join(home, 'src', 'lib'), { recursive: true });
    await writeFile(path.join(home, 'file.txt'), 'x');
    await symlink('/etc', path.join(home, 'etc-link'));
    await call(tool, { command: 'true', cwd: 'src/lib/' });
    expect(fake.requests[0]?.cwd).toBe('src/lib');
    await expect(call(tool, { command: 'true', cwd: '../' })).rejects.toThrow(/outside the agent home/);
    await expect(call(tool, { command: 'true', cwd: '/etc' })).rejects.toThrow(/absolute/);
    await expect(call(tool, { command: 'true', cwd: 'etc-link' })).rejects.toThrow(/symbolic link/);
    await expect(call(tool, { command: 'true', cwd: 'nope' })).rejects.toThrow(/does not exist/);
    await expect(call(tool, { command: 'true', cwd: 'file.txt' })).rejects.toThrow(/not a folder/);
    expect(fake.requests).toHaveLength(1);
  });

  it('reports a cut in the output and explains an exit code that means a signal', async () => {
    const tool = createRunCommandTool({ home, sandbox: scriptedSandbox(() => exited({ exitCode: 137, output: 'head\n[cut]\ntail\n', outputBytes: 9_000_000, truncatedBytes: 8_998_000 })), settings });
    const { text, details, completed } = await call(tool, { command: 'big-job' });
    expect(text).toContain('exit code: 137 (128 + 9: probably killed by SIGKILL');
    expect(text).toContain('output (9,000,000 bytes, 8,998,000 cut from the middle):\nhead\n[cut]\ntail\n');
    expect(details).toMatchObject({ exitCode: 137, signal: null, durationMs: 3_100, timedOut: false, truncatedBytes: 8_998_000, removedOverLimit: [] });
    expect(details?.['limits']).toMatchObject({ maxProcesses: 512, homeMaxBytes: 1024 ** 3, maxFileSizeBytes: 2 * 1024 ** 3 });
    expect(completed).toBe('Ran `big-job` (exit 137, 3.1 s)');
  });

  /** A sandbox run that waits for the cancel, then answers `answer` once `before()` is done. */
  const untilCancelled = (request: CommandRunRequest, options: { launch: boolean; answer: Partial<Awaited<ReturnType<CommandSandbox['run']>>>; before?: () => Promise<void> }) => {
    if (options.launch) request.onLaunch?.();
    return new Promise<Awaited<ReturnType<CommandSandbox['run']>>>((resolve) => {
      request.signal.addEventListener('abort', () => {
        void (options.before?.() ?? Promise.resolve()).then(() => {
          resolve(exited({ status: 'aborted', exitCode: null, signal: 'SIGKILL', summary: 'aborted after 1 s: the turn was cancelled', ...options.answer }));
        });
      });
    });
  };

  it('reports not_started the moment a cancel comes before the command is handed over, without waiting for the sandbox', async () => {
    const reports: string[] = [];
    const controller = new AbortController();
    // The sandbox is still preparing (it has not called onLaunch) when the cancel comes, and unwinds slowly.
    const tool = createRunCommandTool({
      home,
      sandbox: scriptedSandbox((request) =>
        untilCancelled(request, {
          launch: false,
          answer: { spawned: false },
          before: async () => {
            await new Promise((resolve) => setTimeout(resolve, 50));
            reports.push('sandbox unwound');
          },
        }),
      ),
      settings,
    });
    const running = call(tool, { command: 'sleep 30' }, controller.signal, reports);
    setTimeout(() => {
      controller.abort();
    }, 20);
    await expect(running).rejects.toThrow(/aborted after/);
    expect(reports).toEqual(['not_started', 'sandbox unwound']);
  });

  it('reports cancelled once a handed-over command is known gone, not_started when it never spawned, and nothing when some of it may be left', async () => {
    const cases: [Partial<Awaited<ReturnType<CommandSandbox['run']>>>, string[]][] = [
      [{ spawned: true, allGone: true }, ['cancelled']],
      [{ spawned: false, allGone: true }, ['not_started']],
      [{ spawned: true, allGone: false }, []],
    ];
    for (const [answer, expected] of cases) {
      const reports: string[] = [];
      const controller = new AbortController();
      const tool = createRunCommandTool({ home, sandbox: scriptedSandbox((request) => untilCancelled(request, { launch: true, answer })), settings });
      const running = call(tool, { command: 'sleep 30' }, controller.signal, reports);
      setTimeout(() => {
        controller.abort();
      }, 20);
      await expect(running).rejects.toThrow(/aborted after/);
      expect(reports, JSON.stringify(answer)).toEqual(expected);
    }
  });

  it('throws a command’s own timeout as CallTimedOutError, cancelled when its processes are gone', async () => {
    const timedOut = { status: 'timed-out' as const, exitCode: null, signal: 'SIGKILL' as const, summary: 'timed out after 3 s, killed' };
    const gone = createRunCommandTool({ home, sandbox: scriptedSandbox(() => exited({ ...timedOut, allGone: true })), settings });
    await expect(call(gone, { command: 'sleep 30' })).rejects.toMatchObject({ name: 'CallTimedOutError', outcome: 'cancelled' });
    const unsure = createRunCommandTool({ home, sandbox: scriptedSandbox(() => exited({ ...timedOut, allGone: false })), settings });
    await expect(call(unsure, { command: 'sleep 30' })).rejects.toMatchObject({ name: 'CallTimedOutError', outcome: 'maybe_ran' });
  });

  it('lets a sandbox failure through as an error', async () => {
    const tool = createRunCommandTool({ home, sandbox: scriptedSandbox(() => Promise.reject(new CommandSandboxError('the sandbox could not start the command: bwrap: boom'))), settings });
    await expect(call(tool, { command: 'true' })).rejects.toThrow(/bwrap: boom/);
  });
});

describe.runIf(sandbox !== undefined)('run_command in the real sandbox', () => {
  const box = sandbox as CommandSandbox;
  let home: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ home, cleanup } = await makeHome());
  });
  afterEach(async () => {
    await cleanup();
  });

  it('runs a command and reports exit code, duration and output', async () => {
    const tool = createRunCommandTool({ home, sandbox: box, settings, env: { CI: '1' } });
    const { text, details, activity, completed } = await call(tool, { command: 'echo "hello $CI" && pwd' });
    expect(text).toMatch(/^exit code: 0\nduration: \d+(\.\d)? m?s\noutput \(20 bytes\):\nhello 1\n\/home\/agent\n$/);
    expect(details).toMatchObject({ exitCode: 0, signal: null, timedOut: false, truncatedBytes: 0 });
    expect(activity).toBe('Running `echo "hello $CI" && pwd`');
    expect(completed).toMatch(/^Ran `echo "hello \$CI" && pwd` \(exit 0, \d+(\.\d)? m?s\)$/);
  });

  it('returns a non-zero exit as a result, not an error', async () => {
    const tool = createRunCommandTool({ home, sandbox: box, settings });
    const { text, details, completed } = await call(tool, { command: 'echo nope >&2; exit 3' });
    expect(text).toMatch(/^exit code: 3\n[\s\S]*nope\n$/);
    expect(details?.['exitCode']).toBe(3);
    expect(completed).toMatch(/^Ran `echo nope >&2; exit 3` \(exit 3, /);
  });

  it('says when there was no output', async () => {
    const tool = createRunCommandTool({ home, sandbox: box, settings });
    expect((await call(tool, { command: 'true' })).text).toMatch(/output: \(none\)$/);
  });

  it('starts in the folder given as cwd', async () => {
    await mkdir(path.join(home, 'web'));
    const tool = createRunCommandTool({ home, sandbox: box, settings });
    expect((await call(tool, { command: 'pwd', cwd: 'web' })).text).toContain('/home/agent/web\n');
  });

  it('throws a timeout with the truthful phrase and the output so far', async () => {
    // Asked for 60 s, held to the 3 s maximum: ample time, on a loaded machine too, for the
    // sandbox to start and echo before the timer (which runs from the spawn) fires.
    const tool = createRunCommandTool({ home, sandbox: box, settings: { defaultTimeoutMs: 2_000, maxTimeoutMs: 3_000 } });
    await expect(call(tool, { command: 'echo waiting; sleep 30', timeout_ms: 60_000 })).rejects.toThrow(
      /^The command timed out after 3 s, killed\. Output before it was killed:\nwaiting\n/,
    );
  });

  it('throws "aborted after …" when the turn is cancelled, and reports cancelled once its processes are gone', async () => {
    const tool = createRunCommandTool({ home, sandbox: box, settings });
    const controller = new AbortController();
    const reports: string[] = [];
    const running = call(tool, { command: 'touch running; sleep 30' }, controller.signal, reports);
    // Cancelled once the command runs (it marks the home).
    for (let waited = 0; !existsSync(path.join(home, 'running')); waited += 20) {
      if (waited > 30_000) throw new Error('the command never ran');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    controller.abort();
    await expect(running).rejects.toThrow(/^aborted after \d+(\.\d)? m?s: the turn was cancelled$/);
    expect(reports).toEqual(['cancelled']);
  });

  it('keeps long output within the limit and says how much was cut', async () => {
    const tool = createRunCommandTool({ home, sandbox: box, settings });
    const { text, details } = await call(tool, { command: 'seq 1 100000' });
    expect(text).toMatch(/output \(588,895 bytes, [\d,]+ cut from the middle\):\n1\n2\n/);
    expect(text.endsWith('99999\n100000\n')).toBe(true);
    expect(details?.['truncatedBytes']).toBeGreaterThan(580_000);
  });
});
