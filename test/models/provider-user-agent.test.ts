import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findPackageVersion } from '../../src/package-version.js';
import { useProviderRuntime } from '../support/provider-runtime.js';
import { runJsonTurn } from '../support/turn-waits.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { version } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };

describe('the user agent on provider requests', () => {
  const setup = useProviderRuntime();

  it("is turn-runtime/<package.json version> on every request of a real turn, not the SDK's", async () => {
    setup.provider.enqueue({ calls: [{ name: 'list_files', callId: 'call_l', arguments: '{}' }] }, { text: 'Listed.' });
    const turn = await runJsonTurn(setup.runtime, { agent: { id: 'user-agent', tools: { computer: true } }, input: 'list', model: { name: 'gpt-5.1' } });
    expect(turn.json).toMatchObject({ status: 'completed', output: 'Listed.' });
    expect(setup.provider.requests.map((request) => request.headers['user-agent'])).toEqual([`turn-runtime/${version}`, `turn-runtime/${version}`]);
  });
});

describe('findPackageVersion', () => {
  it('finds our package.json from the source depth and the compiled one, passing over other packages', () => {
    expect(findPackageVersion(path.join(repoRoot, 'src'))).toBe(version);
    // dist/src/ need not exist: the walk only reads the package.json files on the way up.
    expect(findPackageVersion(path.join(repoRoot, 'dist', 'src'))).toBe(version);
    // A dependency's own package.json, nearer, is not ours.
    expect(findPackageVersion(path.join(repoRoot, 'node_modules', 'openai', 'resources'))).toBe(version);
    expect(findPackageVersion(path.parse(repoRoot).root)).toBe('unknown');
  });
});
