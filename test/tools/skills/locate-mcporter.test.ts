import { access, constants, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { locateMcporter, mcporterCommand, SANDBOX_NODE_MODULES } from '../../../src/tools/skills/locate-mcporter.js';
import { shellQuote } from '../../../src/tools/skills/shell-quote.js';
import { REPOSITORY_ROOT } from '../../support/mcp-test-server.js';
import { idleSandbox, tempFolder } from './skill-test-kit.js';

describe('locateMcporter', () => {
  it('finds the mcporter installed with the service and says how the sandbox runs it', async () => {
    const install = await locateMcporter();
    expect(install?.cliPath).toBe(path.join(REPOSITORY_ROOT, 'node_modules', 'mcporter', 'dist', 'cli.js'));
    await access(install?.cliPath ?? '', constants.X_OK);
    expect(install?.sandboxAdditions.readOnlyBinds).toEqual([{ source: path.join(REPOSITORY_ROOT, 'node_modules'), target: SANDBOX_NODE_MODULES }]);
    const [command] = install?.sandboxAdditions.commands ?? [];
    expect(command?.name).toBe('mcporter');
    // The flag keeps WebAssembly (fetch, tsx) alive under the sandbox's address-space limit.
    expect(command?.script).toBe(
      '#!/bin/sh\n# mcporter, installed with turn-runtime\nexport NODE_OPTIONS="--disable-wasm-trap-handler${NODE_OPTIONS:+ $NODE_OPTIONS}"\n' +
        'exec node /opt/turn-runtime/node_modules/mcporter/dist/cli.js "$@"\n',
    );
  });

  describe('in a folder tree of its own', () => {
    let root: string;
    let remove: () => Promise<void>;
    beforeEach(async () => {
      ({ folder: root, remove } = await tempFolder('locate-mcporter-'));
    });
    afterEach(async () => {
      await remove();
    });

    it('finds nothing where no mcporter is installed, or where its bin climbs out of the package', async () => {
      expect(await locateMcporter({ from: path.join(root, 'a', 'b') })).toBeUndefined();
      await mkdir(path.join(root, 'node_modules', 'mcporter'), { recursive: true });
      await writeFile(path.join(root, 'node_modules', 'mcporter', 'package.json'), JSON.stringify({ name: 'mcporter', bin: { mcporter: '../../evil.js' } }));
      expect(await locateMcporter({ from: root })).toBeUndefined();
    });

    it('follows the package bin to the CLI', async () => {
      await mkdir(path.join(root, 'node_modules', 'mcporter'), { recursive: true });
      await writeFile(path.join(root, 'node_modules', 'mcporter', 'package.json'), JSON.stringify({ name: 'mcporter', bin: 'bin/run.js' }));
      const install = await locateMcporter({ from: path.join(root, 'dist', 'src') });
      expect(install?.cliPath).toBe(path.join(root, 'node_modules', 'mcporter', 'bin', 'run.js'));
      expect(install?.sandboxAdditions.commands[0]?.script).toContain('exec node /opt/turn-runtime/node_modules/mcporter/bin/run.js "$@"');
    });
  });
});

describe('mcporterCommand', () => {
  const install = { cliPath: '/srv/my app/node_modules/mcporter/dist/cli.js', sandboxAdditions: { readOnlyBinds: [], commands: [] } };

  it('is `mcporter` in a bubblewrap sandbox, the quoted CLI path on the bare host, and nothing without either', () => {
    expect(mcporterCommand({ install, sandbox: idleSandbox() })).toBe('mcporter');
    expect(mcporterCommand({ install, sandbox: idleSandbox({ kind: 'unsafe-host', homeInside: undefined }) })).toBe(
      `NODE_OPTIONS=--disable-wasm-trap-handler ${shellQuote(process.execPath)} '/srv/my app/node_modules/mcporter/dist/cli.js'`,
    );
    expect(mcporterCommand({ install, sandbox: undefined })).toBeUndefined();
    expect(mcporterCommand({ install: undefined, sandbox: idleSandbox() })).toBeUndefined();
  });
});
