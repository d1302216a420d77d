import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandSandboxError, detectCommandSandbox, type CommandSandbox } from '../../src/sandbox/detect-sandbox.js';
import { eventually, hostPidsWith, makeHome, silentLogger, uniqueMarker } from './sandbox-support.js';

const run = promisify(execFile);
const bwrapInstalled = existsSync('/usr/bin/bwrap');
const limits = { maxProcesses: 128 };

const sandbox = bwrapInstalled
  ? await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger: silentLogger, outputLimitBytes: 4096, limits })
  : undefined;
const networkedSandbox = bwrapInstalled
  ? await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: true, logger: silentLogger, limits })
  : undefined;

// Not skipped when bwrap is missing: CI installs it, and a sandbox suite that quietly skips proves nothing.
it('proves the bwrap installed on this machine works', () => {
  expect(bwrapInstalled).toBe(true);
  expect(sandbox?.kind).toBe('bubblewrap');
  expect(networkedSandbox?.allowNetwork).toBe(true);
});

describe.runIf(sandbox !== undefined)('a command in the bubblewrap sandbox', () => {
  const box = sandbox as CommandSandbox;
  let home: string;
  let cleanup: () => Promise<void>;
  const never = new AbortController().signal;

  beforeEach(async () => {
    ({ home, cleanup } = await makeHome());
  });
  afterEach(async () => {
    await cleanup();
  });

  it('runs Node programs that use WebAssembly within the memory limit', async () => {
    const result = await box.run({ command: `node -e "new WebAssembly.Memory({ initial: 1 }); console.log('wasm ok')"`, home, timeoutMs: 20_000, signal: never });
    expect(result.output).toContain('wasm ok');
    expect(result.exitCode).toBe(0);
  });

  it('runs in the home, which is its working folder and HOME', async () => {
    const result = await box.run({ command: 'echo hello; pwd; echo "$HOME"; id -un', home, timeoutMs: 10_000, signal: never });
    expect(result).toMatchObject({ status: 'exited', exitCode: 0, signal: null, truncatedBytes: 0 });
    expect(result.output).toBe('hello\n/home/agent\n/home/agent\nagent\n');
    expect(result.summary).toMatch(/^exited with code 0 after \d+(\.\d)? m?s$/);
  });

  it('starts in a subfolder given as cwd and refuses one that climbs out', async () => {
    await mkdir(path.join(home, 'src'));
    const result = await box.run({ command: 'pwd', home, cwd: 'src', timeoutMs: 10_000, signal: never });
    expect(result.output).toBe('/home/agent/src\n');
    await expect(box.run({ command: 'pwd', home, cwd: '../..', timeoutMs: 10_000, signal: never })).rejects.toBeInstanceOf(CommandSandboxError);
    await expect(box.run({ command: 'pwd', home, cwd: '/etc', timeoutMs: 10_000, signal: never })).rejects.toBeInstanceOf(CommandSandboxError);
  });

  it('writes in the home reach the host; writes anywhere else fail', async () => {
    const command = [
      'echo made-inside > note.txt',
      'touch /etc/x; echo "etc=$?"',
      'touch /tmp/../root/x; echo "root=$?"',
      'touch /usr/x; echo "usr=$?"',
      'touch /usr/bin/x; echo "usrbin=$?"',
      'touch /x; echo "top=$?"',
      'touch /dev/x; echo "dev=$?"',
    ].join('\n');
    const result = await box.run({ command, home, timeoutMs: 10_000, signal: never });
    expect(result.exitCode).toBe(0);
    for (const name of ['etc', 'root', 'usr', 'usrbin', 'top', 'dev']) expect(result.output).toContain(`${name}=1`);
    expect(await readFile(path.join(home, 'note.txt'), 'utf8')).toBe('made-inside\n');
    expect(existsSync('/etc/x')).toBe(false);
    expect(existsSync('/usr/x')).toBe(false);
  });

  it('cannot write through a symlink that points out of the home', async () => {
    const outside = await makeHome();
    try {
      const target = path.join(outside.home, 'target.txt');
      await writeFile(target, 'original\n');
      await symlink(target, path.join(home, 'escape'));
      await symlink('/etc/passwd', path.join(home, 'passwd-link'));
      const result = await box.run({ command: 'echo pwned > escape; echo pwned >> passwd-link; cat passwd-link | head -1', home, timeoutMs: 10_000, signal: never });
      expect(await readFile(target, 'utf8')).toBe('original\n');
      expect(await readFile('/etc/passwd', 'utf8')).not.toContain('pwned');
      // The link resolves to the sandbox's own /etc/passwd, not the host's.
      expect(result.output).toContain('root:x:0:0');
    } finally {
      await outside.cleanup();
    }
  });

  it('sees a fresh /tmp each time, and no secrets of the host /etc', async () => {
    await box.run({ command: 'echo left-behind > /tmp/state', home, timeoutMs: 10_000, signal: never });
    const result = await box.run({ command: 'cat /tmp/state; ls /etc/shadow /etc/ssl/private /root', home, timeoutMs: 10_000, signal: never });
    expect(result.output).not.toContain('left-behind');
    expect(result.output).toMatch(/\/etc\/shadow.*No such file/);
    expect(result.output).toMatch(/\/etc\/ssl\/private.*No such file/);
    expect(result.output).toMatch(/\/root.*No such file/);
  });

  it('does not see the service environment, command line or descriptors', async () => {
    const secret = `s3cret-${uniqueMarker('env')}`;
    process.env['TURN_RUNTIME_TEST_SECRET'] = secret;
    try {
      const command = 'env; cat /proc/1/environ /proc/self/environ | tr "\\0" "\\n"; tr "\\0" " " < /proc/1/cmdline; echo; ls -l /proc/$$/fd';
      const result = await box.run({ command, home, timeoutMs: 10_000, signal: never, env: { CI: '1' } });
      expect(result.output).not.toContain(secret);
      expect(result.output).not.toContain('TURN_RUNTIME_TEST_SECRET');
      expect(result.output).toContain('CI=1');
      expect(result.output).toContain('LANG=C.UTF-8');
      // The host path of the home never appears inside: bwrap got its options through a pipe.
      expect(result.output).not.toContain(home);
      expect(result.output).not.toMatch(/-> pipe:/);
    } finally {
      delete process.env['TURN_RUNTIME_TEST_SECRET'];
    }
  });

  it('refuses extra variables that would subvert the shell or the loader', async () => {
    await expect(box.run({ command: 'true', home, timeoutMs: 10_000, signal: never, env: { LD_PRELOAD: '/x.so' } })).rejects.toThrow(/LD_PRELOAD/);
    await expect(box.run({ command: 'true', home, timeoutMs: 10_000, signal: never, env: { 'A=B': 'x' } })).rejects.toThrow(/not a valid/);
  });

  describe('network', () => {
    let server: Server;
    let port: number;
    let connections = 0;

    beforeEach(async () => {
      connections = 0;
      server = createServer((socket) => {
        connections += 1;
        socket.end('hello from the host\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const address = server.address();
      port = typeof address === 'object' && address !== null ? address.port : 0;
    });
    afterEach(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    const connect = (): string => `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${String(port)} && head -1 <&3' && echo connected || echo unreachable`;

    it('cannot reach a server on the host loopback', async () => {
      const result = await box.run({ command: connect(), home, timeoutMs: 10_000, signal: never });
      expect(result.output).toContain('unreachable');
      expect(result.output).not.toContain('hello from the host');
      expect(connections).toBe(0);
    });

    it.runIf(networkedSandbox !== undefined)('reaches it when the network is allowed', async () => {
      const result = await (networkedSandbox as CommandSandbox).run({ command: connect(), home, timeoutMs: 10_000, signal: never });
      expect(result.output).toContain('hello from the host');
      expect(connections).toBe(1);
    });
  });

  it('reports a non-zero exit code and keeps stdout and stderr in order', async () => {
    const result = await box.run({ command: 'echo 1; echo 2 >&2; echo 3; echo 4 >&2; exit 3', home, timeoutMs: 10_000, signal: never });
    expect(result).toMatchObject({ status: 'exited', exitCode: 3, signal: null, output: '1\n2\n3\n4\n' });
    expect(result.summary).toMatch(/^exited with code 3 after/);
  });

  it('is killed on the abort, long before its sleep would end, with nothing of it left', async () => {
    const marker = `30.${String(Math.floor(Math.random() * 1e6))}`;
    const controller = new AbortController();
    const running = box.run({ command: `echo started; sleep ${marker}`, home, timeoutMs: 60_000, signal: controller.signal });
    let pids: number[] = [];
    expect(await eventually(async () => (pids = await hostPidsWith(`sleep\0${marker}`)).length > 0)).toBe(true);

    const abortedAt = performance.now();
    controller.abort();
    const result = await running;
    const settledMs = performance.now() - abortedAt;

    // Not a latency measurement (a loaded machine may take a while): the run ends because of the
    // abort, not when its 30 s sleep or its 60 s timeout would have ended it.
    expect(settledMs).toBeLessThan(15_000);
    expect(result).toMatchObject({ status: 'aborted', exitCode: null, signal: 'SIGKILL', output: 'started\n' });
    expect(result.summary).toMatch(/^aborted after \d+(\.\d)? m?s: the turn was cancelled$/);
    expect(await eventually(() => pids.every((pid) => !existsSync(`/proc/${String(pid)}`)), 10_000)).toBe(true);
  });

  it('says why it was aborted when the signal carries a reason, and does not start when already aborted', async () => {
    const controller = new AbortController();
    const running = box.run({ command: 'sleep 30', home, timeoutMs: 60_000, signal: controller.signal });
    setTimeout(() => {
      controller.abort(new Error('the person pressed stop'));
    }, 100);
    expect((await running).summary).toMatch(/^aborted after .*: the person pressed stop$/);

    const before = new AbortController();
    before.abort();
    const result = await box.run({ command: 'touch never-ran', home, timeoutMs: 60_000, signal: before.signal });
    expect(result).toMatchObject({ status: 'aborted', signal: null, summary: 'aborted after 0 ms: the turn was cancelled' });
    expect(existsSync(path.join(home, 'never-ran'))).toBe(false);
  });

  it('is killed and reported when it times out', async () => {
    const marker = `31.${String(Math.floor(Math.random() * 1e6))}`;
    // The timer runs from the spawn: 3 s leaves a loaded machine ample time to start the sandbox
    // and echo before it fires, so the output kept from before the kill is always there.
    const result = await box.run({ command: `echo before; sleep ${marker}`, home, timeoutMs: 3_000, signal: never });
    expect(result).toMatchObject({ status: 'timed-out', exitCode: null, signal: 'SIGKILL', summary: 'timed out after 3 s, killed', output: 'before\n' });
    expect(await eventually(async () => (await hostPidsWith(`sleep\0${marker}`)).length === 0, 10_000)).toBe(true);
  });

  it('ends background processes with the command', async () => {
    const marker = `32.${String(Math.floor(Math.random() * 1e6))}`;
    const result = await box.run({ command: `(setsid sleep ${marker} > /dev/null 2>&1 &); sleep ${marker} > /dev/null 2>&1 & echo spawned`, home, timeoutMs: 10_000, signal: never });
    expect(result.output).toBe('spawned\n');
    expect(await eventually(async () => (await hostPidsWith(`sleep\0${marker}`)).length === 0, 10_000)).toBe(true);
  });

  it('keeps the head and tail of huge output within the limit, without growing the service’s memory', async () => {
    const sequence = await box.run({ command: 'seq 1 1000000', home, timeoutMs: 60_000, signal: never });
    expect(Buffer.byteLength(sequence.output)).toBeLessThanOrEqual(4096);
    expect(sequence.output.startsWith('1\n2\n3\n')).toBe(true);
    expect(sequence.output.endsWith('999999\n1000000\n')).toBe(true);
    expect(sequence.output).toContain(`[… ${sequence.truncatedBytes.toLocaleString('en-US')} bytes cut from the middle of the output …]`);

    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    const result = await box.run({ command: 'yes | head -c 400000000', home, timeoutMs: 60_000, signal: never });
    clearInterval(sampler);
    expect(result).toMatchObject({ status: 'exited', exitCode: 0, outputBytes: 400_000_000 });
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(4096);
    expect(result.truncatedBytes).toBeGreaterThan(400_000_000 - 4096);
    expect(result.output).toMatch(/^y\ny\n[\s\S]*bytes cut from the middle of the output[\s\S]*y\ny\n$/);
    // Keeping the output would cost 400 MB; reading it through costs a few chunks at a time.
    expect(peak - baseline).toBeLessThan(150 * 1024 * 1024);
  });

  it('contains a fork bomb: the call returns, the host can still start processes, nothing survives', { timeout: 40_000 }, async () => {
    const marker = uniqueMarker('bomb');
    let peakProcesses = 0;
    let hostStartsAtPeak = 0;
    let hostFailures = 0;
    // The run ends when the bomb has filled its sandbox and the host has started processes
    // beside it three times: a verdict on what happened, not on how fast a loaded machine forks.
    const enough = new AbortController();
    const sampler = setInterval(() => {
      void hostPidsWith(marker).then((pids) => {
        peakProcesses = Math.max(peakProcesses, pids.length);
      });
      const ramped = peakProcesses > 10;
      run('/bin/true').then(
        () => {
          if (ramped) hostStartsAtPeak += 1;
          if (hostStartsAtPeak >= 3) enough.abort(new Error('the bomb has been seen at its peak'));
        },
        () => (hostFailures += 1),
      );
    }, 100);
    // The literal bomb needs bash (dash refuses ":" as a function name). The sleep keeps the
    // namespace alive meanwhile; it starts first, and `wait` is a builtin, because once the bomb
    // has used up the process limit nothing more can be forked.
    const result = await box.run({ command: `sleep 30 & bash -c ':(){ :|:& };:' ${marker}; wait`, home, timeoutMs: 25_000, signal: enough.signal });
    clearInterval(sampler);

    expect(result.status).toBe('aborted');
    expect(hostFailures).toBe(0);
    expect(hostStartsAtPeak).toBeGreaterThanOrEqual(3);
    expect(peakProcesses).toBeGreaterThan(10);
    expect(peakProcesses).toBeLessThanOrEqual(limits.maxProcesses);
    expect(await eventually(async () => (await hostPidsWith(marker)).length === 0, 10_000)).toBe(true);
  });

  it('contains a fork bomb written for dash too', async () => {
    const marker = uniqueMarker('dashbomb');
    const result = await box.run({ command: `sleep 30 & b(){ b|b& }; b; wait # ${marker}`, home, timeoutMs: 1_500, signal: never });
    expect(result.status).toBe('timed-out');
    expect(await eventually(async () => (await hostPidsWith(marker)).length === 0, 10_000)).toBe(true);
  });

  it.runIf(existsSync('/usr/bin/python3'))('stops a single process from taking more memory than its limit', async () => {
    const result = await box.run({ command: 'python3 -c "b = bytearray(6 * 1024 ** 3)"; echo "exit=$?"', home, timeoutMs: 30_000, signal: never });
    expect(result.output).toContain('MemoryError');
    expect(result.output).toContain('exit=1');
  });

  it('reports a sandbox that cannot start as an error, not as a command result', async () => {
    const broken = await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger: silentLogger });
    expect(broken).toBeDefined();
    await expect((broken as CommandSandbox).run({ command: 'true', home: path.join(os.tmpdir(), 'no-such-home-for-turn-runtime'), timeoutMs: 1_000, signal: never })).rejects.toBeInstanceOf(
      CommandSandboxError,
    );
  });
});

afterAll(() => {
  delete process.env['TURN_RUNTIME_TEST_SECRET'];
});
