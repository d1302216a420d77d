import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

export interface HtmlAsMarkdown {
  readonly title: string | undefined;
  readonly markdown: string;
  /** Readability found an article; otherwise the whole body was converted. */
  readonly article: boolean;
}

// The project compiles without the DOM lib, so linkedom's and Readability's DOM types do
// not resolve; these are the few members used here, as linkedom implements them.
interface PageElement {
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  remove(): void;
}

interface PageDocument {
  readonly title: string;
  readonly body: { readonly innerHTML: string } | null;
  querySelector(selectors: string): PageElement | null;
  querySelectorAll(selectors: string): Iterable<PageElement>;
}

const NOT_CONTENT = 'script, style, noscript, template, iframe, object, embed, svg, canvas, link, meta';
const UNSAFE_LINK = /^(?:javascript|vbscript|data|file):/i;

/**
 * The readable part of an HTML page as Markdown: Readability picks the article out of a
 * linkedom document, turndown writes it as Markdown. Links and images are made absolute
 * against the page's final URL (or its `<base>`), so they still work out of context; when
 * Readability finds no article, the whole body is converted instead.
 */
export function htmlToMarkdown(options: { readonly html: string; readonly url: string }): HtmlAsMarkdown {
  const document = parseDocument(options.html);
  const title = clean(document.title);
  for (const element of document.querySelectorAll(NOT_CONTENT)) element.remove();
  absolutizeLinks(document, options.url);
  // Readability rewrites the document it reads, so the fallback is taken first.
  const wholeBody = document.body?.innerHTML ?? '';

  const article = readArticle(document);
  const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
  const html = article?.content ?? wholeBody;
  return {
    title: article?.title ?? title,
    markdown: tidy(turndown.turndown(html)),
    article: article !== undefined,
  };
}

function parseDocument(html: string): PageDocument {
  // linkedom only builds <head> and <body> when the markup has an <html> element.
  const markup = /<html[\s>]/i.test(html) ? html : `<!DOCTYPE html><html><head></head><body>${html}</body></html>`;
  const { document } = parseHTML(markup) as unknown as { document: PageDocument };
  return document;
}

function readArticle(document: PageDocument): { title: string | undefined; content: string } | undefined {
  try {
    const article = new Readability(document, { maxElemsToParse: 200_000 }).parse();
    const content = article?.content ?? '';
    if (article === null || (article.textContent ?? '').trim() === '' || content === '') return undefined;
    return { title: clean(article.title ?? ''), content };
  } catch {
    // Readability gives up on some documents (too many elements, odd trees); the whole body still reads.
    return undefined;
  }
}

function absolutizeLinks(document: PageDocument, pageUrl: string): void {
  const base = baseUrl(document, pageUrl);
  for (const link of document.querySelectorAll('a[href]')) {
    const absolute = toAbsoluteUrl(link.getAttribute('href') ?? '', base);
    if (absolute === undefined) link.removeAttribute('href');
    else link.setAttribute('href', absolute);
  }
  for (const image of document.querySelectorAll('img')) {
    const absolute = toAbsoluteUrl(image.getAttribute('src') ?? '', base);
    // Inline data: images would flood the text with base64.
    if (absolute === undefined) image.remove();
    else image.setAttribute('src', absolute);
  }
}

function baseUrl(document: PageDocument, pageUrl: string): string {
  const declared = document.querySelector('base[href]')?.getAttribute('href');
  if (declared === null || declared === undefined) return pageUrl;
  const resolved = toAbsoluteUrl(declared, pageUrl);
  return resolved ?? pageUrl;
}

function toAbsoluteUrl(reference: string, base: string): string | undefined {
  const trimmed = reference.trim();
  if (trimmed === '' || UNSAFE_LINK.test(trimmed)) return undefined;
  try {
    const url = new URL(trimmed, base);
    return url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'mailto:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function clean(text: string): string | undefined {
  const collapsed = text.replace(/\s+/g, ' ').trim();
  return collapsed === '' ? undefined : collapsed;
}

function tidy(markdown: string): string {
  return markdown
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
