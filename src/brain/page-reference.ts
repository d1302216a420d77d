import { BRAIN_LIMITS } from './brain-page.js';

/** Letters of any script and digits, then also marks, `_`, `.` and `-`. */
const REFERENCE = /^[\p{L}\p{N}][\p{L}\p{N}\p{M}_.-]*$/u;

export type ReferenceCheck = { readonly ok: true; readonly reference: string } | { readonly ok: false; readonly problem: string };

/**
 * Checks a page reference from a caller or the model, NFC-normalised first so that the two
 * spellings of `é` name one page. A reference is a name inside one agent's pages, never a
 * path: `..`, slashes, NUL and the like are refused rather than cleaned.
 */
export function checkPageReference(raw: string): ReferenceCheck {
  const reference = raw.normalize('NFC');
  const length = Array.from(reference).length;
  if (length === 0) return { ok: false, problem: 'a page reference may not be empty' };
  if (length > BRAIN_LIMITS.referenceChars) return { ok: false, problem: `a page reference has at most ${BRAIN_LIMITS.referenceChars} characters (this one has ${length})` };
  if (!REFERENCE.test(reference) || reference.includes('..')) {
    return { ok: false, problem: 'a page reference starts with a letter or digit and holds only letters, digits, "_", "." and "-" (no "..")' };
  }
  return { ok: true, reference };
}

/**
 * A reference made from a title: `Vendor pricing (2026)` → `vendor-pricing-2026`,
 * `供应商价格` → `供应商价格`. At most 60 characters; `page` when nothing usable is left.
 */
export function referenceFromTitle(title: string): string {
  const slug = Array.from(
    title
      .normalize('NFKC')
      .toLowerCase()
      .replaceAll(/[^\p{L}\p{N}\p{M}]+/gu, '-')
      .replaceAll(/^-+|-+$/g, ''),
  )
    .slice(0, 60)
    .join('')
    .replace(/-+$/, '');
  const checked = checkPageReference(slug);
  return checked.ok ? checked.reference : 'page';
}
