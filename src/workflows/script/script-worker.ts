import { parentPort } from 'node:worker_threads';
import { getQuickJS, type QuickJSContext, type QuickJSRuntime, type QuickJSWASMModule } from 'quickjs-emscripten';
import { guestPrelude, wrapScript } from './guest-prelude.js';
import type { GuestCall, ReplayOutcome, ReplayRequest } from './replay-protocol.js';

/*
 * The worker thread that runs workflow scripts: one fresh QuickJS runtime per replay, with a
 * memory limit and an interrupt handler that stops the guest at its CPU deadline. The host
 * can also terminate this thread outright (the wall-clock bound). Nothing from the host is
 * reachable from the guest but the prelude's `agent()`.
 */

class GuestFault extends Error {
  readonly kind: 'out_of_time' | 'out_of_memory' | 'threw';
  constructor(kind: 'out_of_time' | 'out_of_memory' | 'threw', message: string) {
    super(message);
    this.kind = kind;
  }
}

function replay(quickjs: QuickJSWASMModule, request: ReplayRequest): ReplayOutcome {
  const calls: GuestCall[] = [];
  const runtime: QuickJSRuntime = quickjs.newRuntime();
  let interrupted = false;
  const deadline = performance.now() + request.cpuLimitMs;
  runtime.setMemoryLimit(request.memoryLimitBytes);
  runtime.setMaxStackSize(1024 * 1024);
  runtime.setInterruptHandler(() => {
    interrupted = performance.now() > deadline;
    return interrupted;
  });
  const context = runtime.newContext();
  const fault = (message: string): GuestFault => {
    if (interrupted) return new GuestFault('out_of_time', `the script ran out of CPU time (${request.cpuLimitMs} ms per step)`);
    if (/out of memory/i.test(message)) return new GuestFault('out_of_memory', `the script ran out of memory (${Math.round(request.memoryLimitBytes / 1024 / 1024)} MiB)`);
    return new GuestFault('threw', message);
  };
  const evaluate = (code: string): string => {
    const result = context.evalCode(code);
    if (result.error !== undefined) {
      const error = context.dump(result.error) as unknown;
      result.error.dispose();
      throw fault(describeGuestError(error));
    }
    const value = context.dump(result.value) as unknown;
    result.value.dispose();
    return typeof value === 'string' ? value : JSON.stringify(value ?? null);
  };
  const settle = (): void => {
    const jobs = runtime.executePendingJobs(-1);
    if (jobs.error !== undefined) {
      const error = context.dump(jobs.error) as unknown;
      jobs.error.dispose();
      throw fault(describeGuestError(error));
    }
    if (interrupted) throw fault('interrupted');
    calls.push(...(JSON.parse(evaluate('__takeCalls()')) as GuestCall[]));
  };
  try {
    evaluate(guestPrelude({ seed: request.seed, nowMs: request.nowMs, argsJson: request.argsJson }));
    evaluate(wrapScript(request.script));
    settle();
    for (const round of request.rounds) {
      for (const result of round) {
        const fed = evaluate(`__feed(${result.seq}, ${JSON.stringify(result.valueJson)})`);
        if (fed !== 'true') {
          return { kind: 'nondeterministic', calls, message: `the script is not deterministic: a stored result is for agent() call #${result.seq}, which this replay did not make (or made twice)` };
        }
      }
      settle();
    }
    const outcome = JSON.parse(evaluate('JSON.stringify(globalThis.__outcome ?? null)')) as { ok: true; json: string } | { ok: false; message: string } | null;
    if (outcome === null) return { kind: 'waiting', calls };
    if (outcome.ok) return { kind: 'returned', calls, resultJson: outcome.json };
    const failure = fault(outcome.message);
    return { kind: failure.kind, calls, message: failure.message };
  } catch (error) {
    if (error instanceof GuestFault) return { kind: error.kind, calls, message: error.message };
    return { kind: 'threw', calls, message: error instanceof Error ? error.message : String(error) };
  } finally {
    disposeQuietly(context, runtime);
  }
}

function describeGuestError(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { name, message } = error as { name?: unknown; message?: unknown };
    if (typeof message === 'string') return typeof name === 'string' ? `${name}: ${message}` : message;
  }
  return String(error);
}

/** A runtime stopped mid-allocation can refuse a clean dispose; the worker lives on regardless. */
function disposeQuietly(context: QuickJSContext, runtime: QuickJSRuntime): void {
  try {
    context.dispose();
    runtime.dispose();
  } catch {
    // The memory goes with the module's heap; the next replay gets a fresh runtime.
  }
}

const port = parentPort;
if (port !== null) {
  const quickjs = await getQuickJS();
  port.on('message', (request: ReplayRequest) => {
    port.postMessage(replay(quickjs, request));
  });
  port.postMessage('ready');
}
