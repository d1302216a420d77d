/** One command to run in the agent home. */
export interface CommandRunRequest {
  /** Shell text, run as `/bin/sh -c <command>`. */
  readonly command: string;
  /** The agent home on the host: the only place the command may write. */
  readonly home: string;
  /**
   * Where to start, relative to the home ("" or "." for the home itself). Callers check it
   * with `openHomePath` first; the sandbox refuses anything absolute or with `..`.
   */
  readonly cwd?: string;
  /** The command is killed (SIGKILL, whole process tree) when this elapses. */
  readonly timeoutMs: number;
  /** Fires when the turn is cancelled; the command is killed at once. */
  readonly signal: AbortSignal;
  /** Extra environment variables (names like `CI` or `NODE_ENV`); the fixed ones win. */
  readonly env?: Readonly<Record<string, string>>;
  /** Overrides the sandbox's output limit for this command. */
  readonly outputLimitBytes?: number;
  /**
   * Called at the instant the command is handed over to be started. A cancel before it means
   * the command never starts (the start looks at `signal` first), so the caller may say so at
   * once, while the sandbox's preparation unwinds.
   */
  readonly onLaunch?: () => void;
}

/** How a command ended, for the caller to report truthfully. */
export type CommandStatus =
  /** The command ran to its end and exited, with any exit code. */
  | 'exited'
  /** The command died of a signal nobody in the service sent (a crash, an OOM kill …). */
  | 'signaled'
  /** The service killed it when its timeout elapsed. */
  | 'timed-out'
  /** The service killed it because the turn was cancelled. */
  | 'aborted';

export interface CommandRunResult {
  readonly status: CommandStatus;
  /** The exit code, or null when it died of a signal. */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly durationMs: number;
  /** stdout and stderr together in arrival order; head and tail with a cut note when long. */
  readonly output: string;
  readonly outputBytes: number;
  /** Bytes cut from the middle of the output (0 when it all fit). */
  readonly truncatedBytes: number;
  /**
   * What happened, in one truthful phrase: "exited with code 0 after 3.1 s", "timed out
   * after 5 s, killed", "aborted after 1.2 s: the turn was cancelled".
   */
  readonly summary: string;
  /** False only when the request was cancelled before the command's process was started. */
  readonly spawned: boolean;
  /**
   * True when every process the command started is known to be gone: its cgroups were emptied
   * and removed, or, without cgroups, its process group ended and with it the sandbox's PID
   * namespace (whose end takes every process inside along). False when one may be left (a
   * host command that left its process group, a cgroup that would not empty).
   */
  readonly allGone: boolean;
}

/** A place to run commands: a bubblewrap sandbox, or (only when configured) the bare host. */
export interface CommandSandbox {
  readonly kind: 'bubblewrap' | 'unsafe-host';
  /** False only for `unsafe-host`: the command then sees the whole machine. */
  readonly isolated: boolean;
  readonly allowNetwork: boolean;
  /** The home as the command sees it (`/home/agent`); undefined when it sees the real path. */
  readonly homeInside: string | undefined;
  /**
   * The host user and group that must own the home and what is in it for commands to change
   * it (the sandbox's unprivileged user when the service is root); undefined when that is the
   * service's own user. The file tools give what they create to this owner.
   */
  readonly homeOwner?: { readonly uid: number; readonly gid: number } | undefined;
  readonly outputLimitBytes: number;
  readonly limits: SandboxLimits;
  /** How the limits hold here; absent only in sandboxes made by tests. */
  readonly enforcement?: SandboxEnforcement;
  /**
   * Runs one command. Resolves for every way the command can end (see `status`); rejects
   * with `CommandSandboxError` only when the sandbox itself could not start it.
   */
  run(request: CommandRunRequest): Promise<CommandRunResult>;
}

/** Resource limits applied to every command. */
export interface SandboxLimits {
  /** Processes and threads alive at once: bounds a fork bomb. */
  readonly maxProcesses: number;
  /** Address space per process (RLIMIT_AS): bounds a single memory hog. */
  readonly maxMemoryBytesPerProcess: number;
  /** Largest file a command may write (RLIMIT_FSIZE). */
  readonly maxFileSizeBytes: number;
  /** Size of the fresh /tmp and /dev/shm (tmpfs lives in memory). */
  readonly tmpSizeBytes: number;
  /**
   * Memory of the whole command tree together (a memory cgroup's limit, /tmp included), when
   * a memory cgroup can be made here; see `SandboxEnforcement.memory` for whether it is.
   */
  readonly maxMemoryBytes: number;
}

export const defaultSandboxLimits: SandboxLimits = {
  maxProcesses: 512,
  maxMemoryBytesPerProcess: 4 * 1024 ** 3,
  maxFileSizeBytes: 2 * 1024 ** 3,
  tmpSizeBytes: 512 * 1024 ** 2,
  maxMemoryBytes: 2 * 1024 ** 3,
};

/** How each limit is really enforced on this machine, in words the model and operator read. */
export interface SandboxEnforcement {
  /** e.g. "pids cgroup v1" or "RLIMIT_NPROC"; undefined when nothing bounds the count. */
  readonly processes: string | undefined;
  /** e.g. "memory cgroup v1"; undefined when only the per-process RLIMIT_AS holds. */
  readonly memory: string | undefined;
  /** The host uid:gid commands run as ("65534:65534"), or undefined for the service's own. */
  readonly hostUser: string | undefined;
  /** Whether the seccomp deny list applies. */
  readonly seccomp: boolean;
}

/** The sandbox could not run the command at all (bwrap failed, a bad request): a service fault. */
export class CommandSandboxError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CommandSandboxError';
  }
}
