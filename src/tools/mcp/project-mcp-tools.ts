import type { WorkerAgentTool } from '../define-worker-tool.js';
import { ToolDefinitionError } from '../tool-definition-error.js';
import { assignProviderToolNames } from './assign-provider-tool-names.js';
import { createMcpTool, type McpToolCaller } from './create-mcp-tool.js';
import type { McpToolListing } from './list-mcp-tools.js';
import type { McpSchemaInterner } from './mcp-schema-interner.js';

/** A projected tool and the definition it was built from, to reuse it when nothing changed. */
export interface ProjectedMcpTool {
  readonly key: string;
  readonly tool: WorkerAgentTool;
}

export interface ProjectedMcpTools {
  /** In the server's order. */
  readonly tools: readonly WorkerAgentTool[];
  /** By the tool's original name, for the next projection. */
  readonly byOriginalName: ReadonlyMap<string, ProjectedMcpTool>;
  readonly skipped: readonly { readonly tool: string; readonly reason: string }[];
}

/**
 * Builds a server's tools from its listing. A tool whose definition (name, description,
 * schema, annotations, namespace text) is unchanged since `previous` is the very same
 * object, so per-tool caches keyed on tool objects (the Tool Search index) stay warm across
 * turns, reconnects and list changes. A tool that cannot be defined is skipped, not fatal.
 */
export function projectMcpTools(options: {
  readonly server: string;
  readonly namespaceDescription: string;
  readonly listing: McpToolListing;
  readonly previous: ReadonlyMap<string, ProjectedMcpTool>;
  readonly callTool: McpToolCaller;
  /** The server's schemas, shared by its sessions: an equal schema is the same object, compiled once. */
  readonly schemas?: McpSchemaInterner;
}): ProjectedMcpTools {
  const { server, namespaceDescription, listing, previous } = options;
  const providerNames = assignProviderToolNames(listing.tools.map((listed) => listed.definition.name));
  const tools: WorkerAgentTool[] = [];
  const byOriginalName = new Map<string, ProjectedMcpTool>();
  const skipped = [...listing.skipped];
  for (const { definition, inputSchema } of listing.tools) {
    const providerName = providerNames.get(definition.name) ?? definition.name;
    const schemaText = JSON.stringify(inputSchema);
    const key = JSON.stringify([providerName, namespaceDescription, definition.description, definition.title, schemaText, definition.annotations, definition.execution?.taskSupport]);
    const known = previous.get(definition.name);
    if (known?.key === key) {
      tools.push(known.tool);
      byOriginalName.set(definition.name, known);
      continue;
    }
    try {
      const schema = options.schemas?.intern(inputSchema, schemaText) ?? inputSchema;
      const tool = createMcpTool({ server, namespaceDescription, providerName, definition, inputSchema: schema, callTool: options.callTool });
      tools.push(tool);
      byOriginalName.set(definition.name, { key, tool });
    } catch (error) {
      if (!(error instanceof ToolDefinitionError)) throw error;
      skipped.push({ tool: definition.name, reason: error.message });
    }
  }
  return { tools, byOriginalName, skipped };
}
