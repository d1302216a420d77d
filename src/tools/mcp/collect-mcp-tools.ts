import type { Logger } from 'pino';
import { invalidRequest } from '../../service-error.js';
import type { WorkerAgentTool } from '../define-worker-tool.js';
import { describeMcpFailure } from './describe-mcp-failure.js';
import type { McpRegistry } from './mcp-registry.js';
import { McpUnavailableError } from './mcp-unavailable-error.js';

/**
 * The tools of the MCP servers an agent opted into (`agent.tools.mcp`), in the order it named
 * them, from the agent's own sessions. A name that is not configured is the caller's fault:
 * an `invalid_request` before any server is contacted. A configured server that is down,
 * slower than `signal` or past the session limits contributes nothing but one `mcp:<name>`
 * unavailable entry and one warning; the turn goes on.
 */
export async function collectMcpTools(options: {
  readonly names: readonly string[];
  /** The agent whose sessions serve the tools. */
  readonly agentId: string;
  readonly registry: McpRegistry;
  readonly signal: AbortSignal;
  readonly logger: Logger;
}): Promise<{ tools: WorkerAgentTool[]; unavailable: { source: string; reason: string }[] }> {
  const { names, agentId, registry, signal, logger } = options;
  const issues = names.flatMap((name, index) =>
    registry.has(name) ? [] : [{ path: ['agent', 'tools', 'mcp', index], message: `no MCP server named "${name}" is configured` }],
  );
  if (issues.length > 0) throw invalidRequest(issues);

  const unique = [...new Set(names)];
  const outcomes = await Promise.all(
    unique.map(async (name) => {
      try {
        return { name, tools: await registry.toolsFor(name, agentId, signal) };
      } catch (error) {
        return { name, reason: error instanceof McpUnavailableError ? error.message : describeMcpFailure(error) };
      }
    }),
  );
  const tools: WorkerAgentTool[] = [];
  const unavailable: { source: string; reason: string }[] = [];
  for (const outcome of outcomes) {
    if (outcome.tools !== undefined) {
      tools.push(...outcome.tools);
      continue;
    }
    unavailable.push({ source: `mcp:${outcome.name}`, reason: outcome.reason });
    logger.warn({ mcpServer: outcome.name }, `MCP server "${outcome.name}" is unavailable for this turn: ${outcome.reason}`);
  }
  return { tools, unavailable };
}
