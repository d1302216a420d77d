import type { Kysely } from 'kysely';
import type { Database } from './database-schema.js';
import type { TodoItem } from './todo-store.js';

/** Each agent's todo list, one row per agent (`TodoStore`). */
export async function readTodos(db: Kysely<Database>, agentId: string): Promise<readonly TodoItem[]> {
  const row = await db.selectFrom('todos').select('items_json').where('agent_id', '=', agentId).executeTakeFirst();
  return row === undefined ? [] : (JSON.parse(row.items_json) as TodoItem[]);
}

export async function writeTodos(db: Kysely<Database>, agentId: string, items: readonly TodoItem[]): Promise<void> {
  const itemsJson = JSON.stringify(items);
  const updatedAt = new Date().toISOString();
  await db
    .insertInto('todos')
    .values({ agent_id: agentId, items_json: itemsJson, updated_at: updatedAt })
    .onConflict((conflict) =>
      conflict.column('agent_id').doUpdateSet((eb) => ({
        items_json: itemsJson,
        updated_at: updatedAt,
        revision: eb('todos.revision', '+', 1),
      })),
    )
    .execute();
}
