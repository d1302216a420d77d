import type { JsonObject } from '../json.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import { createTurnToolCatalog, type ToolSearchMode } from './create-turn-tool-catalog.js';

/**
 * The Responses API tool definitions of a turn's first request, in assembly order: in
 * `native` mode with namespaces, `defer_loading` and `{type:'tool_search'}`; in `emulated`
 * mode as plain functions, deferred tools hidden behind a synthesized `tool_search`. Each
 * `parameters` is the very object computed at definition time (a raw `jsonSchema` is passed
 * through as given). A catalog, not this list, is what a running turn uses: it can grow.
 */
export function toProviderTools(tools: readonly WorkerAgentTool[], mode: ToolSearchMode = 'emulated'): JsonObject[] {
  return [...createTurnToolCatalog({ tools, toolSearchMode: mode }).providerTools().tools];
}

/**
 * One entry of `GET /turns/:id/tools`: what the runtime knew about a tool it assembled. For a
 * deferred tool, `deferLoading` is true whatever the mode; `namespace` is the namespace of its
 * identity (`null` outside one), not the flattened name emulated mode shows.
 */
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
