import { describe, expect, it } from 'vitest';
import { htmlToText } from '../../../src/tools/web/search/html-to-text.js';
import { normalizePublishedAt } from '../../../src/tools/web/search/normalize-published-at.js';
import { normalizeResultUrl } from '../../../src/tools/web/search/normalize-result-url.js';
import { redactSecrets } from '../../../src/tools/web/search/redact-secrets.js';

describe('htmlToText', () => {
  it.each([
    ['<strong>Bun</strong> is fast', 'Bun is fast'],
    ['a &amp; b &lt;c&gt; &quot;d&quot; &#39;e&#39; &apos;f&apos;', 'a & b <c> "d" \'e\' \'f\''],
    ['4&#215; faster &#x1F680;', '4× faster 🚀'],
    ['line one<br/>line\n\ttwo', 'line one line two'],
    ['keep a < b > c as text', 'keep a < b > c as text'],
    ['x<script>alert(1)</script>y<style>p{}</style>z', 'x y z'],
    ['before<!-- hidden -->after', 'before after'],
    ['&unknown; &amp', '&unknown; &amp'],
    ['&#0; &#xD800; &#99999999;', '\uFFFD \uFFFD &#99999999;'],
    ['safe\u202Eexe.txt\u0000\u0007', 'safeexe.txt'],
    ['&#8238;reversed', 'reversed'],
    ['&lt;script&gt;alert(1)&lt;/script&gt;', '<script>alert(1)</script>'],
  ])('turns %j into %j', (html, text) => {
    expect(htmlToText(html)).toBe(text);
  });

  it('does not treat __proto__ as an entity name', () => {
    expect(htmlToText('&__proto__; &constructor;')).toBe('&__proto__; &constructor;');
  });
});

describe('normalizePublishedAt', () => {
  it.each([
    ['2024-05-01T10:12:00', '2024-05-01'],
    ['2024-05-01T23:30:00-05:00', '2024-05-01'],
    ['2024-05-01', '2024-05-01'],
    ['Fri, 08 Sep 2023 14:02:11 GMT', '2023-09-08'],
    ['May 1, 2024', '2024-05-01'],
    ['3 days ago', '3 days ago'],
    ['', undefined],
    ['x'.repeat(80), undefined],
  ])('reads %j as %j', (raw, expected) => {
    expect(normalizePublishedAt(raw)).toBe(expected);
  });

  it('reads null and absence as no date', () => {
    expect(normalizePublishedAt(null)).toBeUndefined();
    expect(normalizePublishedAt(undefined)).toBeUndefined();
  });
});

describe('normalizeResultUrl', () => {
  it('ignores what does not change the page', () => {
    const key = normalizeResultUrl('https://example.com/guide');
    for (const same of [
      'http://example.com/guide',
      'https://www.example.com/guide/',
      'https://EXAMPLE.com:443/guide#install',
      'https://example.com/guide?utm_source=x&fbclid=y',
    ]) {
      expect(normalizeResultUrl(same)).toBe(key);
    }
  });

  it('tells different pages apart', () => {
    expect(normalizeResultUrl('https://example.com/guide?page=2')).not.toBe(normalizeResultUrl('https://example.com/guide'));
    expect(normalizeResultUrl('https://example.com/Guide')).not.toBe(normalizeResultUrl('https://example.com/guide'));
    expect(normalizeResultUrl('https://example.com:8443/guide')).not.toBe(normalizeResultUrl('https://example.com/guide'));
  });

  it('treats parameter order as irrelevant', () => {
    expect(normalizeResultUrl('https://example.com/s?b=2&a=1')).toBe(normalizeResultUrl('https://example.com/s?a=1&b=2'));
  });

  it('has no key for what is not an http(s) URL', () => {
    expect(normalizeResultUrl('javascript:alert(1)')).toBeUndefined();
    expect(normalizeResultUrl('not a url')).toBeUndefined();
    expect(normalizeResultUrl('ftp://example.com/file')).toBeUndefined();
  });
});

describe('redactSecrets', () => {
  it('hides every occurrence, verbatim or percent-encoded, and ignores empty secrets', () => {
    expect(redactSecrets('k=a+b/c; again a+b/c; url a%2Bb%2Fc', ['a+b/c', ''])).toBe('k=[redacted]; again [redacted]; url [redacted]');
  });
});
