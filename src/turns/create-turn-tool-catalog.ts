import { ServiceError } from '../service-error.js';
import type { ToolCatalog } from '../tools/tool-catalog.js';
import { DuplicateToolError } from '../tools/tool-map.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import { createEmulatedToolCatalog } from '../tools/tool-search/create-emulated-tool-catalog.js';
import { createNativeToolCatalog } from '../tools/tool-search/create-native-tool-catalog.js';
import type { TurnRequest } from './turn-request.js';

/**
 * How namespaces and deferred tools reach the model. `native`: Responses `namespace` tools,
 * `defer_loading` and the provider's own `tool_search`. `emulated`: plain functions only, and
 * a synthesized `tool_search` function that loads deferred tools into later requests — what
 * any OpenAI-compatible endpoint understands.
 */
export type ToolSearchMode = 'native' | 'emulated';

/**
 * The mode for a turn's model. The scripted model plays a generic endpoint and never runs a
 * search itself, so it is always emulated; the configured provider uses the configured mode.
 */
export function resolveToolSearchMode(options: { readonly model: TurnRequest['model']; readonly configured: ToolSearchMode }): ToolSearchMode {
  return 'script' in options.model ? 'emulated' : options.configured;
}

/** The catalog for a turn's assembled tools. Throws `DuplicateToolError` on a clash of identities or provider names. */
export function createTurnToolCatalog(options: { readonly tools: readonly WorkerAgentTool[]; readonly toolSearchMode: ToolSearchMode }): ToolCatalog {
  return options.toolSearchMode === 'native' ? createNativeToolCatalog({ tools: options.tools }) : createEmulatedToolCatalog({ tools: options.tools });
}

/** A planned turn's catalog in the mode for its model; two tools with one identity is the server's fault (a 500 that says which). */
export function catalogForTurn(options: { readonly tools: readonly WorkerAgentTool[]; readonly model: TurnRequest['model']; readonly configured: ToolSearchMode }): ToolCatalog {
  try {
    return createTurnToolCatalog({ tools: options.tools, toolSearchMode: resolveToolSearchMode({ model: options.model, configured: options.configured }) });
  } catch (error) {
    if (error instanceof DuplicateToolError) throw new ServiceError({ statusCode: 500, code: 'tool_assembly_failed', message: error.message });
    throw error;
  }
}
