import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DENIED_CALLS, SECCOMP_ARCHITECTURES } from '../../src/sandbox/seccomp-filter.js';
import { SANDBOX_NODE } from '../../src/sandbox/service-node.js';
import { detectCommandSandbox, type CommandSandbox } from '../../src/sandbox/detect-sandbox.js';
import { capturingLogger, makeHome, silentLogger } from './sandbox-support.js';

// The service runs as root here and in CI: these are the attacks of issue 7, tried for real.
const sandbox = existsSync('/usr/bin/bwrap') ? await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger: silentLogger }) : undefined;
const never = new AbortController().signal;
const arch = process.arch === 'arm64' ? 'arm64' : 'x64';

it('has a working sandbox to attack, and the service is root as in CI', () => {
  expect(sandbox?.kind).toBe('bubblewrap');
  expect(process.getuid?.()).toBe(0);
  expect(sandbox?.enforcement).toMatchObject({ hostUser: '65534:65534', seccomp: true });
});

describe.runIf(sandbox !== undefined)('a hostile command', () => {
  const box = sandbox as CommandSandbox;
  let home: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ home, cleanup } = await makeHome());
  });
  afterEach(async () => {
    await cleanup();
  });
  const run = async (command: string, timeoutMs = 30_000) => box.run({ command, home, timeoutMs, signal: never });

  it('runs as an unprivileged host uid, never 0: what it creates belongs to nobody', async () => {
    const result = await run('id -u; touch made-here; cat /proc/self/uid_map');
    expect(result.output.split('\n')[0]).toBe('1000');
    const owner = await stat(path.join(home, 'made-here'));
    expect(owner.uid).toBe(65534);
    expect(owner.gid).toBe(65534);
  });

  it('cannot write any file under /proc/sys (escape 1: the kernel checks the uid, not capabilities)', async () => {
    // Open each for appending and write nothing: a broken sandbox would still change nothing.
    const result = await run(
      'n=0; w=0; for f in $(find /proc/sys -type f 2>/dev/null); do n=$((n+1)); if ( : >> "$f" ) 2>/dev/null; then w=$((w+1)); echo "WRITABLE $f"; fi; done; echo "files=$n writable=$w"',
      120_000,
    );
    expect(result.output).toMatch(/files=\d{3,} writable=0\n$/);
  });

  it('cannot reach the core_pattern route: no write to core_pattern, sysrq-trigger or uevent_helper, and a crash runs nothing on the host', async () => {
    const before = await readFile('/proc/sys/kernel/core_pattern', 'utf8');
    const marker = path.join(home, 'pwned-by-core-pattern');
    const result = await run(
      [
        `printf '|/bin/sh -c "touch ${marker}"' > /proc/sys/kernel/core_pattern; echo "core_pattern=$?"`,
        "echo c > /proc/sysrq-trigger; echo \"sysrq=$?\"",
        'echo /home/agent/x > /sys/kernel/uevent_helper; echo "uevent=$?"',
        // Crash a process the way the attack would, to trigger the core pattern.
        'sh -c \'kill -SEGV $$\'; echo "crashed=$?"',
      ].join('\n'),
    );
    expect(result.output).toMatch(/core_pattern=[12]\b/);
    expect(result.output).toMatch(/sysrq=[12]\b/);
    expect(result.output).toMatch(/uevent=[12]\b/);
    expect(await readFile('/proc/sys/kernel/core_pattern', 'utf8')).toBe(before);
    expect(existsSync(marker)).toBe(false);
  });

  it.each(DENIED_CALLS.filter((name) => name !== 'vhangup'))('gets EPERM from the denied call %s', async (name) => {
    const number = SECCOMP_ARCHITECTURES[arch].denied[name];
    const result = await run(
      `python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); r = libc.syscall(${String(number)}, 0, 0, 0, 0, 0, 0); print(r, os.strerror(ctypes.get_errno()))'`,
    );
    expect(result.output).toBe('-1 Operation not permitted\n');
  });

  it('cannot make a user namespace by clone, unshare or the unshare tool', async () => {
    const clone = SECCOMP_ARCHITECTURES[arch].clone;
    const result = await run(
      [
        `python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); r = libc.syscall(${String(clone)}, 0x10000000 | 17, 0, 0, 0, 0); print("clone", r, os.strerror(ctypes.get_errno()))'`,
        'unshare -U true 2>&1; echo "unshare=$?"',
        'unshare -r id 2>&1; echo "unshare-root=$?"',
        // An ordinary fork still works.
        'sh -c "echo forked"',
      ].join('\n'),
    );
    expect(result.output).toContain('clone -1 Operation not permitted');
    expect(result.output).toMatch(/unshare=1/);
    expect(result.output).toMatch(/unshare-root=1/);
    expect(result.output).toContain('forked');
  });

  it("cannot read the service's session keyring: keyctl answers EPERM", async () => {
    const keyctl = SECCOMP_ARCHITECTURES[arch].denied.keyctl;
    // KEYCTL_GET_KEYRING_ID (0) of KEY_SPEC_SESSION_KEYRING (-3).
    const result = await run(
      `python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); r = libc.syscall(${String(keyctl)}, 0, -3, 0); print(r, os.strerror(ctypes.get_errno()))'`,
    );
    expect(result.output).toBe('-1 Operation not permitted\n');
  });

  it('cannot see or signal the service: its own PID namespace holds only the command', async () => {
    const result = await run(`ls /proc | grep -E '^[0-9]+$' | wc -l; kill -0 ${String(process.pid)} 2>&1; echo "kill=$?"; kill -9 1 2>&1; echo "init=$?"; cat /proc/${String(process.pid)}/cmdline 2>&1 | head -c 80; echo`);
    const [count = '99'] = result.output.split('\n');
    expect(Number(count)).toBeLessThan(8);
    expect(result.output).toMatch(/kill=1/);
    // The service is alive, of course.
    expect(() => process.kill(process.pid, 0)).not.toThrow();
  });

  it('inherits no file descriptor of the service and sees no host path of the home in mountinfo', async () => {
    const result = await run('for f in /proc/self/fd/*; do echo "$f $(readlink "$f")"; done; echo ---; cat /proc/self/mountinfo; echo "oom=$(cat /proc/self/oom_score_adj)"');
    const [fdPart = '', mountPart = ''] = result.output.split('---\n');
    // 0 (/dev/null), 1 and 2 (the output pipe), the shell's own /proc/self/fd listing; any fd the
    // service itself inherited from its parent reaches a command only as /dev/null.
    const fds = fdPart.trim().split('\n').map((line) => line.split(' '));
    for (const [fd = '', target = ''] of fds) {
      const number = Number(fd.split('/').pop());
      // The glob's own descriptor is gone by the time readlink (another process) looks.
      if (target === '') continue;
      if (number > 2) expect([target, number]).toEqual(['/dev/null', number]);
      else expect(target).toMatch(/^(\/dev\/null|pipe:\[\d+\]|socket:\[\d+\])$/);
    }
    const mounts = mountPart.split('\n');
    expect(result.output).toContain('oom=1000');
    const homeLine = mounts.find((line) => line.includes(' /home/agent '));
    expect(homeLine).toBeDefined();
    // The only host paths shown are the home's own and the service's Node binary's, each as the
    // root of its bind (the kernel prints it).
    expect(mounts.filter((line) => !line.includes(` ${SANDBOX_NODE} `)).join('\n')).not.toContain('/work/');
    expect(mounts.join('\n')).not.toMatch(/\/data\/agents\//);
  });
});

describe('the start-up probe', () => {
  it.runIf(existsSync('/usr/bin/bwrap'))('turns run_command off when commands would run as host root (the old --uid 1000 mapping)', async () => {
    // Pretend the service is not root: no switch of user, so bwrap maps the sandbox user to uid 0.
    const { logger, records } = capturingLogger();
    const found = await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger, serviceUid: 4242 });
    expect(found).toBeUndefined();
    const warning = records().find((record) => record.msg.startsWith('run_command is disabled'));
    expect(warning?.msg).toMatch(/probe found the sandbox unsafe: writable \/proc\/sys\/kernel\/core_pattern|uid 0/);
  });

  it('turns run_command off when the sandbox uid is root', async () => {
    const { logger, records } = capturingLogger();
    expect(await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger, sandboxUid: 0 })).toBeUndefined();
    expect(records().find((record) => record.msg.startsWith('run_command is disabled'))?.msg).toMatch(/SANDBOX_UID and SANDBOX_GID may not be 0/);
  });

  it('turns run_command off when setpriv is missing for a root service', async () => {
    const { logger, records } = capturingLogger();
    expect(await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger, setprivPath: '/nonexistent/setpriv' })).toBeUndefined();
    expect(records().find((record) => record.msg.startsWith('run_command is disabled'))?.msg).toMatch(/needs util-linux setpriv/);
  });

  it.runIf(existsSync('/usr/bin/bwrap'))('turns run_command off when the sandbox user cannot reach the homes folder', async () => {
    const { home, cleanup } = await makeHome(); // 0700, owned by root
    try {
      const { logger, records } = capturingLogger();
      const inner = path.join(home, 'agents');
      await import('node:fs/promises').then((fs) => fs.mkdir(inner));
      expect(await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger, probeFolder: inner })).toBeUndefined();
      expect(records().find((record) => record.msg.startsWith('run_command is disabled'))?.msg).toMatch(/cannot reach the agent homes/);
    } finally {
      await cleanup();
    }
  });
});
