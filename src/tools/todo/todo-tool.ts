import { z } from 'zod';
import { defineWorkerTool, type WorkerAgentTool } from '../define-worker-tool.js';
import type { AgentToolResult } from '../tool-result.js';
import type { TodoItem, TodoStore } from '../../store/todo-store.js';

export const TODO_MAX_ITEMS = 100;
export const TODO_MAX_CONTENT_CHARS = 500;

const todoSchema = z.object({
  items: z
    .array(
      z.object({
        content: z
          .string()
          .trim()
          .min(1)
          .max(TODO_MAX_CONTENT_CHARS)
          .describe('What the step is, as a short imperative sentence: "Summarise the Q3 report".'),
        status: z
          .enum(['pending', 'in_progress', 'completed'])
          .describe('pending: not started; in_progress: being worked on now (at most one item); completed: done.'),
      }),
    )
    .max(TODO_MAX_ITEMS)
    .describe(
      `The whole new list, in order, at most ${TODO_MAX_ITEMS} items. It replaces the previous list entirely: repeat the items you keep. An empty list clears it.`,
    ),
});

export type TodoParams = z.output<typeof todoSchema>;

const MARKS: Record<TodoItem['status'], string> = { completed: '[x]', in_progress: '[~]', pending: '[ ]' };

/** The todo tool: the agent's own plan for a multi-step task, replaced whole on every call. */
export function createTodoTool(options: { agentId: string; store: TodoStore }): WorkerAgentTool<TodoParams> {
  const { agentId, store } = options;
  return defineWorkerTool<TodoParams>({
    name: 'todo',
    description: [
      'Keep a todo list for the task at hand, to plan work with several steps and show progress.',
      'Use it when a request needs three or more distinct steps, or when the person gives you a list',
      'of things to do: write the steps down before you start, mark one item in_progress when you',
      'begin it, and mark it completed as soon as it is done (not in a batch at the end). Add steps',
      'you discover on the way and remove ones that no longer apply. Skip it for a single simple',
      'step or a plain question. Every call sends the whole list, which replaces the previous one;',
      `at most ${TODO_MAX_ITEMS} items and only one in_progress at a time. The list is returned as`,
      '"[x]" done, "[~]" in progress, "[ ]" pending.',
    ].join(' '),
    schema: todoSchema,
    executionMode: 'sequential',
    isReadOnly: false,
    isDestructive: false,
    describeActivity: () => 'Updating the todo list',
    describeCompletedActivity: (_params, result) => {
      const total = result.details?.['total'];
      const completed = result.details?.['completed'];
      if (typeof total !== 'number' || typeof completed !== 'number') return 'Updated the todo list';
      return total === 0 ? 'Todo list cleared' : `Todo list: ${completed} of ${total} done`;
    },
    async execute(params, context): Promise<AgentToolResult> {
      const { signal } = context;
      signal.throwIfAborted();
      const items: TodoItem[] = params.items.map(({ content, status }) => ({ content, status }));
      const active = items.filter((item) => item.status === 'in_progress');
      if (active.length > 1) {
        throw new Error(
          `${active.length} items are in_progress, but at most one may be: the list should show the one ` +
            'thing you are working on now. Mark the others pending (not started) or completed (done) and send the list again.',
        );
      }
      await store.writeTodos(agentId, items);
      // Stored: the result says so even if the turn was cancelled meanwhile, rather than
      // recording a change that happened as aborted (the file tools do the same).

      const completed = items.filter((item) => item.status === 'completed').length;
      const content =
        items.length === 0
          ? 'The todo list is now empty.'
          : [
              `Todo list (${completed} of ${items.length} done):`,
              ...items.map((item) => `${MARKS[item.status]} ${item.content}`),
            ].join('\n');
      return {
        content,
        details: {
          total: items.length,
          completed,
          inProgress: active.length,
          pending: items.length - completed - active.length,
          items: items.map((item) => ({ content: item.content, status: item.status })),
        },
      };
    },
  });
}
