import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import { pause, whenAborted } from '../concurrency/wait.js';
import { runTurnLoop, type LoopOutcome, type LoopResume } from '../loop/run-turn-loop.js';
import type { ToolCatalog } from '../tools/tool-catalog.js';
import type { TurnStore } from '../store/turn-store.js';
import type { PlannedTurn } from './plan-turn.js';
import type { TurnApprovals } from './turn-approvals.js';
import { resolveTurnOutcome, storeFailedOutcome } from './turn-outcome.js';
import type { TurnRun } from './turn-run.js';

/** How long a cancelled loop may take to unwind before the turn is closed without it. */
const UNWIND_GRACE_MS = 1_000;

/**
 * Runs a started turn's loop to its end and records exactly one terminal event. Whatever
 * happens — an answer, a failure, cancellation, a bug — the turn is finished when this
 * resolves.
 */
export async function driveTurn(options: {
  readonly run: TurnRun;
  readonly plan: PlannedTurn;
  readonly catalog: ToolCatalog;
  readonly maxIterations: number;
  readonly timeoutMs: number;
  readonly config: Config;
  readonly store: TurnStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly approvals?: TurnApprovals;
  /** Goes on from a decided parked batch (src/approvals/resume-parked-turn.ts). */
  readonly resume?: LoopResume;
}): Promise<void> {
  const { run, plan, logger, config, approvals } = options;
  const startedAt = options.clock.monotonicMs();
  const timeout = setTimeout(() => {
    run.cancel('timeout');
  }, options.timeoutMs);
  timeout.unref();
  let terminal: ReturnType<typeof resolveTurnOutcome>;
  try {
    const progress = { iterations: 0, usage: { inputTokens: 0, outputTokens: 0 } };
    const loop = runTurnLoop({
      progress,
      model: plan.model,
      ...(plan.instructions === undefined ? {} : { instructions: plan.instructions }),
      input: plan.input,
      catalog: options.catalog,
      onProviderToolsChanged: (iteration, list) => {
        void options.store.recordProviderTools(run.id, iteration, list.json).catch((error: unknown) => {
          logger.error({ err: error }, 'could not store a changed provider tool list');
        });
      },
      completion: plan.completion,
      maxIterations: options.maxIterations,
      toolTimeoutMs: config.limits.toolTimeoutMs,
      parallelLimit: config.limits.parallelToolLimit,
      signal: run.signal,
      emit: (event) => {
        run.emit(event);
      },
      onProgress: (current) => {
        run.recordProgress(current);
      },
      logger,
      clock: options.clock,
      ...(approvals === undefined ? {} : { gate: approvals.gate }),
      ...(options.resume === undefined ? {} : { resume: options.resume }),
    });
    const outcome = await Promise.race([loop, unwound(run.signal, loop, progress)]);
    if (outcome.kind === 'parked') {
      if (approvals === undefined) throw new Error('the loop parked a call in a turn without approvals');
      clearTimeout(timeout);
      const remainingMs = Math.max(1, options.timeoutMs - (options.clock.monotonicMs() - startedAt));
      await approvals.park({ outcome, modelSteps: plan.model.stepsTaken?.(), maxIterations: options.maxIterations, remainingMs });
      return;
    }
    terminal = resolveTurnOutcome({ outcome, kind: run.kind, maxIterations: options.maxIterations, cancelReason: run.cancelReason });
    // The loop was stopped because its events could not be stored: that, not a cancel, is how it ended.
    if (run.storeFailure !== undefined) terminal = storeFailedOutcome(terminal.finish);
  } catch (error) {
    logger.error({ err: error }, 'turn failed with an internal error');
    const failure = { code: 'internal_error', message: 'the turn stopped because of an internal error' };
    const usage = { inputTokens: 0, outputTokens: 0 };
    terminal = {
      event: { type: 'turn.failed', error: failure, iterations: 0, usage },
      finish: { status: 'failed', iterations: 0, usage, output: null, error: failure, outcome: 'internal_error' },
    };
  }
  clearTimeout(timeout);
  await run.finish(terminal.event, terminal.finish);
}

/**
 * After cancellation, gives the loop a moment to unwind, then settles as cancelled without
 * it: a model client or tool that ignores its signal cannot keep a cancelled turn open.
 */
async function unwound(
  signal: AbortSignal,
  loop: Promise<LoopOutcome>,
  progress: { iterations: number; usage: { inputTokens: number; outputTokens: number } },
): Promise<LoopOutcome> {
  await whenAborted(signal);
  return Promise.race([
    loop,
    pause(UNWIND_GRACE_MS).then((): LoopOutcome => ({ kind: 'cancelled', iterations: progress.iterations, usage: { ...progress.usage } })),
  ]);
}
