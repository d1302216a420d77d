import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { z } from 'zod';
import { systemClock } from '../../src/clock.js';
import { createTextCompletionPolicy, type CompletionPolicy } from '../../src/loop/completion-policy.js';
import { FailureMemory } from '../../src/loop/failure-memory.js';
import type { ToolCallRuntime } from '../../src/loop/execute-tool-call.js';
import { runTurnLoop, type LoopOutcome } from '../../src/loop/run-turn-loop.js';
import { createStaticToolCatalog } from '../../src/tools/tool-catalog.js';
import type { ConversationItem, FunctionCallOutputItem, ModelClient, ModelRequest } from '../../src/models/model-client.js';
import { createScriptedModel, type ScriptStep } from '../../src/models/scripted-model.js';
import { defineWorkerTool, type ExecutionMode, type WorkerAgentTool, type WorkerToolOptions } from '../../src/tools/define-worker-tool.js';
import type { AgentToolResult } from '../../src/tools/tool-result.js';
import type { TurnEventBody } from '../../src/events/turn-events.js';
import { toProviderTools } from '../../src/turns/provider-tools.js';

export const silentLogger = pino({ level: 'silent' });

/** What ran when, in order: `start:<id>` / `end:<id>`, and how many ran at once at most. */
export class Timeline {
  readonly entries: string[] = [];
  #active = 0;
  maxActive = 0;

  start(id: string): void {
    this.entries.push(`start:${id}`);
    this.#active += 1;
    this.maxActive = Math.max(this.maxActive, this.#active);
  }

  end(id: string): void {
    this.entries.push(`end:${id}`);
    this.#active -= 1;
  }

  /** Position of an entry; fails loudly when it never happened. */
  at(entry: string): number {
    const index = this.entries.indexOf(entry);
    if (index === -1) throw new Error(`${entry} never happened: ${this.entries.join(', ')}`);
    return index;
  }
}

const idSchema = z.object({ id: z.string() });

/** A tool taking `{id}` that records its run on a timeline and waits `waitMs` (honouring its signal). */
export function timedTool(options: {
  readonly name: string;
  readonly mode: ExecutionMode;
  readonly timeline: Timeline;
  readonly waitMs?: (id: string) => number;
  readonly result?: (id: string) => AgentToolResult;
}): WorkerAgentTool<{ id: string }> {
  const { timeline } = options;
  return defineWorkerTool<{ id: string }>({
    name: options.name,
    description: `Waits a little (${options.mode}).`,
    schema: idSchema,
    executionMode: options.mode,
    isReadOnly: options.mode === 'parallel',
    isDestructive: false,
    describeActivity: (params) => `Running ${params.id}`,
    async execute(params, context) {
      timeline.start(params.id);
      try {
        await sleep(options.waitMs?.(params.id) ?? 30, undefined, { signal: context.signal });
      } finally {
        timeline.end(params.id);
      }
      return options.result?.(params.id) ?? { content: `done ${params.id}` };
    },
  });
}

/** A tool with an arbitrary body; defaults are a harmless read-only sequential tool. */
export function tool<TParams = { id: string }>(
  options: Partial<WorkerToolOptions<TParams>> & Pick<WorkerToolOptions<TParams>, 'name' | 'execute'>,
): WorkerAgentTool<TParams> {
  return defineWorkerTool<TParams>({
    description: `The ${options.name} tool.`,
    schema: idSchema as unknown as z.ZodType<TParams>,
    executionMode: 'sequential',
    isReadOnly: true,
    isDestructive: false,
    describeActivity: () => `Using ${options.name}`,
    ...options,
  });
}

/** A model client that records every request (copied) and answers from another client. */
export function recordingModel(inner: ModelClient): { model: ModelClient; requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    model: {
      model: inner.model,
      respond(request, options) {
        requests.push(structuredClone(request));
        return inner.respond(request, options);
      },
    },
  };
}

export interface LoopRun {
  readonly outcome: LoopOutcome;
  readonly events: TurnEventBody[];
  readonly requests: ModelRequest[];
}

/** Runs the real loop over the scripted model (or `model`), with a static catalog of `tools`. */
export async function runLoop(options: {
  readonly tools: readonly WorkerAgentTool[];
  readonly script?: readonly ScriptStep[];
  readonly model?: ModelClient;
  readonly maxIterations?: number;
  readonly parallelLimit?: number;
  readonly toolTimeoutMs?: number;
  readonly signal?: AbortSignal;
  readonly completion?: CompletionPolicy;
  readonly events?: TurnEventBody[];
}): Promise<LoopRun> {
  const recorded = recordingModel(options.model ?? createScriptedModel({ script: options.script ?? [] }));
  const events = options.events ?? [];
  const catalog = createStaticToolCatalog({ tools: options.tools, toProviderTools: (tools) => toProviderTools(tools) });
  const outcome = await runTurnLoop({
    model: recorded.model,
    input: [{ type: 'message', role: 'user', content: 'Do the thing.' }],
    catalog,
    completion: options.completion ?? createTextCompletionPolicy(),
    maxIterations: options.maxIterations ?? 8,
    toolTimeoutMs: options.toolTimeoutMs ?? 5_000,
    parallelLimit: options.parallelLimit ?? 4,
    signal: options.signal ?? new AbortController().signal,
    emit: (event) => {
      events.push(event);
    },
    logger: silentLogger,
    clock: systemClock,
  });
  return { outcome, events, requests: recorded.requests };
}

/** The function_call_output items of a request, by call id, in the order they were sent. */
export function callOutputs(request: ModelRequest | undefined): FunctionCallOutputItem[] {
  if (request === undefined) throw new Error('no such request');
  return request.input.filter((item: ConversationItem): item is FunctionCallOutputItem => item.type === 'function_call_output');
}

/** The output text of one call in a request. */
export function outputOf(request: ModelRequest | undefined, callId: string): string {
  const output = callOutputs(request).find((item) => item.call_id === callId)?.output;
  if (typeof output !== 'string') throw new Error(`no text output for ${callId}: ${JSON.stringify(output)}`);
  return output;
}

/** A runtime for calling `dispatchToolCalls` directly. */
export function toolCallRuntime(options: { signal?: AbortSignal; events?: TurnEventBody[]; defaultTimeoutMs?: number } = {}): ToolCallRuntime {
  const events = options.events ?? [];
  return {
    iteration: 1,
    signal: options.signal ?? new AbortController().signal,
    defaultTimeoutMs: options.defaultTimeoutMs ?? 5_000,
    emit: (event) => {
      events.push(event);
    },
    logger: silentLogger,
    clock: systemClock,
    failures: new FailureMemory(),
  };
}

/** Events of one type, narrowed. */
export function eventsOf<TType extends TurnEventBody['type']>(events: readonly TurnEventBody[], type: TType): Extract<TurnEventBody, { type: TType }>[] {
  return events.filter((event): event is Extract<TurnEventBody, { type: TType }> => event.type === type);
}
