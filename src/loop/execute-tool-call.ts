import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { untilAbortsSettle } from '../concurrency/abort-together.js';
import { formatDuration } from '../format/format-duration.js';
import { isJsonObject, type JsonObject } from '../json.js';
import type { FunctionCallOutputItem } from '../models/model-client.js';
import { withOutputJson } from '../output-json.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import { resultText, type AgentToolResult } from '../tools/tool-result.js';
import type { CallOutcome as ToolCallOutcome, ToolFailureCode, TurnEventBody } from '../events/turn-events.js';
import { CallTimedOutError, type StoppedOutcome } from '../tools/call-stopped.js';
import { REPEATED_FAILURE_WARNING, type FailureMemory } from './failure-memory.js';
import { callNaming } from './call-naming.js';
import type { PreparedCall } from './prepare-tool-call.js';
import { toModelOutput } from './to-model-output.js';

/** What one call contributed: the output the model reads, and whether it ended the turn. */
export interface CallOutcome {
  readonly output: FunctionCallOutputItem['output'];
  readonly terminate: boolean;
  readonly result?: AgentToolResult;
  /** `JSON.stringify(output)`, when it was made for the call's event (see output-json.ts). */
  readonly outputJson?: string;
}

export interface ToolCallRuntime {
  readonly iteration: number;
  /** The turn's signal: cancellation, disconnect, turn timeout. */
  readonly signal: AbortSignal;
  readonly defaultTimeoutMs: number;
  readonly emit: (event: TurnEventBody) => void;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly failures: FailureMemory;
}

const MAX_LABEL_LENGTH = 200;
/** The answer of a call the turn's cancel came before: it never began. */
export const NOT_STARTED = 'Not run: the turn was cancelled before this call started.';
/**
 * How long a stopped call of a tool that `reportsStop` may take to say how far it got. A
 * command's processes are killed and gone well within it; one that is not is recorded `maybe_ran`.
 */
export const STOP_REPORT_MS = 1_000;

/**
 * Runs one prepared call to a recorded outcome: `tool.started`, then exactly one of
 * `tool.completed` / `tool.failed`. A timeout or cancellation settles the call at once, even
 * when the tool ignores its signal, and says truthfully what happened.
 */
export async function executeToolCall(prepared: PreparedCall, runtime: ToolCallRuntime): Promise<CallOutcome> {
  const { call } = prepared;
  if (prepared.kind === 'rejected') {
    return fail(runtime, prepared, { code: prepared.code, message: prepared.message, durationMs: 0, label: prepared.label });
  }
  if (runtime.signal.aborted) {
    return fail(runtime, prepared, { code: 'aborted', message: NOT_STARTED, durationMs: 0, label: undefined, outcome: 'not_started' });
  }
  const { tool, params, repair } = prepared;
  const naming = callNaming(call, tool);
  const label = activityLabel(tool, params);
  const started = runtime.clock.monotonicMs();
  runtime.emit({
    type: 'tool.started',
    callId: call.callId,
    ...naming,
    label,
    iteration: runtime.iteration,
    executionMode: tool.executionMode,
    repair,
    ...(isJsonObject(params) ? { arguments: params } : {}),
  });

  const controller = new AbortController();
  const timeoutMs = tool.timeoutMs ?? runtime.defaultTimeoutMs;
  let stoppedBy: 'timeout' | 'cancel' | undefined;
  const onTurnAbort = () => {
    stoppedBy ??= 'cancel';
    controller.abort(runtime.signal.reason);
  };
  const stopped = new Promise<'stopped'>((resolve) => {
    controller.signal.addEventListener(
      'abort',
      () => {
        resolve('stopped');
      },
      { once: true },
    );
  });
  let reported: StoppedOutcome | undefined;
  let onReported: () => void = () => undefined;
  const reportedPromise = new Promise<'reported'>((resolve) => {
    onReported = () => {
      resolve('reported');
    };
  });
  // Not aborted yet: a call the cancel came before was answered above.
  runtime.signal.addEventListener('abort', onTurnAbort, { once: true });
  const timer = setTimeout(() => {
    stoppedBy ??= 'timeout';
    controller.abort(new Error(`timed out after ${formatDuration(timeoutMs)}`));
  }, timeoutMs);
  timer.unref();

  // Made on first use: most calls never log, and a child logger is not free.
  let callLogger: Logger | undefined;
  const context = {
    signal: controller.signal,
    callId: call.callId,
    get logger(): Logger {
      callLogger ??= runtime.logger.child({ tool: tool.name, callId: call.callId });
      return callLogger;
    },
    present: (event: { type: string; data?: JsonObject }) => {
      runtime.emit({ type: 'tool.presentation', callId: call.callId, name: tool.name, event });
    },
    reportStopped: (outcome: StoppedOutcome) => {
      // Only a stopped call has an outcome to report, and the first report stands.
      if (!controller.signal.aborted || reported !== undefined) return;
      reported = outcome;
      onReported();
    },
  };
  const running = Promise.resolve()
    .then(() => tool.execute(params, context))
    .then(
      (result) => ({ ok: true as const, result }),
      (error: unknown) => ({ ok: false as const, error }),
    );
  const settled = await Promise.race([running, stopped]);
  clearTimeout(timer);
  runtime.signal.removeEventListener('abort', onTurnAbort);

  if (settled === 'stopped' || (!settled.ok && stoppedBy !== undefined)) {
    // How far the call got: what the tool reports (see stopOutcome).
    const outcome = await stopOutcome({ tool, reported: () => reported, reportedPromise });
    const durationMs = Math.round(runtime.clock.monotonicMs() - started);
    // A cancelled call's unwinding waits while a crowd of clients is still leaving (see untilAbortsSettle).
    if (stoppedBy === 'cancel') await untilAbortsSettle();
    void running.then((late) => {
      if (late.ok) context.logger.warn('a tool finished after it was stopped; its result was discarded');
    });
    if (stoppedBy === 'timeout') {
      return fail(runtime, prepared, {
        code: 'timeout',
        message: `${tool.name} timed out after ${formatDuration(timeoutMs)} and was stopped; try a smaller request or a different approach`,
        durationMs,
        label,
        outcome,
      });
    }
    return fail(runtime, prepared, {
      code: 'aborted',
      message: outcome === 'not_started' ? NOT_STARTED : `aborted after ${formatDuration(durationMs)}: the turn was cancelled`,
      durationMs,
      label,
      outcome,
    });
  }
  const durationMs = Math.round(runtime.clock.monotonicMs() - started);
  if (!settled.ok && settled.error instanceof CallTimedOutError) {
    return fail(runtime, prepared, { code: 'timeout', message: settled.error.message, durationMs, label, outcome: settled.error.outcome });
  }
  if (!settled.ok) {
    const message = settled.error instanceof Error ? settled.error.message : String(settled.error);
    context.logger.debug({ err: settled.error }, 'tool failed');
    return fail(runtime, prepared, { code: 'tool_error', message: message || `${tool.name} failed`, durationMs, label });
  }

  const { result } = settled;
  for (const event of result.presentation ?? []) context.present(event);
  const completedLabel =
    tool.describeCompletedActivity === undefined ? label : safeLabel(() => tool.describeCompletedActivity?.(params, result) ?? label, label);
  const details = repair === 'none' ? result.details : { ...result.details, repair };
  const text = resultText(result.content);
  const output = toModelOutput(result.content);
  // A text output is the same text in the event and in the next request: escaped once for both.
  const outputJson = output === text ? JSON.stringify(text) : undefined;
  const completed: TurnEventBody = {
    type: 'tool.completed',
    callId: call.callId,
    ...naming,
    label: completedLabel,
    output: text,
    ...(details === undefined ? {} : { details }),
    ...(result.completedActorEventIds === undefined || result.completedActorEventIds.length === 0
      ? {}
      : { completedActorEventIds: [...result.completedActorEventIds] }),
    durationMs,
    iteration: runtime.iteration,
    repair,
  };
  runtime.emit(outputJson === undefined ? completed : withOutputJson(completed, outputJson));
  return { output, terminate: result.terminate === true, result, ...(outputJson === undefined ? {} : { outputJson }) };
}

/**
 * The outcome of a stopped call. A tool that `reportsStop` is waited for, at most
 * STOP_REPORT_MS: what it reports stands, and silence is `maybe_ran`. Any other tool is
 * recorded at once, as it cannot say how far it got: `cancelled` when it is read-only (it
 * changed nothing), `maybe_ran` otherwise (it had begun, and its effects are unknown).
 */
async function stopOutcome(options: {
  tool: WorkerAgentTool;
  reported: () => StoppedOutcome | undefined;
  reportedPromise: Promise<'reported'>;
}): Promise<ToolCallOutcome> {
  const { tool } = options;
  if (tool.reportsStop === true && options.reported() === undefined) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => {
        resolve('late');
      }, STOP_REPORT_MS);
    });
    await Promise.race([options.reportedPromise, late]);
    clearTimeout(timer);
  }
  const reported = options.reported();
  if (reported !== undefined) return reported;
  return tool.isReadOnly && tool.reportsStop !== true ? 'cancelled' : 'maybe_ran';
}

function fail(
  runtime: ToolCallRuntime,
  prepared: PreparedCall,
  failure: { code: ToolFailureCode; message: string; durationMs: number; label: string | undefined; outcome?: ToolCallOutcome },
): CallOutcome {
  const { call } = prepared;
  let output = failure.code === 'aborted' ? failure.message : `Error: ${failure.message}`;
  if (failure.code !== 'aborted' && failure.outcome !== 'not_started') {
    const count = runtime.failures.record({ identity: prepared.identity, rawArguments: call.arguments, message: failure.message });
    output += count > 1 ? `\n\n${REPEATED_FAILURE_WARNING}` : '\nTry a different approach if this keeps failing.';
  }
  runtime.emit({
    type: 'tool.failed',
    callId: call.callId,
    ...callNaming(call, prepared.tool),
    ...(failure.label === undefined ? {} : { label: failure.label }),
    error: { code: failure.code, message: failure.message },
    ...(failure.outcome === undefined ? {} : { outcome: failure.outcome }),
    output,
    ...(prepared.repair === undefined || prepared.repair === 'none' ? {} : { details: { repair: prepared.repair } }),
    durationMs: failure.durationMs,
    iteration: runtime.iteration,
    ...(prepared.repair === undefined ? {} : { repair: prepared.repair }),
  });
  return { output, terminate: false };
}

/** The label `tool.started` shows for a validated call ("Running `make`"), bounded and never throwing. */
export function activityLabel(tool: WorkerAgentTool, params: unknown): string {
  return safeLabel(() => tool.describeActivity(params), `Running ${tool.name}`);
}

function safeLabel(describe: () => string, fallback: string): string {
  try {
    const label = describe().trim();
    if (label === '') return fallback;
    return label.length > MAX_LABEL_LENGTH ? `${label.slice(0, MAX_LABEL_LENGTH - 1)}…` : label;
  } catch {
    return fallback;
  }
}
