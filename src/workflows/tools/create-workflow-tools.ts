import { z } from 'zod';
import { defineWorkerTool, type WorkerAgentTool } from '../../tools/define-worker-tool.js';
import type { ToolSource } from '../../turns/assembly/tool-source.js';
import type { TurnRequest } from '../../turns/turn-request.js';
import type { WorkflowEngine } from '../workflow-engine.js';
import { WORKFLOW_LIMITS } from '../workflow-limits.js';
import type { WorkflowModel } from '../workflow-model.js';
import type { WorkflowRecord } from '../workflow-request.js';
import { readResultSegment } from './read-result-segment.js';

/** What the workflow tools know of the main turn that offers them. */
export interface WorkflowToolTurn {
  readonly id: string;
  readonly agent: TurnRequest['agent'];
  readonly model: TurnRequest['model'];
  readonly webhook: TurnRequest['webhook'];
}

const LIST_LIMIT = 32;

const startSchema = z.object({
  title: z.string().trim().min(1).max(WORKFLOW_LIMITS.titleChars).describe('A short title a person recognises: "Compare vendors".'),
  script: z.string().min(1).describe(`JavaScript: the body of an async function. Call \`await agent(prompt, { label, schema })\` for each sub-task (use Promise.all for parallel ones), read \`args\`, and \`return\` the result. No I/O, timers or imports. At most ${WORKFLOW_LIMITS.scriptBytes} bytes.`),
  args: z.record(z.string(), z.unknown()).optional().describe(`An object the script reads as \`args\` (at most ${WORKFLOW_LIMITS.argsBytes} bytes of JSON).`),
  concurrency: z.number().int().min(1).max(WORKFLOW_LIMITS.maxConcurrency).optional().describe(`Sub-tasks at once, default ${WORKFLOW_LIMITS.defaultConcurrency}.`),
  max_agent_calls: z.number().int().min(1).max(WORKFLOW_LIMITS.maxAgentCalls).optional().describe(`agent() calls allowed, default ${WORKFLOW_LIMITS.defaultMaxAgentCalls}.`),
});
const showSchema = z.object({
  run_id: z.string().min(1).max(200),
  offset: z.number().int().min(0).optional().describe('Byte offset into the result JSON, from a previous next_offset.'),
});
const listSchema = z.object({ status: z.enum(['running', 'completed', 'failed', 'cancelled']).optional() });
const cancelSchema = z.object({ run_id: z.string().min(1).max(200) });

/**
 * The main turn's workflow tools: start (sequential, idempotent on the calling tool call id),
 * show, list and cancel. Never offered to a workflow task turn (its catalog is fixed).
 */
export function createWorkflowTools(options: { readonly engine: WorkflowEngine; readonly turn: WorkflowToolTurn }): WorkerAgentTool[] {
  const { engine, turn } = options;
  const agentId = turn.agent.id;
  const ownRun = async (runId: string): Promise<WorkflowRecord> => {
    const record = await engine.getRun(runId).catch(() => undefined);
    if (record?.agentId !== agentId) throw new Error(`no workflow run "${runId}" of this agent; list_workflows shows them`);
    return record;
  };

  const start = defineWorkerTool<z.output<typeof startSchema>>({
    name: 'workflow',
    description:
      'Start a workflow: a script that runs many isolated sub-tasks (agent() calls, each its own model turn with web tools, up to 3 attempts, null when they fail) and combines their results. Answers at once with the run id; follow it with show_workflow. Use it for work that splits into many similar independent pieces.',
    schema: startSchema,
    executionMode: 'sequential',
    isReadOnly: false,
    isDestructive: false,
    describeActivity: (params) => `Starting workflow “${params.title}”`,
    describeCompletedActivity: (params) => `Started workflow “${params.title}”`,
    async execute(params, context) {
      const scriptBytes = Buffer.byteLength(params.script);
      if (scriptBytes > WORKFLOW_LIMITS.scriptBytes) throw new Error(`script: ${scriptBytes} bytes is over the ${WORKFLOW_LIMITS.scriptBytes}-byte limit; move data into args or shorten it`);
      const argsBytes = Buffer.byteLength(JSON.stringify(params.args ?? {}));
      if (argsBytes > WORKFLOW_LIMITS.argsBytes) throw new Error(`args: ${argsBytes} bytes of JSON is over the ${WORKFLOW_LIMITS.argsBytes}-byte limit`);
      const { record } = await engine.startRun({
        agent: turn.agent,
        title: params.title,
        script: params.script,
        ...(params.args === undefined ? {} : { args: params.args }),
        model: taskModelOf(turn.model),
        ...(params.concurrency === undefined ? {} : { concurrency: params.concurrency }),
        ...(params.max_agent_calls === undefined ? {} : { maxAgentCalls: params.max_agent_calls }),
        ...(turn.webhook === undefined ? {} : { webhook: turn.webhook }),
        source: { turnId: turn.id, callId: context.callId },
      });
      return { content: JSON.stringify({ run_id: record.id, status: 'running' }), details: { runId: record.id } };
    },
  });

  const show = defineWorkerTool<z.output<typeof showSchema>>({
    name: 'show_workflow',
    description: `Show a workflow run: status, counts of its sub-tasks, up to 10 failures, its error, and its result (JSON, in segments of at most 8,000 bytes: pass next_offset as offset for the rest).`,
    schema: showSchema,
    executionMode: 'parallel',
    isReadOnly: true,
    isDestructive: false,
    describeActivity: () => 'Checking a workflow',
    describeCompletedActivity: (_params, result) => {
      const { title, done, total, status } = result.details ?? {};
      if (typeof title !== 'string' || typeof done !== 'number' || typeof total !== 'number' || typeof status !== 'string') return 'Checked a workflow';
      return status === 'running' ? `Workflow “${title}”: ${done} of ${total} tasks done` : `Workflow “${title}” ${status}`;
    },
    async execute(params) {
      const record = await ownRun(params.run_id);
      const segment = readResultSegment({ result: record.result, offset: params.offset ?? 0 });
      const summary = {
        run_id: record.id,
        title: record.title,
        status: record.status,
        counts: record.counts,
        failures: record.failures,
        error: record.error,
        ...segment,
      };
      const done = record.counts.succeeded + record.counts.failed + record.counts.cancelled;
      return { content: JSON.stringify(summary), details: { title: record.title, status: record.status, done, total: record.counts.total } };
    },
  });

  const list = defineWorkerTool<z.output<typeof listSchema>>({
    name: 'list_workflows',
    description: `List this agent's workflow runs, newest first (at most ${LIST_LIMIT}), optionally by status.`,
    schema: listSchema,
    executionMode: 'parallel',
    isReadOnly: true,
    isDestructive: false,
    describeActivity: () => 'Listing workflows',
    describeCompletedActivity: (_params, result) => {
      const count = result.details?.['count'];
      if (typeof count !== 'number') return 'Listed workflows';
      return count === 0 ? 'No workflows yet' : `Listed ${count} workflow${count === 1 ? '' : 's'}`;
    },
    async execute(params) {
      const runs = await engine.listRuns({ agentId, status: params.status, limit: LIST_LIMIT });
      const rows = runs.map((run) => ({ run_id: run.id, title: run.title, status: run.status, counts: run.counts, created_at: run.createdAt }));
      return { content: JSON.stringify({ workflows: rows }), details: { count: rows.length } };
    },
  });

  const cancel = defineWorkerTool<z.output<typeof cancelSchema>>({
    name: 'cancel_workflow',
    description: 'Cancel a running workflow: no new sub-task starts and running ones are stopped. Cancelling one that already ended just reports its status.',
    schema: cancelSchema,
    executionMode: 'sequential',
    isReadOnly: false,
    isDestructive: false,
    describeActivity: () => 'Cancelling a workflow',
    describeCompletedActivity: (_params, result) => {
      const title = result.details?.['title'];
      return typeof title === 'string' ? `Cancelled workflow “${title}”` : 'Cancelled a workflow';
    },
    async execute(params) {
      await ownRun(params.run_id);
      const record = await engine.cancelRun(params.run_id, { idempotent: true });
      return { content: JSON.stringify({ run_id: record.id, status: record.status, cancel_requested: record.cancelRequested }), details: { title: record.title } };
    },
  });

  return [start, show, list, cancel] as WorkerAgentTool[];
}

/** A tool-started run's tasks use the starting turn's model; a scripted turn's `tasks` map drives them. */
function taskModelOf(model: TurnRequest['model']): WorkflowModel {
  if ('script' in model) return { tasks: model.tasks ?? {} };
  return model.name === undefined ? {} : { name: model.name };
}

/** `agent.tools.workflows`: start, watch and stop this agent's workflow runs. */
export function workflowToolSource(options: { readonly engine: WorkflowEngine }): ToolSource {
  return { tools: (turn) => createWorkflowTools({ engine: options.engine, turn }) };
}
