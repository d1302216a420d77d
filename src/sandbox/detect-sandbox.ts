import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../clock.js';
import { formatBytes } from '../format/format-bytes.js';
import { inspectBwrapLayout, parseBwrapFeatures, type BwrapFeatures } from './bwrap-arguments.js';
import { COMMAND_PATH } from './command-environment.js';
import { defaultSandboxLimits, type CommandSandbox, type SandboxEnforcement, type SandboxLimits } from './command-sandbox.js';
import { createBubblewrapSandbox, createHostCommandRunner, type CommandCgroupParents } from './create-command-sandbox.js';
import { findInheritableFds } from './inherited-fds.js';
import { probeCgroupController, probePidsCgroup, type PidsCgroupProbe } from './pids-cgroup.js';
import { findServiceNode } from './service-node.js';
import { checkSandboxAdditions, NO_SANDBOX_ADDITIONS, type SandboxAdditions } from './sandbox-additions.js';
import { chooseSandboxIdentity } from './sandbox-identity.js';
import { buildSeccompFilter, seccompSupported } from './seccomp-filter.js';
import { PROBE_OWNER_FILE, probeCommand, readProbeVerdict } from './sandbox-probe.js';

export type { CommandRunRequest, CommandRunResult, CommandSandbox, CommandStatus, SandboxLimits } from './command-sandbox.js';
export { CommandSandboxError, defaultSandboxLimits } from './command-sandbox.js';
export type { SandboxAdditions } from './sandbox-additions.js';

export interface DetectCommandSandboxOptions {
  /** `bwrap` (looked up in the standard system folders) or a path to it. */
  readonly bwrapPath: string;
  /** Run commands on the bare host. Only for machines that are themselves disposable. */
  readonly unsafeWithoutSandbox: boolean;
  readonly allowNetwork: boolean;
  readonly logger: Logger;
  /** Output kept per command (head and tail); 64 KiB when not given. */
  readonly outputLimitBytes?: number;
  readonly limits?: Partial<SandboxLimits>;
  readonly clock?: Clock;
  /**
   * Read-only binds and commands added to every bubblewrap sandbox (e.g. the mcporter CLI,
   * SANDBOX_READ_ONLY_PATHS). Unsafe host commands see the whole machine and need none.
   */
  readonly additions?: SandboxAdditions;
  /** The host user and group a root service runs commands as (SANDBOX_UID / SANDBOX_GID; default 65534). */
  readonly sandboxUid?: number | undefined;
  readonly sandboxGid?: number | undefined;
  /** `setpriv` or a path to it. */
  readonly setprivPath?: string;
  /** The Node.js binary commands get as `node` (SANDBOX_NODE); the one running the service when not given. */
  readonly nodePath?: string;
  /**
   * Where the probe makes its home: the folder that holds the agents' homes (DATA_DIR/agents),
   * so the probe proves the sandbox user can reach them there. The system temp folder when not given.
   */
  readonly probeFolder?: string;
  /** The service's uid; only tests pretend another one, to prove the probe catches a root mapping. */
  readonly serviceUid?: number;
}

const DEFAULT_OUTPUT_LIMIT_BYTES = 64 * 1024;
const TRIAL_TIMEOUT_MS = 15_000;

/**
 * Decides at start-up how `run_command` runs commands, and proves it: bubblewrap must
 * actually start a sandboxed probe here with the very arguments real commands get, as the
 * unprivileged host user, and the probe must find /proc/sys and /sys not writable and the
 * seccomp filter in force. When anything fails, one warning says that run_command is
 * disabled and why, and the result is undefined (the tool is then simply not offered).
 * With `unsafeWithoutSandbox`, commands run on the bare host and a loud warning says so.
 */
export async function detectCommandSandbox(options: DetectCommandSandboxOptions): Promise<CommandSandbox | undefined> {
  const { logger } = options;
  const limits: SandboxLimits = { ...defaultSandboxLimits, ...options.limits };
  const [pidsProbe, memoryProbe, inheritedFds] = await Promise.all([
    probePidsCgroup(),
    probeCgroupController({ controller: 'memory', limitFile: 'memory.limit_in_bytes', probeValue: String(64 * 1024 ** 2) }).then((probe) =>
      probe.usable ? probe : probeCgroupController({ controller: 'memory', limitFile: 'memory.max', probeValue: String(64 * 1024 ** 2) }),
    ),
    findInheritableFds(),
  ]);
  const serviceUid = options.serviceUid ?? process.getuid?.() ?? 0;
  const processLimit = describeProcessLimit(pidsProbe, limits, !options.unsafeWithoutSandbox, serviceUid);
  const memoryLimit = describeMemoryLimit(memoryProbe, limits);
  const cgroups: CommandCgroupParents = {
    pids: pidsProbe.usable ? pidsProbe.parent : undefined,
    memory: memoryProbe.usable ? memoryProbe.parent : undefined,
  };
  const base = {
    allowNetwork: options.allowNetwork,
    limits,
    outputLimitBytes: options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES,
    cgroups,
    inheritedFds,
    logger,
    clock: options.clock ?? systemClock,
  };

  if (options.unsafeWithoutSandbox) {
    logger.warn(
      { unsafe: true, sandbox: 'none', processLimit: processLimit.text, memoryLimit: memoryLimit.text },
      'UNSAFE: run_command runs commands directly on this machine with NO sandbox ' +
        '(UNSAFE_COMMANDS_WITHOUT_SANDBOX=true): they can read every file the service can, ' +
        'write outside the agent home, use the network and see other processes. Use this only on a disposable machine.',
    );
    if (!processLimit.enforced) logger.warn({ unsafe: true }, `run_command: ${processLimit.text}`);
    const enforcement: SandboxEnforcement = { processes: processLimit.mechanism, memory: memoryLimit.mechanism, hostUser: undefined, seccomp: false };
    return createHostCommandRunner({ ...base, enforcement, nodePath: options.nodePath ?? process.execPath });
  }

  const warnDisabled = (reason: string): void => {
    logger.warn(
      { bwrapPath: options.bwrapPath, reason },
      `run_command is disabled: ${reason}. Fix bubblewrap (SANDBOX_BWRAP_PATH) to enable it; ` +
        'UNSAFE_COMMANDS_WITHOUT_SANDBOX=true runs commands without any sandbox, for disposable machines only.',
    );
  };

  const bwrapPath = await findExecutable(options.bwrapPath);
  if (bwrapPath === undefined) {
    warnDisabled(`bubblewrap was not found at "${options.bwrapPath}"${options.bwrapPath.includes('/') ? '' : ` (looked in ${COMMAND_PATH})`}`);
    return undefined;
  }
  const identity = await chooseSandboxIdentity({ serviceUid, uid: options.sandboxUid, gid: options.sandboxGid, setpriv: options.setprivPath ?? 'setpriv' });
  if (!identity.usable) {
    warnDisabled(identity.reason);
    return undefined;
  }
  const arch = process.arch;
  const seccomp = seccompSupported(arch) ? buildSeccompFilter({ arch }) : undefined;
  const features = await bwrapFeatures(bwrapPath);
  const serviceNode = await findServiceNode({ execPath: options.nodePath ?? process.execPath, user: identity.identity });
  if (serviceNode.hostPath === undefined) {
    logger.warn({ reason: serviceNode.reason }, `run_command: commands cannot use the service's Node.js (${serviceNode.reason}); \`node\` in a command is the host's, if it has one`);
  }
  const enforcement: SandboxEnforcement = {
    processes: processLimit.mechanism,
    memory: memoryLimit.mechanism,
    hostUser: identity.identity === undefined ? undefined : `${String(identity.identity.uid)}:${String(identity.identity.gid)}`,
    seccomp: seccomp !== undefined,
  };
  const sandbox = createBubblewrapSandbox({
    ...base,
    enforcement,
    bwrapPath,
    identity: identity.identity,
    seccomp,
    layout: { ...(await inspectBwrapLayout(features)), serviceNode: serviceNode.hostPath },
    additions: await checkSandboxAdditions({ additions: options.additions ?? NO_SANDBOX_ADDITIONS, logger }),
  });
  const failure = await tryTrialCommand({ sandbox, expectedUid: identity.identity?.uid ?? serviceUid, seccomp: seccomp !== undefined, folder: options.probeFolder ?? os.tmpdir() });
  if (failure !== undefined) {
    warnDisabled(failure);
    return undefined;
  }

  logger.info(
    {
      sandbox: 'bubblewrap',
      bwrapPath,
      network: options.allowNetwork,
      hostUser: identity.description,
      seccomp: seccomp !== undefined,
      processLimit: processLimit.text,
      memoryLimit: memoryLimit.text,
    },
    `run_command: commands run in a bubblewrap sandbox as ${identity.description} (network ${options.allowNetwork ? 'on' : 'off'})`,
  );
  if (!processLimit.enforced) logger.warn({ bwrapPath }, `run_command: ${processLimit.text}`);
  if (!memoryLimit.enforced) logger.warn({ bwrapPath }, `run_command: ${memoryLimit.text}`);
  if (seccomp === undefined) logger.warn({ bwrapPath, arch }, `run_command: no seccomp filter for the ${arch} architecture; commands run without it`);
  const missing = [
    ...(features.disableUserns ? [] : ['--disable-userns (commands may create user namespaces)']),
    ...(features.tmpfsSize ? [] : ['--size (/tmp and /dev/shm are not size-limited and count against memory)']),
  ];
  if (missing.length > 0) logger.warn({ bwrapPath, missing }, `run_command: this bwrap is old and lacks ${missing.join(', ')}; bubblewrap 0.8 or later is recommended`);
  return sandbox;
}

function bwrapFeatures(bwrapPath: string): Promise<BwrapFeatures> {
  return new Promise((resolve) => {
    execFile(bwrapPath, ['--help'], { env: {}, timeout: 5_000 }, (_error, stdout, stderr) => {
      resolve(parseBwrapFeatures(`${stdout}${stderr}`));
    });
  });
}

/**
 * How the process count is bounded, and whether it really is. Measured on Linux 6.18 with
 * bwrap 0.8 (`ulimit -u 20`, then 60 background sleeps):
 *
 * - service as root, plain bwrap: all 60 start. The kernel exempts root's own user from
 *   RLIMIT_NPROC, and the sandbox's processes are uid 0 outside.
 * - service as root, `--unshare-user --uid 1000`: all 60 start as well; the namespace maps
 *   uid 1000 back to uid 0 outside, which is what the kernel checks.
 * - service as a normal user: the 21st fork fails, and a fork bomb stays at the limit. The
 *   count is kept per user namespace, so each sandbox has its own budget.
 * - service as root with a pids cgroup (`pids.max` 128): a fork bomb peaks at 128 tasks
 *   and the host keeps starting processes.
 *
 * A root service now starts bwrap as an unprivileged host user (`SandboxIdentity`), so
 * RLIMIT_NPROC holds for it too, counted per sandbox. A pids cgroup is used on top when one
 * can be made here; only the unsafe host runner under root is left without a bound.
 */
function describeProcessLimit(
  probe: PidsCgroupProbe,
  limits: SandboxLimits,
  ownUserNamespace: boolean,
  serviceUid: number,
): { enforced: boolean; text: string; mechanism: string | undefined } {
  if (probe.usable) {
    const mechanism = `pids cgroup v${String(probe.parent.version)}`;
    return { enforced: true, mechanism, text: `at most ${String(limits.maxProcesses)} processes per command (${mechanism})` };
  }
  if (serviceUid !== 0 || ownUserNamespace) {
    // A root service starts bwrap as the unprivileged sandbox user, so RLIMIT_NPROC holds there too.
    const scope = ownUserNamespace ? ' per command' : ", counted with all processes of the service's user";
    return { enforced: true, mechanism: 'RLIMIT_NPROC', text: `at most ${String(limits.maxProcesses)} processes${scope} (RLIMIT_NPROC)` };
  }
  return {
    enforced: false,
    mechanism: undefined,
    text:
      `the process count of a command is NOT limited: the service runs as root, where RLIMIT_NPROC does not apply, ` +
      `and ${probe.reason}; a fork bomb is stopped only by the command timeout`,
  };
}

/**
 * How the memory of a whole command tree is bounded. With a memory cgroup the kernel holds
 * the total; without one only RLIMIT_AS per process (and the tmpfs size) holds, so the
 * tree together may use up to max processes × the per-process limit.
 */
function describeMemoryLimit(probe: PidsCgroupProbe, limits: SandboxLimits): { enforced: boolean; text: string; mechanism: string | undefined } {
  if (probe.usable) {
    const mechanism = `memory cgroup v${String(probe.parent.version)}`;
    return { enforced: true, mechanism, text: `at most ${formatBytes(limits.maxMemoryBytes)} of memory per command, all its processes together (${mechanism})` };
  }
  return {
    enforced: false,
    mechanism: undefined,
    text:
      `the memory of a command's processes together is NOT capped (${probe.reason}); each process is held to ` +
      `${formatBytes(limits.maxMemoryBytesPerProcess)} (RLIMIT_AS) and /tmp to ${formatBytes(limits.tmpSizeBytes)}, and commands are the OOM killer's first choice`,
  };
}

/**
 * Runs the probe command (see `probeCommand`) in a fresh home and reads its verdict: the
 * sandbox must start, the file it made must belong to the expected unprivileged host uid,
 * and nothing of /proc/sys, /sys or the denied calls may be within its reach.
 */
async function tryTrialCommand(options: { sandbox: CommandSandbox; expectedUid: number; seccomp: boolean; folder: string }): Promise<string | undefined> {
  const { sandbox } = options;
  let home: string;
  try {
    home = await mkdtemp(path.join(options.folder, '.sandbox-probe-'));
  } catch (error) {
    return `the sandbox probe could not make its home in ${options.folder}: ${error instanceof Error ? error.message : String(error)}`;
  }
  try {
    const result = await sandbox.run({ command: probeCommand({ seccomp: options.seccomp }), home, timeoutMs: TRIAL_TIMEOUT_MS, signal: new AbortController().signal });
    if (result.status !== 'exited' || result.exitCode !== 0) {
      return `a trial command in the sandbox ${result.summary}${result.output.trim() === '' ? '' : `: ${result.output.trim()}`}`;
    }
    const ownerUid = await stat(path.join(home, PROBE_OWNER_FILE)).then(
      (stats) => stats.uid,
      () => undefined,
    );
    return readProbeVerdict({ output: result.output, ownerUid, expectedUid: options.expectedUid });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/Can't find source path .*Permission denied/.test(message)) {
      return `the sandbox user cannot reach the agent homes under ${options.folder}: every folder above them must be passable (chmod o+x) by uid ${String(options.expectedUid)}: ${message}`;
    }
    return explainFailure(message);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

function explainFailure(fullMessage: string): string {
  const message = fullMessage.length > 600 ? `${fullMessage.slice(0, 600)} …` : fullMessage;
  if (/new namespace|uid map|user namespace/i.test(message)) {
    return (
      `bubblewrap cannot create its namespaces here, so user namespaces are probably refused ` +
      `(user.max_user_namespaces, kernel.unprivileged_userns_clone, an AppArmor rule such as ` +
      `kernel.apparmor_restrict_unprivileged_userns, or a container's seccomp profile): ${message}`
    );
  }
  return message;
}

async function findExecutable(name: string): Promise<string | undefined> {
  const candidates = name.includes('/') ? [path.resolve(name)] : COMMAND_PATH.split(':').map((folder) => path.join(folder, name));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}
