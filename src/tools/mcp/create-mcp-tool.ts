import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../json.js';
import { defineWorkerTool, type WorkerAgentTool } from '../define-worker-tool.js';
import type { McpTaskStatus } from './call-mcp-task.js';
import { toMcpToolResult } from './to-mcp-tool-result.js';

/** One call of an MCP tool, as the tool hands it to its server's session. */
export interface McpToolCall {
  readonly tool: string;
  readonly arguments: JsonObject;
  readonly signal: AbortSignal;
  /** The server runs this tool only as a task (`execution.taskSupport: "required"`). */
  readonly asTask: boolean;
  /** Each status of a task call, as the server reports it. */
  readonly onTaskStatus: (status: McpTaskStatus) => void;
}

/** Sends one `tools/call` to the tool's server, under the call's signal. */
export type McpToolCaller = (call: McpToolCall) => Promise<CallToolResult>;

/** A tool description longer than this is cut: the model reads it on every request. */
const MAX_DESCRIPTION_CHARS = 4_000;

/**
 * One MCP tool as a deferred namespace tool of the turn. Its parameters are the server's
 * `inputSchema` exactly as sent (validated with its constraints before any call), and it
 * may run in parallel only when the server says it is read-only and not destructive. A tool
 * the server runs only as a task is called as one, its progress presented as it comes. Throws
 * `ToolDefinitionError` when the schema is not an object schema or does not compile.
 */
export function createMcpTool(options: {
  readonly server: string;
  readonly namespaceDescription: string;
  /** The name the model sees; the server is always called with `definition.name`. */
  readonly providerName: string;
  readonly definition: Tool;
  readonly inputSchema: JsonObject;
  readonly callTool: McpToolCaller;
}): WorkerAgentTool<JsonObject> {
  const { server, definition, callTool } = options;
  const original = definition.name;
  const { isReadOnly, isDestructive } = toolEffects(definition);
  const label = `${server}.${original}`;
  const asTask = definition.execution?.taskSupport === 'required';
  return defineWorkerTool<JsonObject>({
    name: options.providerName,
    description: describeTool(definition, server),
    jsonSchema: options.inputSchema,
    namespace: server,
    namespaceDescription: options.namespaceDescription,
    deferLoading: true,
    executionMode: isReadOnly && !isDestructive ? 'parallel' : 'sequential',
    isReadOnly,
    isDestructive,
    describeActivity: () => `Calling ${label}`,
    describeCompletedActivity: () => `Called ${label}`,
    execute: async (params, context) => {
      const result = await callTool({
        tool: original,
        arguments: params,
        signal: context.signal,
        asTask,
        // A task's progress is shown while it runs ("Analyzing content…").
        onTaskStatus: (status) => {
          context.present({ type: 'mcp.task_status', data: { ...status } });
        },
      });
      return toMcpToolResult({ server, tool: original, result });
    },
  });
}

/**
 * What the server's annotations promise. They are hints from the server, so the safe reading
 * wins: not read-only unless it says so, and (per the MCP spec) destructive unless a tool
 * that writes says it is not.
 */
export function toolEffects(definition: Tool): { isReadOnly: boolean; isDestructive: boolean } {
  const annotations = definition.annotations ?? {};
  const isReadOnly = annotations.readOnlyHint === true;
  const isDestructive = isReadOnly ? annotations.destructiveHint === true : annotations.destructiveHint !== false;
  return { isReadOnly, isDestructive };
}

function describeTool(definition: Tool, server: string): string {
  const text = (definition.description ?? '').trim() || (definition.title ?? definition.annotations?.title ?? '').trim() || `${definition.name} (a tool of the MCP server ${server})`;
  return text.length <= MAX_DESCRIPTION_CHARS ? text : `${text.slice(0, MAX_DESCRIPTION_CHARS - 1)}…`;
}
