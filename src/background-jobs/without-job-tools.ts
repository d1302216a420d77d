import type { WorkRequest } from '../turns/work-request.js';

/** The request a job stores and runs its turns with. No nesting: the job's turns never get the job tools. */
export function withoutJobTools(request: WorkRequest): WorkRequest {
  const { backgroundJobs: _omitted, ...tools } = request.agent.tools ?? {};
  return { ...request, agent: { ...request.agent, tools } };
}
