import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { untilAbortsSettle } from '../concurrency/abort-together.js';
import {
  ModelError,
  type ConversationItem,
  type FunctionCallOutputItem,
  type ModelClient,
  type ModelFunctionCall,
  type ModelResponse,
} from '../models/model-client.js';
import type { WorkerAgentTool } from '../tools/define-worker-tool.js';
import type { CallGate, ParkedCall } from './call-gate.js';
import type { ToolCallRuntime } from './execute-tool-call.js';
import type { AgentToolResult } from '../tools/tool-result.js';
import type { TurnError, TurnEventBody, TurnUsage } from '../events/turn-events.js';
import type { CompletionPolicy } from './completion-policy.js';
import { dispatchToolCalls, type DispatchResult } from './dispatch-tool-calls.js';
import { FailureMemory } from './failure-memory.js';
import type { ProviderToolList, ToolCatalog } from '../tools/tool-catalog.js';
import { toolIdentity } from '../tools/tool-map.js';

export interface TurnLoopOptions {
  readonly model: ModelClient;
  readonly instructions?: string;
  /** The conversation so far; the loop appends to a copy. */
  readonly input: readonly ConversationItem[];
  /** What the model may call and is shown; may grow during the turn (Tool Search). */
  readonly catalog: ToolCatalog;
  /** Told when the provider tool list of a request differs from the previous request's. */
  readonly onProviderToolsChanged?: (iteration: number, list: ProviderToolList) => void;
  readonly completion: CompletionPolicy;
  readonly maxIterations: number;
  readonly toolTimeoutMs: number;
  readonly parallelLimit: number;
  readonly signal: AbortSignal;
  readonly emit: (event: TurnEventBody) => void;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Kept current as the loop runs, so a caller that stops waiting still knows the counts. */
  readonly progress?: { iterations: number; usage: TurnUsage };
  /** Told after each model response, with the counts so far (the turn keeps them in its record). */
  readonly onProgress?: (progress: { readonly iterations: number; readonly usage: TurnUsage }) => void;
  /** Asked about each validated call before it runs; a parked call stops the loop after its batch. */
  readonly gate?: CallGate;
  /** Goes on from a parked batch that has been decided, instead of starting afresh. */
  readonly resume?: LoopResume;
}

/** Where a parked turn goes on from: its counts, and how to settle the decided batch. */
export interface LoopResume {
  readonly iterations: number;
  readonly usage: TurnUsage;
  readonly lastText: string;
  /** The text of the response whose calls were parked. */
  readonly responseText: string;
  /** Runs or refuses the decided calls and answers every call of the batch, in call order. */
  settle(options: {
    readonly toolMap: ReadonlyMap<string, WorkerAgentTool>;
    readonly parallelLimit: number;
    readonly runtime: ToolCallRuntime;
  }): Promise<Pick<DispatchResult, 'outputs' | 'terminatedBy'>>;
}

/** The response whose calls wait for a person: what ran already, and what waits. */
export interface ParkedBatch {
  readonly iteration: number;
  readonly responseText: string;
  readonly calls: readonly ModelFunctionCall[];
  /** Per call position: the output of a call that ran (or was refused), null for a parked one. */
  readonly outputs: readonly (FunctionCallOutputItem | null)[];
  readonly parked: readonly ParkedCall[];
}

/** How the loop stopped. The turn turns this into exactly one terminal event. */
export type LoopOutcome = (
  | { readonly kind: 'answered'; readonly text: string }
  | { readonly kind: 'terminated'; readonly text: string; readonly call: ModelFunctionCall; readonly result: AgentToolResult }
  | { readonly kind: 'iteration_exhausted'; readonly text: string }
  | { readonly kind: 'failed'; readonly error: TurnError; readonly text: string }
  | { readonly kind: 'cancelled' }
  | {
      readonly kind: 'parked';
      /** The conversation up to and including the parked response's items (not its outputs). */
      readonly conversation: readonly ConversationItem[];
      readonly batch: ParkedBatch;
      readonly lastText: string;
    }
) & { readonly iterations: number; readonly usage: TurnUsage };

const SUMMARY_REQUEST =
  'You have used every step this turn allows, so no more tools can run. Without calling any tool, summarise for the user what you did, what you found, and what is still undone.';

/**
 * The agent loop: call the model, run the calls it makes, feed the outputs back, repeat until
 * it answers without calls, a tool ends the turn, the budget runs out, or the turn is aborted.
 * Model faults (unknown tools, bad arguments, failing tools) become outputs the model reads;
 * only a failing model call or cancellation stops the loop early.
 */
export async function runTurnLoop(options: TurnLoopOptions): Promise<LoopOutcome> {
  const { model, signal, emit, completion } = options;
  const { catalog } = options;
  let shownVersion = catalog.providerTools().version;
  const assembled = new Map(catalog.assembled.map((tool) => [toolIdentity(tool.name, tool.namespace), tool]));
  const conversation: ConversationItem[] = [...options.input];
  const failures = new FailureMemory();
  const progress = options.progress ?? { iterations: 0, usage: { inputTokens: 0, outputTokens: 0 } };
  const { usage } = progress;
  const { resume } = options;
  let iterations = resume?.iterations ?? 0;
  let afterToolResults = false;
  let lastText = resume?.lastText ?? '';
  if (resume !== undefined) {
    usage.inputTokens = resume.usage.inputTokens;
    usage.outputTokens = resume.usage.outputTokens;
    progress.iterations = iterations;
  }
  const runtimeFor = (iteration: number): ToolCallRuntime => ({
    iteration,
    signal,
    defaultTimeoutMs: options.toolTimeoutMs,
    emit,
    logger: options.logger,
    clock: options.clock,
    failures,
  });
  /** Text of the response being streamed; a failure mid-response keeps what the user already saw. */
  let streamedText = '';

  const ask = async (toolChoice: 'auto' | 'none'): Promise<ModelResponse> => {
    iterations += 1;
    progress.iterations = iterations;
    const iteration = iterations;
    const providerTools = catalog.providerTools();
    if (providerTools.version !== shownVersion) {
      shownVersion = providerTools.version;
      options.onProviderToolsChanged?.(iteration, providerTools);
    }
    streamedText = '';
    const response = await model
      .respond(
        {
          ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
          input: conversation,
          tools: providerTools.tools,
          toolsJson: providerTools.json,
          toolChoice,
        },
        {
          signal,
          onTextDelta: (delta) => {
            streamedText += delta;
            emit({ type: 'message.delta', iteration, delta });
          },
        },
      )
      .catch((error: unknown) => {
        throw error instanceof ModelError || signal.aborted ? error : new ModelError(String(error), { cause: error });
      });
    usage.inputTokens += response.usage.inputTokens;
    usage.outputTokens += response.usage.outputTokens;
    streamedText = '';
    options.onProgress?.({ iterations, usage });
    if (response.text !== '') {
      lastText = response.text;
      emit({ type: 'message.completed', iteration, text: response.text });
    }
    conversation.push(...response.outputItems);
    catalog.observe?.({ response, iteration, emit });
    return response;
  };
  // A function, not the property: TypeScript would narrow `signal.aborted` across awaits.
  const cancelled = (): boolean => signal.aborted;
  const end = (outcome: DistributiveOutcome): LoopOutcome => ({ ...outcome, iterations, usage: { ...usage } });

  try {
    if (resume !== undefined) {
      // The parked calls were callable when they were parked: reach them even if Tool Search loaded them.
      const toolMap = new Map([...assembled, ...catalog.callable()]);
      const settled = await resume.settle({ toolMap, parallelLimit: options.parallelLimit, runtime: runtimeFor(iterations) });
      conversation.push(...settled.outputs);
      afterToolResults = true;
      if (cancelled()) return end({ kind: 'cancelled' });
      if (settled.terminatedBy !== undefined) return end({ kind: 'terminated', text: resume.responseText, ...settled.terminatedBy });
    }
    for (;;) {
      if (cancelled()) return end({ kind: 'cancelled' });
      if (iterations >= options.maxIterations) {
        if (!completion.summariseOnExhaustion) return end({ kind: 'iteration_exhausted', text: lastText });
        conversation.push({ type: 'message', role: 'user', content: SUMMARY_REQUEST });
        const summary = await ask('none');
        return end({ kind: 'iteration_exhausted', text: summary.text });
      }
      const response = await ask('auto');
      if (cancelled()) return end({ kind: 'cancelled' });

      if (response.calls.length === 0) {
        const decision = completion.onAnswer({ text: response.text, afterToolResults });
        if (decision.kind === 'final') return end({ kind: 'answered', text: response.text });
        if (decision.kind === 'fail') return end({ kind: 'failed', error: decision.error, text: response.text });
        conversation.push({ type: 'message', role: 'user', content: decision.message });
        afterToolResults = false;
        continue;
      }

      const dispatched = await dispatchToolCalls({
        calls: response.calls,
        toolMap: catalog.callable(),
        deferred: assembled,
        parallelLimit: options.parallelLimit,
        runtime: runtimeFor(iterations),
        ...(options.gate === undefined ? {} : { gate: options.gate }),
      });
      if (dispatched.parked.length > 0 && !cancelled()) {
        const batch: ParkedBatch = {
          iteration: iterations,
          responseText: response.text,
          calls: response.calls,
          outputs: dispatched.slots.map((slot) => slot ?? null),
          parked: dispatched.parked,
        };
        return end({ kind: 'parked', conversation: [...conversation], batch, lastText });
      }
      conversation.push(...dispatched.outputs);
      afterToolResults = true;
      if (cancelled()) return end({ kind: 'cancelled' });
      if (dispatched.terminatedBy !== undefined) {
        return end({ kind: 'terminated', text: response.text, ...dispatched.terminatedBy });
      }
    }
  } catch (error) {
    if (cancelled()) {
      // The rest of a cancelled turn's unwinding waits while a crowd of clients is still leaving (see untilAbortsSettle).
      await untilAbortsSettle();
      return end({ kind: 'cancelled' });
    }
    if (!(error instanceof ModelError)) throw error;
    options.logger.warn({ err: error }, 'model call failed');
    return end({ kind: 'failed', error: { code: 'model_error', message: error.message }, text: streamedText === '' ? lastText : streamedText });
  }
}

type DistributiveOutcome = LoopOutcome extends infer T ? (T extends unknown ? Omit<T, 'iterations' | 'usage'> : never) : never;
