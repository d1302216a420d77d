import { describe, expect, it } from 'vitest';
import { allocateBudgets } from '../../../src/tools/web/fetch/allocate-budgets.js';
import { decodeText } from '../../../src/tools/web/fetch/decode-text.js';
import { fitToBudget } from '../../../src/tools/web/fetch/fit-to-budget.js';
import { formatJson } from '../../../src/tools/web/fetch/format-json.js';
import { htmlToMarkdown } from '../../../src/tools/web/fetch/html-to-markdown.js';
import { overflowFileName } from '../../../src/tools/web/fetch/overflow-file-name.js';

describe('formatJson', () => {
  it('indents without changing any token', () => {
    expect(formatJson('{"big":9007199254740993,"s":"a{b}[c],\\"d\\":e","n":[],"o":{},"f":1.50e+3}')).toBe(
      '{\n  "big": 9007199254740993,\n  "s": "a{b}[c],\\"d\\":e",\n  "n": [],\n  "o": {},\n  "f": 1.50e+3\n}',
    );
  });

  it('returns undefined for text that is not JSON', () => {
    expect(formatJson('{"cut": ')).toBeUndefined();
    expect(formatJson('<html>')).toBeUndefined();
  });
});

describe('htmlToMarkdown', () => {
  it('reads a fragment with no <html> element', () => {
    expect(htmlToMarkdown({ html: '<p>Just <b>this</b></p>', url: 'https://example.com/' }).markdown).toBe('Just **this**');
    expect(htmlToMarkdown({ html: 'plain words', url: 'https://example.com/' }).markdown).toBe('plain words');
  });

  it('resolves links against <base href> and drops script links and data: images', () => {
    const { markdown } = htmlToMarkdown({
      html: '<html><head><base href="/docs/"></head><body><p><a href="intro">Intro</a> <a href="javascript:steal()">bad</a> <img src="data:image/png;base64,AAAA" alt="inline"> <img src="pic.png" alt="pic"></p></body></html>',
      url: 'https://example.com/a/b',
    });
    expect(markdown).toContain('[Intro](https://example.com/docs/intro)');
    expect(markdown).toContain('![pic](https://example.com/docs/pic.png)');
    expect(markdown).not.toContain('javascript');
    expect(markdown).not.toContain('data:');
  });

  it('never returns script or style text', () => {
    const { markdown } = htmlToMarkdown({ html: '<html><body><script>var token="X1"</script><style>p{}</style><noscript>enable js</noscript><p>Visible</p></body></html>', url: 'https://example.com/' });
    expect(markdown).toBe('Visible');
  });
});

describe('decodeText', () => {
  it('honours the declared charset, then a <meta charset>, then UTF-8', () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9]);
    expect(decodeText({ body: latin1, charset: 'iso-8859-1', html: false })).toBe('café');
    const html = Buffer.concat([Buffer.from('<meta charset="windows-1252"><p>'), latin1]);
    expect(decodeText({ body: html, charset: undefined, html: true })).toContain('café');
    expect(decodeText({ body: Buffer.from('café'), charset: 'no-such-charset', html: false })).toBe('café');
  });
});

describe('fitToBudget', () => {
  it('cuts at a line break and names the first line left out', () => {
    const fitted = fitToBudget('one\ntwo\nthree\nfour\n', 12);
    expect(fitted).toEqual({ shown: 'one\ntwo\n', complete: false, nextLine: 3, nextCharacter: 8 });
  });

  it('never splits a surrogate pair', () => {
    const fitted = fitToBudget(`${'a'.repeat(9)}😀tail`, 10);
    expect(fitted.shown).toBe('a'.repeat(9));
  });
});

describe('allocateBudgets', () => {
  it('gives what short texts do not need to the long ones', () => {
    expect(allocateBudgets([100, 10_000, 0, 10_000], 3_000)).toEqual([100, 1_450, 0, 1_450]);
  });
});

describe('overflowFileName', () => {
  it.each(['https://example.com/../../etc/passwd', 'https://example.com/%2e%2e%2f%2e%2e/x', 'http://[::1]:8080/a b?c=d', 'https://.../...', 'https://example.com/'])(
    'makes a plain, safe name from %s',
    (url) => {
      const name = overflowFileName({ url, text: 'body', extension: 'md' });
      expect(name).toMatch(/^[a-z0-9][a-z0-9.-]*-[0-9a-f]{10}\.md$/);
      expect(name).not.toContain('..');
      expect(name).not.toContain('/');
    },
  );

  it('names different content differently', () => {
    const url = 'https://example.com/page';
    expect(overflowFileName({ url, text: 'one', extension: 'md' })).not.toBe(overflowFileName({ url, text: 'two', extension: 'md' }));
  });
});
