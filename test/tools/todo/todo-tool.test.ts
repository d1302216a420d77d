import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { resultText } from '../../../src/tools/tool-result.js';
import type { TodoItem, TodoStore } from '../../../src/store/todo-store.js';
import { createTodoTool } from '../../../src/tools/todo/todo-tool.js';

/** A TodoStore kept in a Map, as small as the contract allows. */
function createMapTodoStore(): TodoStore & { readonly lists: Map<string, readonly TodoItem[]> } {
  const lists = new Map<string, readonly TodoItem[]>();
  return {
    lists,
    readTodos: (agentId) => Promise.resolve(lists.get(agentId) ?? []),
    writeTodos: (agentId, items) => {
      lists.set(agentId, items);
      return Promise.resolve();
    },
  };
}

async function run(tool: ReturnType<typeof createTodoTool>, args: unknown, signal = new AbortController().signal) {
  const checked = tool.checkArguments(args);
  if (!checked.ok) throw new Error(`invalid arguments: ${JSON.stringify(checked.issues)}`);
  const result = await tool.execute(checked.params, {
    signal,
    callId: 'c1',
    logger: pino({ level: 'silent' }),
    present: () => {},
    reportStopped: () => {},
  });
  return {
    result,
    text: resultText(result.content),
    activity: tool.describeActivity(checked.params),
    completed: tool.describeCompletedActivity?.(checked.params, result),
  };
}

const five = [
  { content: 'Read the brief', status: 'completed' },
  { content: 'Collect the figures', status: 'completed' },
  { content: 'Draft the summary', status: 'in_progress' },
  { content: 'Check the numbers', status: 'pending' },
  { content: 'Send it', status: 'pending' },
] as const;

describe('todo', () => {
  it('renders the list with marks and progress, and labels the update', async () => {
    const store = createMapTodoStore();
    const tool = createTodoTool({ agentId: 'agent-1', store });
    const { text, result, activity, completed } = await run(tool, { items: five });
    expect(text).toBe(
      [
        'Todo list (2 of 5 done):',
        '[x] Read the brief',
        '[x] Collect the figures',
        '[~] Draft the summary',
        '[ ] Check the numbers',
        '[ ] Send it',
      ].join('\n'),
    );
    expect(activity).toBe('Updating the todo list');
    expect(completed).toBe('Todo list: 2 of 5 done');
    expect(result.details).toMatchObject({ total: 5, completed: 2, inProgress: 1, pending: 2 });
  });

  it('replaces the whole list for that agent only', async () => {
    const store = createMapTodoStore();
    store.lists.set('agent-2', [{ content: 'Someone else', status: 'pending' }]);
    const tool = createTodoTool({ agentId: 'agent-1', store });
    await run(tool, { items: five });
    await run(tool, { items: [{ content: 'Only this', status: 'in_progress' }] });
    expect(await store.readTodos('agent-1')).toEqual([{ content: 'Only this', status: 'in_progress' }]);
    expect(await store.readTodos('agent-2')).toEqual([{ content: 'Someone else', status: 'pending' }]);
  });

  it('refuses two items in progress, explaining why, and keeps the old list', async () => {
    const store = createMapTodoStore();
    const tool = createTodoTool({ agentId: 'agent-1', store });
    await run(tool, { items: five });
    await expect(
      run(tool, {
        items: [
          { content: 'One', status: 'in_progress' },
          { content: 'Two', status: 'in_progress' },
        ],
      }),
    ).rejects.toThrow(/2 items are in_progress, but at most one may be: the list should show the one thing you are working on now/);
    expect(await store.readTodos('agent-1')).toHaveLength(5);
  });

  it('clears the list with an empty one', async () => {
    const store = createMapTodoStore();
    const tool = createTodoTool({ agentId: 'agent-1', store });
    await run(tool, { items: five });
    const { text, completed } = await run(tool, { items: [] });
    expect(text).toBe('The todo list is now empty.');
    expect(completed).toBe('Todo list cleared');
    expect(await store.readTodos('agent-1')).toEqual([]);
  });

  it('trims item text and rejects lists and items out of bounds before running', () => {
    const tool = createTodoTool({ agentId: 'agent-1', store: createMapTodoStore() });
    const trimmed = tool.checkArguments({ items: [{ content: '  Tidy up  ', status: 'pending' }] });
    expect(trimmed.ok && trimmed.params.items[0]?.content).toBe('Tidy up');
    const item = { content: 'x', status: 'pending' };
    expect(tool.checkArguments({ items: Array.from({ length: 100 }, () => item) }).ok).toBe(true);
    expect(tool.checkArguments({ items: Array.from({ length: 101 }, () => item) }).ok).toBe(false);
    expect(tool.checkArguments({ items: [{ content: '   ', status: 'pending' }] }).ok).toBe(false);
    expect(tool.checkArguments({ items: [{ content: 'x'.repeat(501), status: 'pending' }] }).ok).toBe(false);
    expect(tool.checkArguments({ items: [{ content: 'x', status: 'done' }] }).ok).toBe(false);
    expect(tool.checkArguments({}).ok).toBe(false);
  });

  it('rejects with the abort reason when the signal is already aborted, storing nothing', async () => {
    const store = createMapTodoStore();
    const tool = createTodoTool({ agentId: 'agent-1', store });
    const reason = new Error('turn cancelled');
    await expect(run(tool, { items: five }, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(store.lists.size).toBe(0);
  });

  it('is sequential, not read-only and not destructive, and teaches when to use it', () => {
    const tool = createTodoTool({ agentId: 'agent-1', store: createMapTodoStore() });
    expect([tool.name, tool.executionMode, tool.isReadOnly, tool.isDestructive]).toEqual(['todo', 'sequential', false, false]);
    expect(tool.description).toMatch(/three or more distinct steps/);
    expect(JSON.stringify(tool.parameters)).toContain('"maxItems":100');
  });
});
