import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../clock.js';
import { inspectBwrapLayout, parseBwrapFeatures, type BwrapFeatures } from './bwrap-arguments.js';
import { COMMAND_PATH } from './command-environment.js';
import { defaultSandboxLimits, type CommandSandbox, type SandboxLimits } from './command-sandbox.js';
import { createBubblewrapSandbox, createHostCommandRunner } from './create-command-sandbox.js';
import { probePidsCgroup, type PidsCgroupProbe } from './pids-cgroup.js';
import { checkSandboxAdditions, NO_SANDBOX_ADDITIONS, type SandboxAdditions } from './sandbox-additions.js';

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
}

const DEFAULT_OUTPUT_LIMIT_BYTES = 64 * 1024;
const TRIAL_TIMEOUT_MS = 15_000;

/**
 * Decides at start-up how `run_command` runs commands, and proves it: bubblewrap must
 * actually start a sandboxed `true` here with the very arguments real commands get. When
 * it cannot, one warning says that run_command is disabled and why, and the result is
 * undefined (the tool is then simply not offered). With `unsafeWithoutSandbox`, commands
 * run on the bare host and a loud warning says so.
 */
export async function detectCommandSandbox(options: DetectCommandSandboxOptions): Promise<CommandSandbox | undefined> {
  const { logger } = options;
  const limits: SandboxLimits = { ...defaultSandboxLimits, ...options.limits };
  const base = {
    allowNetwork: options.allowNetwork,
    limits,
    outputLimitBytes: options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES,
    logger,
    clock: options.clock ?? systemClock,
  };
  const cgroupProbe = await probePidsCgroup();
  const processLimit = describeProcessLimit(cgroupProbe, limits, !options.unsafeWithoutSandbox);

  if (options.unsafeWithoutSandbox) {
    logger.warn(
      { unsafe: true, sandbox: 'none', processLimit: processLimit.text },
      'UNSAFE: run_command runs commands directly on this machine with NO sandbox ' +
        '(UNSAFE_COMMANDS_WITHOUT_SANDBOX=true): they can read every file the service can, ' +
        'write outside the agent home, use the network and see other processes. Use this only on a disposable machine.',
    );
    if (!processLimit.enforced) logger.warn({ unsafe: true }, `run_command: ${processLimit.text}`);
    return createHostCommandRunner({ ...base, cgroupParent: cgroupProbe.usable ? cgroupProbe.parent : undefined });
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
  const features = await bwrapFeatures(bwrapPath);
  const sandbox = createBubblewrapSandbox({
    ...base,
    bwrapPath,
    layout: await inspectBwrapLayout(features),
    cgroupParent: cgroupProbe.usable ? cgroupProbe.parent : undefined,
    additions: await checkSandboxAdditions({ additions: options.additions ?? NO_SANDBOX_ADDITIONS, logger }),
  });
  const failure = await tryTrialCommand(sandbox);
  if (failure !== undefined) {
    warnDisabled(failure);
    return undefined;
  }

  logger.info(
    { sandbox: 'bubblewrap', bwrapPath, network: options.allowNetwork, processLimit: processLimit.text },
    `run_command: commands run in a bubblewrap sandbox (network ${options.allowNetwork ? 'on' : 'off'})`,
  );
  if (!processLimit.enforced) logger.warn({ bwrapPath }, `run_command: ${processLimit.text}`);
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
 * Running the sandbox as another uid would make RLIMIT_NPROC work for root too, but the
 * home and what the file tools write there belong to the service's user, so commands could
 * no longer change them. Hence: a pids cgroup when one can be made here, RLIMIT_NPROC
 * otherwise (always set by the preamble), and a warning when neither holds (root without a
 * writable cgroup). Memory is bounded per process (RLIMIT_AS) and in /tmp (tmpfs size),
 * and every command is the OOM killer's first choice; a total memory cap would need a
 * memory cgroup, which this service does not create.
 */
function describeProcessLimit(probe: PidsCgroupProbe, limits: SandboxLimits, ownUserNamespace: boolean): { enforced: boolean; text: string } {
  if (probe.usable) {
    return { enforced: true, text: `at most ${limits.maxProcesses} processes per command (pids cgroup v${probe.parent.version})` };
  }
  if (process.getuid?.() !== 0) {
    const scope = ownUserNamespace ? ' per command' : ", counted with all processes of the service's user";
    return { enforced: true, text: `at most ${limits.maxProcesses} processes${scope} (RLIMIT_NPROC)` };
  }
  return {
    enforced: false,
    text:
      `the process count of a command is NOT limited: the service runs as root, where RLIMIT_NPROC does not apply, ` +
      `and ${probe.reason}; a fork bomb is stopped only by the command timeout`,
  };
}

async function tryTrialCommand(sandbox: CommandSandbox): Promise<string | undefined> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'turn-runtime-sandbox-check-'));
  try {
    const result = await sandbox.run({ command: 'true', home, timeoutMs: TRIAL_TIMEOUT_MS, signal: new AbortController().signal });
    if (result.status === 'exited' && result.exitCode === 0) return undefined;
    return `a trial command in the sandbox ${result.summary}${result.output.trim() === '' ? '' : `: ${result.output.trim()}`}`;
  } catch (error) {
    return explainFailure(error instanceof Error ? error.message : String(error));
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
