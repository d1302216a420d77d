import { CommandSandboxError, type SandboxLimits } from './command-sandbox.js';

/** The search path every command gets, in or out of the sandbox. */
export const COMMAND_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The only variables a command sees besides the caller's extras (which cannot replace these). */
export function commandEnvironment(options: {
  home: string;
  extra: Readonly<Record<string, string>> | undefined;
  /** The folder of the service's own Node.js, searched first (`node` is the service's). */
  nodeFolder?: string | undefined;
  /** A folder searched after the standard ones (the sandbox's added commands). */
  extraPathFolder?: string | undefined;
}): Record<string, string> {
  const folders = [options.nodeFolder, COMMAND_PATH, options.extraPathFolder].filter((folder) => folder !== undefined);
  const fixed: Record<string, string> = {
    PATH: folders.join(':'),
    HOME: options.home,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    TMPDIR: '/tmp',
    USER: 'agent',
    LOGNAME: 'agent',
  };
  // Node's WebAssembly reserves far more address space than the per-process limit allows
  // (undici's HTTP parser is WebAssembly, so even `fetch` dies with "Out of memory"). Without
  // the trap handler it stays inside the limit. A default: a command may set its own.
  const env: Record<string, string> = { NODE_OPTIONS: '--disable-wasm-trap-handler' };
  for (const [name, value] of Object.entries(options.extra ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name)) throw new CommandSandboxError(`"${name}" is not a valid environment variable name`);
    if (UNSAFE_NAMES.test(name)) throw new CommandSandboxError(`the environment variable ${name} may not be set for a command`);
    if (value.includes('\0')) throw new CommandSandboxError(`the environment variable ${name} contains a NUL byte`);
    env[name] = value;
  }
  return { ...env, ...fixed };
}

/**
 * Variables that would change how the preamble itself runs (before the limits are set):
 * the dynamic linker's and the shell's start-up hooks. The command may set anything later.
 */
const UNSAFE_NAMES = /^(LD_.*|BASH_ENV|ENV|BASH_FUNC_.*|SHELLOPTS|BASHOPTS|IFS|PS4|GCONV_PATH)$/;

/**
 * Written to the service's stderr pipe by the preamble just before the command starts.
 * Anything bwrap printed before it is a sandbox failure; its absence means the command
 * never ran.
 */
export const STARTED_MARKER = '\u001eturn-runtime: command started\n';

/**
 * The shell text run first inside the sandbox, with the command as `$1`. It sets the
 * resource limits (lowering only: a stricter limit already in place is kept), makes the
 * command the OOM killer's first choice, announces the start, merges stderr into stdout
 * (one pipe keeps the true interleaving) and runs the command in a fresh `/bin/sh -c`.
 *
 * `ulimit -u` is the process limit in bash and busybox; dash calls it `-p` (in bash `-p`
 * is the pipe size), hence the probe. `-f` counts 512-byte blocks, `-v` KiB.
 */
export function commandPreamble(limits: SandboxLimits): string {
  const kib = Math.max(1, Math.floor(limits.maxMemoryBytesPerProcess / 1024));
  const blocks = Math.max(1, Math.floor(limits.maxFileSizeBytes / 512));
  return [
    'if ulimit -u >/dev/null 2>&1; then nproc=-u; else nproc=-p; fi',
    'lower() { h=$(ulimit -H "$1") || return 1; if [ "$h" = unlimited ] || [ "$h" -gt "$2" ]; then ulimit "$1" "$2"; fi; }',
    `lower -c 0 && lower "$nproc" ${limits.maxProcesses} && lower -v ${kib} && lower -f ${blocks} || { echo "turn-runtime: could not set resource limits" >&2; exit 125; }`,
    'echo 1000 >/proc/self/oom_score_adj 2>/dev/null',
    `printf '${STARTED_MARKER.replace('\u001e', '\\036').replace('\n', '\\n')}' >&2`,
    'exec 2>&1',
    'exec /bin/sh -c "$1"',
  ].join('\n');
}
