import { describe, expect, it } from 'vitest';
import type { FetchedPage } from '../../../src/tools/web/fetch/fetched-page.js';
import { WebFetchCache } from '../../../src/tools/web/fetch/web-fetch-cache.js';
import { fakeClock } from './fixtures.js';

function page(url: string, text = 'text'): FetchedPage {
  return { requestedUrl: url, url, status: 200, mediaType: 'text/plain', kind: 'text', title: undefined, text, bytes: text.length, truncated: false, fetchedAt: '2026-01-15T09:00:00.000Z' };
}

describe('WebFetchCache', () => {
  it('serves a page for 15 minutes and reports its age', () => {
    const clock = fakeClock();
    const cache = new WebFetchCache({ clock });
    cache.set('https://example.com/a', page('https://example.com/a'));
    clock.advance(15 * 60 * 1000 - 1);
    expect(cache.get('https://example.com/a')).toMatchObject({ ageMs: 15 * 60 * 1000 - 1 });
    clock.advance(1);
    expect(cache.get('https://example.com/a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('treats URLs that differ only by fragment as the same page', () => {
    const cache = new WebFetchCache({ clock: fakeClock() });
    cache.set('https://example.com/a#intro', page('https://example.com/a'));
    expect(cache.get('https://example.com/a#usage')).toBeDefined();
    expect(cache.get('https://example.com/b')).toBeUndefined();
  });

  it('drops the least recently used page when full', () => {
    const cache = new WebFetchCache({ clock: fakeClock(), maxEntries: 2 });
    cache.set('https://example.com/1', page('https://example.com/1'));
    cache.set('https://example.com/2', page('https://example.com/2'));
    cache.get('https://example.com/1');
    cache.set('https://example.com/3', page('https://example.com/3'));
    expect(cache.get('https://example.com/2')).toBeUndefined();
    expect(cache.get('https://example.com/1')).toBeDefined();
    expect(cache.get('https://example.com/3')).toBeDefined();
  });

  it('stays under its byte budget and refuses a page larger than all of it', () => {
    const cache = new WebFetchCache({ clock: fakeClock(), maxBytes: 1_000 });
    cache.set('https://example.com/1', page('https://example.com/1', 'a'.repeat(400)));
    cache.set('https://example.com/2', page('https://example.com/2', 'b'.repeat(400)));
    cache.set('https://example.com/3', page('https://example.com/3', 'c'.repeat(400)));
    expect(cache.get('https://example.com/1')).toBeUndefined();
    expect(cache.size).toBe(2);
    cache.set('https://example.com/big', page('https://example.com/big', 'd'.repeat(2_000)));
    expect(cache.get('https://example.com/big')).toBeUndefined();
  });

  it('replaces the page stored for a URL', () => {
    const cache = new WebFetchCache({ clock: fakeClock() });
    cache.set('https://example.com/a', page('https://example.com/a', 'old'));
    cache.set('https://example.com/a', page('https://example.com/a', 'new'));
    expect(cache.get('https://example.com/a')?.page.text).toBe('new');
    expect(cache.size).toBe(1);
  });
});
