import { htmlToText } from './html-to-text.js';

const ISO_DATE_PREFIX = /^(\d{4}-\d{2}-\d{2})(?:$|[T ])/;
const HAS_ZONE = /(?:\b(?:GMT|UTC)\b|Z$|[+-]\d{2}:?\d{2}$)/;
const MAX_RAW_LENGTH = 40;

/**
 * A provider's publication date as the model should read it: `YYYY-MM-DD` when it parses
 * (ISO 8601 as SearXNG and Brave's `page_age` send it, RFC 1123 as Tavily's news results
 * do), otherwise the provider's own short wording ("3 days ago"), or undefined when absent.
 */
export function normalizePublishedAt(raw: string | null | undefined): string | undefined {
  if (raw === null || raw === undefined) return undefined;
  const text = htmlToText(raw);
  if (text === '') return undefined;
  // Taken literally: a zone-less ISO timestamp must not shift a day through local time.
  const isoDate = ISO_DATE_PREFIX.exec(text)?.[1];
  if (isoDate !== undefined) return isoDate;
  const parsed = Date.parse(text);
  if (!Number.isNaN(parsed) && /\d{4}/.test(text)) {
    // `Date.parse` reads a zone-less "January 15, 2024" as local time, so read it back the same way.
    const date = new Date(parsed);
    return HAS_ZONE.test(text) ? date.toISOString().slice(0, 10) : localDate(date);
  }
  return text.length <= MAX_RAW_LENGTH ? text : undefined;
}

function localDate(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${String(date.getFullYear())}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}
