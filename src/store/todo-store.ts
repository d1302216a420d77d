/** One entry of an agent's todo list. */
export interface TodoItem {
  readonly content: string;
  readonly status: 'pending' | 'in_progress' | 'completed';
}

/** Where an agent's todo list is kept (the turn store implements it). */
export interface TodoStore {
  readTodos(agentId: string): Promise<readonly TodoItem[]>;
  writeTodos(agentId: string, items: readonly TodoItem[]): Promise<void>;
}
