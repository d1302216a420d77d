import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..', '..');
const read = (file: string): Promise<string> => readFile(path.join(root, file), 'utf8');

// A plain .mjs that old Nodes run, imported by URL: it has no types of its own.
const { isSupportedNode } = (await import(pathToFileURL(path.join(root, 'scripts', 'check-node.mjs')).href)) as { isSupportedNode: (version: string) => boolean };

/** package.json's `engines.node`, spelled out: the versions it takes and refuses. */
const ENGINES = '^22.19.0 || >=24';
const TAKEN = ['22.19.0', '22.23.5', '24.0.0', '24.22.3', '25.2.1', '26.12.1', '27.0.0'];
const REFUSED = ['18.20.8', '20.19.0', '20.20.2', '21.7.3', '22.0.0', '22.12.0', '22.18.9', '23.11.1'];

describe('the supported Node.js lines', () => {
  it('are the same in package.json and in scripts/check-node.mjs, which refuses the others before npm ci, start and test', async () => {
    const manifest = JSON.parse(await read('package.json')) as { engines: { node: string }; scripts: Record<string, string> };
    expect(manifest.engines.node).toBe(ENGINES);
    expect(TAKEN.filter((version) => !isSupportedNode(version))).toEqual([]);
    expect(REFUSED.filter((version) => isSupportedNode(version))).toEqual([]);
    for (const script of ['preinstall', 'prestart', 'pretest']) expect(manifest.scripts[script]).toBe('node scripts/check-node.mjs');
  });

  it('have 24 as the primary one: .node-version, the Docker image, and the lines CI tests besides it', async () => {
    const primary = (await read('.node-version')).trim();
    expect(primary).toMatch(/^24\.\d+\.\d+$/);
    expect(isSupportedNode(primary)).toBe(true);
    const images = [...(await read('Dockerfile')).matchAll(/^FROM (\S+)/gm)].map((match) => match[1]);
    expect(images).toEqual(['node:24-bookworm-slim', 'node:24-bookworm-slim']);
    const ci = await read('.ci/run');
    const others = /^OTHER_NODE_VERSIONS="([^"]*)"/m.exec(ci)?.[1]?.split(' ') ?? [];
    expect(others.map((version) => version.split('.')[0])).toEqual(['22', '26']);
    expect(others.filter((version) => !isSupportedNode(version))).toEqual([]);
  });
});
