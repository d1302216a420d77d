import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { isJsonObject, type JsonObject } from '../../json.js';
import { formatIssuePath } from '../schema/format-issue-path.js';

/** One tool as the server listed it: its parsed definition and its input schema as sent. */
export interface ListedMcpTool {
  readonly definition: Tool;
  /** The server's `inputSchema` object itself (decoded JSON), not a re-parsed copy. */
  readonly inputSchema: JsonObject;
}

export interface McpToolListing {
  readonly tools: readonly ListedMcpTool[];
  /** Tools left out, with why: a malformed definition, a name listed twice. */
  readonly skipped: readonly { readonly tool: string; readonly reason: string }[];
}

/** Pages of `tools/list` followed at most; a server that keeps paging is cut off there. */
const MAX_PAGES = 20;
/** Tools taken from one server at most: each is compiled and indexed, and one server must not crowd out the rest. */
const MAX_TOOLS = 500;

// Each tool is checked on its own below: the SDK's `listTools` refuses the whole listing
// when one tool is malformed, and one bad tool must not take its siblings with it.
const looseListing = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** Lists every tool of a connected server (following pages), keeping the valid ones. */
export async function listMcpTools(options: { readonly client: Client; readonly timeoutMs: number }): Promise<McpToolListing> {
  const tools: ListedMcpTool[] = [];
  const skipped: { tool: string; reason: string }[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const result = await options.client.request(
      { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
      looseListing,
      { timeout: options.timeoutMs },
    );
    for (const raw of result.tools) {
      if (tools.length >= MAX_TOOLS) {
        skipped.push({ tool: '(more)', reason: `the server lists more than ${MAX_TOOLS} tools; the rest are left out` });
        return { tools, skipped };
      }
      const name = isJsonObject(raw) && typeof raw['name'] === 'string' ? raw['name'] : '(unnamed)';
      const parsed = ToolSchema.safeParse(raw);
      if (!parsed.success || !isJsonObject(raw) || !isJsonObject(raw['inputSchema'])) {
        const issue = parsed.success ? undefined : parsed.error.issues[0];
        skipped.push({ tool: name, reason: issue === undefined ? 'malformed definition' : `malformed definition: ${formatIssuePath(issue.path)}: ${issue.message}` });
        continue;
      }
      if (seen.has(parsed.data.name)) {
        skipped.push({ tool: name, reason: 'the server listed this name more than once' });
        continue;
      }
      seen.add(parsed.data.name);
      tools.push({ definition: parsed.data, inputSchema: raw['inputSchema'] });
    }
    cursor = result.nextCursor;
    if (cursor === undefined) return { tools, skipped };
  }
  skipped.push({ tool: '(more)', reason: `the server listed more than ${MAX_PAGES} pages of tools; the rest are left out` });
  return { tools, skipped };
}
