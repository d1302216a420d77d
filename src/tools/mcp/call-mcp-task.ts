import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../json.js';

/** A task's state as the server last reported it, for the call's activity. */
export interface McpTaskStatus {
  readonly taskId: string;
  readonly status: string;
  readonly statusMessage?: string;
}

/**
 * Runs a tool the server only runs as a task (`execution.taskSupport: "required"`, MCP
 * 2025-11-25): `tools/call` with `task` creates it, then `tasks/get` is polled at the
 * server's `pollInterval` until the task ends and `tasks/result` brings the result. Each
 * status is handed to `onStatus`. When `signal` fires, the task is cancelled on the server
 * (`tasks/cancel`, best effort) and the call rejects at once.
 */
export async function callMcpTask(options: {
  readonly client: Client;
  readonly tool: string;
  readonly arguments: JsonObject;
  readonly signal: AbortSignal;
  /** Bounds each request of the exchange, not the whole task (the loop's tool timeout does that). */
  readonly requestTimeoutMs: number;
  readonly onStatus: (status: McpTaskStatus) => void;
}): Promise<CallToolResult> {
  const { client, signal } = options;
  let taskId: string | undefined;
  const cancel = () => {
    if (taskId !== undefined) void client.experimental.tasks.cancelTask(taskId, { timeout: options.requestTimeoutMs }).catch(() => undefined);
  };
  signal.addEventListener('abort', cancel, { once: true });
  try {
    const stream = client.experimental.tasks.callToolStream({ name: options.tool, arguments: options.arguments }, CallToolResultSchema, {
      task: {},
      signal,
      timeout: options.requestTimeoutMs,
    });
    for await (const message of stream) {
      switch (message.type) {
        case 'taskCreated':
        case 'taskStatus': {
          const { task } = message;
          taskId = task.taskId;
          if (signal.aborted) cancel();
          options.onStatus({ taskId: task.taskId, status: task.status, ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }) });
          break;
        }
        case 'result':
          return message.result;
        case 'error':
          throw message.error;
      }
    }
    throw new Error(`the task of ${options.tool} ended without a result`);
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}
