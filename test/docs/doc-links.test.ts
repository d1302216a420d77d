import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fencedBlocks, headingAnchors, markdownLinks } from '../support/markdown.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOCS = path.join(ROOT, 'docs');
const pages = ['README.md', 'CONTRIBUTING.md', ...readdirSync(DOCS).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

function read(relative: string): string {
  return readFileSync(path.join(ROOT, relative), 'utf8');
}

/** Every relative link of one page that does not resolve: a missing file, or an anchor the target lacks. */
function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  for (const link of markdownLinks(read(page))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue;
    const [file = '', anchor] = link.target.split('#', 2);
    const target = file === '' ? page : path.normalize(path.join(path.dirname(page), decodeURIComponent(file)));
    if (target.startsWith('..') || !existsSync(path.join(ROOT, target))) {
      broken.push(`${page}:${String(link.line)}: ${link.target} (no file ${target})`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!target.endsWith('.md') || statSync(path.join(ROOT, target)).isDirectory()) {
      broken.push(`${page}:${String(link.line)}: ${link.target} (an anchor into a file that is not Markdown)`);
    } else if (!headingAnchors(read(target)).has(anchor)) {
      broken.push(`${page}:${String(link.line)}: ${link.target} (${target} has no heading #${anchor})`);
    }
  }
  return broken;
}

describe('the README and docs/', () => {
  it('link only to files and headings that exist', () => {
    expect(pages.flatMap(brokenLinks)).toEqual([]);
  });

  it('finds a broken link or anchor when there is one (the checker itself)', () => {
    const anchors = headingAnchors('# The API at a glance\n## Safe retries: `Idempotency-Key`\n## Safe retries: `Idempotency-Key`\n<a id="fetches"></a>\n```sh\n# not a heading\n```\n');
    expect([...anchors]).toEqual(['the-api-at-a-glance', 'safe-retries-idempotency-key', 'safe-retries-idempotency-key-1', 'fetches']);
    expect(markdownLinks('see [a](docs/a.md#x) and ![b](b.png)\n```\n[c](c.md)\n```\n`[d](d.md)`').map((link) => link.target)).toEqual(['docs/a.md#x', 'b.png']);
  });

  it('link every page in docs/ from the README', () => {
    const linked = new Set(markdownLinks(read('README.md')).map((link) => link.target.split('#')[0]));
    const unlinked = pages.filter((page) => page.startsWith('docs/') && !linked.has(page));
    expect(unlinked).toEqual([]);
  });

  it('start every page in docs/ with a title, then a sentence that says who it is for', () => {
    const without = pages
      .filter((page) => page.startsWith('docs/'))
      .filter((page) => {
        const [title, blank, first] = read(page).split('\n');
        return !title?.startsWith('# ') || blank !== '' || !/^For /.test(first ?? '');
      });
    expect(without).toEqual([]);
  });

  it('keep the README short enough to read in ten minutes, and point nowhere outside the repository', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(400);
    for (const page of pages) expect(read(page), page).not.toMatch(/shared\/(seed|api-contract|architecture|style)/);
    expect(fencedBlocks(readme).some((block) => block.body.includes('localhost:8080'))).toBe(false);
  });
});
