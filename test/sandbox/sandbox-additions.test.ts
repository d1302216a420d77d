import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.js';
import { loadConfig } from '../../src/config/load-config.js';
import { buildBwrapArguments, type BwrapLayout } from '../../src/sandbox/bwrap-arguments.js';
import { detectCommandSandbox, type CommandSandbox } from '../../src/sandbox/detect-sandbox.js';
import { checkSandboxAdditions, SANDBOX_BIN } from '../../src/sandbox/sandbox-additions.js';
import { SANDBOX_NODE_FOLDER } from '../../src/sandbox/service-node.js';
import { capturingLogger, makeHome, silentLogger } from './sandbox-support.js';

/** Whether bubblewrap runs here at all (it may be installed without user namespaces). */
const bwrapWorks = existsSync('/usr/bin/bwrap')
  ? (await detectCommandSandbox({ bwrapPath: 'bwrap', unsafeWithoutSandbox: false, allowNetwork: false, logger: silentLogger })) !== undefined
  : false;

const layout: BwrapLayout = { systemFolders: [{ path: '/usr' }], etcEntries: [], features: { disableUserns: true, tmpfsSize: true } };
const base = { layout, home: '/srv/home', cwd: '', allowNetwork: false, tmpSizeBytes: 1024, env: { PATH: '/usr/bin' } };

describe('sandbox additions in the bwrap arguments', () => {
  it('binds read-only and adds command scripts (from fd 8 on, after the seccomp fd 6 and the home fd 7) after the tmpfs, before the root turns read-only', () => {
    const args = buildBwrapArguments({
      ...base,
      additions: {
        readOnlyBinds: [{ source: '/srv/tools/node_modules', target: '/opt/turn-runtime/node_modules' }],
        commands: [
          { name: 'mcporter', script: '#!/bin/sh\nexec node /opt/turn-runtime/node_modules/mcporter/dist/cli.js "$@"\n' },
          { name: 'other', script: '#!/bin/sh\n' },
        ],
      },
    });
    const bind = args.indexOf('/srv/tools/node_modules');
    expect(args.slice(bind - 1, bind + 2)).toEqual(['--ro-bind', '/srv/tools/node_modules', '/opt/turn-runtime/node_modules']);
    const command = args.indexOf(`${SANDBOX_BIN}/mcporter`);
    expect(args.slice(command - 4, command + 1)).toEqual(['--perms', '0555', '--ro-bind-data', '8', '/opt/turn-runtime/bin/mcporter']);
    expect(args.slice(command + 1, command + 6)).toEqual(['--perms', '0555', '--ro-bind-data', '9', '/opt/turn-runtime/bin/other']);
    expect(bind).toBeGreaterThan(args.lastIndexOf('--tmpfs'));
    expect(command).toBeLessThan(args.lastIndexOf('--remount-ro'));
    expect(args.filter((arg) => arg === '--bind')).toHaveLength(1);
  });

  it('adds nothing when there are no additions', () => {
    expect(buildBwrapArguments(base)).toEqual(buildBwrapArguments({ ...base, additions: { readOnlyBinds: [], commands: [] } }));
  });
});

describe('checkSandboxAdditions', () => {
  it('keeps safe additions and leaves out, with a warning each, what would cover the home, /etc or the root', async () => {
    const { logger, records } = capturingLogger();
    const checked = await checkSandboxAdditions({
      additions: {
        readOnlyBinds: [
          { source: '/usr/bin', target: '/opt/tools' },
          { source: '/usr', target: '/' },
          { source: '/usr', target: '/home' },
          { source: '/usr', target: '/home/agent/x' },
          { source: '/usr', target: '/etc' },
          { source: '/usr', target: '/opt/../etc/x' },
          { source: '/usr', target: 'relative' },
          { source: '/nonexistent/folder', target: '/opt/missing' },
          { source: 'usr', target: '/opt/relative-source' },
        ],
        commands: [
          { name: 'tool', script: '#!/bin/sh\necho tool\n' },
          { name: '../evil', script: '#!/bin/sh\n' },
          { name: 'tool', script: '#!/bin/sh\necho again\n' },
          { name: 'plain', script: 'echo no interpreter line' },
        ],
      },
      logger,
    });
    expect(checked).toEqual({ readOnlyBinds: [{ source: '/usr/bin', target: '/opt/tools' }], commands: [{ name: 'tool', script: '#!/bin/sh\necho tool\n' }] });
    const messages = records().map((record) => record.msg);
    expect(messages).toHaveLength(11);
    expect(messages).toContain('run_command: not binding /usr at / in the sandbox: it would cover the whole sandbox');
    expect(messages).toContain('run_command: not binding /usr at /home in the sandbox: it would cover /home/agent, which the sandbox sets up itself');
    expect(messages).toContain('run_command: not binding /usr at /home/agent/x in the sandbox: nothing may be bound below /home/agent');
    expect(messages).toContain('run_command: not binding /nonexistent/folder at /opt/missing in the sandbox: the host path cannot be used (ENOENT)');
    expect(messages).toContain('run_command: not adding the command "../evil" to the sandbox: not a plain command name');
    expect(messages).toContain('run_command: not adding the command "tool" to the sandbox: a command of that name is already added');
    expect(messages).toContain('run_command: not adding the command "plain" to the sandbox: its script must start with "#!" and be at most 64 KiB');
  });
});

describe('SANDBOX_READ_ONLY_PATHS', () => {
  it('takes absolute folders and refuses any that overlaps DATA_DIR', () => {
    expect(loadConfig({ DATA_DIR: '/srv/data', SANDBOX_READ_ONLY_PATHS: '/opt/mcp, /srv/tools' }).sandbox.readOnlyPaths).toEqual(['/opt/mcp', '/srv/tools']);
    expect(loadConfig({ DATA_DIR: '/srv/data' }).sandbox.readOnlyPaths).toEqual([]);
    expect(() => loadConfig({ DATA_DIR: '/srv/data', SANDBOX_READ_ONLY_PATHS: 'relative/path' })).toThrow(/each entry must be an absolute path/);
    for (const overlapping of ['/srv', '/', '/srv/data', '/srv/data/agents/a/home']) {
      expect(() => loadConfig({ DATA_DIR: '/srv/data', SANDBOX_READ_ONLY_PATHS: overlapping })).toThrow(ConfigError);
    }
    expect(() => loadConfig({ DATA_DIR: '/srv/data', SANDBOX_READ_ONLY_PATHS: '/srv' })).toThrow('SANDBOX_READ_ONLY_PATHS: /srv overlaps DATA_DIR (/srv/data)');
    expect(loadConfig({ DATA_DIR: '/srv/data', SANDBOX_READ_ONLY_PATHS: '/srv/data-tools' }).sandbox.readOnlyPaths).toEqual(['/srv/data-tools']);
  });
});

describe.runIf(bwrapWorks)('a sandbox with additions', () => {
  let tools: { home: string; cleanup: () => Promise<void> };
  let home: { home: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    tools = await makeHome();
    // Commands run as an unprivileged host user: what is bound for them must be readable by all.
    await chmod(tools.home, 0o755);
    home = await makeHome();
    await mkdir(path.join(tools.home, 'bin'));
    await writeFile(path.join(tools.home, 'bin', 'greet.sh'), 'echo "hello from $0, given $*"\n');
  });
  afterAll(async () => {
    await tools.cleanup();
    await home.cleanup();
  });

  it('sees the bound folder read-only and runs the added command from PATH', async () => {
    const sandbox = await detectCommandSandbox({
      bwrapPath: 'bwrap',
      unsafeWithoutSandbox: false,
      allowNetwork: false,
      logger: silentLogger,
      additions: { readOnlyBinds: [{ source: tools.home, target: '/opt/greeter' }], commands: [{ name: 'greet', script: '#!/bin/sh\nexec /bin/sh /opt/greeter/bin/greet.sh "$@"\n' }] },
    });
    expect(sandbox?.kind).toBe('bubblewrap');
    const result = await (sandbox as CommandSandbox).run({
      command: 'greet a b; echo "$PATH"; touch /opt/greeter/x 2>/dev/null; echo "write=$?"; { echo x > /opt/turn-runtime/bin/greet; } 2>/dev/null; echo "replace=$?"; ls /opt/greeter/bin',
      home: home.home,
      timeoutMs: 10_000,
      signal: new AbortController().signal,
    });
    expect(result.output).toBe(`hello from /opt/greeter/bin/greet.sh, given a b\n${SANDBOX_NODE_FOLDER}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:${SANDBOX_BIN}\nwrite=1\nreplace=2\ngreet.sh\n`);
    expect(existsSync(path.join(tools.home, 'x'))).toBe(false);
  });
});
