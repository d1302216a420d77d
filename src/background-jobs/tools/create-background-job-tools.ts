import { z } from 'zod';
import type { BackgroundJobRecord } from '../background-job-record.js';
import { MAX_LISTED_JOBS, type BackgroundJobService } from '../background-job-service.js';
import type { WorkRequest } from '../../turns/work-request.js';
import { ServiceError } from '../../service-error.js';
import { defineWorkerTool, type WorkerAgentTool } from '../../tools/define-worker-tool.js';
import type { AgentToolResult } from '../../tools/tool-result.js';
import { workRequestOf, type ToolSource } from '../../turns/assembly/tool-source.js';

const jobIdSchema = z.string().trim().min(1).max(200).describe('The id `create_background_job` or `list_background_jobs` gave, e.g. "job_3f…".');
const createSchema = z.object({
  title: z.string().trim().min(1).max(200).describe('A short name for the job, shown in lists: "Compare the three vendor quotes".'),
  instructions: z.string().trim().min(1).max(100_000).describe('Everything the job needs to know to do the work on its own; it does not see this conversation.'),
});
const jobSchema = z.object({ job_id: jobIdSchema });
const messageSchema = z.object({ job_id: jobIdSchema, text: z.string().trim().min(1).max(100_000).describe('What to tell the job; its next turn reads it.') });
const listSchema = z.object({});

/**
 * The background-job tools of a main turn: start a job that runs as its own turns, look at
 * jobs, message one, stop one. Jobs run with this turn's tool sources (minus these tools) and
 * model, and the turn's webhook.
 */
export function createBackgroundJobTools(options: { readonly service: BackgroundJobService; readonly request: WorkRequest; readonly turnId: string }): WorkerAgentTool[] {
  const { service, request } = options;
  const agentId = request.agent.id;
  const tools: WorkerAgentTool[] = [
    defineWorkerTool<z.output<typeof createSchema>>({
      name: 'create_background_job',
      description: [
        'Start a background job: a separate run of you that works on a task on its own, in its own turns, while this conversation goes on.',
        'Use it for work that takes long or need not block the answer (research, a long edit, a report). The job gets your tools',
        '(except these job tools) and only the instructions you give it, so make them complete. It ends when it answers with no',
        'message waiting; check it with show_background_job_details.',
      ].join(' '),
      schema: createSchema,
      executionMode: 'sequential',
      isReadOnly: false,
      isDestructive: false,
      describeActivity: (params) => `Starting background job "${params.title}"`,
      async execute(params, context): Promise<AgentToolResult> {
        const { record: job } = await asToolError(() => service.create({ request, title: params.title, instructions: params.instructions, sourceTurnId: options.turnId, sourceCallId: context.callId }));
        return { content: `Started background job ${job.id} ("${job.title}"). It runs on its own; check it later with show_background_job_details.`, details: { jobId: job.id } };
      },
    }),
    defineWorkerTool<z.output<typeof listSchema>>({
      name: 'list_background_jobs',
      description: `List your background jobs, newest first (at most ${MAX_LISTED_JOBS}), with their status.`,
      schema: listSchema,
      executionMode: 'parallel',
      isReadOnly: true,
      isDestructive: false,
      describeActivity: () => 'Listing background jobs',
      async execute(): Promise<AgentToolResult> {
        const jobs = await service.list({ agentId, limit: MAX_LISTED_JOBS });
        if (jobs.length === 0) return { content: 'You have no background jobs.', details: { count: 0 } };
        return { content: jobs.map((job) => `- ${job.id} "${job.title}": ${job.status}, ${job.turnIds.length} turn(s), created ${job.createdAt}`).join('\n'), details: { count: jobs.length } };
      },
    }),
    defineWorkerTool<z.output<typeof jobSchema>>({
      name: 'show_background_job_details',
      description: "Show one background job: its status, its turns and, once it has answered, its output.",
      schema: jobSchema,
      executionMode: 'parallel',
      isReadOnly: true,
      isDestructive: false,
      describeActivity: (params) => `Checking background job ${params.job_id}`,
      async execute(params): Promise<AgentToolResult> {
        const job = await asToolError(() => service.get(params.job_id, agentId));
        return { content: describeJob(job), details: { jobId: job.id, status: job.status } };
      },
    }),
    defineWorkerTool<z.output<typeof messageSchema>>({
      name: 'send_message_to_background_job',
      description: 'Send a message to a running background job; its next turn reads it (a job that is mid-turn reads it when that turn ends).',
      schema: messageSchema,
      executionMode: 'sequential',
      isReadOnly: false,
      isDestructive: false,
      describeActivity: (params) => `Messaging background job ${params.job_id}`,
      async execute(params): Promise<AgentToolResult> {
        const job = await asToolError(() => service.sendMessage({ jobId: params.job_id, text: params.text, agentId }));
        return { content: `Queued the message for ${job.id}; ${job.pendingMessages} message(s) wait for its next turn.`, details: { jobId: job.id } };
      },
    }),
    defineWorkerTool<z.output<typeof jobSchema>>({
      name: 'stop_background_job',
      description: 'Stop a running background job: its current turn is aborted and the job ends as stopped.',
      schema: jobSchema,
      executionMode: 'sequential',
      isReadOnly: false,
      isDestructive: true,
      describeActivity: (params) => `Stopping background job ${params.job_id}`,
      async execute(params): Promise<AgentToolResult> {
        const job = await asToolError(() => service.stop({ jobId: params.job_id, agentId }));
        return { content: `Stopped background job ${job.id} ("${job.title}").`, details: { jobId: job.id } };
      },
    }),
  ];
  return tools;
}

function describeJob(job: BackgroundJobRecord): string {
  const lines = [`${job.id} "${job.title}": ${job.status}`, `created ${job.createdAt}${job.finishedAt === null ? '' : `, ended ${job.finishedAt}`}`];
  lines.push(`turns: ${job.turns.length === 0 ? 'none yet' : job.turns.map((turn) => `${turn.index}. ${turn.turnId} (${turn.outcome})`).join('; ')}`);
  if (job.pendingMessages > 0) lines.push(`${job.pendingMessages} message(s) wait for the next turn`);
  if (job.error !== null) lines.push(`error: ${job.error.message}`);
  if (job.output !== null) lines.push(`output:\n${job.output}`);
  return lines.join('\n');
}

/** A caller fault (unknown job, already ended) becomes a tool error the model reads. */
async function asToolError<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof ServiceError) throw new Error(error.message, { cause: error });
    throw error;
  }
}

/** `agent.tools.backgroundJobs`: the job tools, never inside a job's own turns (a job does not start jobs). */
export function backgroundJobToolSource(options: { readonly service: BackgroundJobService }): ToolSource {
  return {
    tools: (turn) => (turn.origin.backgroundJobId === undefined ? createBackgroundJobTools({ service: options.service, request: workRequestOf(turn), turnId: turn.id }) : []),
  };
}
