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
import { createBackgroundJobTools } from '../../background-jobs/tools/create-background-job-tools.js';
import { createCheckBackLaterTool } from '../../schedules/tools/check-back-later-tool.js';
import { createCronTool } from '../../schedules/tools/cron-tool.js';
import type { WorkRequest } from '../work-request.js';
import type { TurnOrigin } from '../turn-origin.js';
import type { TurnRequest } from '../turn-request.js';
import { createWorkflowTools, type WorkflowToolTurn } from '../../workflows/tools/create-workflow-tools.js';
import type { ToolServices, UnavailableSource } from './tool-services.js';
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
  readonly turn: WorkflowToolTurn & { readonly origin: TurnOrigin };
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
    const mcp = await collectMcpTools({ names: sources.mcp, registry: services.mcp, signal: options.signal, logger: options.logger });
    tools.push(...mcp.tools);
    unavailable.push(...mcp.unavailable);
  }
  if (skills.length > 0) {
    const computer = sources.computer === true ? { sandbox: services.sandbox, mcporterCommand: services.skills.mcporterCommand } : undefined;
    tools.push(createUseSkillTool({ skills, home, computer }));
  }
  const work: WorkRequest = { agent, model: options.turn.model, ...(options.turn.webhook === undefined ? {} : { webhook: options.turn.webhook }) };
  if (sources.schedule === true) {
    if (services.schedules === undefined) unavailable.push({ source: 'schedule', reason: 'this server has no schedule backend' });
    else tools.push(createCheckBackLaterTool({ service: services.schedules, request: work, turnId: options.turn.id }), createCronTool({ service: services.schedules, request: work, turnId: options.turn.id }));
  }
  // Never inside a job's own turns: a job does not start jobs.
  if (sources.backgroundJobs === true && options.turn.origin.backgroundJobId === undefined) {
    if (services.backgroundJobs === undefined) unavailable.push({ source: 'backgroundJobs', reason: 'this server has no background job backend' });
    else tools.push(...createBackgroundJobTools({ service: services.backgroundJobs, request: work, turnId: options.turn.id }));
  }
  if (sources.workflows === true) {
    if (services.workflows === undefined) unavailable.push({ source: 'workflows', reason: 'this server has no workflow backend' });
    else tools.push(...createWorkflowTools({ engine: services.workflows, turn: options.turn }));
  }
  if (sources.brain === true) tools.push(...createBrainTools({ agentId: agent.id, store: services.brain, clock: services.clock, readOnly: false }));
  return { tools, unavailable };
}
