import type { Logger } from 'pino';
import { createApplyPatchTool } from '../../tools/computer/apply-patch/apply-patch-tool.js';
import { createFileTools } from '../../tools/computer/create-file-tools.js';
import { createBrainTools } from '../../tools/brain/create-brain-tools.js';
import { createRunCommandTool } from '../../tools/computer/run-command.js';
import type { WorkerAgentTool } from '../../tools/define-worker-tool.js';
import { collectMcpTools } from '../../tools/mcp/collect-mcp-tools.js';
import { createUseSkillTool } from '../../tools/skills/create-use-skill-tool.js';
import { resolveRequestedSkills } from '../../tools/skills/resolve-requested-skills.js';
import { createTodoTool } from '../../tools/todo/todo-tool.js';
import type { TurnRequest } from '../turn-request.js';
import { createWorkflowTools, type WorkflowToolTurn } from '../../workflows/tools/create-workflow-tools.js';
import type { ToolServices, UnavailableSource } from './tool-services.js';
import { createWebTools } from './create-web-tools.js';

export interface AssembledTools {
  readonly tools: readonly WorkerAgentTool[];
  readonly unavailable: readonly UnavailableSource[];
}

/** Sources this server has no backend for yet: accepted in requests, contributing nothing. */
const UNSERVED_SOURCES = [
  ['schedule', 'this server has no schedule backend'],
  ['backgroundJobs', 'this server has no background job backend'],
] as const;

/**
 * The main text turn's tools, built from the agent context in a fixed order: todo, computer,
 * web, then the rest. Explicit on purpose: a tool is available because it is in this array.
 */
export async function assembleTextTurnTools(options: {
  readonly agent: TurnRequest['agent'];
  readonly home: string;
  readonly services: ToolServices;
  /** The turn itself, for tools that start work on its behalf (workflows). */
  readonly turn?: WorkflowToolTurn;
  /** Bounds the time sources (MCP servers) may take to answer. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
}): Promise<AssembledTools> {
  const { agent, home, services } = options;
  const sources = agent.tools ?? {};
  const tools: WorkerAgentTool[] = [];
  const unavailable: UnavailableSource[] = [];
  // Checked first: an unknown skill is a 400 before any MCP server is contacted.
  const skills = resolveRequestedSkills({ names: sources.skills ?? [], catalog: services.skills.catalog });

  if (sources.todo === true) tools.push(createTodoTool({ agentId: agent.id, store: services.todoStore }));
  if (sources.computer === true) {
    // What the file tools create belongs to the sandbox user, so commands can change it.
    const files = { home, owner: services.sandbox?.homeOwner, homeMaxBytes: services.commandSettings.homeMaxBytes };
    tools.push(...createFileTools(files), createApplyPatchTool(files));
    if (services.sandbox === undefined) {
      unavailable.push({ source: 'computer.run_command', reason: 'this server has no working command sandbox (bubblewrap)' });
    } else {
      tools.push(createRunCommandTool({ home, sandbox: services.sandbox, settings: services.commandSettings }));
    }
  }
  if (sources.web === true) {
    const web = createWebTools({ agentId: agent.id, home, services });
    tools.push(...web.tools);
    unavailable.push(...web.unavailable);
  }
  if (sources.mcp !== undefined && sources.mcp.length > 0) {
    const mcp = await collectMcpTools({ names: sources.mcp, registry: services.mcp, signal: options.signal, logger: options.logger });
    tools.push(...mcp.tools);
    unavailable.push(...mcp.unavailable);
  }
  if (skills.length > 0) {
    const computer = sources.computer === true ? { sandbox: services.sandbox, mcporterCommand: services.skills.mcporterCommand } : undefined;
    tools.push(createUseSkillTool({ skills, home, computer }));
  }
  if (sources.brain === true) tools.push(...createBrainTools({ agentId: agent.id, store: services.brain, clock: services.clock, readOnly: false }));
  if (sources.workflows === true) {
    if (services.workflows === undefined || options.turn === undefined) unavailable.push({ source: 'workflows', reason: 'this server has no workflow backend' });
    else tools.push(...createWorkflowTools({ engine: services.workflows, turn: options.turn }));
  }
  for (const [source, reason] of UNSERVED_SOURCES) {
    if (sources[source] === true) unavailable.push({ source, reason });
  }
  return { tools, unavailable };
}
