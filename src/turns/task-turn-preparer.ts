import type { JsonObject } from '../json.js';
import type { CompletionPolicy } from '../loop/completion-policy.js';
import type { StoredTask } from '../store/turn-record.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import type { UnavailableSource } from './assembly/tool-source.js';
import type { TurnRequest } from './turn-request.js';

/** What a task turn runs with instead of a main turn's assembled tools. */
export interface PreparedTaskTurn {
  readonly tools: readonly WorkerAgentTool[];
  readonly unavailable: readonly UnavailableSource[];
  readonly instructions: string;
  /** How the turn ends: only an accepted result does. */
  readonly completion: CompletionPolicy;
}

/**
 * Sets up a workflow task turn (`kind: workflow_task`): its own tools, its instructions and its
 * end. The turn core defines this and never imports the implementation
 * (src/workflows/task-turn/prepare-workflow-task.ts); runtime.ts plugs it in.
 */
export interface TaskTurnPreparer {
  prepare(options: {
    readonly agent: TurnRequest['agent'];
    readonly home: string;
    readonly task: StoredTask;
    /** Reads the result schema as stored with the turn: the result is checked against that copy. */
    readonly loadStoredSchema: () => Promise<JsonObject>;
  }): PreparedTaskTurn;
}
