import { closeSync, constants, fchownSync, openSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { ARGUMENTS_FD, buildBwrapArguments, SANDBOX_GROUP, SANDBOX_HOME, SANDBOX_PASSWD, type BwrapLayout } from './bwrap-arguments.js';
import { checkCommandRequest } from './check-command-request.js';
import { commandEnvironment, commandPreamble } from './command-environment.js';
import { CommandSandboxError, type CommandRunRequest, type CommandRunResult, type CommandSandbox, type SandboxEnforcement, type SandboxLimits } from './command-sandbox.js';
import { createLimitedCgroup, type CommandCgroup, type PidsCgroupParent } from './pids-cgroup.js';
import { launchInThread, type LaunchCommand } from './command-launcher.js';
import type { CommandInput } from './run-command-process.js';
import { SANDBOX_BIN, type SandboxAdditions } from './sandbox-additions.js';
import type { SandboxIdentity } from './sandbox-identity.js';
import { SANDBOX_NODE_FOLDER } from './service-node.js';

/** The cgroups a command is put in, when this machine lets the service make them. */
export interface CommandCgroupParents {
  readonly pids: PidsCgroupParent | undefined;
  readonly memory: PidsCgroupParent | undefined;
}

interface SandboxBaseOptions {
  readonly allowNetwork: boolean;
  readonly limits: SandboxLimits;
  readonly outputLimitBytes: number;
  readonly cgroups: CommandCgroupParents;
  readonly enforcement: SandboxEnforcement;
  /** fds of the service a child would inherit (found once at start-up); each is covered with /dev/null. */
  readonly inheritedFds: readonly number[];
  readonly logger: Logger;
  readonly clock: Clock;
  /** How a command's process is run: from the launcher thread unless given (tests run it here). */
  readonly launch?: LaunchCommand;
}

/**
 * Makes the command tree the OOM killer's first choice (inherited; /proc is read-only inside
 * the sandbox), joins the command's cgroups (the count, then each procs file), then runs the
 * rest of the arguments: nothing can fork before it is inside them. A failed join stops it.
 */
const JOIN_CGROUPS =
  'echo 1000 > /proc/self/oom_score_adj 2>/dev/null; n=$0; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec "$@"';

/** Runs each command in a fresh bubblewrap sandbox (see `buildBwrapArguments` for what it isolates). */
export function createBubblewrapSandbox(
  options: SandboxBaseOptions & {
    readonly bwrapPath: string;
    readonly layout: BwrapLayout;
    readonly additions?: SandboxAdditions;
    /** The unprivileged host user bwrap is started as; undefined: the service's own (not root). */
    readonly identity: SandboxIdentity | undefined;
    /** The compiled seccomp program, or undefined on an architecture without one. */
    readonly seccomp: Buffer | undefined;
  },
): CommandSandbox {
  const extraPathFolder = (options.additions?.commands.length ?? 0) > 0 ? SANDBOX_BIN : undefined;
  const nodeFolder = options.layout.serviceNode === undefined ? undefined : SANDBOX_NODE_FOLDER;
  const { identity } = options;
  const run = async (request: CommandRunRequest) => {
    const checked = await checkCommandRequest(request);
    // Opened, handed over and closed synchronously (a folder's descriptor, answered at once):
    // the command's result is not held up behind other turns' file work in the thread pool.
    const homeFd = openSync(checked.home, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    try {
      // The home must belong to the sandbox user, or the command could not write in it; the
      // service (root) still reads and writes it.
      if (identity !== undefined) fchownSync(homeFd, identity.uid, identity.gid);
      return await runIn({ request, checked, homeFd });
    } finally {
      closeSync(homeFd);
    }
  };
  const runIn = ({ request, checked, homeFd }: { request: CommandRunRequest; checked: { home: string; cwd: string }; homeFd: number }) => {
    const bwrapArguments = buildBwrapArguments({
      layout: options.layout,
      home: checked.home,
      homeFd: true,
      cwd: checked.cwd,
      allowNetwork: options.allowNetwork,
      tmpSizeBytes: options.limits.tmpSizeBytes,
      env: commandEnvironment({ home: SANDBOX_HOME, extra: request.env, nodeFolder, extraPathFolder }),
      seccomp: options.seccomp !== undefined,
      ...(options.additions === undefined ? {} : { additions: options.additions }),
    });
    const command = ['/bin/sh', '-c', commandPreamble(options.limits), 'sh', request.command];
    // bwrap takes options from --args but the command only from its own argv.
    const bwrap = [options.bwrapPath, '--args', String(ARGUMENTS_FD), '--', ...command];
    // The switch of user happens last, after the cgroups are joined (that needs root), and
    // for good: setpriv sets real, effective and saved ids and drops the groups.
    const launcher =
      identity === undefined
        ? bwrap
        : [identity.setprivPath, `--reuid=${String(identity.uid)}`, `--regid=${String(identity.gid)}`, '--clear-groups', '--no-new-privs', '--', ...bwrap];
    const [file = options.bwrapPath, ...args] = launcher;
    return runInCgroups(options, request, {
      pidNamespace: true,
      file,
      args,
      // bwrap needs no environment, and an empty one cannot leak into the sandbox by mistake.
      env: {},
      cwd: '/',
      // fds 3, 4, 5, 6 (seccomp, empty when none), 7 (the home), then the added commands' scripts from FIRST_COMMAND_FD (8) on.
      inputs: [
        `${bwrapArguments.join('\0')}\0`,
        SANDBOX_PASSWD,
        SANDBOX_GROUP,
        options.seccomp ?? '',
        { fd: homeFd },
        ...(options.additions?.commands ?? []).map((added) => added.script),
      ],
    });
  };
  return {
    kind: 'bubblewrap',
    isolated: true,
    allowNetwork: options.allowNetwork,
    homeInside: SANDBOX_HOME,
    homeOwner: identity === undefined ? undefined : { uid: identity.uid, gid: identity.gid },
    outputLimitBytes: options.outputLimitBytes,
    limits: options.limits,
    enforcement: options.enforcement,
    run,
  };
}

/**
 * Runs commands straight on the host, as the service's user, in the real home folder: no
 * file system, network or PID isolation. The same environment allow-list, resource limits,
 * timeout and group kill apply; a process that leaves the process group (setsid) survives
 * the kill unless a pids cgroup is in use.
 */
export function createHostCommandRunner(
  options: SandboxBaseOptions & {
    /** The Node.js binary whose folder comes first on a command's PATH, so `node` is the service's. */
    readonly nodePath: string;
  },
): CommandSandbox {
  const run = async (request: CommandRunRequest) => {
    const checked = await checkCommandRequest(request);
    const shell = ['-c', commandPreamble(options.limits), 'sh', request.command];
    return runInCgroups(options, request, {
      pidNamespace: false,
      file: '/bin/sh',
      args: shell,
      env: commandEnvironment({ home: checked.home, extra: request.env, nodeFolder: path.dirname(options.nodePath) }),
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
    homeOwner: undefined,
    outputLimitBytes: options.outputLimitBytes,
    limits: options.limits,
    enforcement: options.enforcement,
    run,
  };
}

/**
 * Starts `file args…` for one command: through a shell that first joins the command's
 * cgroups when the sandbox uses them, with the request's timeout, signal and output limit.
 */
function runInCgroups(
  options: SandboxBaseOptions,
  request: CommandRunRequest,
  process: { pidNamespace: boolean; file: string; args: readonly string[]; env: Record<string, string>; cwd: string; inputs: readonly CommandInput[] },
): Promise<CommandRunResult> {
  const launch = options.launch ?? launchInThread;
  return withCommandCgroups(options, (cgroups) => {
    request.onLaunch?.();
    return launch({
      file: '/bin/sh',
      args: ['-c', JOIN_CGROUPS, String(cgroups.length), ...cgroups.map((cgroup) => cgroup.procsFile), process.file, ...process.args],
      env: process.env,
      cwd: process.cwd,
      inputs: [...process.inputs],
      inheritedFds: options.inheritedFds,
      timeoutMs: request.timeoutMs,
      signal: request.signal,
      outputLimitBytes: request.outputLimitBytes ?? options.outputLimitBytes,
      cgroups,
      pidNamespace: process.pidNamespace,
      clock: options.clock,
    });
  });
}

/**
 * Runs `task` in fresh cgroups (pids, memory) where the sandbox uses them, and always removes
 * them after. A group that was removed had no task left in it: where there are groups, that
 * is what `allGone` says.
 */
async function withCommandCgroups(options: SandboxBaseOptions, task: (cgroups: readonly CommandCgroup[]) => Promise<CommandRunResult>): Promise<CommandRunResult> {
  const wanted: { parent: PidsCgroupParent; limits: [string, string][]; what: string }[] = [];
  if (options.cgroups.pids !== undefined) {
    wanted.push({ parent: options.cgroups.pids, limits: [['pids.max', String(options.limits.maxProcesses)]], what: 'process-limit' });
  }
  if (options.cgroups.memory !== undefined) {
    const bytes = String(options.limits.maxMemoryBytes);
    const limits: [string, string][] =
      options.cgroups.memory.version === 2
        ? [['memory.max', bytes], ['memory.swap.max', '0']]
        : [['memory.limit_in_bytes', bytes], ['memory.memsw.limit_in_bytes', bytes]];
    wanted.push({ parent: options.cgroups.memory, limits, what: 'memory-limit' });
  }
  const cgroups: CommandCgroup[] = [];
  let result: CommandRunResult | undefined;
  try {
    for (const group of wanted) {
      try {
        cgroups.push(await createLimitedCgroup({ parent: group.parent, limits: group.limits, optional: ['memory.swap.max', 'memory.memsw.limit_in_bytes'] }));
      } catch (error) {
        // Fail closed: without its cgroup a command would run without the limit start-up promised.
        throw new CommandSandboxError(`could not create the command's ${group.what} cgroup: ${error instanceof Error ? error.message : String(error)}`, {
          cause: error,
        });
      }
    }
    result = await task(cgroups);
  } finally {
    await Promise.all(cgroups.map((cgroup) => cgroup.killAll()));
    const removed = await Promise.all(cgroups.map((cgroup) => cgroup.remove()));
    removed.forEach((done, index) => {
      if (!done) options.logger.warn({ procsFile: cgroups[index]?.procsFile }, 'could not remove a command cgroup');
    });
    if (result !== undefined && cgroups.length > 0) result = { ...result, allGone: removed.every(Boolean) };
  }
  return result;
}
