import { describe, expect, it } from 'vitest';
import { estimateTokens } from '../../src/brain/estimate-tokens.js';
import { makeSnippet } from '../../src/brain/make-snippet.js';
import { checkPageReference, referenceFromTitle } from '../../src/brain/page-reference.js';
import { toSearchQuery } from '../../src/brain/search-terms.js';

describe('page references', () => {
  it('accepts names in any script and normalises them to NFC', () => {
    expect(checkPageReference('vendor-pricing')).toEqual({ ok: true, reference: 'vendor-pricing' });
    expect(checkPageReference('供应商价格')).toEqual({ ok: true, reference: '供应商价格' });
    expect(checkPageReference('cafe\u0301')).toEqual({ ok: true, reference: 'caf\u00e9' });
    expect(checkPageReference('v1.2_notes')).toMatchObject({ ok: true });
  });

  it('refuses paths, dot segments, control characters and over-long names', () => {
    for (const hostile of ['', '../x', '..', 'a..b', '.env', '/etc/passwd', 'a/b', 'a\\b', 'a\u0000b', 'a b', '-x', 'x'.repeat(129), '😀', '__proto__']) {
      expect(checkPageReference(hostile).ok, JSON.stringify(hostile)).toBe(false);
    }
    expect(checkPageReference('x'.repeat(128)).ok).toBe(true);
  });

  it('makes references from titles', () => {
    expect(referenceFromTitle('Vendor pricing (2026)')).toBe('vendor-pricing-2026');
    expect(referenceFromTitle('供应商 价格')).toBe('供应商-价格');
    expect(referenceFromTitle('東京オフィスの案内')).toBe('東京オフィスの案内');
    expect(referenceFromTitle('?!…')).toBe('page');
    expect(Array.from(referenceFromTitle('word '.repeat(40))).length).toBeLessThanOrEqual(60);
  });
});

describe('search queries', () => {
  it('turns CJK runs of three or more characters into phrases of bigrams, and keeps every term', () => {
    expect(toSearchQuery('パスワード漏洩 and leaks')).toEqual({
      terms: ['パス', 'スワ', 'ワー', 'ード', 'ド漏', '漏洩', 'and', 'leak'],
      phrases: [['パス', 'スワ', 'ワー', 'ード', 'ド漏', '漏洩']],
    });
    expect(toSearchQuery('价格')).toEqual({ terms: ['价格'], phrases: [] });
    expect(toSearchQuery('"; DROP --')).toEqual({ terms: ['drop'], phrases: [] });
  });
});

describe('token estimates', () => {
  it('counts English by characters, CJK at 1.2 a character', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('a'.repeat(35))).toBe(10);
    expect(estimateTokens('供应商价格')).toBe(6);
    expect(estimateTokens('東京オフィス')).toBe(8);
    expect(estimateTokens('ｐｒｉｃｅ')).toBe(6);
    expect(estimateTokens('héllo wörld')).toBe(4);
  });
});

describe('snippets', () => {
  const text = `${'Filler sentence about nothing much. '.repeat(30)}The harbour crane lifts forty tonnes. ${'More filler text follows here. '.repeat(30)}`;

  it('shows the window holding the query terms, marked where text was cut', () => {
    const snippet = makeSnippet({ text, terms: ['crane', 'tonne'], maxChars: 120 });
    expect(snippet).toContain('harbour crane lifts forty tonnes');
    expect(snippet.startsWith('…')).toBe(true);
    expect(snippet.endsWith('…')).toBe(true);
    expect(snippet.length).toBeLessThanOrEqual(122);
  });

  it('finds Chinese terms inside unspaced text, and falls back to the beginning', () => {
    const chinese = `${'这是一段无关的文字。'.repeat(40)}华东供应商的报价是每吨三千二百元。${'其他内容。'.repeat(40)}`;
    expect(makeSnippet({ text: chinese, terms: ['报价'], maxChars: 40 })).toContain('报价');
    expect(makeSnippet({ text, terms: ['zebra'], maxChars: 30 })).toMatch(/^Filler sentence.*…$/);
    expect(makeSnippet({ text: 'short  text\n\nhere', terms: [], maxChars: 100 })).toBe('short text here');
  });

  it('never splits a surrogate pair', () => {
    const emoji = '😀'.repeat(50);
    const snippet = makeSnippet({ text: emoji, terms: [], maxChars: 7 });
    expect(snippet).toBe(`${'😀'.repeat(3)}…`);
  });
});
