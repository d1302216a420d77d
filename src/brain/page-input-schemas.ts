import { z } from 'zod';
import { BRAIN_LIMITS } from './brain-page.js';

const noNul = (text: string) => !text.includes('\u0000');
const NUL_MESSAGE = 'must not contain NUL characters';

/** A page's title: trimmed, 1–200 characters. */
export const pageTitleSchema = z.string().trim().min(1).max(BRAIN_LIMITS.titleChars).refine(noNul, NUL_MESSAGE);

/** A page's text: 1–20,000 characters (UTF-16 code units). */
export const pageContentSchema = z.string().min(1).max(BRAIN_LIMITS.contentChars).refine(noNul, NUL_MESSAGE).refine((text) => text.trim() !== '', 'must not be blank');

/** Up to 20 tags of 1–50 characters each. */
export const pageTagsSchema = z.array(z.string().trim().min(1).max(BRAIN_LIMITS.tagChars).refine(noNul, NUL_MESSAGE)).max(BRAIN_LIMITS.tags);

/** Tags as stored: each once (compared without case), in the order given. */
export function normalizeTags(tags: readonly string[] | undefined): string[] {
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const tag of tags ?? []) {
    const key = tag.normalize('NFKC').toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push(tag.normalize('NFC'));
  }
  return kept;
}
