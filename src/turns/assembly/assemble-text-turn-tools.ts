import type { Logger } from 'pino';
import { createApplyPatchTool } from '../../tools/computer/apply-patch/apply-patch-tool.js';
import { createFileTools } from '../../tools/computer/create-file-tools.js';
import { createRunCommandTool } from '../../tools/computer/run-command.js';
import type { WorkerAgentTool } from '../../tools/define-worker-tool.js';
import { collectMcpTools } from '../../tools/mcp/collect-mcp-tools.js';
import { createUseSkillTool } from '../../tools/skills/create-use-skill-tool.js';
import { resolveRequestedSkills } from '../../tools/skills/resolve-requested-skills.js';
import { createTodoTool } from '../../tools/todo/todo-tool.js';
import type { TurnRequest } from '../turn-request.js';
import type { FeatureToolKey, ToolSourceTurn } from './tool-source.js';
import type { ToolServices } from './tool-services.js';
import type { UnavailableSource } from './tool-source.js';
import { createWebTools } from './create-web-tools.js';

export interface AssembledTools {
  readonly tools: readonly WorkerAgentTool[];
  readonly unavailable: readonly UnavailableSource[];
}

/**
 * The main text turn's tools, built from the agent context in a fixed order: todo, computer,
 * web, then the rest. Explicit on purpose: a tool is available because it is in this array.
 */
export async function assembleTextTurnTools(options: {
  readonly agent: TurnRequest['agent'];
  /** The turn being assembled: work its tools start (workflows, jobs, schedules) inherits its model and webhook. */
  readonly turn: ToolSourceTurn;
  readonly home: string;
  readonly services: ToolServices;
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
    const mcp = await collectMcpTools({ names: sources.mcp, agentId: agent.id, registry: services.mcp, signal: options.signal, logger: options.logger });
    tools.push(...mcp.tools);
    unavailable.push(...mcp.unavailable);
  }
  if (skills.length > 0) {
    const computer = sources.computer === true ? { sandbox: services.sandbox, mcporterCommand: services.skills.mcporterCommand } : undefined;
    tools.push(createUseSkillTool({ skills, home, computer }));
  }
  for (const key of FEATURE_TOOL_KEYS) {
    if (sources[key] !== true) continue;
    const source = services.sources[key];
    if (source === undefined) unavailable.push({ source: key, reason: MISSING_FEATURE[key] });
    else tools.push(...source.tools(options.turn));
  }
  return { tools, unavailable };
}

/** The feature sources, in the order their tools are shown (after todo, computer, web, MCP and skills). */
const FEATURE_TOOL_KEYS: readonly FeatureToolKey[] = ['schedule', 'backgroundJobs', 'workflows', 'brain'];

const MISSING_FEATURE: Readonly<Record<FeatureToolKey, string>> = {
  schedule: 'this server has no schedule backend',
  backgroundJobs: 'this server has no background job backend',
  workflows: 'this server has no workflow backend',
  brain: 'this server has no Brain store',
};
