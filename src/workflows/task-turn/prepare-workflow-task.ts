import type { BrainStore } from '../../brain/brain-store.js';
import type { Clock } from '../../clock.js';
import type { JsonObject } from '../../json.js';
import { compileJsonSchemaValidator } from '../../tools/schema/json-schema-validator.js';
import { StrictSchemaError, type StrictSchema } from '../../tools/schema/strict-schema.js';
import type { WorkerAgentTool } from '../../tools/define-worker-tool.js';
import { invalidRequest } from '../../service-error.js';
import { createBrainTools } from '../../tools/brain/create-brain-tools.js';
import { createWebTools } from '../../turns/assembly/create-web-tools.js';
import type { ToolServices } from '../../turns/assembly/tool-services.js';
import type { UnavailableSource } from '../../turns/assembly/tool-source.js';
import type { PreparedTaskTurn, TaskTurnPreparer } from '../../turns/task-turn-preparer.js';
import { compileSubmitResultSchema, createSubmitResultTool, type SubmissionTally } from './submit-result-tool.js';
import { createWorkflowTaskPolicy } from './workflow-task-policy.js';

/**
 * An isolated workflow task: its own fixed catalog (the server's web tools, read-only Brain
 * tools when enabled, and `submit_result`) — never the main turn's computer, file, shell,
 * MCP, skill, schedule, workflow or background-job tools — and a policy that only a
 * submission ends it. A result schema that strict mode cannot take is the caller's fault.
 */
export function prepareWorkflowTask(
  options: Parameters<TaskTurnPreparer['prepare']>[0] & { readonly services: ToolServices; readonly brain: BrainStore; readonly clock: Clock },
): PreparedTaskTurn {
  const { agent, task } = options;
  const strictSchema = compileResultSchema(task.resultSchema);
  const tally: SubmissionTally = { rejected: 0 };
  const web = createWebTools({ agentId: agent.id, home: options.home, services: options.services });
  const tools: WorkerAgentTool[] = [...web.tools];
  const unavailable: UnavailableSource[] = [...web.unavailable];
  if (agent.tools?.brain === true) tools.push(...createBrainTools({ agentId: agent.id, store: options.brain, clock: options.clock, readOnly: true }));
  tools.push(createSubmitResultTool({ strictSchema, loadStoredSchema: options.loadStoredSchema, tally }));
  const instructions = [
    agent.instructions,
    `You are running one isolated workflow task. Do the task below with the tools you have, then call submit_result exactly once with the complete result. The task is not finished until submit_result accepts it.\n\nTask:\n${task.instructions}`,
  ]
    .filter((part) => part !== undefined && part !== '')
    .join('\n\n');
  return { tools, unavailable, instructions, completion: createWorkflowTaskPolicy(tally) };
}

function compileResultSchema(resultSchema: JsonObject): StrictSchema {
  try {
    compileJsonSchemaValidator(resultSchema);
  } catch (error) {
    throw invalidRequest([{ path: ['task', 'resultSchema'], message: `not a valid JSON Schema: ${error instanceof Error ? error.message : String(error)}` }]);
  }
  try {
    return compileSubmitResultSchema(resultSchema);
  } catch (error) {
    if (error instanceof StrictSchemaError) {
      // The wrapper's path starts at `result`; the caller knows it as task.resultSchema.
      const inner = error.path === 'result' ? [] : error.path.replace(/^result\.?/, '').split('.');
      throw invalidRequest([
        { path: ['task', 'resultSchema', ...inner.filter((segment) => segment !== '')], message: error.message.replace(/^[^:]*: /, '') },
      ]);
    }
    throw error;
  }
}

/** The task turns of this server's workflows: the web tools of `services`, and the read-only Brain tools. */
export function workflowTaskPreparer(options: { readonly services: ToolServices; readonly brain: BrainStore; readonly clock: Clock }): TaskTurnPreparer {
  return { prepare: (task) => prepareWorkflowTask({ ...task, ...options }) };
}
