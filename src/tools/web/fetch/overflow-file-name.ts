import { createHash } from 'node:crypto';

/**
 * A file name for a page's full text: a readable slug of the URL plus a hash of the URL
 * *and the text*, so one name always holds one content. `example.com/docs/intro` →
 * `example.com-docs-intro-3f9a2c1b7e.md`. Only `[a-z0-9.-]`, never starting with a dot.
 */
export function overflowFileName(options: { readonly url: string; readonly text: string; readonly extension: 'md' | 'json' | 'txt' }): string {
  let readable: string;
  try {
    const parsed = new URL(options.url);
    readable = `${parsed.host}${parsed.pathname}`;
  } catch {
    readable = options.url;
  }
  const slug =
    readable
      .toLowerCase()
      .replace(/[^a-z0-9.]+/g, '-')
      .replace(/\.{2,}/g, '.')
      .replace(/^[-.]+|[-.]+$/g, '')
      .slice(0, 60)
      .replace(/[-.]+$/, '') || 'page';
  const hash = createHash('sha256').update(options.url).update('\0').update(options.text).digest('hex').slice(0, 10);
  return `${slug}-${hash}.${options.extension}`;
}
