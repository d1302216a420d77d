import { stat } from 'node:fs/promises';
import { z } from 'zod';
import type { CommandSandbox } from '../../sandbox/command-sandbox.js';
import { defineWorkerTool, type WorkerAgentTool } from '../define-worker-tool.js';
import { resolveHomePath } from './home-path.js';
import { commandResultText, completionNote, runCommandDescription, shortCommand, timeoutMessage } from './run-command-report.js';

/** Longer than any command a person would type; longer scripts belong in a file. */
const MAX_COMMAND_CHARS = 20_000;
/** How much longer than the command's own longest timeout the loop's per-call timeout is. */
const LOOP_TIMEOUT_MARGIN_MS = 10_000;

export interface RunCommandSettings {
  readonly defaultTimeoutMs: number;
  readonly maxTimeoutMs: number;
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
 */
export function createRunCommandTool(options: RunCommandToolOptions): WorkerAgentTool<RunCommandParams> {
  const { home, sandbox, settings } = options;
  return defineWorkerTool<RunCommandParams>({
    name: 'run_command',
    description: runCommandDescription({ sandbox, home, defaultTimeoutMs: settings.defaultTimeoutMs, maxTimeoutMs: settings.maxTimeoutMs }),
    schema: runCommandParameters,
    executionMode: 'sequential',
    isReadOnly: false,
    isDestructive: true,
    // The command's own timeout must fire first, so the result says what really happened.
    timeoutMs: settings.maxTimeoutMs + LOOP_TIMEOUT_MARGIN_MS,
    describeActivity: (params) => `Running \`${shortCommand(params.command)}\`${params.cwd === undefined ? '' : ` in ${params.cwd}`}`,
    describeCompletedActivity: (params, result) => {
      const note = completionNote(result.details);
      return `Ran \`${shortCommand(params.command)}\`${note === undefined ? '' : ` (${note})`}`;
    },
    execute: async (params, context) => {
      const timeoutMs = Math.min(params.timeout_ms ?? settings.defaultTimeoutMs, settings.maxTimeoutMs);
      const cwd = params.cwd === undefined ? '' : await resolveFolder(home, params.cwd);
      const result = await sandbox.run({
        command: params.command,
        home,
        cwd,
        timeoutMs,
        signal: context.signal,
        ...(options.env === undefined ? {} : { env: options.env }),
      });
      context.logger.debug({ status: result.status, exitCode: result.exitCode, durationMs: result.durationMs }, `run_command ${result.summary}`);
      if (result.status === 'aborted') throw new Error(result.summary);
      if (result.status === 'timed-out') throw new Error(timeoutMessage(result, settings.maxTimeoutMs));
      return {
        content: commandResultText(result),
        details: {
          exitCode: result.exitCode,
          signal: result.signal,
          durationMs: result.durationMs,
          timedOut: false,
          truncatedBytes: result.truncatedBytes,
        },
      };
    },
  });
}

/** The start folder, relative to the home, after `resolveHomePath` proved it stays inside. */
async function resolveFolder(home: string, requested: string): Promise<string> {
  const resolved = await resolveHomePath(home, requested);
  if (!resolved.exists) throw new Error(`the folder "${resolved.display}" does not exist in the home folder`);
  if (!(await stat(resolved.absolute)).isDirectory()) throw new Error(`"${resolved.display}" is a file, not a folder`);
  return resolved.display === '.' ? '' : resolved.display;
}
