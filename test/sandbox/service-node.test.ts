import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectCommandSandbox, type CommandSandbox } from '../../src/sandbox/detect-sandbox.js';
import { findServiceNode, SANDBOX_NODE } from '../../src/sandbox/service-node.js';
import { capturingLogger, makeHome, silentLogger } from './sandbox-support.js';

const never = new AbortController().signal;
const nobody = { uid: 65534, gid: 65534 };

describe('findServiceNode', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'turn-runtime-service-node-'));
    await chmod(folder, 0o755);
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('resolves symlinks to the binary itself, and needs no check when bwrap runs as the service', async () => {
    const link = path.join(folder, 'node-link');
    await symlink(process.execPath, link);
    expect(await findServiceNode({ execPath: link, user: undefined })).toEqual({ hostPath: await realpath(process.execPath) });
  });

  it('refuses a binary the sandbox user cannot reach: below a closed folder, or not runnable by it', async () => {
    const closed = path.join(folder, 'closed');
    await mkdir(path.join(closed, 'bin'), { recursive: true });
    await chmod(closed, 0o700);
    const hidden = path.join(closed, 'bin', 'node');
    await copyFile(process.execPath, hidden);
    expect(await findServiceNode({ execPath: hidden, user: nobody })).toEqual({ hostPath: undefined, reason: `uid 65534 cannot search ${closed}, above its binary ${hidden}` });

    const open = path.join(folder, 'open');
    await mkdir(open, { mode: 0o755 });
    const privateBinary = path.join(open, 'node');
    await copyFile(process.execPath, privateBinary);
    await chmod(privateBinary, 0o700);
    expect(await findServiceNode({ execPath: privateBinary, user: nobody })).toEqual({ hostPath: undefined, reason: `uid 65534 cannot read and run its binary ${privateBinary}` });
    await chmod(privateBinary, 0o755);
    expect(await findServiceNode({ execPath: privateBinary, user: nobody })).toEqual({ hostPath: privateBinary });

    expect(await findServiceNode({ execPath: path.join(folder, 'missing'), user: nobody })).toMatchObject({ hostPath: undefined, reason: expect.stringContaining('cannot be found (ENOENT)') });
  });
});

// A Node installed outside /usr (as scripts/with-node installs one into .node/): a copy of this
// one, so the test knows which binary a command ran by its inode.
describe.runIf(existsSync('/usr/bin/bwrap'))('commands in the sandbox run the service’s Node.js', () => {
  let folder: string;
  let nodePath: string;
  let sandbox: CommandSandbox | undefined;
  let home: string;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'turn-runtime-own-node-'));
    await chmod(folder, 0o755);
    nodePath = path.join(folder, 'bin', 'node');
    await mkdir(path.dirname(nodePath), { mode: 0o755 });
    await copyFile(process.execPath, nodePath);
    await chmod(nodePath, 0o755);
    sandbox = await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger: silentLogger, nodePath });
    ({ home, cleanup } = await makeHome());
  });
  afterAll(async () => {
    await cleanup();
    await rm(folder, { recursive: true, force: true });
  });

  it('finds `node` first on PATH at SANDBOX_NODE, the binary outside /usr, even through `#!/usr/bin/env node`', async () => {
    expect(sandbox?.kind).toBe('bubblewrap');
    await writeFile(path.join(home, 'version.js'), '#!/usr/bin/env node\nconsole.log(process.version);\n', { mode: 0o755 });
    const result = await sandbox?.run({
      command: 'command -v node; stat -c %i "$(command -v node)"; node -p process.execPath; ./version.js',
      home,
      timeoutMs: 20_000,
      signal: never,
    });
    expect(result?.exitCode).toBe(0);
    const inode = String((await stat(nodePath)).ino);
    expect(result?.output).toBe(`${SANDBOX_NODE}\n${inode}\n${SANDBOX_NODE}\n${process.version}\n`);
  });

  // As root the service runs commands as nobody, who cannot search a 0700 folder of root's.
  it.runIf(process.getuid?.() === 0)('leaves a Node the sandbox user cannot reach out, says why, and still runs commands', async () => {
    const closed = path.join(folder, 'closed');
    await mkdir(closed, { mode: 0o700 });
    const hidden = path.join(closed, 'node');
    await copyFile(process.execPath, hidden);
    const { logger, records } = capturingLogger();
    const withoutNode = await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger, nodePath: hidden });
    expect(withoutNode?.kind).toBe('bubblewrap');
    expect(records().map((record) => record.msg)).toContain(
      `run_command: commands cannot use the service's Node.js (uid 65534 cannot search ${closed}, above its binary ${hidden}); \`node\` in a command is the host's, if it has one`,
    );
    const result = await withoutNode?.run({ command: 'echo "$PATH"', home, timeoutMs: 20_000, signal: never });
    expect(result?.output).not.toContain('/opt/turn-runtime/node');
  });

  it('puts the same Node first on PATH for commands run on the bare host', async () => {
    const host = await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: true, allowNetwork: false, logger: silentLogger, nodePath });
    expect(host?.kind).toBe('unsafe-host');
    const result = await host?.run({ command: 'command -v node; node -p process.version', home, timeoutMs: 20_000, signal: never });
    expect(result?.output).toBe(`${nodePath}\n${process.version}\n`);
  });
});
