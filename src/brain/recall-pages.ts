import { BRAIN_LIMITS, type BrainSearchHit } from './brain-page.js';
import type { BrainStore } from './brain-store.js';
import { estimateTokens } from './estimate-tokens.js';
import { makeSnippet } from './make-snippet.js';
import { toSearchQuery } from './search-terms.js';

/** One page of a recall: where it is, what it is, and the part that matched. */
export interface RecalledPage {
  readonly reference: string;
  readonly title: string;
  readonly snippet: string;
  readonly score: number;
  readonly tags: readonly string[];
  readonly updatedAt: string;
}

export interface Recall {
  /** The pages that fit the budget, best first. */
  readonly pages: readonly RecalledPage[];
  /** Pages that matched, including those left out for the budget. */
  readonly matched: number;
  /** The budget actually applied (clamped to the hard maximum). */
  readonly budgetTokens: number;
  /** The answer as the model reads it; its estimate never exceeds `budgetTokens`. */
  readonly text: string;
  readonly estimatedTokens: number;
}

/** Tokens one snippet may take at most, so that several pages fit a modest budget. */
const SNIPPET_TOKENS = 160;
/** Below this, a page is not worth listing with a snippet cut down to nothing. */
const MIN_SNIPPET_TOKENS = 12;

/**
 * Searches an agent's pages and answers within a token budget: the best pages first, each
 * with its reference, title, tags and a snippet around the matching terms, cut down (and
 * then left out) when the budget runs short. Budgets over the hard maximum are clamped.
 */
export async function recallPages(options: {
  readonly store: BrainStore;
  readonly agentId: string;
  readonly query: string;
  readonly budgetTokens?: number;
  readonly limit?: number;
}): Promise<Recall> {
  const budgetTokens = clampBudget(options.budgetTokens);
  const query = toSearchQuery(options.query);
  const { terms } = query;
  const hits = await options.store.searchPages({ agentId: options.agentId, query, limit: Math.min(options.limit ?? 10, BRAIN_LIMITS.maxResults) });
  const quoted = `“${options.query.replaceAll(/\s+/g, ' ').trim().slice(0, 80)}”`;
  if (hits.length === 0) {
    const text = withinBudget(`No page matches ${quoted}.`, 'No page matches.', budgetTokens);
    return { pages: [], matched: 0, budgetTokens, text, estimatedTokens: estimateTokens(text) };
  }

  // The header and footer are reserved with their longest wording; entries fill the rest.
  const header = (shown: number) => `${shown} of ${hits.length} matching pages for ${quoted}, best first. Read a whole page with get_page and its reference.`;
  const footer = (left: number) => (left === 0 ? '' : `\n\n(${left} more matching page${left === 1 ? '' : 's'} did not fit the budget of ${budgetTokens} tokens.)`);
  let remaining = budgetTokens - estimateTokens(header(hits.length)) - estimateTokens(footer(hits.length));
  const pages: RecalledPage[] = [];
  const entries: string[] = [];
  for (const hit of hits) {
    const entry = fitEntry({ hit, terms, maxTokens: remaining });
    if (entry === undefined) break;
    pages.push(entry.page);
    entries.push(entry.text);
    remaining -= entry.tokens;
  }
  const text =
    pages.length === 0
      ? withinBudget(
          `${hits.length} pages match ${quoted}, but the budget of ${budgetTokens} tokens holds none of them; ask again with a larger budget_tokens.`,
          `${hits.length} pages match, but none fits ${budgetTokens} tokens; raise budget_tokens.`,
          budgetTokens,
        )
      : [header(pages.length), ...entries].join('\n\n') + footer(hits.length - pages.length);
  return { pages, matched: hits.length, budgetTokens, text, estimatedTokens: estimateTokens(text) };
}

/** The text, or its shorter form when a long query would push it over the budget. */
function withinBudget(text: string, shorter: string, budgetTokens: number): string {
  return estimateTokens(text) <= budgetTokens ? text : shorter;
}

export function clampBudget(budgetTokens: number | undefined): number {
  return Math.min(Math.max(budgetTokens ?? BRAIN_LIMITS.defaultBudgetTokens, BRAIN_LIMITS.minBudgetTokens), BRAIN_LIMITS.maxBudgetTokens);
}

/**
 * The page's entry within `maxTokens` (the two newlines before it included), its snippet
 * shortened until it fits; undefined when not even a short snippet would.
 */
function fitEntry(options: { hit: BrainSearchHit; terms: readonly string[]; maxTokens: number }): { page: RecalledPage; text: string; tokens: number } | undefined {
  const { page, score } = options.hit;
  const heading = `[${page.reference}] ${page.title}${page.tags.length === 0 ? '' : ` (tags: ${page.tags.join(', ')})`} · updated ${page.updatedAt.slice(0, 10)}\n`;
  const fixed = estimateTokens(`\n\n${heading}`);
  let snippetTokens = Math.min(SNIPPET_TOKENS, options.maxTokens - fixed);
  if (snippetTokens < MIN_SNIPPET_TOKENS) return undefined;
  // Start from the most characters that many tokens could be, then shrink until the estimate fits.
  let maxChars = Math.ceil(snippetTokens * 3.5);
  for (let attempt = 0; attempt < 12; attempt += 1) {
    const snippet = makeSnippet({ text: page.content, terms: options.terms, maxChars });
    const tokens = estimateTokens(snippet);
    if (tokens <= snippetTokens) {
      return {
        page: { reference: page.reference, title: page.title, snippet, score: Math.round(score * 1e6) / 1e6, tags: page.tags, updatedAt: page.updatedAt },
        text: `${heading}${snippet}`,
        tokens: fixed + tokens,
      };
    }
    maxChars = Math.max(1, Math.floor((maxChars * snippetTokens) / tokens) - 2);
    snippetTokens = Math.min(snippetTokens, options.maxTokens - fixed);
  }
  return undefined;
}
