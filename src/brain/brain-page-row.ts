import type { Kysely } from 'kysely';
import type { BrainPage } from './brain-page.js';
import type { BrainTables } from './brain-tables.js';

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

/** One agent's page by reference, the same on both databases; undefined when it has none. */
export async function selectBrainPage(db: Kysely<BrainTables>, options: { readonly agentId: string; readonly reference: string }): Promise<BrainPage | undefined> {
  const row = await db
    .selectFrom('brain_pages')
    .select(['reference', 'title', 'content', 'tags_json', 'updated_at'])
    .where('agent_id', '=', options.agentId)
    .where('reference', '=', options.reference)
    .executeTakeFirst();
  return row === undefined ? undefined : toBrainPage(row);
}
