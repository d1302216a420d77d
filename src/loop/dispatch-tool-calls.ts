import type { FunctionCallOutputItem, ModelFunctionCall } from '../models/model-client.js';
import { jsonOutputItem } from '../models/item-json.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import type { AgentToolResult } from '../tools/tool-result.js';
import { toolIdentity } from '../tools/tool-map.js';
import { callNaming } from './call-naming.js';
import { executeToolCall, NOT_STARTED, type CallOutcome, type ToolCallRuntime } from './execute-tool-call.js';
import { prepareToolCall, type PreparedCall } from './prepare-tool-call.js';
import { runWithLimit } from '../concurrency/run-with-limit.js';
import type { CallGate, ParkedCall } from './call-gate.js';

export interface DispatchResult {
  /** One output per call that is not parked, in the model's call order. */
  readonly outputs: readonly FunctionCallOutputItem[];
  /** Per call position: its output, or undefined while it is parked. */
  readonly slots: readonly (FunctionCallOutputItem | undefined)[];
  /** Calls the gate parked, waiting for a decision; empty once the turn was cancelled or ended. */
  readonly parked: readonly ParkedCall[];
  /** The call whose result ended the turn, if one did. */
  readonly terminatedBy?: { readonly call: ModelFunctionCall; readonly result: AgentToolResult };
}

const PRIOR_TERMINATION = 'Not run: a prior tool call already ended this turn.';

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
  /** Asked about each validated call before it runs: approvals park or refuse some. */
  readonly gate?: CallGate;
}): Promise<DispatchResult> {
  const { calls, toolMap, parallelLimit, runtime, gate } = options;
  const outcomes = new Array<CallOutcome | undefined>(calls.length);
  const parked: ParkedCall[] = [];
  let terminatedBy: DispatchResult['terminatedBy'];
  // A parked call takes no part in grouping: the calls around it run as if it were not there.
  const prepare = (position: number): PreparedCall | 'parked' => {
    const call = calls[position] as ModelFunctionCall;
    const prepared = prepareToolCall({ call, toolMap, ...(options.deferred === undefined ? {} : { deferred: options.deferred }) });
    if (prepared.kind !== 'ready' || gate === undefined) return prepared;
    const verdict = gate(prepared);
    if (verdict.kind === 'run') return prepared;
    if (verdict.kind === 'deny') {
      const { identity, repair, tool } = prepared;
      return { kind: 'rejected', call, identity, code: 'denied', message: verdict.message, repair, tool, ...(verdict.label === undefined ? {} : { label: verdict.label }) };
    }
    parked.push({ index: position, call, request: verdict.request });
    return 'parked';
  };
  let index = 0;
  let lookahead: PreparedCall | undefined;

  while (index < calls.length) {
    if (runtime.signal.aborted || terminatedBy !== undefined) break;
    const first = lookahead ?? prepare(index);
    lookahead = undefined;
    if (first === 'parked') {
      index += 1;
      continue;
    }
    const group: { prepared: PreparedCall; index: number }[] = [{ prepared: first, index }];
    index += 1;
    if (isParallel(first)) {
      while (index < calls.length) {
        const next = prepare(index);
        if (next === 'parked') {
          index += 1;
          continue;
        }
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

  // Parked calls stay parked only while the turn goes on; otherwise they are answered like any unstarted call.
  const stillParked = !runtime.signal.aborted && terminatedBy === undefined;
  const parkedAt = new Set(stillParked ? parked.map((entry) => entry.index) : []);
  const slots = calls.map((call, position): FunctionCallOutputItem | undefined => {
    if (parkedAt.has(position)) return undefined;
    const outcome = outcomes[position];
    if (outcome !== undefined) {
      // A text output is kept as the JSON text it is sent as, and its text left to its event (see jsonOutputItem).
      if (outcome.outputJson !== undefined) return jsonOutputItem(call.callId, outcome.outputJson);
      return { type: 'function_call_output', call_id: call.callId, output: outcome.output };
    }
    const skippedBecause = terminatedBy === undefined ? NOT_STARTED : PRIOR_TERMINATION;
    runtime.emit({
      type: 'tool.failed',
      callId: call.callId,
      ...callNaming(call, toolMap.get(toolIdentity(call.name, call.namespace))),
      error: { code: terminatedBy === undefined ? 'aborted' : 'skipped', message: skippedBecause },
      ...(terminatedBy === undefined ? { outcome: 'not_started' as const } : {}),
      output: skippedBecause,
      durationMs: 0,
      iteration: runtime.iteration,
    });
    return { type: 'function_call_output', call_id: call.callId, output: skippedBecause };
  });
  const outputs = slots.filter((slot) => slot !== undefined);
  const result = { outputs, slots, parked: stillParked ? parked : [] };
  return terminatedBy === undefined ? result : { ...result, terminatedBy };
}

/** Rejected calls never run, so they can join a parallel group without risk. */
function isParallel(prepared: PreparedCall): boolean {
  return prepared.kind === 'rejected' || prepared.tool.executionMode === 'parallel';
}
