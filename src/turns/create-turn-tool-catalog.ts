import { createStaticToolCatalog, type ToolCatalog } from '../loop/tool-catalog.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import { toProviderTools } from './provider-tools.js';

/** The catalog for a turn's assembled tools. Throws `DuplicateToolError` on a clash of identities. */
export function createTurnToolCatalog(options: { readonly tools: readonly WorkerAgentTool[] }): ToolCatalog {
  return createStaticToolCatalog({ tools: options.tools, toProviderTools });
}
