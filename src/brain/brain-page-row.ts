import type { BrainPage } from './brain-page.js';

/** A `brain_pages` row as both stores select it. */
export interface BrainPageRow {
  readonly reference: string;
  readonly title: string;
  readonly content: string;
  readonly tags_json: string;
  readonly updated_at: string;
}

export function toBrainPage(row: BrainPageRow): BrainPage {
  return { reference: row.reference, title: row.title, content: row.content, tags: JSON.parse(row.tags_json) as string[], updatedAt: row.updated_at };
}
