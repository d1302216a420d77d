import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { environmentSchema } from '../../src/config/environment-schema.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The variables named in the first column of a page's tables (`| \`NAME\`, \`OTHER\` | …`). */
function documentedVariables(relative: string): Set<string> {
  const names = new Set<string>();
  for (const line of readFileSync(path.join(ROOT, relative), 'utf8').split('\n')) {
    const firstCell = /^\|([^|]+)\|/.exec(line)?.[1] ?? '';
    for (const match of firstCell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(match[1] ?? '');
  }
  return names;
}

describe('the configuration pages', () => {
  const known = Object.keys(environmentSchema.shape);

  it('document every variable the service reads, in docs/configuration.md', () => {
    const documented = documentedVariables('docs/configuration.md');
    expect(known.filter((name) => !documented.has(name))).toEqual([]);
  });

  it('name only variables the service reads, in docs/configuration.md and the README', () => {
    const stray = [...documentedVariables('docs/configuration.md'), ...documentedVariables('README.md')].filter((name) => /^[A-Z]+_[A-Z0-9_]+$|^[A-Z]{4,}$/.test(name) && !known.includes(name));
    expect(stray).toEqual([]);
  });
});
