import { existsSync } from 'node:fs';
import { chmod, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectCommandSandbox } from '../../src/sandbox/detect-sandbox.js';
import { capturingLogger, eventually, hostPidsWith, makeHome } from './sandbox-support.js';

const WARN = 40;

describe('detectCommandSandbox', () => {
  let home: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ home, cleanup } = await makeHome());
  });
  afterEach(async () => {
    await cleanup();
  });

  it('disables run_command with one warning when bwrap is missing', async () => {
    const { logger, records } = capturingLogger();
    const sandbox = await detectCommandSandbox({ bwrapPath: path.join(home, 'no-such-bwrap'), unsafeWithoutSandbox: false, allowNetwork: false, logger });
    expect(sandbox).toBeUndefined();
    const warnings = records().filter((record) => record.level >= WARN);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toMatch(/^run_command is disabled: bubblewrap was not found at ".*no-such-bwrap"/);
  });

  it('disables run_command when a bare name is not on the system path', async () => {
    const { logger, records } = capturingLogger();
    expect(await detectCommandSandbox({ bwrapPath: 'bwrap-that-does-not-exist', unsafeWithoutSandbox: false, allowNetwork: false, logger })).toBeUndefined();
    expect(records().filter((record) => record.level >= WARN).map((record) => record.msg)).toEqual([expect.stringMatching(/not found .*looked in \/usr\/local\/sbin/)]);
  });

  it('disables run_command and says why when bwrap cannot create namespaces', async () => {
    // A stand-in for a bwrap on a kernel that refuses user namespaces: it fails as bwrap does.
    const fake = path.join(home, 'bwrap');
    // A root service starts bwrap as the unprivileged sandbox user, who must reach it.
    await chmod(home, 0o755);
    await writeFile(fake, '#!/bin/sh\necho "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n');
    await chmod(fake, 0o755);
    const { logger, records } = capturingLogger();
    expect(await detectCommandSandbox({ bwrapPath: fake, unsafeWithoutSandbox: false, allowNetwork: false, logger })).toBeUndefined();
    const warnings = records().filter((record) => record.level >= WARN);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toMatch(/^run_command is disabled: .*user namespaces are probably refused.*No permissions to creating new namespace/);
  });

  it('disables run_command when the binary is not bubblewrap at all', async () => {
    const { logger, records } = capturingLogger();
    expect(await detectCommandSandbox({ bwrapPath: '/bin/false', unsafeWithoutSandbox: false, allowNetwork: false, logger })).toBeUndefined();
    expect(records().filter((record) => record.level >= WARN)[0]?.msg).toMatch(/^run_command is disabled: the sandbox could not start the command/);
  });

  it.runIf(existsSync('/usr/bin/bwrap'))('returns a working bubblewrap sandbox and logs how it is limited', async () => {
    const { logger, records } = capturingLogger();
    const sandbox = await detectCommandSandbox({ bwrapPath: '/usr/bin/bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger });
    expect(sandbox).toMatchObject({ kind: 'bubblewrap', isolated: true, allowNetwork: false, homeInside: '/home/agent' });
    const ready = records().find((record) => record.msg.startsWith('run_command: commands run in a bubblewrap sandbox'));
    expect(ready?.['processLimit']).toMatch(/processes per command/);
  });

  it('runs commands on the bare host when told to, and says loudly that it is unsafe', async () => {
    const { logger, records } = capturingLogger();
    const sandbox = await detectCommandSandbox({ bwrapPath: '/nonexistent/bwrap', unsafeWithoutSandbox: true, allowNetwork: false, logger });
    expect(sandbox).toMatchObject({ kind: 'unsafe-host', isolated: false });
    const unsafe = records().filter((record) => record.level >= WARN && record['unsafe'] === true);
    expect(unsafe[0]?.msg).toMatch(/^UNSAFE: run_command runs commands directly on this machine with NO sandbox/);

    const secret = 'unsafe-mode-secret-value';
    process.env['TURN_RUNTIME_UNSAFE_SECRET'] = secret;
    try {
      const result = await sandbox?.run({ command: 'pwd; echo "$HOME"; env; exit 4', home, timeoutMs: 10_000, signal: new AbortController().signal });
      const realHome = await realpath(home);
      expect(result).toMatchObject({ status: 'exited', exitCode: 4 });
      expect(result?.output.startsWith(`${realHome}\n${realHome}\n`)).toBe(true);
      expect(result?.output).not.toContain(secret);
    } finally {
      delete process.env['TURN_RUNTIME_UNSAFE_SECRET'];
    }
  });

  it('kills an unsafe host command and what it started when aborted', async () => {
    const { logger } = capturingLogger();
    const sandbox = await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: true, allowNetwork: false, logger });
    const marker = `33.${String(Math.floor(Math.random() * 1e6))}`;
    const controller = new AbortController();
    const running = sandbox?.run({ command: `sleep ${marker} & sleep ${marker}`, home, timeoutMs: 60_000, signal: controller.signal });
    expect(await eventually(async () => (await hostPidsWith(`sleep\0${marker}`)).length === 2)).toBe(true);
    controller.abort();
    expect((await running)?.status).toBe('aborted');
    expect(await eventually(async () => (await hostPidsWith(`sleep\0${marker}`)).length === 0, 10_000)).toBe(true);
  });
});
