import type { BrainPage, BrainPageInput, BrainSearchHit } from './brain-page.js';
import type { SearchQuery } from './search-terms.js';

/**
 * Where each agent's knowledge pages live: a table in the turn store with the database's own
 * full-text index (FTS5 on SQLite, a tsvector on PostgreSQL). Every method is scoped to one
 * agent; no call can read, find or change another agent's pages.
 */
export interface BrainStore {
  /**
   * Creates or replaces the page; `created` is true when no page had that reference. A new
   * page past the agent's cap is `409 brain_full` (checked with the insert, so concurrent
   * writers cannot pass it between them).
   */
  putPage(options: { readonly agentId: string; readonly page: BrainPageInput; readonly now: string }): Promise<{ page: BrainPage; created: boolean }>;
  /** Creates the page only if its reference is free; undefined when it is taken; `brain_full` past the cap. */
  createPage(options: { readonly agentId: string; readonly page: BrainPageInput; readonly now: string }): Promise<BrainPage | undefined>;
  getPage(options: { readonly agentId: string; readonly reference: string }): Promise<BrainPage | undefined>;
  /** True when a page was deleted. */
  deletePage(options: { readonly agentId: string; readonly reference: string }): Promise<boolean>;
  /** The pages that match any term of the query (see `toSearchQuery`), best first. */
  searchPages(options: { readonly agentId: string; readonly query: SearchQuery; readonly limit: number }): Promise<BrainSearchHit[]>;
  /** The most recently updated pages first. */
  listPages(options: { readonly agentId: string; readonly limit: number }): Promise<BrainPage[]>;
}
