import { constants } from 'node:os';
import type { CommandRunResult, CommandSandbox } from '../../sandbox/command-sandbox.js';
import { formatDuration } from '../../format/format-duration.js';
import type { JsonObject } from '../../json.js';
import { formatBytes } from '../../format/format-bytes.js';
import type { HomeUpkeep } from './keep-home-within-limit.js';

const LABEL_CHARS = 60;

/** A command as a label shows it: one line, about 60 characters, "…" when shortened. */
export function shortCommand(command: string): string {
  const oneLine = command.replace(/\s+/g, ' ').trim();
  const characters = Array.from(oneLine);
  return characters.length <= LABEL_CHARS ? oneLine : `${characters.slice(0, LABEL_CHARS - 1).join('')}…`;
}

/** "exit 0, 3.1 s" or "killed by SIGSEGV, 0.2 s", from a result's details. */
export function completionNote(details: JsonObject | undefined): string | undefined {
  const duration = typeof details?.['durationMs'] === 'number' ? formatDuration(details['durationMs']) : undefined;
  const exitCode = details?.['exitCode'];
  const signal = details?.['signal'];
  const ending = typeof exitCode === 'number' ? `exit ${String(exitCode)}` : typeof signal === 'string' ? `killed by ${signal}` : undefined;
  if (ending === undefined) return undefined;
  return duration === undefined ? ending : `${ending}, ${duration}`;
}

/** What the model reads: how it ended, how long it took, then the output with any cut note. */
export function commandResultText(result: CommandRunResult): string {
  const lines: string[] = [];
  if (result.exitCode !== null) {
    lines.push(`exit code: ${String(result.exitCode)}${signalHint(result.exitCode)}`);
  } else {
    lines.push(`killed by signal ${String(result.signal)}`);
  }
  lines.push(`duration: ${formatDuration(result.durationMs)}`);
  if (result.outputBytes === 0) {
    lines.push('output: (none)');
    return lines.join('\n');
  }
  const cut = result.truncatedBytes > 0 ? `, ${result.truncatedBytes.toLocaleString('en-US')} cut from the middle` : '';
  const size = result.outputBytes === 1 ? '1 byte' : `${result.outputBytes.toLocaleString('en-US')} bytes`;
  lines.push(`output (${size}${cut}):`, result.output);
  return lines.join('\n');
}

/** The timeout, as thrown to the model: the truthful phrase, then what the command printed before. */
export function timeoutMessage(result: CommandRunResult, maxTimeoutMs: number): string {
  const printed = result.outputBytes === 0 ? 'It printed nothing before it was killed.' : `Output before it was killed:\n${result.output}`;
  return (
    `The command ${result.summary}. ${printed}\n` +
    `If it needs longer, pass a larger timeout_ms (at most ${String(maxTimeoutMs)}); ` +
    'if it waits for input, make it non-interactive (there is no stdin).'
  );
}

/** Shells report death by signal N as exit code 128 + N; say so, since it usually means a crash or a kill. */
function signalHint(exitCode: number): string {
  if (exitCode <= 128 || exitCode > 128 + 64) return '';
  const number = exitCode - 128;
  const name = Object.entries(constants.signals).find(([, value]) => value === number)?.[0];
  if (name === undefined) return '';
  const why = name === 'SIGKILL' ? ', for example for running out of memory or processes' : '';
  return ` (128 + ${String(number)}: probably killed by ${name}${why})`;
}

/** The tool description: what the sandbox allows, so the model does not have to find out by failing. */
export function runCommandDescription(options: {
  sandbox: CommandSandbox;
  home: string;
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  homeMaxBytes: number;
}): string {
  const { sandbox } = options;
  const limit = formatBytes(sandbox.outputLimitBytes);
  const where = sandbox.homeInside ?? options.home;
  const lines = sandbox.isolated
    ? [
        'Runs a shell command (/bin/sh -c) in a sandbox and returns its exit code and output.',
        `- It starts in your home folder ${where} (also $HOME; \`cwd\` picks a subfolder). Only the home folder is writable, plus an empty /tmp that is discarded after each command; system folders are read-only.`,
        sandbox.allowNetwork
          ? '- Network access is on.'
          : '- Network access is off: downloads, package installs and API calls fail; work with what is installed and in the home.',
        '- Every command runs in a fresh sandbox: only files in the home persist, and background processes end when the command ends.',
      ]
    : [
        `Runs a shell command (/bin/sh -c) directly on the host, without a sandbox, and returns its exit code and output.`,
        `- It starts in your home folder ${where} (also $HOME; \`cwd\` picks a subfolder). Keep your work inside it.`,
        '- Background processes are ended when the command ends.',
      ];
  const total = sandbox.enforcement?.memory === undefined ? '' : `, ${formatBytes(sandbox.limits.maxMemoryBytes)} for all of them together`;
  lines.push(
    `- Limits: at most ${String(sandbox.limits.maxProcesses)} processes, ${formatBytes(sandbox.limits.maxMemoryBytesPerProcess)} of memory per process${total}; ` +
      `the home folder may hold ${formatBytes(options.homeMaxBytes)} (files a command adds beyond that are removed after it).`,
    '- There is no stdin: use non-interactive flags (-y, --yes, --no-pager, CI=1).',
    `- stdout and stderr come back together, at most ${limit}: beyond that the middle is cut and the beginning and end are kept. ` +
      'For long output, redirect it to a file in the home (cmd > out.log 2>&1) and read parts with head, tail, grep or sed -n.',
    `- Timeout: ${formatDuration(options.defaultTimeoutMs)} unless you pass timeout_ms (at most ${formatDuration(options.maxTimeoutMs)}); the command is killed when it runs out.`,
    '- A non-zero exit code is not an error of the tool: read the exit code and the output.',
  );
  return lines.join('\n');
}

/** The limits a command ran under, as the details of run_command show them. */
export function commandLimitDetails(options: { sandbox: CommandSandbox; homeMaxBytes: number }): JsonObject {
  const { limits, enforcement } = options.sandbox;
  return {
    maxProcesses: limits.maxProcesses,
    processLimit: enforcement?.processes ?? null,
    maxMemoryBytesPerProcess: limits.maxMemoryBytesPerProcess,
    maxMemoryBytes: enforcement?.memory === undefined ? null : limits.maxMemoryBytes,
    memoryLimit: enforcement?.memory ?? null,
    maxFileSizeBytes: limits.maxFileSizeBytes,
    tmpSizeBytes: limits.tmpSizeBytes,
    homeMaxBytes: options.homeMaxBytes,
    hostUser: enforcement?.hostUser ?? null,
    seccomp: enforcement?.seccomp ?? false,
  };
}

/** What the model is told when a command took the home over its limit; undefined when it did not. */
export function homeLimitNote(upkeep: HomeUpkeep, homeMaxBytes: number): string | undefined {
  if (upkeep.removed.length === 0 && !upkeep.stillOver) return undefined;
  const parts: string[] = [];
  if (upkeep.removed.length > 0) {
    const names = upkeep.removed.slice(0, 10).map((file) => `${file.display} (${formatBytes(file.bytes)})`);
    const more = upkeep.removed.length > 10 ? ` and ${String(upkeep.removed.length - 10)} more` : '';
    parts.push(`The command took the home folder over its limit of ${formatBytes(homeMaxBytes)}, so files it wrote were removed: ${names.join(', ')}${more}.`);
  }
  if (upkeep.stillOver) parts.push(`The home folder holds ${formatBytes(upkeep.bytes)}, over its limit of ${formatBytes(homeMaxBytes)}: delete files before writing more.`);
  return parts.join(' ');
}
