import { taskId } from './engine-context.js';
import type { WorkflowRecord } from './workflow-request.js';
import type { RunSummary } from './workflow-store.js';

/** The API view of a run and its tasks. */
export function toWorkflowRecord({ run, counts, failures }: RunSummary): WorkflowRecord {
  return {
    id: run.id,
    agentId: run.agent_id,
    title: run.title,
    status: run.status as WorkflowRecord['status'],
    createdAt: run.created_at,
    finishedAt: run.finished_at,
    counts: { ...counts },
    failures: failures.map((task) => ({ taskId: taskId(run.id, task.seq), label: task.label, error: task.error ?? 'failed' })),
    result: run.result_json === null ? null : (JSON.parse(run.result_json) as unknown),
    error: run.error_json === null ? null : (JSON.parse(run.error_json) as WorkflowRecord['error']),
    concurrency: run.concurrency,
    maxAgentCalls: run.max_agent_calls,
    cancelRequested: run.cancel_requested === 1,
    ...(run.source_turn_id === null ? {} : { sourceTurnId: run.source_turn_id }),
    ...(run.source_call_id === null ? {} : { sourceCallId: run.source_call_id }),
  };
}
