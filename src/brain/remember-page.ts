import { randomBytes } from 'node:crypto';
import type { BrainPage } from './brain-page.js';
import type { BrainStore } from './brain-store.js';
import { checkPageReference, referenceFromTitle } from './page-reference.js';
import { normalizeTags } from './page-input-schemas.js';

/** Tries of `<slug>-2`, `<slug>-3` … before a random suffix. */
const NUMBERED_TRIES = 20;

/**
 * Writes a page as `remember` does: with a reference, replaces (or creates) that page;
 * without, creates a new page under a reference made from the title (`vendor-pricing`,
 * then `vendor-pricing-2` …). Without a title, the content's first line is the title.
 */
export async function rememberPage(options: {
  readonly store: BrainStore;
  readonly agentId: string;
  readonly content: string;
  readonly title?: string | undefined;
  readonly tags?: readonly string[] | undefined;
  readonly reference?: string | undefined;
  readonly now: string;
}): Promise<{ page: BrainPage; created: boolean }> {
  const { store, agentId, now } = options;
  const title = (options.title ?? titleFromContent(options.content)).normalize('NFC');
  const fields = { title, content: options.content, tags: normalizeTags(options.tags) };
  if (options.reference !== undefined) {
    const checked = checkPageReference(options.reference);
    if (!checked.ok) throw new Error(`${checked.problem}. Leave reference out to create a new page.`);
    return store.putPage({ agentId, page: { reference: checked.reference, ...fields }, now });
  }
  const base = referenceFromTitle(title);
  for (let n = 1; n <= NUMBERED_TRIES + 1; n += 1) {
    const reference = n === 1 ? base : n <= NUMBERED_TRIES ? withSuffix(base, String(n)) : withSuffix(base, randomBytes(4).toString('hex'));
    const page = await store.createPage({ agentId, page: { reference, ...fields }, now });
    if (page !== undefined) return { page, created: true };
  }
  throw new Error(`too many pages are titled like “${title}”; give this one a more specific title`);
}

function withSuffix(base: string, suffix: string): string {
  return `${Array.from(base).slice(0, 120).join('')}-${suffix}`;
}

/** The first non-blank line, at most 80 characters. */
function titleFromContent(content: string): string {
  const line = content.split('\n').map((text) => text.trim()).find((text) => text !== '') ?? 'Untitled';
  const characters = Array.from(line.replace(/^#+\s*/, ''));
  return characters.length <= 80 ? characters.join('') : `${characters.slice(0, 79).join('')}…`;
}
