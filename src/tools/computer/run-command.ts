import { z } from 'zod';
import type { CommandSandbox } from '../../sandbox/command-sandbox.js';
import { CallTimedOutError } from '../call-stopped.js';
import { defineWorkerTool, type WorkerAgentTool } from '../define-worker-tool.js';
import { withAgentHomeLock } from './agent-home-lock.js';
import { describeFileError } from './describe-file-error.js';
import { DEFAULT_HOME_MAX_BYTES } from './file-tool-options.js';
import { openHomePath } from './home-fs/open-home-path.js';
import { keepHomeWithinLimit } from './keep-home-within-limit.js';
import { commandLimitDetails, commandResultText, completionNote, homeLimitNote, runCommandDescription, shortCommand, timeoutMessage } from './run-command-report.js';

/** Longer than any command a person would type; longer scripts belong in a file. */
const MAX_COMMAND_CHARS = 20_000;
/** How much longer than the command's own longest timeout the loop's per-call timeout is. */
const LOOP_TIMEOUT_MARGIN_MS = 10_000;

export interface RunCommandSettings {
  readonly defaultTimeoutMs: number;
  readonly maxTimeoutMs: number;
  /** What the agent home may hold after a command (AGENT_HOME_MAX_BYTES); default 1 GiB. */
  readonly homeMaxBytes?: number;
}

export interface RunCommandToolOptions {
  /** The agent home on the host. */
  readonly home: string;
  readonly sandbox: CommandSandbox;
  readonly settings: RunCommandSettings;
  /** Extra environment for every command (e.g. `{ CI: '1' }`); never the service's secrets. */
  readonly env?: Readonly<Record<string, string>>;
}

const runCommandParameters = z.object({
  command: z
    .string()
    .min(1)
    .max(MAX_COMMAND_CHARS)
    .refine((value) => value.trim() !== '', 'the command is empty')
    .refine((value) => !value.includes('\0'), 'the command contains a NUL byte')
    .describe('The shell command, run with /bin/sh -c (pipes, &&, redirections work).'),
  timeout_ms: z.number().int().min(1).optional().describe('Kill the command after this many milliseconds; values above the maximum are lowered to it.'),
  cwd: z.string().min(1).max(4096).optional().describe('Folder to start in, relative to the home folder. Default: the home folder.'),
});

export type RunCommandParams = z.infer<typeof runCommandParameters>;

/**
 * `run_command`: a shell command in the agent home, through the command sandbox. A command
 * that runs and exits, with any exit code, is a result the model reads; a command that
 * could not run, timed out or was cancelled is thrown, so the loop reports it as an error.
 * A cancelled command reports how far it got (`reportStopped`) as soon as its processes are
 * gone, and a timed-out one throws CallTimedOutError: the call's `outcome` is the truth.
 */
export function createRunCommandTool(options: RunCommandToolOptions): WorkerAgentTool<RunCommandParams> {
  const { home, sandbox, settings } = options;
  return defineWorkerTool<RunCommandParams>({
    name: 'run_command',
    description: runCommandDescription({
      sandbox,
      home,
      defaultTimeoutMs: settings.defaultTimeoutMs,
      maxTimeoutMs: settings.maxTimeoutMs,
      homeMaxBytes: settings.homeMaxBytes ?? DEFAULT_HOME_MAX_BYTES,
    }),
    schema: runCommandParameters,
    executionMode: 'sequential',
    isReadOnly: false,
    isDestructive: true,
    // Says how far a cancelled command got, once its processes are gone: the call's outcome is then `cancelled`, not `maybe_ran`.
    reportsStop: true,
    // The command's own timeout must fire first, so the result says what really happened.
    timeoutMs: settings.maxTimeoutMs + LOOP_TIMEOUT_MARGIN_MS,
    describeActivity: (params) => `Running \`${shortCommand(params.command)}\`${params.cwd === undefined ? '' : ` in ${params.cwd}`}`,
    describeCompletedActivity: (params, result) => {
      const note = completionNote(result.details);
      return `Ran \`${shortCommand(params.command)}\`${note === undefined ? '' : ` (${note})`}`;
    },
    // The agent's file tools wait while its command runs (and the other way round), across
    // turns and service processes: an agent cannot race its own file tools with a rename loop.
    execute: async (params, context) => {
      // Set inside the home's lock, read when the call is stopped.
      const progress = { launched: false };
      // Cancelled before the command was handed over: it will never start, and that is known now,
      // however long the preparation (the home's lock and upkeep, the cgroups) takes to unwind.
      const onAbort = (): void => {
        if (!progress.launched) context.reportStopped('not_started');
      };
      if (context.signal.aborted) onAbort();
      else context.signal.addEventListener('abort', onAbort, { once: true });
      try {
        return await withAgentHomeLock({ home, mode: 'exclusive', signal: context.signal }, async () => {
          const timeoutMs = Math.min(params.timeout_ms ?? settings.defaultTimeoutMs, settings.maxTimeoutMs);
          const cwd = params.cwd === undefined ? '' : await resolveFolder(home, params.cwd);
          const homeMaxBytes = settings.homeMaxBytes ?? DEFAULT_HOME_MAX_BYTES;
          // What the service wrote into the home since (saved pages, skills) becomes the sandbox user's.
          const startedAt = Date.now();
          await keepHomeWithinLimit({ home, owner: sandbox.homeOwner, maxBytes: homeMaxBytes, changedSince: undefined });
          const result = await sandbox.run({
            command: params.command,
            home,
            cwd,
            timeoutMs,
            signal: context.signal,
            ...(options.env === undefined ? {} : { env: options.env }),
            onLaunch: () => {
              progress.launched = true;
            },
          });
          // Said before the home's upkeep below: the turn's end need not wait for it. (A cancel
          // before the hand-over was reported then.)
          if (result.status === 'aborted' && progress.launched && (!result.spawned || result.allGone)) context.reportStopped(result.spawned ? 'cancelled' : 'not_started');
          // Even a killed command may have filled the home: what it added over the limit is not kept.
          const upkeep = await keepHomeWithinLimit({ home, owner: sandbox.homeOwner, maxBytes: homeMaxBytes, changedSince: startedAt });
          context.logger.debug({ status: result.status, exitCode: result.exitCode, durationMs: result.durationMs }, `run_command ${result.summary}`);
          const note = homeLimitNote(upkeep, homeMaxBytes);
          if (result.status === 'aborted') throw new Error(`${result.summary}${note === undefined ? '' : `\n${note}`}`);
          if (result.status === 'timed-out') {
            throw new CallTimedOutError(`${timeoutMessage(result, settings.maxTimeoutMs)}${note === undefined ? '' : `\n${note}`}`, result.allGone ? 'cancelled' : 'maybe_ran');
          }
          return {
            content: note === undefined ? commandResultText(result) : `${commandResultText(result)}\n${note}`,
            details: {
              exitCode: result.exitCode,
              signal: result.signal,
              durationMs: result.durationMs,
              timedOut: false,
              truncatedBytes: result.truncatedBytes,
              homeBytes: upkeep.bytes,
              removedOverLimit: upkeep.removed.map((file) => file.display),
              limits: commandLimitDetails({ sandbox, homeMaxBytes }),
            },
          };
        });
      } finally {
        context.signal.removeEventListener('abort', onAbort);
      }
    },
  });
}

/** The start folder, relative to the home, after `openHomePath` proved it stays inside. */
async function resolveFolder(home: string, requested: string): Promise<string> {
  const resolved = await openHomePath({ home, requested, followLast: true }).catch((error: unknown) => {
    throw describeFileError(error, requested);
  });
  try {
    if (resolved.stats === undefined) throw new Error(`the folder "${resolved.display}" does not exist in the home folder`);
    if (!resolved.stats.isDirectory()) throw new Error(`"${resolved.display}" is a file, not a folder`);
    return resolved.display === '.' ? '' : resolved.display;
  } finally {
    await resolved.close();
  }
}
