/** One of an agent's knowledge pages, as the tools and the HTTP API show it. */
export interface BrainPage {
  /** Names the page within its agent: letters of any script, digits, `-`, `_`, `.`. */
  readonly reference: string;
  readonly title: string;
  readonly content: string;
  readonly tags: readonly string[];
  readonly updatedAt: string;
}

/** What a writer gives for a page; the store adds `updatedAt`. */
export type BrainPageInput = Omit<BrainPage, 'updatedAt'>;

/** A page the full-text search found, with the store's rank (higher is better). */
export interface BrainSearchHit {
  readonly page: BrainPage;
  readonly score: number;
}

/** Bounds on what a page may hold, the same for the tools and the HTTP API. */
export const BRAIN_LIMITS = {
  referenceChars: 128,
  titleChars: 200,
  contentChars: 20_000,
  tags: 20,
  tagChars: 50,
  queryChars: 500,
  /** Terms of one query sent to the index; the rest are dropped. */
  queryTerms: 32,
  /** `recall`'s default and hard budget, in estimated tokens. */
  defaultBudgetTokens: 2_000,
  maxBudgetTokens: 12_000,
  minBudgetTokens: 50,
  /** Pages one search may answer. */
  maxResults: 50,
} as const;
