import type { JsonObject } from '../json.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';

/**
 * The Responses API tool definitions for a turn's tools, in assembly order. `parameters` is
 * the very object computed at definition time (a raw `jsonSchema` is passed through as given).
 */
export function toProviderTools(tools: readonly WorkerAgentTool[]): JsonObject[] {
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: tool.strict,
  }));
}

/** One entry of `GET /turns/:id/tools`: what the runtime knew about a tool it assembled. */
export interface ToolSnapshotEntry {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonObject;
  readonly strict: boolean;
  readonly namespace: string | null;
  readonly deferLoading: boolean;
  readonly executionMode: 'parallel' | 'sequential';
  readonly isReadOnly: boolean;
  readonly isDestructive: boolean;
  readonly schemaSource: 'zod' | 'json';
}

export function toToolSnapshot(tools: readonly WorkerAgentTool[]): ToolSnapshotEntry[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: tool.strict,
    namespace: tool.namespace ?? null,
    deferLoading: tool.deferLoading,
    executionMode: tool.executionMode,
    isReadOnly: tool.isReadOnly,
    isDestructive: tool.isDestructive,
    schemaSource: tool.schemaSource,
  }));
}
