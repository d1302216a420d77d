import { hasOwn } from '../../../json.js';

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  ndash: '–',
  mdash: '—',
  hellip: '…',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  middot: '·',
  bull: '•',
  copy: '©',
  reg: '®',
  trade: '™',
};

// Only things that look like real markup: `<b>`, `</strong>`, `<br/>`, `<!-- … -->`.
// "a < b > c" has no tag name right after `<` and is left alone.
const SCRIPT_OR_STYLE = /<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
const COMMENT = /<!--[\s\S]*?(?:-->|$)/g;
// Block-level tags separate words; inline ones (`<strong>` in "Node</strong>.js") must not.
const BLOCK_TAG = /<\/?(?:address|article|aside|blockquote|br|dd|div|dl|dt|figcaption|footer|h[1-6]|header|hr|li|main|nav|ol|p|pre|section|table|td|th|tr|ul)\b[^<>]*>/gi;
const TAG = /<\/?[A-Za-z][^<>]*>/g;
const ENTITY = /&(#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/g;
// C0/C1 controls except tab/newline (turned into spaces below), plus bidi overrides that
// could make a snippet display differently from what it says.
// eslint-disable-next-line no-control-regex -- removing control characters is the point
const INVISIBLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u200B\u202A-\u202E\u2066-\u2069\uFEFF]/g;

/**
 * Turns a provider's display string (which may hold `<strong>` highlights and entities)
 * into one line of plain text: tags removed, entities decoded, whitespace collapsed.
 */
export function htmlToText(html: string): string {
  return html
    .replace(SCRIPT_OR_STYLE, ' ')
    .replace(COMMENT, ' ')
    .replace(BLOCK_TAG, ' ')
    .replace(TAG, '')
    .replace(ENTITY, decodeEntity)
    .replace(INVISIBLE, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function decodeEntity(entity: string, body: string): string {
  if (body.startsWith('#')) {
    const codePoint = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
    const isScalar = codePoint > 0 && codePoint <= 0x10ffff && (codePoint < 0xd800 || codePoint > 0xdfff);
    return isScalar ? String.fromCodePoint(codePoint) : '\uFFFD';
  }
  return hasOwn(NAMED_ENTITIES, body) ? (NAMED_ENTITIES[body] ?? entity) : entity;
}
