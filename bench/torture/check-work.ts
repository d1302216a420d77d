import type { Row } from './deployment.js';
import { expectedWorkflowResult } from './plan.js';
import { checkTurnSideEffects } from './check-side-effects.js';
import { eventsOfType, resumesOf, type SnapshotIndex } from './snapshot-index.js';
import { eventBody, integer, optionalText, parseJson, TERMINAL_JOB, TERMINAL_RUN, TERMINAL_TURN, text, type ItemRecord, type Violations } from './violations.js';

/** The one stored record of an item, or undefined (then says whether that is a violation: an acknowledged create must be stored). */
export function theRecord(rows: readonly Row[] | undefined, item: ItemRecord, violations: Violations): Row | undefined {
  const found = rows ?? [];
  if (found.length === 0) {
    if (item.acknowledged) violations.add('lost-create', item.agentId, `the ${item.kind} create was answered 2xx but nothing is stored`);
    return undefined;
  }
  if (found.length > 1) violations.add('created-twice', item.agentId, `one ${item.kind} create stored ${found.length} records: ${found.map((row) => text(row, 'id')).join(', ')}`);
  return found[0];
}

/**
 * A workflow run: ended, completed with the expected result, one end event; each task has at
 * most one accepted result (one `task.completed`, one completed turn), its turns all ended, and
 * its marker URL hit no more often than its turns ran; no task turn of the agent is outside a task.
 */
export function checkWorkflow(index: SnapshotIndex, item: ItemRecord, violations: Violations): void {
  const run = theRecord(index.runsByAgent.get(item.agentId), item, violations);
  if (run === undefined) return;
  const runId = text(run, 'id');
  const status = text(run, 'status');
  const tasks = index.tasksByRun.get(runId) ?? [];
  const events = index.workflowEventsByRun.get(runId) ?? [];
  if (!TERMINAL_RUN.has(status)) {
    violations.add('not-terminal', item.agentId, `run ${runId} is ${status}; tasks: ${summarise(tasks.map((task) => text(task, 'state')))}`);
  } else if (status !== 'completed') {
    violations.add('unexpected-outcome', item.agentId, `run ${runId} ended ${status}: ${text(run, 'error_json')}`);
  } else if (JSON.stringify(parseJson(text(run, 'result_json'))) !== JSON.stringify(expectedWorkflowResult(item.tasks))) {
    violations.add('wrong-result', item.agentId, `run ${runId} completed with ${text(run, 'result_json')}`);
  }
  if (TERMINAL_RUN.has(status)) {
    const ends = events.filter((event) => ['workflow.completed', 'workflow.failed', 'workflow.cancelled'].includes(text(event, 'type')));
    if (ends.length !== 1) violations.add(ends.length === 0 ? 'end-event-missing' : 'run-ended-twice', item.agentId, `run ${runId} has ${ends.length} end events`);
  }
  if (status === 'completed' && tasks.length !== item.tasks) violations.add('wrong-result', item.agentId, `run ${runId} completed with ${tasks.length} tasks, not ${item.tasks}`);

  const completedEvents = eventsOfType(events, 'task.completed');
  const startedEvents = eventsOfType(events, 'task.started');
  const taskTurnIds = new Set<string>();
  for (const task of tasks) {
    const seq = integer(task, 'seq');
    const taskId = `${runId}.${seq}`;
    const accepted = completedEvents.filter((event) => event['taskId'] === taskId).length;
    if (accepted > 1) violations.add('task-result-twice', item.agentId, `task ${taskId} has ${accepted} task.completed events`);
    if (text(task, 'state') === 'succeeded' && accepted === 0) violations.add('end-event-missing', item.agentId, `task ${taskId} succeeded without a task.completed event`);
    const started = startedEvents.filter((event) => event['taskId'] === taskId).map((event) => String(event['turnId']));
    if (new Set(started).size !== started.length) violations.add('task-turn-started-twice', item.agentId, `task ${taskId}'s task.started events name a turn twice: ${started.join(', ')}`);
    const recorded = parseJson(text(task, 'turn_ids_json'));
    const turnIds = new Set([...(Array.isArray(recorded) ? recorded.map(String) : []), ...started, ...(index.keyedTaskTurns.get(`${runId}/${seq}`) ?? [])]);
    for (const turnId of turnIds) taskTurnIds.add(turnId);
    const turns = [...turnIds].map((turnId) => index.turnsById.get(turnId));
    const completed = turns.filter((turn) => turn !== undefined && text(turn, 'status') === 'completed');
    if (completed.length > 1) violations.add('task-executed-twice', item.agentId, `task ${taskId} has ${completed.length} completed turns: ${describeTurns(turns)}`);
    const open = turns.filter((turn) => turn !== undefined && !TERMINAL_TURN.has(text(turn, 'status')));
    if (open.length > 0 && TERMINAL_RUN.has(status)) violations.add('not-terminal', item.agentId, `task ${taskId} of the ended run has turns still open: ${describeTurns(open)}`);
    const hits = index.hitsByTask.get(`${item.agentId}/${seq}`) ?? 0;
    const executions = turnIds.size + turns.reduce((sum, turn) => sum + resumesOf(turn), 0);
    if (hits > executions) violations.add('task-side-effect-twice', item.agentId, `task ${taskId}'s marker URL was fetched ${hits} times by ${turnIds.size} turns: ${describeTurns(turns)}`);
    if (text(task, 'state') === 'succeeded' && hits === 0) violations.add('side-effect-missing', item.agentId, `task ${taskId} succeeded but its marker URL was never fetched`);
  }
  const strays = (index.turnsByAgent.get(item.agentId) ?? []).filter((turn) => text(turn, 'kind') === 'workflow_task' && !taskTurnIds.has(text(turn, 'id')));
  if (strays.length > 0) violations.add('task-turn-unaccounted', item.agentId, `task turns of the agent that no task of run ${runId} knows: ${describeTurns(strays)}`);
}

/**
 * A background job: ended (completed), one end event; every acknowledged message stored and
 * given to a turn; every turn of the job recorded by it (none ran outside its record), one
 * `job.turn_started` and at most one `job.turn_finished` per turn; part K of the script (turn K)
 * left at most one marker, and exactly one when turn K completed.
 */
export function checkJob(index: SnapshotIndex, item: ItemRecord, violations: Violations): void {
  const job = theRecord(index.jobsByAgent.get(item.agentId), item, violations);
  if (job === undefined) return;
  const jobId = text(job, 'id');
  const status = text(job, 'status');
  if (!TERMINAL_JOB.has(status)) violations.add('not-terminal', item.agentId, `job ${jobId} is ${status} (owner ${text(job, 'owner') || 'none'}, heartbeat ${text(job, 'heartbeat_at') || 'none'})`);
  else if (status !== 'completed') violations.add('unexpected-outcome', item.agentId, `job ${jobId} ended ${status}: ${text(job, 'error_json')}`);

  const messages = index.jobMessagesByJob.get(jobId) ?? [];
  if (messages.length < item.messagesAcknowledged) violations.add('lost-create', item.agentId, `${item.messagesAcknowledged} messages to job ${jobId} were answered 202, ${messages.length} are stored`);
  if (status === 'completed') {
    const waiting = messages.filter((message) => optionalText(message, 'turn_index') === undefined);
    if (waiting.length > 0) violations.add('message-unanswered', item.agentId, `job ${jobId} completed with ${waiting.length} messages no turn got`);
  }

  const events = index.jobEventsByJob.get(jobId) ?? [];
  if (TERMINAL_JOB.has(status)) {
    const ends = events.filter((event) => ['job.completed', 'job.failed', 'job.stopped'].includes(text(event, 'type')));
    if (ends.length !== 1) violations.add(ends.length === 0 ? 'end-event-missing' : 'job-ended-twice', item.agentId, `job ${jobId} has ${ends.length} end events`);
  }
  const started = eventsOfType(events, 'job.turn_started').map((event) => String(event['turnId']));
  if (new Set(started).size !== started.length) violations.add('job-turn-started-twice', item.agentId, `job ${jobId}'s job.turn_started events name a turn twice: ${started.join(', ')}`);
  const finished = events.filter((event) => text(event, 'type') === 'job.turn_finished').map((event) => String(eventBody(event)['turnId']));
  for (const turnId of new Set(finished)) {
    const count = finished.filter((id) => id === turnId).length;
    if (count > 1) violations.add('job-turn-finished-twice', item.agentId, `job ${jobId}'s turn ${turnId} has ${count} job.turn_finished events`);
  }

  const recorded = index.jobTurnsByJob.get(jobId) ?? [];
  const recordedIds = new Set(recorded.map((row) => text(row, 'turn_id')));
  const ran = index.turnsByJob.get(jobId) ?? [];
  const unrecorded = ran.filter((turn) => !recordedIds.has(text(turn, 'id')));
  if (unrecorded.length > 0) violations.add('job-turn-unrecorded', item.agentId, `turns of job ${jobId} it never recorded (run twice?): ${describeTurns(unrecorded)}`);
  const indexOfTurn = new Map(recorded.map((row) => [text(row, 'turn_id'), integer(row, 'turn_index')]));
  for (const row of recorded) {
    const turn = index.turnsById.get(text(row, 'turn_id'));
    const outcome = optionalText(row, 'outcome');
    if (outcome === undefined && TERMINAL_JOB.has(status)) violations.add('not-terminal', item.agentId, `job ${jobId} ended with turn ${text(row, 'turn_id')} (index ${text(row, 'turn_index')}) unsettled`);
    if (outcome === 'completed' && turn !== undefined && text(turn, 'status') !== 'completed') violations.add('job-turn-mismatch', item.agentId, `job turn ${text(row, 'turn_id')} recorded completed, but the turn is ${text(turn, 'status')}`);
  }

  const lines = index.snapshot.markers.get(item.agentId) ?? [];
  for (let part = 1; part <= item.parts; part += 1) {
    const count = lines.filter((line) => line.tag === `job-part-${part}`).length;
    if (count > 1) violations.add('job-turn-side-effect-twice', item.agentId, `part ${part} of job ${jobId}'s script (turn index ${part}) left ${count} markers; turns: ${describeTurns(ran)}`);
    const turnRow = recorded.find((row) => integer(row, 'turn_index') === part);
    if (turnRow !== undefined && optionalText(turnRow, 'outcome') === 'completed' && count === 0 && resumesOf(index.turnsById.get(text(turnRow, 'turn_id'))) === 0) {
      violations.add('side-effect-missing', item.agentId, `job ${jobId}'s turn ${part} completed without its marker`);
    }
  }
  const turns = new Map<string, Row>(ran.map((turn) => [text(turn, 'id'), turn]));
  for (const row of recorded) {
    const turn = index.turnsById.get(text(row, 'turn_id'));
    if (turn !== undefined) turns.set(text(turn, 'id'), turn);
  }
  checkTurnSideEffects({ index, violations, item: item.agentId, turns: [...turns.values()], lines, expectsMarker: (turn) => (indexOfTurn.get(text(turn, 'id')) ?? 0) <= item.parts });
}

export function describeTurns(turns: readonly (Row | undefined)[]): string {
  return turns.map((turn) => (turn === undefined ? '(missing)' : `${text(turn, 'id')}:${text(turn, 'status')}@${text(turn, 'owner')}`)).join(', ') || 'none';
}

export function summarise(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].map(([value, count]) => `${count} ${value}`).join(', ') || 'none';
}
