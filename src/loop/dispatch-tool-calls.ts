import type { FunctionCallOutputItem, ModelFunctionCall } from '../models/model-client.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import type { AgentToolResult } from '../tools/tool-result.js';
import { executeToolCall, type CallOutcome, type ToolCallRuntime } from './execute-tool-call.js';
import { prepareToolCall, type PreparedCall } from './prepare-tool-call.js';
import { runWithLimit } from '../concurrency/run-with-limit.js';

export interface DispatchResult {
  /** One output per call, in the model's call order. */
  readonly outputs: readonly FunctionCallOutputItem[];
  /** The call whose result ended the turn, if one did. */
  readonly terminatedBy?: { readonly call: ModelFunctionCall; readonly result: AgentToolResult };
}

const PRIOR_TERMINATION = 'Not run: a prior tool call already ended this turn.';
const NOT_STARTED = 'Not run: the turn was cancelled before this call started.';

/**
 * Runs a response's calls. Consecutive `parallel` calls run together under `parallelLimit`;
 * a `sequential` call runs alone, after everything before it and before everything after it.
 * The turn's signal is checked before every dispatch, and once a call terminates the turn, the
 * calls after it are answered without running. Every call gets exactly one output.
 */
export async function dispatchToolCalls(options: {
  readonly calls: readonly ModelFunctionCall[];
  readonly toolMap: ReadonlyMap<string, WorkerAgentTool>;
  /** Assembled tools not callable yet, for a helpful answer when the model calls one. */
  readonly deferred?: ReadonlyMap<string, WorkerAgentTool>;
  readonly parallelLimit: number;
  readonly runtime: ToolCallRuntime;
}): Promise<DispatchResult> {
  const { calls, toolMap, parallelLimit, runtime } = options;
  const outcomes = new Array<CallOutcome | undefined>(calls.length);
  let terminatedBy: DispatchResult['terminatedBy'];
  const prepare = (position: number) =>
    prepareToolCall({ call: calls[position] as ModelFunctionCall, toolMap, ...(options.deferred === undefined ? {} : { deferred: options.deferred }) });
  let index = 0;
  let lookahead: PreparedCall | undefined;

  while (index < calls.length) {
    if (runtime.signal.aborted || terminatedBy !== undefined) break;
    const first = lookahead ?? prepare(index);
    lookahead = undefined;
    const group: { prepared: PreparedCall; index: number }[] = [{ prepared: first, index }];
    index += 1;
    if (isParallel(first)) {
      while (index < calls.length) {
        const next = prepare(index);
        if (!isParallel(next)) {
          lookahead = next;
          break;
        }
        group.push({ prepared: next, index });
        index += 1;
      }
    }
    // Calls of a group start in call order, so one starting after a call ended the turn
    // comes after it: it is answered, not run.
    let groupTerminated = false;
    const results = await runWithLimit({
      items: group,
      limit: parallelLimit,
      task: async (entry) => {
        if (runtime.signal.aborted || groupTerminated) return undefined;
        const outcome = await executeToolCall(entry.prepared, runtime);
        if (outcome.terminate) groupTerminated = true;
        return outcome;
      },
    });
    group.forEach((entry, position) => {
      const outcome = results[position];
      outcomes[entry.index] = outcome;
      if (outcome?.terminate === true && outcome.result !== undefined && terminatedBy === undefined) {
        terminatedBy = { call: entry.prepared.call, result: outcome.result };
      }
    });
  }

  const outputs = calls.map((call, position): FunctionCallOutputItem => {
    const outcome = outcomes[position];
    if (outcome !== undefined) return { type: 'function_call_output', call_id: call.callId, output: outcome.output };
    const skippedBecause = terminatedBy === undefined ? NOT_STARTED : PRIOR_TERMINATION;
    runtime.emit({
      type: 'tool.failed',
      callId: call.callId,
      name: call.name,
      ...(call.namespace === undefined ? {} : { namespace: call.namespace }),
      error: { code: terminatedBy === undefined ? 'aborted' : 'skipped', message: skippedBecause },
      output: skippedBecause,
      durationMs: 0,
      iteration: runtime.iteration,
    });
    return { type: 'function_call_output', call_id: call.callId, output: skippedBecause };
  });
  return terminatedBy === undefined ? { outputs } : { outputs, terminatedBy };
}

/** Rejected calls never run, so they can join a parallel group without risk. */
function isParallel(prepared: PreparedCall): boolean {
  return prepared.kind === 'rejected' || prepared.tool.executionMode === 'parallel';
}
