import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { ARGUMENTS_FD, buildBwrapArguments, SANDBOX_GROUP, SANDBOX_HOME, SANDBOX_PASSWD, type BwrapLayout } from './bwrap-arguments.js';
import { checkCommandRequest } from './check-command-request.js';
import { commandEnvironment, commandPreamble } from './command-environment.js';
import { CommandSandboxError, type CommandRunRequest, type CommandSandbox, type SandboxLimits } from './command-sandbox.js';
import { createCommandCgroup, type CommandCgroup, type PidsCgroupParent } from './pids-cgroup.js';
import { runCommandProcess } from './run-command-process.js';
import { SANDBOX_BIN, type SandboxAdditions } from './sandbox-additions.js';

interface SandboxBaseOptions {
  readonly allowNetwork: boolean;
  readonly limits: SandboxLimits;
  readonly outputLimitBytes: number;
  /** When set, every command runs in its own pids cgroup below this one. */
  readonly cgroupParent: PidsCgroupParent | undefined;
  readonly logger: Logger;
  readonly clock: Clock;
}

/** Joins the command's cgroup before anything runs, so no fork can happen outside it. */
const JOIN_CGROUP = 'echo $$ > "$0" && exec "$@"';

/** Runs each command in a fresh bubblewrap sandbox (see `buildBwrapArguments` for what it isolates). */
export function createBubblewrapSandbox(
  options: SandboxBaseOptions & { readonly bwrapPath: string; readonly layout: BwrapLayout; readonly additions?: SandboxAdditions },
): CommandSandbox {
  const extraPathFolder = (options.additions?.commands.length ?? 0) > 0 ? SANDBOX_BIN : undefined;
  const run = async (request: CommandRunRequest) => {
    const checked = await checkCommandRequest(request);
    const bwrapArguments = buildBwrapArguments({
      layout: options.layout,
      home: checked.home,
      cwd: checked.cwd,
      allowNetwork: options.allowNetwork,
      tmpSizeBytes: options.limits.tmpSizeBytes,
      env: commandEnvironment({ home: SANDBOX_HOME, extra: request.env, extraPathFolder }),
      ...(options.additions === undefined ? {} : { additions: options.additions }),
    });
    const command = ['/bin/sh', '-c', commandPreamble(options.limits), 'sh', request.command];
    // bwrap takes options from --args but the command only from its own argv.
    const launcher = ['--args', String(ARGUMENTS_FD), '--', ...command];
    return runInCgroup(options, request, {
      file: options.bwrapPath,
      args: launcher,
      // bwrap needs no environment, and an empty one cannot leak into the sandbox by mistake.
      env: {},
      cwd: '/',
      // fds 3, 4, 5, then the added commands' scripts from FIRST_COMMAND_FD (6) on.
      inputs: [`${bwrapArguments.join('\0')}\0`, SANDBOX_PASSWD, SANDBOX_GROUP, ...(options.additions?.commands ?? []).map((command) => command.script)],
    });
  };
  return {
    kind: 'bubblewrap',
    isolated: true,
    allowNetwork: options.allowNetwork,
    homeInside: SANDBOX_HOME,
    outputLimitBytes: options.outputLimitBytes,
    limits: options.limits,
    run,
  };
}

/**
 * Runs commands straight on the host, as the service's user, in the real home folder: no
 * file system, network or PID isolation. The same environment allow-list, resource limits,
 * timeout and group kill apply; a process that leaves the process group (setsid) survives
 * the kill unless a pids cgroup is in use.
 */
export function createHostCommandRunner(options: SandboxBaseOptions): CommandSandbox {
  const run = async (request: CommandRunRequest) => {
    const checked = await checkCommandRequest(request);
    const shell = ['-c', commandPreamble(options.limits), 'sh', request.command];
    return runInCgroup(options, request, {
      file: '/bin/sh',
      args: shell,
      env: commandEnvironment({ home: checked.home, extra: request.env }),
      cwd: path.join(checked.home, checked.cwd),
      inputs: [],
    });
  };
  return {
    kind: 'unsafe-host',
    isolated: false,
    // Nothing stops a host command from using the network, whatever the setting says.
    allowNetwork: true,
    homeInside: undefined,
    outputLimitBytes: options.outputLimitBytes,
    limits: options.limits,
    run,
  };
}

/**
 * Starts `file args…` for one command: through a shell that first joins the command's pids
 * cgroup when the sandbox uses them, with the request's timeout, signal and output limit.
 */
function runInCgroup(
  options: SandboxBaseOptions,
  request: CommandRunRequest,
  process: { file: string; args: readonly string[]; env: Record<string, string>; cwd: string; inputs: readonly string[] },
): ReturnType<typeof runCommandProcess> {
  return withCommandCgroup(options, (cgroup) =>
    runCommandProcess({
      file: cgroup === undefined ? process.file : '/bin/sh',
      args: cgroup === undefined ? [...process.args] : ['-c', JOIN_CGROUP, cgroup.procsFile, process.file, ...process.args],
      env: process.env,
      cwd: process.cwd,
      inputs: [...process.inputs],
      timeoutMs: request.timeoutMs,
      signal: request.signal,
      outputLimitBytes: request.outputLimitBytes ?? options.outputLimitBytes,
      cgroup,
      clock: options.clock,
    }),
  );
}

/** Runs `task` in a fresh pids cgroup when the sandbox uses them, and always removes the group after. */
async function withCommandCgroup<T>(options: SandboxBaseOptions, task: (cgroup: CommandCgroup | undefined) => Promise<T>): Promise<T> {
  if (options.cgroupParent === undefined) return task(undefined);
  let cgroup: CommandCgroup;
  try {
    cgroup = await createCommandCgroup({ parent: options.cgroupParent, maxProcesses: options.limits.maxProcesses });
  } catch (error) {
    // Fail closed: without its cgroup a command would run with no process limit when the service is root.
    throw new CommandSandboxError(`could not create the command's process-limit cgroup: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  try {
    return await task(cgroup);
  } finally {
    await cgroup.killAll();
    if (!(await cgroup.remove())) options.logger.warn({ procsFile: cgroup.procsFile }, 'could not remove a command cgroup');
  }
}
